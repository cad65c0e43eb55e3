"""Pane 5, Explore: the swept parameters, a Pareto scatter on a braille canvas, the top-k table.

The sweep itself (``tfx.explore.explore``) runs in the app's worker process
(``core.run_explore``); this pane only draws an ``ExploreOutcome``: every
feasible configuration as a dot (predicted time across, shared memory per CTA
up), the frontier as a staircase, the current configuration and the row under
the cursor marked, and the top-k and frontier rows in a table whose enter loads
the row's parameters as a normal parameter edit.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widget import Widget
from textual.message import Message
from textual.widgets import DataTable, OptionList, Static
from textual.widgets.option_list import Option

from tfx.tui.canvas import BrailleCanvas
from tfx.present.formatting import (allocation, compiled_as, count, counted, nbytes as fmt_bytes, ns as fmt_ns,
                                    rank_cell, rank_marks, unmeasured_sentence)

# layers: 0 feasible configuration, 1 frontier, 2 current configuration, 3 the table's row
LAYER_STYLE = {0: "blue", 1: "bold green", 2: "bold magenta", 3: "bold reverse yellow"}
Y_LABEL_W = 11


def _log_axis(lo: float, hi: float) -> bool:
    return lo > 0 and hi / lo > 20


class Scatter(Widget):
    """Feasible points and the frontier on a braille canvas sized to the widget; both axes minimised.

    The points, frontier and current marker are drawn once per size and outcome
    (numpy, so 20,000 points cost about a millisecond); moving the table's cursor
    only redraws the selected dot.
    """

    DEFAULT_CSS = "Scatter { height: 1fr; width: 1fr; }"

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.points = None                        # (n, 2) array or None
        self.front: list[tuple[float, float]] = []
        self.current: tuple[float, float] | None = None
        self.selected: tuple[float, float] | None = None
        self.message = ""
        self.y_name = "smem/CTA"                  # the y axis: the outcome's on-chip memory (tcm/PE)
        self._base = None                         # (key, canvas bits, layers)

    def set_data(self, points, front, current, selected=None, message: str = "", y_name: str | None = None) -> None:
        self.points, self.front, self.current, self.selected = points, list(front), current, selected
        self.message = message
        if y_name is not None:
            self.y_name = y_name
        self._base = None
        self.refresh()

    def set_current(self, current) -> None:
        if current != self.current:
            self.current = current
            self._base = None
            self.refresh()

    def select(self, point) -> None:
        if point != self.selected:
            self.selected = point
            self.refresh()

    def _ranges(self):
        xs = [p[0] for p in self.front]
        ys = [p[1] for p in self.front]
        if self.points is not None and len(self.points):
            xs += [float(self.points[:, 0].min()), float(self.points[:, 0].max())]
            ys += [float(self.points[:, 1].min()), float(self.points[:, 1].max())]
        if self.current is not None:
            xs.append(self.current[0])
            ys.append(self.current[1])
        if not xs:
            return None
        return min(xs), max(xs), min(ys), max(ys)

    def _canvas(self, w: int, h: int):
        rng = self._ranges()
        canvas = BrailleCanvas(w, h)
        if rng is None:
            return canvas, None
        x0, x1, y0, y1 = rng
        logx, logy = _log_axis(x0, x1), _log_axis(y0, y1)
        canvas.set_range(x0, x1, y0, y1, logx=logx, logy=logy)
        key = (w, h)
        if self._base is not None and self._base[0] == key:
            canvas.bits = [row[:] for row in self._base[1]]
            canvas.layer = [row[:] for row in self._base[2]]
            return canvas, rng
        if self.points is not None and len(self.points):
            self._plot_many(canvas, self.points)
        for a, b in zip(self.front, self.front[1:]):      # staircase: the dominated region's edge
            canvas.line(a, (b[0], a[1]), 1)
            canvas.line((b[0], a[1]), b, 1)
        for p in self.front:
            canvas.point(*p, 1)
        if self.current is not None:
            canvas.point(*self.current, 2)
        self._base = (key, [row[:] for row in canvas.bits], [row[:] for row in canvas.layer])
        return canvas, rng

    @staticmethod
    def _plot_many(canvas: BrailleCanvas, pts) -> None:
        import numpy as np
        x, y = pts[:, 0].astype(float), pts[:, 1].astype(float)
        if canvas.logx:
            x = np.log10(np.maximum(x, 1e-300))
        if canvas.logy:
            y = np.log10(np.maximum(y, 1e-300))
        W, H = canvas.width * 2, canvas.height * 4
        px = np.rint((x - canvas.x0) / (canvas.x1 - canvas.x0) * (W - 1)).astype(np.int64)
        py = H - 1 - np.rint((y - canvas.y0) / (canvas.y1 - canvas.y0) * (H - 1)).astype(np.int64)
        ok = (px >= 0) & (px < W) & (py >= 0) & (py < H)
        for dx, dy in set(zip(px[ok].tolist(), py[ok].tolist())):
            canvas.dot(dx, dy, 0)

    @staticmethod
    def _y_labels(n: int, top: str, bottom: str, log: bool, y_name: str) -> list[tuple[str, str]]:
        """The column left of the axis: the top and bottom values, the axis name and, in
        the rows between, the legend (as many entries as fit)."""
        labels = [("", "dim")] * n
        labels[0] = (top, "dim")
        if n > 1:
            labels[-1] = (bottom, "dim")
        middle = [(y_name, "dim")] + [(f"{mark} {name}", LAYER_STYLE[layer]) for mark, name, layer in
                                          (("·", "config", 0), ("⣿", "frontier", 1),
                                           ("⣿", "current", 2), ("⣿", "row", 3))]
        if log:
            middle.append(("(log)", "dim"))
        for i, item in enumerate(middle[:max(n - 2, 0)]):
            labels[i + 1] = (item[0].ljust(Y_LABEL_W - 1), item[1])
        return labels

    def render(self) -> Text:
        out = Text(no_wrap=True, overflow="crop")
        w, h = max(self.size.width - Y_LABEL_W - 1, 4), max(self.size.height - 1, 2)
        canvas, rng = self._canvas(w, h)
        if rng is None:
            out.append(self.message or "no feasible configuration to draw", style="dim")
            return out
        if self.selected is not None:
            canvas.point(*self.selected, 3)
        x0, x1, y0, y1 = rng
        rows = canvas.rows()
        labels = self._y_labels(len(rows), fmt_bytes(y1), fmt_bytes(y0), canvas.logy, self.y_name)
        for i, (text, layers) in enumerate(rows):
            label, style = labels[i]
            out.append(label.rjust(Y_LABEL_W - 1)[:Y_LABEL_W - 1] + " ", style=style)
            out.append("│", style="dim")
            for ch, layer in zip(text, layers):
                out.append(ch, style=LAYER_STYLE.get(layer, ""))
            out.append("\n")
        lo, hi = fmt_ns(x0), fmt_ns(x1)
        scale = " log" if canvas.logx else ""
        mid = f" predicted time{scale} "
        gap = max(w - len(lo) - len(hi) - len(mid), 0)
        out.append(" " * Y_LABEL_W + "└" + lo + "─" * (gap // 2) + mid + "─" * (gap - gap // 2) + hi,
                   style="dim")
        return out


class SweepList(OptionList):
    """The kernel's parameters with a declared domain, ``[x]`` when swept; space or enter
    toggles one (the sweep reruns)."""

    DEFAULT_CSS = """
    SweepList { width: 18; height: 1fr; border: none; padding: 0; scrollbar-size-vertical: 1; }
    SweepList:focus { border: none; }
    """
    BINDINGS = [Binding("space", "toggle", "Sweep on/off", id="explore.toggle"),
                Binding("escape", "back", "Table", id="explore.back")]

    class Changed(Message):
        """The set of swept parameters changed."""

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.names: list[str] = []
        self.checked: set[str] = set()
        self.shapes: set[str] = set()

    def fill(self, names, checked, shapes) -> None:
        if list(names) == self.names and set(checked) == self.checked:
            return
        same = list(names) == self.names
        self.names, self.checked, self.shapes = list(names), set(checked), set(shapes)
        if same:
            for i, n in enumerate(self.names):
                self.replace_option_prompt_at_index(i, self._prompt(n))
            return
        self.clear_options()
        self.add_options([Option(self._prompt(n), id=n) for n in self.names])
        self.highlighted = 0 if self.names else None

    def _prompt(self, name: str) -> Text:
        t = Text("[x] " if name in self.checked else "[ ] ",
                 style="bold green" if name in self.checked else "dim")
        t.append(name)
        if name in self.shapes:
            t.append(" shape", style="dim")
        return t

    def toggle(self, index: int) -> None:
        if not 0 <= index < len(self.names):
            return
        n = self.names[index]
        self.checked ^= {n}
        self.replace_option_prompt_at_index(index, self._prompt(n))
        self.post_message(self.Changed())

    def action_toggle(self) -> None:
        if self.highlighted is not None:
            self.toggle(self.highlighted)

    def action_back(self) -> None:
        self.screen.query_one(TopTable).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.toggle(event.option_index)


class TopTable(DataTable):
    BINDINGS = [Binding("enter", "load", "Load point", id="explore.load")]

    def action_load(self) -> None:
        pane = self.screen.query_one(ExplorePane)
        params = pane.row_params(self.cursor_row)
        if params:
            self.app.load_explore_point(params)


class ExplorePane(Vertical):
    BINDINGS = [Binding("s", "focus_sweep", "Sweep params", id="explore.params")]
    DEFAULT_CSS = """
    ExplorePane { height: 1fr; }
    ExplorePane #explore-status { height: auto; max-height: 6; text-wrap: nowrap;
        text-overflow: ellipsis; }
    ExplorePane #explore-top { height: 1fr; min-height: 6; }
    ExplorePane TopTable { height: 1fr; min-height: 4; }
    """

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.outcome = None
        self.rows: list[dict] = []
        self._names: tuple = ()

    def compose(self) -> ComposeResult:
        yield Static(id="explore-status")
        with Horizontal(id="explore-top"):
            yield SweepList(id="sweep-list")
            yield Scatter(id="scatter")
        yield TopTable(id="topk", cursor_type="row", zebra_stripes=True)

    # the parameter list ------------------------------------------------
    def set_params(self, names: list[str], swept, shapes) -> None:
        """(Re)fill the list of sweepable parameters, ``[x]`` on the swept ones."""
        self.query_one(SweepList).fill(names, swept, shapes)

    def swept(self) -> tuple:
        sl = self.query_one(SweepList)
        return tuple(n for n in sl.names if n in sl.checked)

    # states -------------------------------------------------------------
    def show_message(self, text: str) -> None:
        """Nothing to draw (no domains, nothing swept, a failed or refused sweep)."""
        self.query_one("#explore-status", Static).update(text)
        self.outcome, self.rows = None, []
        self.query_one(Scatter).set_data(None, [], None, message="")
        t = self.query_one(TopTable)
        t.clear(columns=True)

    def show_running(self, text: str) -> None:
        self.query_one("#explore-status", Static).update(text)

    def show_outcome(self, out, current_point, current_params: dict) -> None:
        self.outcome = out
        job = out.job
        names = list(job.sweep)
        top_ids = {e["index"] for e in out.top}
        onchip = out.onchip_key
        front_pts = {(e["predicted_ns"], e[onchip]) for e in out.pareto}
        # ≈: a top row within the re-timing noise of the best (the status's near-tie line)
        # ?: values no campaign timed (the status's line under the near tie)
        rows = [dict(e, rank=rank_cell(i + 1, e)) for i, e in enumerate(out.top)]
        # †: a row that spills registers (the status's line under them)
        rows += [dict(e, rank=rank_marks(e)) for e in out.pareto if e["index"] not in top_ids]
        self.rows = rows
        t = self.query_one(TopTable)
        cursor = t.cursor_row
        t.clear(columns=True)
        t.add_columns("#", *names, "time", out.onchip_label, *(("CTAs/SM",) if out.occupancy else ()), "front")
        for r in rows:
            on_front = (r["predicted_ns"], r[onchip]) in front_pts
            here = all(current_params.get(n) == r["params"].get(n) for n in names)
            t.add_row(r["rank"] + ("*" if here else ""), *(str(r["params"][n]) for n in names),
                      fmt_ns(r["predicted_ns"]), allocation(r[onchip]),
                      *((str(r["blocks_per_sm"]),) if out.occupancy else ()), "yes" if on_front else "")
        if rows:
            t.move_cursor(row=min(max(cursor, 0), len(rows) - 1), animate=False)
        front = sorted((float(e["predicted_ns"]), float(e[onchip])) for e in out.pareto)
        self.query_one(Scatter).set_data(out.points, front, current_point, self._row_point(), y_name=out.onchip_label)
        self.query_one("#explore-status", Static).update(self._summary(out))

    def set_current(self, current_point) -> None:
        self.query_one(Scatter).set_current(current_point)

    def _summary(self, out) -> Text:
        """Up to six lines, each cut with an ellipsis rather than wrapped: the counts, the near tie
        at the top and how many of the top to time (the sentences tfx explore prints, from the
        sweep's own result), the lines for rows of untimed values and rows that spill where there
        are any, what is fixed and the code generator the sweep priced (its own result's, as tfx
        explore's header)."""
        job = out.job
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append(counted(out.configs, "configuration"), style="bold")
        t.append(f", {count(out.feasible)} feasible; "
                 f"frontier {counted(len(out.pareto), 'point')}")
        if out.pareto_configs != len(out.pareto):
            t.append(f" ({counted(out.pareto_configs, 'configuration')})")
        if out.points_total > len(out.points if out.points is not None else ()):
            t.append(f"; {count(len(out.points))} of {counted(out.points_total, 'point')} drawn", style="dim")
        t.append("\n")
        tie = out.near_tie
        if tie is not None:
            t.append(tie.summary(len(out.top)), style="bold yellow" if tie.tied else "dim")
            t.append("\n")
        if out.top_picks is not None:
            t.append(out.top_picks.sentence(), style="dim")
            t.append("\n")
        if out.unmeasured or out.marked:
            t.append(unmeasured_sentence(out.unmeasured, out.marked, out.best_checked), style="yellow")
            t.append("\n")
        if out.spilling_summary:
            t.append(out.spilling_summary, style="yellow")
            t.append("\n")
        fixed = " ".join(f"{n}={v}" for n, v in job.fixed)
        t.append((f"fixed {fixed}" if fixed else "nothing fixed") + compiled_as(out.codegen), style="dim")
        if out.infeasible:
            t.append("; infeasible: " + ", ".join(f"{count(n)} {why}" for why, n in out.infeasible.items()),
                     style="dim")
        return t

    def action_focus_sweep(self) -> None:
        self.query_one(SweepList).focus()

    def row_params(self, row: int) -> dict:
        if 0 <= row < len(self.rows):
            return dict(self.rows[row]["params"])
        return {}

    def _row_point(self):
        row = self.query_one(TopTable).cursor_row
        if 0 <= row < len(self.rows):
            r = self.rows[row]
            return float(r["predicted_ns"]), float(r[self.outcome.onchip_key])
        return None

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self.query_one(Scatter).select(self._row_point())

    def on_sweep_list_changed(self, event: SweepList.Changed) -> None:
        event.stop()
        self.app.explore_inputs_changed()

