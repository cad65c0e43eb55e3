"""TableSync (tfx/tui/widgets/tables.py): an edit rewrites only the cells that changed, and the
columns come out as wide as a table built afresh, measured once a column (not once a changed
cell). Widths by hand: a column is as wide as its widest cell or its label, in terminal cells."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import DataTable

from tfx.tui.widgets import tables
from tfx.tui.widgets.tables import TableSync

from test_tui_support import run


class _TableApp(App):
    def compose(self) -> ComposeResult:
        yield DataTable()


async def _widths(steps) -> list:
    """The columns' content widths after showing each rows list of ``steps`` in turn."""
    app = _TableApp()
    async with app.run_test() as pilot:
        table = app.query_one(DataTable)
        sync = TableSync()
        for rows in steps:
            sync.show(table, ("name", "value"), [r[0] for r in rows], rows)
            await pilot.pause()
        return [c.content_width for c in table.columns.values()]


def test_a_column_shrinks_and_grows_as_a_fresh_table():
    first = [("a", "1,234.56 us"), ("b", "7.00 ns"), ("c", "12.0 us")]
    # "a" shrinks from 11 cells to 4, "c" grows from 7 to 9: the column is 9 wide (the label
    # "value" is 5); a table built with these rows at once is 9 wide too
    second = [("a", "1 us"), ("b", "7.00 ns"), ("c", "123.45 us")]
    assert run(_widths([first])) == [4, 11]             # "name" 4 > "a" 1; "1,234.56 us" 11
    assert run(_widths([first, second])) == [4, 9]
    assert run(_widths([second])) == [4, 9]
    # every cell shrinks: the widest changed one (7.00 -> "2 ns", 4) is narrower than the column
    # (9), so the table measures the column again: the label's 5
    third = [("a", "1 us"), ("b", "2 ns"), ("c", "3 s")]
    assert run(_widths([second, third])) == [4, 5]
    # markup is read as the table reads it: "[b]12[/b] us" is 5 cells, not 12
    assert run(_widths([first, [("a", "[b]12[/b] us"), ("b", "7 ns"), ("c", "1 s")]])) == [4, 5]


def test_the_column_is_sized_by_its_widest_changed_cell_only():
    # three changed cells of widths 4, 9 and 3 ("[i]1[/i] s" shows "1 s"): the 9 sizes the column
    cells = [("a", "1 us"), ("b", "123.45 us"), ("c", "[i]1[/i] s")]
    assert [tables._one_line_width(v) for _, v in cells] == [4, 9, 3]
    assert tables._width_cells(cells) == [("b", "123.45 us")]
    # a cell that is not one line of text: every changed cell sizes the column, as before
    assert tables._width_cells([("a", "1\n2"), ("b", "3")]) == [("a", "1\n2"), ("b", "3")]
