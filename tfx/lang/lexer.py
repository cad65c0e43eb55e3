"""Tokens of the .tile language. Kernel text is data: it is never evaluated."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tfx.errors import SourceLocation, TfxError


@dataclass(frozen=True)
class Token:
    kind: str      # IDENT, VALUE, INT, FLOAT, PUNCT, COMMENT, EOF
    text: str
    line: int
    col: int


_TOKEN_RE = re.compile(r"""
    (?P<ws>[ \t\r]+)
  | (?P<nl>\n)
  | (?P<comment>//[^\n]*)
  | (?P<value>%[A-Za-z_][A-Za-z0-9_]*)
  | (?P<float>\d[\d_]*\.(?!\.)\d*(?:[eE][+-]?\d+)?|\d[\d_]*[eE][+-]?\d+)
  | (?P<int>0[xX][0-9a-fA-F_]+|\d[\d_]*)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<punct>\.\.|->|[{}()\[\],:=+\-*/%@])
""", re.VERBOSE | re.ASCII)  # ASCII: \d is 0-9 only, never an Arabic-Indic or other digit


def tokenize(text: str, filename: str) -> tuple[list[Token], list[str]]:
    """Split ``text`` into tokens (comments kept, whitespace dropped) and its lines."""
    lines = text.split("\n")
    tokens: list[Token] = []
    pos, line, line_start = 0, 1, 0
    if text.startswith("\ufeff"):  # a UTF-8 byte order mark some editors write: not a token
        pos = line_start = 1
    n = len(text)
    match = _TOKEN_RE.match
    while pos < n:
        m = match(text, pos)
        if m is None:
            col = pos - line_start + 1
            ch = text[pos]
            raise TfxError(f"unexpected character {ch!r}", SourceLocation(filename, line, col),
                           lines[line - 1] if line - 1 < len(lines) else "")
        kind = m.lastgroup
        if kind == "nl":
            line += 1
            line_start = m.end()
        elif kind != "ws":
            tokens.append(Token(kind.upper(), m.group(), line, pos - line_start + 1))
        pos = m.end()
    tokens.append(Token("EOF", "", line, pos - line_start + 1))
    return tokens, lines
