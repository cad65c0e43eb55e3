"""Pane 2, Traffic: one row per scope, flops and bytes per storage level in one counting domain."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from tfx.present.analysis_report import traffic_table
from tfx.tui.widgets.tables import TableSync


class TrafficPane(Vertical):
    DEFAULT_CSS = """
    TrafficPane { height: 1fr; }
    TrafficPane #traffic-caption { height: 1; }
    TrafficPane DataTable { height: 1fr; }
    """

    def compose(self) -> ComposeResult:
        self._table_sync = TableSync()
        yield Static(id="traffic-caption")
        yield DataTable(id="traffic-table", zebra_stripes=True, cursor_type="row")

    def show(self, analysis, domain: str) -> None:
        """Fill the table; with the same scopes and columns as before (an edit), only the
        cells that changed are rewritten."""
        table = self.query_one(DataTable)
        tt = traffic_table(analysis, domain)
        self.scope_ids = tt.keys
        self._table_sync.show(table, tt.columns, tt.keys, tt.rows)
        # height 1, the pane's width: a new caption repaints in place (no layout of the screen)
        self.query_one("#traffic-caption", Static).update(
            f"domain [b]{domain}[/b] (d cycles)  {tt.note}", layout=False)

    def cell(self, scope_id: str, column: str) -> str:
        table = self.query_one(DataTable)
        col = list(self._table_sync.columns).index(column)
        return str(table.get_row(scope_id)[col])
