"""The one error type every layer raises for bad input.

A TfxError renders as one clear first line (``file:line:col: error: ...`` or
``file:key: error: ...``), optionally followed by the source line and a caret.
The CLI prints it and exits with status 2; nothing else in tfx should let a
traceback reach the user for bad input.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SourceLocation:
    """A position in a text file, 1-based line and column."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


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
        if self.where is None:
            return f"error: {self.message}"
        return f"{self.where}: error: {self.message}"

    def render(self) -> str:
        lines = [self.headline()]
        if self.source_line is not None and isinstance(self.where, SourceLocation):
            text = self.source_line.rstrip("\n")
            lines.append(f"  {text}")
            lines.append("  " + " " * max(self.where.col - 1, 0) + "^")
        lines.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.headline()


def read_text_file(path, expected: str = "a file", where: str | None = None) -> str:
    """A text file's contents, or a one-line TfxError naming the file and what went wrong."""
    from pathlib import Path
    shown = where or str(path)
    try:
        return Path(path).read_text(encoding="utf-8")
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
