"""Pane 2, Traffic: one row per scope, flops and bytes per storage level in one counting domain."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from tfx.tui.core import traffic_table


class TrafficPane(Vertical):
    DEFAULT_CSS = """
    TrafficPane { height: 1fr; }
    TrafficPane #traffic-caption { height: 1; }
    TrafficPane DataTable { height: 1fr; }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="traffic-caption")
        yield DataTable(id="traffic-table", zebra_stripes=True, cursor_type="row")

    def show(self, analysis, domain: str) -> None:
        table = self.query_one(DataTable)
        tt = traffic_table(analysis, domain)
        self.scope_ids = tt.keys
        row = table.cursor_row
        cols = tuple(tt.columns)
        if getattr(self, "_cols", None) != cols:
            table.clear(columns=True)
            table.add_columns(*cols)
            self._cols = cols
        else:
            table.clear()
        for key, r in zip(tt.keys, tt.rows):
            table.add_row(*r, key=key)
        if 0 <= row < len(tt.rows):
            table.move_cursor(row=row, animate=False)
        self.query_one("#traffic-caption", Static).update(
            f"domain [b]{domain}[/b] (d cycles logical/total/per-unit)  "
            "time% = the scope's roofline time over the kernel's")

    def cell(self, scope_id: str, column: str) -> str:
        table = self.query_one(DataTable)
        col = list(self._cols).index(column)
        return str(table.get_row(scope_id)[col])
