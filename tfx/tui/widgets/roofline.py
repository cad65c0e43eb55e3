"""Pane 3, Roofline & occupancy, with the kernel-parameter editor on its left."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import DataTable, Static

from tfx.tui.core import fmt_bytes, fmt_ns, num, pct_change
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

    def show(self, outcome) -> None:
        self.outcome = outcome
        self._width = self.size.width
        self.update(roofline_text(outcome, self._width or None))

    def on_resize(self) -> None:
        if getattr(self, "outcome", None) is not None and self.size.width != self._width:
            self.show(self.outcome)


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
            yield RooflineText(id="roofline-text")

    def show(self, outcome, overrides: dict) -> None:
        """The parameters (only changed cells are rewritten after an edit) and the text."""
        a = outcome.analysis
        table = self.query_one(ParamsTable)
        rows = [(p.name, str(a.params.get(p.name)), "*" if p.name in overrides else "")
                for p in a.kernel.params]
        self._table_sync.show(table, PARAM_COLUMNS, (r[0] for r in rows), rows, labels={"set": ""})
        self.query_one(RooflineText).show(outcome)


def _wrap(t: Text, body: str, width: int | None, col: int = 0, indent: int = 2,
          style: str = "") -> None:
    """Append ``body`` and a newline to a line that already holds ``col`` cells; it wraps at
    ``width`` and each continuation line starts at ``indent`` (a hanging indent)."""
    import textwrap
    if not width or col + len(body) <= width or width - max(col, indent) < 12:
        t.append(body + "\n", style=style)
        return
    lead = len(body) - len(body.lstrip(" "))
    first = textwrap.wrap(body, width - col, break_long_words=False, drop_whitespace=True)
    t.append(" " * lead + (first[0] if first else "") + "\n", style=style)
    rest = " ".join(body.split()[len(first[0].split()) if first else 0:])
    for line in textwrap.wrap(rest, width - indent, break_long_words=False):
        t.append(" " * indent + line + "\n", style=style)


def roofline_text(outcome, width: int | None = None) -> Text:
    a = outcome.analysis
    m = a.metrics
    t = Text()
    t.append("Roofline  ", style="bold")
    t.append(f"bound by {m.get('roofline.bound_by', '?')}")
    if "roofline.memory_level" in m:
        t.append(f" ({m['roofline.memory_level']})")
    t.append("\n")
    t.append("  ")
    _wrap(t, f"compute {fmt_ns(m['roofline.compute_ns'])}   memory {fmt_ns(m['roofline.memory_ns'])}"
          f"   ideal {fmt_ns(m['roofline.ideal_ns'])}", width, 2, 4)
    for k in sorted(k for k in m if k.startswith("roofline.memory_ns.")):
        t.append(f"    {k.split('.')[-1]:<6} {fmt_ns(m[k])}\n", style="dim")
    pred = fmt_ns(m["performance.predicted_ns"])
    t.append("Predicted ", style="bold")
    t.append(pred, style="bold")
    _wrap(t, f"  (bound engine {m.get('performance.bound_engine', '?')}, "
          f"{num(m['performance.waves']):.2f} waves)", width, 10 + len(pred), 10)
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
              f"{fmt_bytes(r.smem_dynamic + r.smem_static)} smem per CTA ({r.origin})", width, 2, 4,
              style="dim")
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
