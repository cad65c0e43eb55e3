"""Keeping a DataTable in step with rows that an edit changes only a little."""

from __future__ import annotations


class TableSync:
    """Shows (columns, row keys, rows) in a DataTable: rebuilt when its columns or row keys
    change, otherwise only the cells that changed are rewritten, so a keystroke costs what
    it changes (a rebuild repaints and resizes every row)."""

    def __init__(self) -> None:
        self.columns: tuple | None = None
        self.keys: tuple | None = None
        self.rows: list | None = None

    def show(self, table, columns, keys, rows, labels: dict | None = None) -> None:
        columns, keys, rows = tuple(columns), tuple(keys), list(rows)
        if columns != self.columns or keys != self.keys:
            cursor = table.cursor_row
            table.clear(columns=True)
            for c in columns:
                table.add_column((labels or {}).get(c, c), key=c)
            for key, row in zip(keys, rows):
                table.add_row(*row, key=key)
            if 0 <= cursor < len(rows):
                table.move_cursor(row=cursor, animate=False)
        else:
            for key, new, old in zip(keys, rows, self.rows):
                for column, a, b in zip(columns, new, old):
                    if a != b:
                        table.update_cell(key, column, a, update_width=True)
        self.columns, self.keys, self.rows = columns, keys, rows
