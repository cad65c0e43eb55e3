"""Pane 6, Hardware: the profile's facts (value, unit, origin) and the knob editor."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from tfx.tui.core import fmt_fact


class FactsTable(DataTable):
    BINDINGS = [
        Binding("enter", "edit", "Edit", id="hw.edit"),
        Binding("e", "edit", "Edit", id="hw.edit_e", show=False),
        Binding("x", "nudge(2)", "x2", id="hw.double"),
        Binding("h", "nudge(0.5)", "/2", id="hw.halve"),
        Binding("z", "reset", "Reset", id="hw.reset"),
        Binding("Z", "reset_all", "Reset all", id="hw.reset_all"),
        Binding("w", "save", "Save as", id="hw.save"),
    ]

    def _fact_path(self) -> str | None:
        if self.row_count == 0:
            return None
        return str(self.get_row_at(self.cursor_row)[0])

    def action_edit(self) -> None:
        if (p := self._fact_path()):
            self.app.prompt_knob(p)

    def action_nudge(self, factor: float) -> None:
        if (p := self._fact_path()):
            self.app.nudge_knob(p, factor)

    def action_reset(self) -> None:
        if (p := self._fact_path()):
            self.app.reset_knob(p)

    def action_reset_all(self) -> None:
        self.app.reset_all_knobs()

    def action_save(self) -> None:
        self.app.action_save_profile()


class HardwarePane(Vertical):
    DEFAULT_CSS = """
    HardwarePane { height: 1fr; }
    HardwarePane #hw-caption { height: 1; }
    HardwarePane FactsTable { height: 1fr; }
    HardwarePane #hw-source { height: 2; color: $text-muted; }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="hw-caption")
        yield FactsTable(id="facts-table", cursor_type="row", zebra_stripes=True)
        yield Static(id="hw-source")

    def show(self, profile, knobs: dict) -> None:
        table = self.query_one(FactsTable)
        row = table.cursor_row
        if not table.columns:
            table.add_columns("fact", "value", "origin", "knob")
        table.clear()
        self._facts = {}
        for path, fact in profile.facts():
            self._facts[path] = fact
            table.add_row(path, fmt_fact(fact), fact.origin or "-", knobs.get(path, ""), key=path)
        if 0 <= row < table.row_count:
            table.move_cursor(row=row, animate=False)
        n = len(knobs)
        self.query_one("#hw-caption", Static).update(
            f"[b]{profile.name}[/b] ({profile.kind}) {profile.description[:60]}"
            + (f"  [yellow]{n} knob{'s' if n != 1 else ''} set[/yellow]" if n else ""))
        self._source()

    def _source(self) -> None:
        table = self.query_one(FactsTable)
        if table.row_count == 0:
            return
        path = str(table.get_row_at(table.cursor_row)[0])
        f = self._facts.get(path)
        text = (f.source or f.unavailable or "") if f is not None else ""
        self.query_one("#hw-source", Static).update(f"{path}: {text}")

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if getattr(self, "_facts", None):
            self._source()
