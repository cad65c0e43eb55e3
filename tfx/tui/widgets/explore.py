"""Pane 5, Explore: a Pareto scatter on a braille canvas, the frontier, the top-k table."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widget import Widget
from textual.widgets import DataTable, Static

from tfx.tui.canvas import BrailleCanvas, pareto_front

LAYER_STYLE = {0: "blue", 1: "bold green", 2: "bold reverse yellow"}


class Scatter(Widget):
    """Points (x, y) drawn on a braille canvas sized to the widget; both axes minimised."""

    DEFAULT_CSS = "Scatter { height: 1fr; width: 1fr; }"

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.points: list[tuple[float, float]] = []
        self.selected: int | None = None
        self.xlabel = self.ylabel = ""

    def set_points(self, points, xlabel: str, ylabel: str, selected: int | None = None) -> None:
        self.points, self.xlabel, self.ylabel, self.selected = list(points), xlabel, ylabel, selected
        self.refresh()

    def render(self) -> Text:
        w, h = max(self.size.width - 2, 4), max(self.size.height - 1, 2)
        canvas = BrailleCanvas(w, h)
        if self.points:
            xs = [p[0] for p in self.points]
            ys = [p[1] for p in self.points]
            canvas.set_range(min(xs), max(xs), min(ys), max(ys))
            front = pareto_front(self.points)
            for i, p in enumerate(self.points):
                canvas.point(*p, 0)
            for a, b in zip(front, front[1:]):
                canvas.line(self.points[a], self.points[b], 1)
            if self.selected is not None and 0 <= self.selected < len(self.points):
                canvas.point(*self.points[self.selected], 2)
        out = Text(no_wrap=True)
        for text, layers in canvas.rows():
            out.append("│ ", style="dim")
            for ch, layer in zip(text, layers):
                out.append(ch, style=LAYER_STYLE.get(layer, ""))
            out.append("\n")
        out.append(f"└ x: {self.xlabel}   y: {self.ylabel}", style="dim")
        return out


class TopTable(DataTable):
    BINDINGS = [Binding("enter", "load", "Load point", id="explore.load")]

    def action_load(self) -> None:
        self.app.load_explore_point(self.cursor_row)


class ExplorePane(Vertical):
    DEFAULT_CSS = """
    ExplorePane { height: 1fr; }
    ExplorePane #explore-status { height: auto; }
    ExplorePane #explore-body { height: 1fr; }
    ExplorePane Scatter { width: 1fr; }
    ExplorePane TopTable { width: 1fr; }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="explore-status")
        with Horizontal(id="explore-body"):
            yield Scatter(id="scatter")
            yield TopTable(id="topk", cursor_type="row")

    def show_unavailable(self, why: str) -> None:
        self.query_one("#explore-status", Static).update(why)
        self.query_one("#explore-body").display = False
