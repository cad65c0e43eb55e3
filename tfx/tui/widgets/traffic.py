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
        """Fill the table; with the same scopes and columns as before (an edit), only the
        cells that changed are rewritten."""
        table = self.query_one(DataTable)
        tt = traffic_table(analysis, domain)
        self.scope_ids = tt.keys
        cols, keys = tuple(tt.columns), tuple(tt.keys)
        if cols != getattr(self, "_cols", None) or keys != getattr(self, "_keys", None):
            row = table.cursor_row
            table.clear(columns=True)
            for c in cols:
                table.add_column(c, key=c)
            for key, r in zip(tt.keys, tt.rows):
                table.add_row(*r, key=key)
            if 0 <= row < len(tt.rows):
                table.move_cursor(row=row, animate=False)
            self._cols, self._keys = cols, keys
        else:
            for key, new, old in zip(keys, tt.rows, self._rows):
                for col, a, b in zip(cols, new, old):
                    if a != b:
                        table.update_cell(key, col, a, update_width=True)
        self._rows = tt.rows
        self.query_one("#traffic-caption", Static).update(
            f"domain [b]{domain}[/b] (d cycles)  time% = the scope's roofline time over the kernel's")

    def cell(self, scope_id: str, column: str) -> str:
        table = self.query_one(DataTable)
        col = list(self._cols).index(column)
        return str(table.get_row(scope_id)[col])
