"""Pane 6, Hardware: the profile's facts (value, unit, origin) and the knob editor."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from tfx.hw.units import format_scale
from tfx.present.formatting import counted, fact as fmt_fact
from tfx.tui.widgets.tables import TableSync


COLUMNS = ("fact", "value", "knob", "origin")


def knob_label(text, base, path: str) -> str:
    """The knob as the user wrote it (``3.2TB/s``, ``x2``); a bare number (what ``x``/``h``
    send) as a factor of the profile's own value, ``x2`` or ``x0.5``."""
    if text is None:
        return ""
    try:
        value = float(text)
        old = base.fact(path).value if base is not None else None
    except (TypeError, ValueError, KeyError, AttributeError):
        return str(text)
    if not old:
        return str(text)
    return format_scale(value / float(old), 4)


class FactsTable(DataTable):
    BINDINGS = [
        Binding("enter", "edit", "Edit", id="hw.edit"),
        Binding("e", "edit", "Edit", id="hw.edit_e", show=False),
        Binding("x", "nudge(2)", "x2", id="hw.double"),
        Binding("h", "nudge(0.5)", "/2", id="hw.halve"),
        Binding("z", "reset", "Reset", id="hw.reset"),
        Binding("Z", "reset_all", "Reset all", id="hw.reset_all", show=False),
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
    HardwarePane #hw-caption { height: 1; text-wrap: nowrap; text-overflow: ellipsis; }
    HardwarePane FactsTable { height: 1fr; }
    HardwarePane #hw-source { height: 2; color: $text-muted; }
    """

    def compose(self) -> ComposeResult:
        self._table_sync = TableSync()
        yield Static(id="hw-caption")
        yield FactsTable(id="facts-table", cursor_type="row", zebra_stripes=True)
        yield Static(id="hw-source")

    def show(self, profile, knobs: dict, base=None) -> None:
        """Fill the table; when the facts are the same list as before (a knob edit), only the
        cells that changed are rewritten, so a keystroke costs what it changes."""
        table = self.query_one(FactsTable)
        self._facts = dict(profile.facts())
        rows = [(path, fmt_fact(f), knob_label(knobs.get(path), base, path), f.origin or "-")
                for path, f in self._facts.items()]
        self._table_sync.show(table, COLUMNS, (r[0] for r in rows), rows)
        n = len(knobs)
        caption = Text(no_wrap=True, overflow="ellipsis")
        caption.append(profile.name, style="bold")
        caption.append(f" ({profile.kind}) ")
        if n:
            caption.append(f"{counted(n, 'knob')} set  ", style="yellow")
        caption.append(profile.description, style="dim")
        # #hw-caption (height 1) and #hw-source (height 2) at the pane's width: a new text
        # repaints in place, no layout of the screen
        self.query_one("#hw-caption", Static).update(caption, layout=False)
        self._source()

    def _source(self) -> None:
        table = self.query_one(FactsTable)
        if table.row_count == 0:
            return
        path = str(table.get_row_at(table.cursor_row)[0])
        f = self._facts.get(path)
        text = (f.source or f.unavailable or "") if f is not None else ""
        self.query_one("#hw-source", Static).update(f"{path}: {text}", layout=False)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if getattr(self, "_facts", None):
            self._source()
