"""Pane 3, Roofline & occupancy, with the kernel-parameter editor on its left.

On the right, above the text: the roofline as a log-log chart (arithmetic intensity
across, attainable flop/s up), one roof per memory level, the kernel's point (at its
predicted time) and each scope's (at its roofline time), drawn on the braille canvas
of ``tfx.tui.canvas`` (see ``core.roofline_chart`` for where each number comes from).
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widget import Widget
from textual.widgets import DataTable, Static

from tfx.present import analysis_report as report
from tfx.present.formatting import allocation, bandwidth, counted, ns as fmt_ns, num, pct_change
from tfx.tui.canvas import log_span, loglog_rows
from tfx.tui.core import roofline_chart
from tfx.tui.widgets import layout_if_resized
from tfx.tui.widgets.tables import TableSync


class ParamsTable(DataTable):
    BINDINGS = [
        Binding("enter", "edit", "Edit param", id="params.edit"),
        Binding("e", "edit", "Edit param", id="params.edit_e", show=False),
        Binding("x", "scale(2)", "x2", id="params.double"),
        Binding("h", "scale(0.5)", "/2", id="params.halve"),
    ]

    def action_edit(self) -> None:
        name = self._param_name()
        if name:
            self.app.prompt_param(name)

    def action_scale(self, factor: float) -> None:
        name = self._param_name()
        if name:
            cur = self.app.analysis.params.get(name) if self.app.analysis else None
            if cur is not None:
                self.app.set_param(name, str(max(1, int(num(cur) * factor))))

    def _param_name(self) -> str | None:
        if self.row_count == 0:
            return None
        return str(self.get_row_at(self.cursor_row)[0])


PARAM_COLUMNS = ("param", "value", "set")


class RooflineText(Static):
    """The roofline, terms and occupancy text, wrapped to the widget's width with hanging
    indents (a wrapped term's detail stays in its column)."""

    def show(self, outcome, measured: str | None = None) -> None:
        self.outcome, self.measured = outcome, measured
        self._width = self.size.width
        # wrapped to the pane's width: laid out again only where its count of lines moves
        self.update(roofline_text(outcome, self._width or None, measured), layout=False)
        layout_if_resized(self)

    def on_resize(self) -> None:
        if getattr(self, "outcome", None) is not None and self.size.width != self._width:
            self.show(self.outcome, self.measured)


ROOF_STYLES = ("cyan", "magenta", "yellow", "blue", "green", "red")
SCOPE_LAYER, KERNEL_LAYER = 8, 9
LAYER_STYLES = {SCOPE_LAYER: "bold white", KERNEL_LAYER: "bold red"}
CHART_ROWS = 9              # canvas lines (36 dots up)
LABEL_W = 5                 # "100T" and a space


def chart_text(chart, width: int) -> Text:
    """The chart as Rich text ``width`` cells wide: y labels, the canvas, the x axis and a legend."""
    t = Text()
    if chart is None:
        t.append("no roofline chart: the kernel does no flops or moves no bytes\n", style="dim")
        return t
    cw = max(width - LABEL_W - 1, 10)
    xs = [x for _l, x, _y in chart.scopes] + [chart.peak / bw for _l, bw in chart.roofs]
    ys = [y for _l, _x, y in chart.scopes]
    if chart.kernel is not None:
        xs.append(chart.kernel[0])
        ys.append(chart.kernel[1])
    x_span = log_span(min(xs), max(xs), 2.0)
    x_lo, x_hi = 10.0 ** x_span[0], 10.0 ** x_span[1]
    ys += [min(chart.peak, bw * x_lo) for _l, bw in chart.roofs]
    y_span = log_span(min(ys), chart.peak)
    lines = []
    for i, (_level, bw) in enumerate(chart.roofs):
        ridge = chart.peak / bw
        pts = [(x_lo, min(chart.peak, bw * x_lo))]
        if x_lo < ridge < x_hi:
            pts.append((ridge, chart.peak))
        pts.append((x_hi, min(chart.peak, bw * x_hi)))
        lines.append((pts, i % len(ROOF_STYLES)))
    marks = [(x, y, "•", SCOPE_LAYER) for _l, x, y in chart.scopes]
    if chart.kernel is not None:
        marks.append((*chart.kernel, "●", KERNEL_LAYER))
    rows, axis = loglog_rows(cw, CHART_ROWS, x_span, y_span, lines, marks)
    t.append("Roofline chart", style="bold")
    t.append("  flop/s vs flop/byte, log-log\n", style="dim")
    for row in rows:
        t.append(row.label.rjust(LABEL_W - 1)[:LABEL_W - 1] + " ", style="dim")
        t.append("│", style="dim")
        for ch, layer in zip(row.text, row.layers):
            t.append(ch, style=LAYER_STYLES.get(layer, ROOF_STYLES[layer % len(ROOF_STYLES)]
                                         if layer >= 0 else ""))
        t.append("\n")
    t.append(" " * LABEL_W + "└" + "─" * cw + "\n", style="dim")
    t.append(" " * (LABEL_W + 1) + axis.rstrip() + "\n", style="dim")
    t.append(" " * (LABEL_W + 1) + f"flop/byte at {chart.level}\n", style="dim")
    legend = Text(" " * (LABEL_W + 1))
    for i, (level, bw) in enumerate(chart.roofs):
        legend.append("── ", style=ROOF_STYLES[i % len(ROOF_STYLES)])
        legend.append(f"{level} {bandwidth(bw, 3)}  ")
    if legend.cell_len + 20 > width:          # the marks on a line of their own
        t.append_text(legend)
        t.append("\n")
        legend = Text(" " * (LABEL_W + 1))
    legend.append("● ", style=LAYER_STYLES[KERNEL_LAYER])
    legend.append("kernel  ")
    if chart.scopes:
        legend.append("• ", style=LAYER_STYLES[SCOPE_LAYER])
        legend.append("scopes")
    t.append_text(legend)
    t.append("\n")
    return t


class RooflineChartView(Widget):
    """The chart, drawn at the widget's width each time it renders (so a frame never shows
    it at a stale width), as tall as its text."""

    DEFAULT_CSS = "RooflineChartView { height: auto; }"

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.chart = None
        self.shown = False

    def show(self, analysis) -> None:
        self.chart = roofline_chart(analysis)
        self.shown = True
        self.refresh()
        layout_if_resized(self)

    def render(self) -> Text:
        return chart_text(self.chart, self.size.width or 60) if self.shown else Text("")

    def get_content_height(self, container, viewport, width: int) -> int:
        return len(chart_text(self.chart, width).plain.splitlines()) if self.shown else 0


class RooflinePane(Horizontal):
    DEFAULT_CSS = """
    RooflinePane { height: 1fr; }
    RooflinePane ParamsTable { width: 22; height: 1fr; border-right: tall $panel; }
    RooflinePane VerticalScroll { width: 1fr; height: 1fr; }
    """

    def compose(self) -> ComposeResult:
        self._table_sync = TableSync()
        yield ParamsTable(id="params-table", cursor_type="row")
        with VerticalScroll():
            yield RooflineChartView(id="roofline-chart")
            yield RooflineText(id="roofline-text")

    def show(self, outcome, overrides: dict, measured: str | None = None) -> None:
        """The parameters (only changed cells are rewritten after an edit) and the text."""
        from tfx.ir.bind import profile_dependent
        a = outcome.analysis
        table = self.query_one(ParamsTable)
        # "*": set by you; "hw": the machine's count (NUM_SMS = units(sm)), which a knob moves
        machine = profile_dependent(a.kernel, overrides)
        rows = [(p.name, str(a.params.get(p.name)),
                 "*" if p.name in overrides else ("hw" if p.name in machine else ""))
                for p in a.kernel.params]
        self._table_sync.show(table, PARAM_COLUMNS, (r[0] for r in rows), rows, labels={"set": ""})
        self.query_one(RooflineChartView).show(a)
        self.query_one(RooflineText).show(outcome, measured)


def _wrap(t: Text, body: str, width: int | None, col: int = 0, indent: int = 2,
          style: str = "") -> None:
    """Append ``body`` and a newline to a line that already holds ``col`` cells; it wraps at
    ``width`` and each continuation line starts at ``indent`` (a hanging indent)."""
    import textwrap
    if not width or col + len(body) <= width or width - max(col, indent) < 12:
        t.append(body + "\n", style=style)
        return
    lead = len(body) - len(body.lstrip(" "))
    first = textwrap.wrap(body, width - col, break_long_words=False, break_on_hyphens=False,
                          drop_whitespace=True)
    t.append(" " * lead + (first[0] if first else "") + "\n", style=style)
    rest = " ".join(body.split()[len(first[0].split()) if first else 0:])
    for line in textwrap.wrap(rest, width - indent, break_long_words=False, break_on_hyphens=False):
        t.append(" " * indent + line + "\n", style=style)


def roofline_text(outcome, width: int | None = None, measured: str | None = None) -> Text:
    a = outcome.analysis
    m = a.metrics
    t = Text()
    t.append("Roofline  ", style="bold")
    t.append(f"bound by {m.get('roofline.bound_by', '?')}\n")
    t.append("  ")
    _wrap(t, f"compute {fmt_ns(m['roofline.compute_ns'])}   memory {fmt_ns(m['roofline.memory_ns'])}"
          f"   ideal {fmt_ns(m['roofline.ideal_ns'])}", width, 2, 4)
    for name, time, share in report.roofline_terms(a):
        t.append(f"    {name:<8} {time:>10} {share:>7} of the ideal\n", style="dim")
    pred = fmt_ns(m["performance.predicted_ns"])
    t.append("Predicted ", style="bold")
    t.append(pred, style="bold")
    _wrap(t, f"  (bound by {m.get('performance.bound_by', '?')}, "
          f"{counted(m['performance.waves'], 'wave')})", width, 10 + len(pred), 10)
    t.append("  ")
    _wrap(t, report.beyond_roofline(a), width, 2, 4)
    if measured is not None:                   # tfx open --measured
        t.append("Measured  ", style="bold")
        _wrap(t, measured, width, 10, 10)
    for term in a.terms:
        t.append(f"  {term.name:<10}", style="cyan")
        t.append(f"{fmt_ns(term.ns):>10}  ")
        _wrap(t, term.detail, width, 24, 24)
    t.append("Occupancy ", style="bold")
    if a.occupancy is None:
        t.append("no occupancy model for this hardware\n")
    else:
        lines = a.occupancy.explanation()
        _wrap(t, lines[0], width, 10, 10)
        for line in lines[1:]:
            t.append("  ")
            _wrap(t, line, width, 2, 4)
        r = a.resources
        t.append("  ")
        _wrap(t, f"uses {r.threads} threads, {r.regs_per_thread} regs/thread, "
              f"{allocation(r.smem_dynamic + r.smem_static)} smem per CTA ({r.origin})", width, 2, 4,
              style="dim")
        for estimate in (report.estimated_registers_line(a), report.estimated_smem_line(a)):
            if estimate is not None:
                t.append("  ")
                _wrap(t, estimate, width, 2, 4, style="dim")
    if outcome.hint is not None:
        t.append(f"At occupancy {outcome.hint}", style="bold")
        t.append(f" ({'the kernel' + chr(39) + 's hint' if a.occupancy and a.occupancy.hint else 'one more CTA/SM'})\n")
        t.append("  ")
        _wrap(t, outcome.hint_note, width, 2, 4)
        h = outcome.hinted
        if h is not None:
            p0, p1 = num(m["performance.predicted_ns"]), num(h.metrics["performance.predicted_ns"])
            t.append("  ")
            _wrap(t, f"predicted {fmt_ns(p0)} -> {fmt_ns(p1)}{pct_change(p0, p1)}; "
                  f"{h.occupancy.summary()}", width, 2, 4)
    for w in a.warnings:
        t.append("warning: ", style="yellow")
        _wrap(t, str(w), width, 9, 2, style="yellow")
    return t
