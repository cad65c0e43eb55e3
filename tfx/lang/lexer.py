"""Tokens of the .tile language. Kernel text is data: it is never evaluated."""

from __future__ import annotations

import re
from typing import NamedTuple

from tfx.errors import SourceLocation, TfxError


class Token(NamedTuple):  # a named tuple: a 10 MB kernel has millions of tokens
    kind: str      # IDENT, VALUE, INT, FLOAT, PUNCT, COMMENT, EOF
    text: str
    line: int
    col: int


# Leading blanks are part of each match (one match per token, not two): a 4 MiB kernel has
# hundreds of thousands of tokens and the per-match Python work dominates.
_TOKEN_RE = re.compile(r"""
    [ \t\r]*
  (?:
    (?P<nl>\n)
  | (?P<comment>//[^\n]*)
  | (?P<value>%[A-Za-z_][A-Za-z0-9_]*)
  | (?P<float>\d[\d_]*\.(?!\.)\d*(?:[eE][+-]?\d+)?|\d[\d_]*[eE][+-]?\d+)
  | (?P<int>0[xX][0-9a-fA-F_]+|\d[\d_]*)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<punct>\.\.|->|[{}()\[\],:=+\-*/%@])
  )
""", re.VERBOSE | re.ASCII)  # ASCII: \d is 0-9 only, never an Arabic-Indic or other digit


def tokenize(text: str, filename: str) -> tuple[list[Token], list[str]]:
    """Split ``text`` into tokens (comments kept, whitespace dropped) and its lines."""
    lines = text.split("\n")
    tokens: list[Token] = []
    append = tokens.append
    pos, line, line_start = 0, 1, 0
    if text.startswith("\ufeff"):  # a UTF-8 byte order mark some editors write: not a token
        pos = line_start = 1
    # finditer skips what no token matches: a gap between matches is an unexpected character
    for m in _TOKEN_RE.finditer(text, pos):
        if m.start() != pos:
            break
        kind = m.lastgroup
        pos = m.end()
        if kind == "nl":
            line += 1
            line_start = pos
        else:
            start = m.start(kind)
            append(Token(_KINDS[kind], text[start:pos], line, start - line_start + 1))
    while pos < len(text) and text[pos] in " \t\r":  # blanks after the last token
        pos += 1
    if pos < len(text):
        col = pos - line_start + 1
        raise TfxError(f"unexpected character {text[pos]!r}", SourceLocation(filename, line, col),
                       lines[line - 1] if line - 1 < len(lines) else "")
    tokens.append(Token("EOF", "", line, pos - line_start + 1))
    return tokens, lines


_KINDS = {name: name.upper() for name in _TOKEN_RE.groupindex}
