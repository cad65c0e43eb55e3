"""A small deterministic braille canvas: 2x4 dots per terminal cell. No Textual here.

``BrailleCanvas(width, height)`` (in cells) plots points in data coordinates
after ``set_range``; each cell remembers the highest ``layer`` drawn into it
(0 = plain point, 1 = frontier, 2 = selected), so callers can colour cells.
``rows()`` returns ``[(text, [layer per cell])]`` per terminal line.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tfx.hw.units import format_tick

# dot (dx, dy) -> bit of the braille pattern (U+2800 + bits)
_BITS = ((0x01, 0x08), (0x02, 0x10), (0x04, 0x20), (0x40, 0x80))


class BrailleCanvas:
    def __init__(self, width: int, height: int):
        self.width = max(1, width)
        self.height = max(1, height)
        self.bits = [[0] * self.width for _ in range(self.height)]
        self.layer = [[-1] * self.width for _ in range(self.height)]
        self.x0, self.x1, self.y0, self.y1 = 0.0, 1.0, 0.0, 1.0
        self.logx = self.logy = False

    def set_range(self, x0: float, x1: float, y0: float, y1: float,
                  logx: bool = False, logy: bool = False) -> None:
        self.logx, self.logy = logx, logy
        f = (lambda v: math.log10(v)) if logx else float
        g = (lambda v: math.log10(v)) if logy else float
        self.x0, self.x1 = f(x0), f(x1)
        self.y0, self.y1 = g(y0), g(y1)
        if self.x1 == self.x0:
            self.x1 = self.x0 + 1
        if self.y1 == self.y0:
            self.y1 = self.y0 + 1

    def dot_of(self, x: float, y: float) -> tuple[int, int] | None:
        if (self.logx and x <= 0) or (self.logy and y <= 0):
            return None
        xv = math.log10(x) if self.logx else x
        yv = math.log10(y) if self.logy else y
        W, H = self.width * 2, self.height * 4
        px = int(round((xv - self.x0) / (self.x1 - self.x0) * (W - 1)))
        py = int(round((yv - self.y0) / (self.y1 - self.y0) * (H - 1)))
        if not (0 <= px < W and 0 <= py < H):
            return None
        return px, H - 1 - py          # y grows upwards

    def dot(self, px: int, py: int, layer: int = 0) -> None:
        cx, cy = px // 2, py // 4
        if 0 <= cx < self.width and 0 <= cy < self.height:
            self.bits[cy][cx] |= _BITS[py % 4][px % 2]
            self.layer[cy][cx] = max(self.layer[cy][cx], layer)

    def point(self, x: float, y: float, layer: int = 0) -> tuple[int, int] | None:
        """Plot one data point; returns its cell (column, row) or None if off the canvas."""
        d = self.dot_of(x, y)
        if d is None:
            return None
        self.dot(*d, layer)
        return d[0] // 2, d[1] // 4

    def line(self, a: tuple[float, float], b: tuple[float, float], layer: int = 0) -> None:
        da, db = self.dot_of(*a), self.dot_of(*b)
        if da is None or db is None:
            return
        (x0, y0), (x1, y1) = da, db
        n = max(abs(x1 - x0), abs(y1 - y0), 1)
        for i in range(n + 1):
            self.dot(round(x0 + (x1 - x0) * i / n), round(y0 + (y1 - y0) * i / n), layer)

    def rows(self) -> list[tuple[str, list[int]]]:
        out = []
        for bits, layers in zip(self.bits, self.layer):
            out.append(("".join(chr(0x2800 + b) if b else " " for b in bits), list(layers)))
        return out

    def text(self) -> str:
        return "\n".join(r for r, _ in self.rows())


# ---------------------------------------------------------------- log-log charts

def tick_label(v: float) -> str:
    """A tick value as people write it on an axis: ``100T``, ``2G``, ``10``, ``0.5``, ``0.01``
    (tfx.hw.units.format_tick)."""
    return format_tick(v)


def ticks(span: tuple[float, float], least: int = 3) -> list[float]:
    """Tick values inside the log10 ``span``: the decades, with 2x and 5x added when
    fewer than ``least`` decades fall inside."""
    lo, hi = span
    out = [10.0 ** e for e in range(math.ceil(lo), math.floor(hi) + 1)]
    if len(out) < least:
        out = sorted(m * 10.0 ** e for e in range(math.floor(lo), math.ceil(hi) + 1) for m in (1, 2, 5)
                     if lo <= math.log10(m * 10.0 ** e) <= hi)
    return out


def log_span(lo: float, hi: float, margin: float = 1.5) -> tuple[float, float]:
    """log10 bounds of [lo / margin, hi * margin] (at least one decade wide)."""
    a, b = math.log10(lo / margin), math.log10(hi * margin)
    if b - a < 1:
        mid = (a + b) / 2
        a, b = mid - 0.5, mid + 0.5
    return a, b


@dataclass
class ChartRow:
    label: str                  # the y axis label of this line ('' between ticks)
    text: str                   # one character per cell
    layers: list                # layer per cell (-1: empty)


def loglog_rows(width: int, height: int, x_span: tuple[float, float], y_span: tuple[float, float],
                lines: list[tuple[list[tuple[float, float]], int]],
                marks: list[tuple[float, float, str, int]]) -> tuple[list[ChartRow], str]:
    """A log-log chart on a braille canvas of ``width`` x ``height`` cells over log10 spans
    ``x_span`` and ``y_span``: ``lines`` are polylines (data points, layer); ``marks`` are
    single characters (x, y, char, layer) put over the cell of their point, later ones on
    top. Returns the rows (each tick's label on its row) and the x axis line (each tick's
    label under its column, those that would touch a neighbour left out)."""
    c = BrailleCanvas(width, height)
    c.set_range(10.0 ** x_span[0], 10.0 ** x_span[1], 10.0 ** y_span[0], 10.0 ** y_span[1],
                logx=True, logy=True)
    for pts, layer in lines:
        for a, b in zip(pts, pts[1:]):
            c.line(a, b, layer)
    grid = [(list(text), layers) for text, layers in c.rows()]
    for x, y, char, layer in marks:
        d = c.dot_of(x, y)
        if d is not None:
            text, layers = grid[d[1] // 4]
            text[d[0] // 2], layers[d[0] // 2] = char, layer
    labels = [""] * height
    for v in ticks(y_span):
        d = c.dot_of(10.0 ** x_span[0], v)
        if d is not None and not labels[d[1] // 4]:
            labels[d[1] // 4] = tick_label(v)
    rows = [ChartRow(labels[i], "".join(text), layers) for i, (text, layers) in enumerate(grid)]
    axis = [" "] * width
    for v in ticks(x_span):
        d = c.dot_of(v, 10.0 ** y_span[0])
        if d is None:
            continue
        text = tick_label(v)
        col = min(max(d[0] // 2 - len(text) // 2, 0), width - len(text))
        if all(ch == " " for ch in axis[max(col - 1, 0):col + len(text) + 1]):
            axis[col:col + len(text)] = list(text)
    return rows, "".join(axis)
