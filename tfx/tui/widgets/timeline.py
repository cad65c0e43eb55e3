"""Pane 4, Timeline: a per-engine Gantt chart as a ScrollView with ``render_line``.

The chart draws a list of ``Event(engine, start_ns, end_ns, label)``; each
visible line is rendered on demand (bisect into that engine's sorted events),
with a small LRU cache, so the cost follows the viewport, not the trace.
"""

from __future__ import annotations

import bisect
import math
from collections import OrderedDict

from rich.segment import Segment
from rich.style import Style
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Static

from tfx.present import formatting as fmt
from tfx.tui.core import Event

# ANSI (16-colour) names: no truecolor assumption.
PALETTE = ("green", "cyan", "magenta", "yellow", "blue", "red", "bright_green", "bright_cyan")
LABEL_W = 9


class GanttView(ScrollView, can_focus=True):
    BINDINGS = [
        Binding("plus,equals_sign", "zoom(0.5)", "Zoom in", id="gantt.zoom_in"),
        Binding("minus", "zoom(2)", "Zoom out", id="gantt.zoom_out"),
        Binding("left", "pan(-1)", "Pan", id="gantt.left", show=False),
        Binding("right", "pan(1)", "Pan", id="gantt.right", show=False),
        Binding("home", "edge(0)", "Start", id="gantt.home", show=False),
        Binding("end", "edge(1)", "End", id="gantt.end", show=False),
    ]
    DEFAULT_CSS = "GanttView { height: 1fr; }"

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.set_events([])

    def set_events(self, events: list[Event]) -> None:
        self.events = sorted(events, key=lambda e: (e.engine, e.start_ns))
        self.engines = sorted({e.engine for e in events})
        self.by_engine = {g: [e for e in self.events if e.engine == g] for g in self.engines}
        self.starts = {g: [e.start_ns for e in evs] for g, evs in self.by_engine.items()}
        self.ends_max = {}
        for g, evs in self.by_engine.items():   # running max of end times, for overlap search
            m, acc = -math.inf, []
            for e in evs:
                m = max(m, e.end_ns)
                acc.append(m)
            self.ends_max[g] = acc
        self.t0 = min((e.start_ns for e in events), default=0.0)
        self.t1 = max((e.end_ns for e in events), default=1.0)
        self._fit = True                  # the whole run fits the width until the user zooms
        self.ns_per_cell = self._fit_scale()
        self._cache: OrderedDict = OrderedDict()
        self._version = getattr(self, "_version", 0) + 1
        self._resize()

    def _fit_scale(self) -> float:
        cells = max(self.size.width - LABEL_W - 1, 20) if self.size.width else 60
        return max((self.t1 - self.t0) / cells, 1e-3)

    def on_resize(self) -> None:
        if getattr(self, "_fit", False):
            self.ns_per_cell = self._fit_scale()
            self._resize()

    def _resize(self) -> None:
        cells = int(math.ceil((self.t1 - self.t0) / self.ns_per_cell)) + 1
        self.virtual_size = Size(LABEL_W + cells, len(self.engines) + 1)
        self._cache.clear()
        self.refresh()

    def action_zoom(self, factor: float) -> None:
        width = max(self.size.width - LABEL_W, 1)
        center = self.t0 + (self.scroll_x + width / 2) * self.ns_per_cell
        self._fit = False
        self.ns_per_cell = max(self.ns_per_cell * factor, 1e-3)
        self._resize()
        self.scroll_to(x=max(0, (center - self.t0) / self.ns_per_cell - width / 2), animate=False)

    def action_pan(self, direction: int) -> None:
        step = max((self.size.width - LABEL_W) // 4, 1)
        self.scroll_to(x=max(0, self.scroll_x + direction * step), animate=False)

    def action_edge(self, end: int) -> None:
        self.scroll_to(x=self.max_scroll_x if end else 0, animate=False)

    def busy_in(self, engine: str, a: float, b: float) -> list[Event]:
        """Events of ``engine`` overlapping [a, b)."""
        starts = self.starts[engine]
        hi = bisect.bisect_left(starts, b)
        lo = bisect.bisect_left(self.ends_max[engine], a)   # first event that may end after a
        return [e for e in self.by_engine[engine][lo:hi] if e.end_ns > a]

    def render_line(self, y: int) -> Strip:
        sx, sy = self.scroll_offset
        width = self.size.width
        key = (y + sy, sx, width, self.ns_per_cell, self._version)
        strip = self._cache.get(key)
        if strip is None:
            strip = self._line(y + sy, sx, width)
            self._cache[key] = strip
            if len(self._cache) > 256:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(key)
        return strip

    def _line(self, row: int, sx: int, width: int) -> Strip:
        cells = max(width - LABEL_W, 0)
        if row == 0:   # time axis
            text = []
            i = 0
            while i < cells:
                t = self.t0 + (sx + i) * self.ns_per_cell
                tick = f"|{fmt.ns(t)}"
                text.append(tick.ljust(16)[:cells - i])
                i += 16
            label = f"{fmt.ns_compact(self.ns_per_cell)}/c"[:LABEL_W - 1].ljust(LABEL_W)
            return Strip([Segment(label, Style(dim=True)), Segment("".join(text), Style(dim=True))],
                         width).adjust_cell_length(width)
        idx = row - 1
        if idx >= len(self.engines):
            return Strip.blank(width)
        engine = self.engines[idx]
        color = PALETTE[idx % len(PALETTE)]
        segs = [Segment(engine[:LABEL_W - 1].ljust(LABEL_W), Style(bold=True))]
        a0 = self.t0 + sx * self.ns_per_cell
        evs = self.busy_in(engine, a0, a0 + cells * self.ns_per_cell)
        chars = [" "] * cells
        for e in evs:
            c0 = (e.start_ns - a0) / self.ns_per_cell
            c1 = (e.end_ns - a0) / self.ns_per_cell
            lo, hi = max(int(math.floor(c0)), 0), min(int(math.ceil(c1)), cells)
            for c in range(lo, hi):
                chars[c] = "█" if (c >= c0 and c + 1 <= c1) else ("▐" if c < c0 else "▌")
            if e.label and hi - lo >= len(e.label) + 2:
                for j, ch in enumerate(e.label):
                    chars[lo + 1 + j] = ch
        busy = Style(color=color)
        lbl = Style(color="black", bgcolor=color)
        run, run_style = [], None
        for ch in chars:
            st = None if ch == " " else (busy if ch in "█▌▐" else lbl)
            if st is not run_style and run:
                segs.append(Segment("".join(run), run_style))
                run = []
            run_style = st
            run.append(ch)
        if run:
            segs.append(Segment("".join(run), run_style))
        return Strip(segs).adjust_cell_length(width)


class TimelinePane(Vertical):
    DEFAULT_CSS = """
    TimelinePane { height: 1fr; }
    TimelinePane #timeline-status { height: auto; }
    TimelinePane #timeline-stalls { height: auto; max-height: 6; }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="timeline-status")
        yield GanttView(id="gantt")
        yield Static(id="timeline-stalls")

    def show_unavailable(self, why: str) -> None:
        self.query_one("#timeline-status", Static).update(why)
        self.query_one(GanttView).display = False
        self.query_one("#timeline-stalls", Static).update("")

    def show_events(self, events: list[Event], caption: str, stalls: list[str]) -> None:
        g = self.query_one(GanttView)
        g.display = True
        g.set_events(events)
        self.query_one("#timeline-status", Static).update(caption)
        self.query_one("#timeline-stalls", Static).update("\n".join(stalls))
