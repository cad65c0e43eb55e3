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
            changed: dict = {}            # column -> [(row key, value), ...] that changed
            for key, new, old in zip(keys, rows, self.rows):
                for column, a, b in zip(columns, new, old):
                    if a != b:
                        changed.setdefault(column, []).append((key, a))
            for column, cells in changed.items():
                sizing = {id(c) for c in _width_cells(cells)}
                for cell in cells:
                    table.update_cell(cell[0], column, cell[1], update_width=id(cell) in sizing)
        self.columns, self.keys, self.rows = columns, keys, rows


def _width_cells(cells: list) -> list:
    """The changed cells of one column that the table is to size the column by. A cell that
    is narrower than its column makes the table measure the whole column again, so sizing by
    every changed cell cost rows x changed cells a keystroke (~3,700 cells on the sip decode
    kernels' Traffic table). By the widest changed cell alone the column comes out the same:
    narrower than the column, it is measured again in full; else it is the widest cell there
    is (the others are no wider than the column was, or than it). Where a cell is not one
    line of text, every changed cell, as before."""
    widths = [_one_line_width(v) for _, v in cells]
    if len(cells) == 1 or None in widths:
        return cells
    return [cells[max(range(len(cells)), key=widths.__getitem__)]]


def _one_line_width(value) -> int | None:
    """The cells a one-line table cell takes as the DataTable measures it (a str is read as
    markup, as the table reads it); None for anything else."""
    from rich.text import Text
    if isinstance(value, str):
        if "\n" in value:
            return None
        value = Text.from_markup(value, end="")
    if not isinstance(value, Text) or "\n" in value.plain:
        return None
    return value.cell_len
