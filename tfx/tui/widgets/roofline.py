"""Pane 3, Roofline & occupancy, with the kernel-parameter editor on its left."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import DataTable, Static

from tfx.tui.core import fmt_bytes, fmt_metric, fmt_ns, num, pct_change


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


class RooflinePane(Horizontal):
    DEFAULT_CSS = """
    RooflinePane { height: 1fr; }
    RooflinePane ParamsTable { width: 22; height: 1fr; border-right: tall $panel; }
    RooflinePane VerticalScroll { width: 1fr; height: 1fr; }
    """

    def compose(self) -> ComposeResult:
        yield ParamsTable(id="params-table", cursor_type="row")
        with VerticalScroll():
            yield Static(id="roofline-text")

    def show(self, outcome, overrides: dict) -> None:
        a = outcome.analysis
        table = self.query_one(ParamsTable)
        row = table.cursor_row
        if table.columns == {} or not table.columns:
            table.add_columns("param", "value", "")
        table.clear()
        for p in a.kernel.params:
            table.add_row(p.name, str(a.params.get(p.name)), "*" if p.name in overrides else "",
                          key=p.name)
        if 0 <= row < table.row_count:
            table.move_cursor(row=row, animate=False)
        self.query_one("#roofline-text", Static).update(roofline_text(outcome))


def roofline_text(outcome) -> Text:
    a = outcome.analysis
    m = a.metrics
    t = Text()
    t.append("Roofline  ", style="bold")
    t.append(f"bound by {m.get('roofline.bound_by', '?')}")
    if "roofline.memory_level" in m:
        t.append(f" ({m['roofline.memory_level']})")
    t.append("\n")
    t.append(f"  compute {fmt_ns(m['roofline.compute_ns'])}   memory {fmt_ns(m['roofline.memory_ns'])}"
             f"   ideal {fmt_ns(m['roofline.ideal_ns'])}\n")
    for k in sorted(k for k in m if k.startswith("roofline.memory_ns.")):
        t.append(f"    {k.split('.')[-1]:<6} {fmt_ns(m[k])}\n", style="dim")
    t.append("Predicted ", style="bold")
    t.append(f"{fmt_ns(m['performance.predicted_ns'])}", style="bold")
    t.append(f"  (bound engine {m.get('performance.bound_engine', '?')}, "
             f"{num(m['performance.waves']):.2f} waves)\n")
    for term in a.terms:
        t.append(f"  {term.name:<10}", style="cyan")
        t.append(f"{fmt_ns(term.ns):>10}  {term.detail}\n")
    t.append("Occupancy ", style="bold")
    if a.occupancy is None:
        t.append("no occupancy model for this hardware\n")
    else:
        lines = a.occupancy.explanation()
        t.append(lines[0] + "\n")
        for line in lines[1:]:
            t.append(f"  {line}\n")
        r = a.resources
        t.append(f"  uses {r.threads} threads, {r.regs_per_thread} regs/thread, "
                 f"{fmt_bytes(r.smem_dynamic + r.smem_static)} smem per CTA ({r.origin})\n", style="dim")
    if outcome.hint is not None:
        t.append(f"At occupancy {outcome.hint}", style="bold")
        t.append(f" ({'the kernel' + chr(39) + 's hint' if a.occupancy and a.occupancy.hint else 'one more CTA/SM'})\n")
        t.append(f"  {outcome.hint_note}\n")
        h = outcome.hinted
        if h is not None:
            p0, p1 = num(m["performance.predicted_ns"]), num(h.metrics["performance.predicted_ns"])
            t.append(f"  predicted {fmt_ns(p0)} -> {fmt_ns(p1)}{pct_change(p0, p1)}; "
                     f"{h.occupancy.summary()}\n")
    for w in a.warnings:
        t.append(f"warning: {w}\n", style="yellow")
    return t
