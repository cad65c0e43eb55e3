"""Writing files: every file tfx writes goes through here.

One writer for exports, ``--trace``, ``--csv``, ``--save`` and saved profiles, so all of
them behave alike:

* atomic: the text goes to a temporary file in the target's folder, then ``os.replace``
  moves it over the target, so a reader (or a crash half-way) never sees half a file and
  an earlier file survives a failed write;
* an unwritable target (no such folder, a folder, no permission, a full disk) is one
  ``TfxError`` line naming the path, which the CLI prints and exits 2 on;
* special files (``/dev/null``, a FIFO) are written in place: renaming over them would
  replace the device node itself.

``safe_file_stem`` turns any label (a hardware name that is really a file path, a kernel
name with spaces) into a file-name fragment, and ``next_free_path`` picks a name that
does not overwrite an earlier export.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import tempfile
from pathlib import Path
from typing import IO, Any, Iterator

from tfx.errors import TfxError

__all__ = ["check_writable", "atomic_open", "write_text_atomic", "write_json_atomic", "safe_file_stem",
           "next_free_path"]

# A file-name fragment longer than this is cut: most file systems allow 255 bytes per name
# and the caller adds a suffix and a counter.
STEM_MAX_CHARS = 80
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def _check_target(target: Path, what: str) -> None:
    """Refuse, before writing anything, the targets whose failure would say too little."""
    shown = str(target)
    if target.is_dir():
        raise TfxError(f"cannot write {what}: is a directory", where=shown)
    parent = target.parent
    if not parent.exists():
        raise TfxError(f"cannot write {what}: no such directory {str(parent)!r}", where=shown)
    if not parent.is_dir():
        raise TfxError(f"cannot write {what}: {str(parent)!r} is not a directory", where=shown)


def check_writable(path: str | os.PathLike, what: str = "the output") -> None:
    """Refuse at once (one TfxError line) a target that cannot be written: a folder, a missing
    or read-only folder. Commands call it before long work so a typo costs no minutes."""
    target = Path(os.path.expanduser(os.fspath(path)))
    _check_target(target, what)
    if not os.access(target.parent, os.W_OK | os.X_OK):
        raise TfxError(f"cannot write {what}: permission denied", where=str(path))


def _new_file_mode(target: Path) -> int:
    """The mode a plain ``open(target, "w")`` would give: the old file's, else 0o666 less umask."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, what: str = "the output", newline: str | None = None,
                binary: bool = False) -> Iterator[IO]:
    """A text (or, with ``binary``, bytes) file handle whose contents replace ``path`` only
    when the block ends cleanly.

    An exception inside the block leaves ``path`` as it was and removes the temporary file.
    Any OSError (opening, writing, renaming) becomes a one-line TfxError naming ``path``.
    """
    target = Path(os.path.expanduser(os.fspath(path)))
    if target.is_symlink():  # write through the link, as open() would, instead of replacing it
        target = Path(os.path.realpath(target))
    _check_target(target, what)
    shown = str(path)
    mode, text_args = ("wb", {}) if binary else ("w", {"encoding": "utf-8", "newline": newline})
    try:
        if target.exists() and not target.is_file():  # /dev/null, a FIFO: no rename over them
            with open(target, mode, **text_args) as fh:
                yield fh
            return
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name[:40]}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise TfxError(f"cannot write {what}: {_reason(exc)}", where=shown) from None
    try:
        with os.fdopen(fd, mode, **text_args) as fh:
            yield fh
        os.chmod(tmp, _new_file_mode(target))
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise TfxError(f"cannot write {what}: {_reason(exc)}", where=shown) from None
        raise


def write_text_atomic(path: str | os.PathLike, text: str, what: str = "the output") -> Path:
    """Write ``text`` to ``path`` atomically; returns the path written (user's ~ expanded)."""
    with atomic_open(path, what=what) as fh:
        fh.write(text)
    return Path(os.path.expanduser(os.fspath(path)))


def write_json_atomic(path: str | os.PathLike, data: Any, what: str = "the JSON output",
                      indent: int | None = 2, default=None, allow_nan: bool = True) -> Path:
    """``data`` as JSON (a final newline) written atomically to ``path``.

    The JSON is encoded before the file is touched, so an unencodable value leaves no file.
    """
    text = json.dumps(data, indent=indent, default=default, allow_nan=allow_nan) + "\n"
    return write_text_atomic(path, text, what=what)


def safe_file_stem(label: str, fallback: str = "tfx") -> str:
    """A file-name fragment for ``label``: a path keeps only its last name without suffix,
    other characters than letters, digits, ``.``, ``_`` and ``-`` become ``_``, no leading dot,
    at most STEM_MAX_CHARS characters; ``fallback`` when nothing is left.

    >>> safe_file_stem("/home/me/profiles/my h200.toml")
    'my_h200'
    """
    text = str(label).replace("\\", "/").rstrip("/")
    name = text.rsplit("/", 1)[-1]
    if name.endswith(".toml") or name.endswith(".tile") or name.endswith(".json"):
        name = name.rsplit(".", 1)[0]
    name = _UNSAFE.sub("_", name).lstrip(".").strip("_")
    name = name[:STEM_MAX_CHARS].rstrip("._-")
    return name or fallback


def next_free_path(directory: str | os.PathLike, stem: str, suffix: str) -> Path:
    """``directory/stem+suffix``, or ``stem-2``, ``stem-3``... when that name is taken, so an
    export never overwrites an earlier one. ``stem`` is passed through ``safe_file_stem``."""
    folder = Path(directory)
    base = safe_file_stem(stem)
    candidate = folder / f"{base}{suffix}"
    n = 2
    while candidate.exists() or candidate.is_symlink():
        candidate = folder / f"{base}-{n}{suffix}"
        n += 1
    return candidate
