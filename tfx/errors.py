"""The one error type every layer raises for bad input.

A TfxError renders as one clear first line (``file:line:col: error: ...`` or
``file:key: error: ...``), optionally followed by the source line and a caret.
The CLI prints it and exits with status 2; nothing else in tfx should let a
traceback reach the user for bad input.
"""

from __future__ import annotations

from typing import NamedTuple


class SourceLocation(NamedTuple):
    """A position in a text file, 1-based line and column. A named tuple: the parser makes
    one per node, and a tuple is several times cheaper to build than a frozen dataclass."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


# What an error echoes is bounded whatever the input: a 1 MB source line or a 1 MB
# --set value must not make a 2 MB error. Lines are cut around the caret.
ECHO_MAX_CHARS = 120
MAX_MESSAGE_CHARS = 400
MAX_WHERE_CHARS = 200

# Input files larger than this are refused before they are read (a kernel, a profile or
# a preset is a few kilobytes; the largest shipped file is far below 1 MB).
MAX_INPUT_BYTES = 4 * 2 ** 20


def shorten(text: str, limit: int = 60) -> str:
    """``text`` on one line, cut to ``limit`` characters (saying how many were left out)."""
    text = text.replace("\n", " ").replace("\r", " ")
    if len(text) <= limit:
        return text
    keep = max(limit - 25, 10)
    from tfx.hw.units import format_counted
    return f"{text[:keep]}... ({format_counted(len(text) - keep, 'more character')})"


def echo_window(line: str, col: int, width: int = ECHO_MAX_CHARS) -> tuple[str, int]:
    """The part of ``line`` to echo under an error, at most ``width`` characters around
    1-based column ``col`` (``...`` marks a cut), and the caret's 0-based offset in it."""
    if not line.isprintable():  # U+2028, NBSP, control characters: echo them as '?'
        line = "".join(ch if ch.isprintable() else "?" for ch in line)
    caret = max(col - 1, 0)
    if len(line) <= width:
        return line, min(caret, len(line))
    start = max(0, min(caret - width // 2, len(line) - width))
    piece = line[start:start + width]
    prefix = "..." if start > 0 else ""
    suffix = "..." if start + width < len(line) else ""
    return prefix + piece + suffix, len(prefix) + caret - start


class TfxError(Exception):
    """Bad input: a malformed kernel, profile, knob, model or file.

    ``where`` is a SourceLocation or a free string such as ``profile.toml:memory.gmem.bandwidth``.
    ``source_line`` (optional) is echoed under the message with a caret at ``where.col``.
    """

    def __init__(self, message: str, where: SourceLocation | str | None = None,
                 source_line: str | None = None, notes: tuple[str, ...] = ()):
        super().__init__(message)
        self.message = message
        self.where = where
        self.source_line = source_line
        self.notes = tuple(notes)

    def headline(self) -> str:
        message = shorten(self.message, MAX_MESSAGE_CHARS)
        if self.where is None:
            return f"error: {message}"
        return f"{shorten(str(self.where), MAX_WHERE_CHARS)}: error: {message}"

    def render(self) -> str:
        lines = [self.headline()]
        if self.source_line is not None and isinstance(self.where, SourceLocation):
            text, caret = echo_window(self.source_line.rstrip("\n"), self.where.col)
            lines.append(f"  {text}")
            lines.append("  " + " " * caret + "^")
        lines.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.headline()


def argument_error(flag: str, message: str, name: str | None = None, found: str | None = None) -> TfxError:
    """A refused command-line argument, in the form of every refused input (``where: error:
    what was expected``): ``where`` is the option and the name it assigns, as ``file:key``
    names a key (``--set BM``, ``--knob hbm.bandwidth``, or ``--occupancy`` alone); ``found``,
    the text given, ends the message. The one constructor of these errors: the CLI's own
    checks (tfx.cli) and the layers that parse an option's text (NAME=VALUE assignments,
    knobs, sweeps) all build them here, and argparse's refusals are rewritten to the same
    form (tfx.cli.main)."""
    where = flag if name is None else f"{flag} {shorten(name)}"
    if found is not None:
        message = f"{message}, found {shorten(found)!r}"
    return TfxError(message, where=where)


def read_text_file(path, expected: str = "a file", where: str | None = None) -> str:
    """A text file's contents, or a one-line TfxError naming the file and what went wrong."""
    from pathlib import Path

    from tfx.hw.units import format_bytes, format_exact_bytes
    shown = where or str(path)
    try:
        size = Path(path).stat().st_size
        if size > MAX_INPUT_BYTES and Path(path).is_file():
            # exact bytes, as a limit is read (off by 4 bytes matters), and the one unit policy's
            # decimal prefixes beside them (tfx.hw.units.format_bytes): was '(4 MiB)'
            raise TfxError(f"file is {format_exact_bytes(size)}; tfx reads at most {format_exact_bytes(MAX_INPUT_BYTES)} "
                           f"({format_bytes(MAX_INPUT_BYTES)}) for {expected}", where=shown)
        with open(path, encoding="utf-8") as fh:  # text mode: \r\n reads as \n
            text = fh.read(MAX_INPUT_BYTES + 1)
        if len(text) > MAX_INPUT_BYTES:  # a pipe, /dev/zero, or a file that grew meanwhile
            raise TfxError(f"input is larger than {format_exact_bytes(MAX_INPUT_BYTES)}", where=shown)
        return text
    except FileNotFoundError:
        raise TfxError("no such file", where=shown) from None
    except IsADirectoryError:
        raise TfxError(f"is a directory, expected {expected}", where=shown) from None
    except UnicodeDecodeError:
        raise TfxError("not a UTF-8 text file", where=shown) from None
    except OSError as exc:
        raise TfxError(f"cannot read: {exc.strerror}", where=shown) from None


def toml_decode_error(exc, where: str, text: str) -> TfxError:
    """tomllib says ``Invalid value (at line 3, column 9)``; turn it into file:line:col with the line."""
    import re
    message = str(exc)
    match = re.search(r"\(at line (\d+), column (\d+)\)", message)
    if not match:
        return TfxError(f"invalid TOML: {message}", where=where)
    line, col = int(match.group(1)), int(match.group(2))
    lines = text.splitlines()
    source_line = lines[line - 1] if 0 < line <= len(lines) else None
    return TfxError(f"invalid TOML: {message[:match.start()].strip()}",
                    where=SourceLocation(where, line, col), source_line=source_line)


# Deepest nesting of arrays and tables a TOML input may have: a profile nests 4 deep, a
# preset 2; every later pass walks the tree recursively.
MAX_TOML_DEPTH = 32


def parse_toml(text: str, where: str) -> dict:
    """``text`` as a TOML document, or a one-line TfxError: a syntax error at file:line:col,
    or nesting deeper than MAX_TOML_DEPTH (which would otherwise exhaust the recursion
    limit in the parser or in a later pass)."""
    import tomllib
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise toml_decode_error(exc, where, text) from None
    except RecursionError:
        raise TfxError(f"invalid TOML: nests more than {MAX_TOML_DEPTH} deep", where=where) from None
    stack = [(doc, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_TOML_DEPTH:
            raise TfxError(f"invalid TOML: nests more than {MAX_TOML_DEPTH} deep", where=where)
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return doc
