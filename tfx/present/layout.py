"""Lines of prose fitted to the output's width: the one wrapping rule of the text surfaces.

``tfx.cli.common.text_width`` decides the width (``$COLUMNS``, else the terminal's; None for a
pipe or a file, where every line stays whole so that a script can grep it). A line past the
width breaks at spaces; its continuation lines start ``hang`` columns in (by default four past
the line's own indent). A number keeps its unit on its line (``216.26 us`` never splits), and a
word longer than the room (a path, a formula without spaces) stays whole.
"""

from __future__ import annotations

import re
import textwrap

# units the formatters write after a number (tfx.hw.units): a break between the two would
# leave '216.26' at a line's end and 'us' at the next one's start
_UNITS = ("ns", "us", "ms", "s", "B", "KB", "MB", "GB", "TB", "B/s", "KB/s", "MB/s", "GB/s", "TB/s",
          "flop", "Kflop", "Mflop", "Gflop", "Tflop", "Pflop", "op", "Kop", "Mop", "Gop", "Top",
          "GFLOP/s", "TFLOP/s", "PFLOP/s", "flop/B", "flop/s", "Hz", "kHz", "MHz", "GHz")
_NUMBER_UNIT = re.compile(r"(\d) (?=(?:" + "|".join(re.escape(u) for u in sorted(_UNITS, key=len, reverse=True))
                          + r")(?![\w/]))")
_GLUE = "\u00a0"        # not whitespace to textwrap: the pair wraps as one word


def keep(text: str) -> str:
    """``text`` as one word to ``wrap``: it moves to the next line whole (``hazard 263.94 us``,
    ``%acc = mma 73.54 us (hazard)``) rather than breaking inside."""
    return text.replace(" ", _GLUE)


def wrap(line: str, width: int | None, hang: int | None = None) -> list[str]:
    """``line`` as lines of at most ``width`` columns, broken at spaces, continuation lines
    indented ``hang`` spaces (default: the line's indent + 4, at most half the width); ``[line]``
    where it fits or ``width`` is None (a pipe)."""
    if width is None or len(line) <= width:
        return [line]
    indent = len(line) - len(line.lstrip(" "))
    hang = indent + 4 if hang is None else hang
    hang = min(hang, width // 2)
    glued = _NUMBER_UNIT.sub(r"\1" + _GLUE, line)
    out = textwrap.wrap(glued, width, subsequent_indent=" " * hang, break_long_words=False,
                        break_on_hyphens=False) or [line]
    return [part.replace(_GLUE, " ") for part in out]


def wrap_all(lines, width: int | None, hang: int | None = None) -> list[str]:
    """Every line of ``lines`` through ``wrap``."""
    return [part for line in lines for part in wrap(line, width, hang)]
