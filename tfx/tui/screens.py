"""Modal screens: the F1 help and the one-line value prompt used by every editor."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

HELP = """\
[b]tfx open[/b]: one kernel on one hardware profile. Every edit reruns the
analysis in a worker process; the line above the footer says what moved.

[b]Anywhere[/b]
  1..6     IR, Traffic, Roofline, Timeline, Explore, Hardware
  ctrl+p   commands: go to scope, set knob or parameter, switch profile
  r        reload the kernel file (it also reloads by itself when saved)
  p        pin this analysis: later edits are compared with it (A/B)
  b        the A/B table, metric by metric   P  unpin
  d        counting domain: logical, total, cta, warp, thread
  g        code generator: triton, cutlass (every pane reprices)
  c        run check: execute the kernel small on random data (tfx run)
  ctrl+s   save the screen (SVG)     ctrl+j  save the analysis (JSON)
  ctrl+t   save the timeline (Chrome trace)
  f1       this help                 q       quit

[b]IR[/b]        up/down/enter in the scope tree; its records follow.
[b]Traffic[/b]   one row per scope, in the counting domain (d).
[b]Roofline[/b]  left, the kernel parameters: enter or e types a value,
          x doubles, h halves; right, bound, terms, occupancy and
          what the next occupancy would gain.
[b]Timeline[/b]  +/- zoom, left/right pan, home/end.
[b]Explore[/b]   sweeps the ticked parameters over their declared domains,
          the others fixed where they are (the shape, by default).
          up/down choose a row (marked on the scatter), enter loads
          it as a parameter edit; s goes to the parameter list,
          where space ticks or unticks one; escape comes back.
[b]Hardware[/b]  enter or e types a value (3.2TB/s, 1.2e12, x2, /2);
          x doubles, h halves, z resets the fact, Z resets all,
          w saves a new profile under your config folder.

[dim]escape or f1 closes[/dim]"""


class HelpScreen(ModalScreen[None]):
    """A scrollable page of key help; subclasses set TEXT and WIDTH (the model screen's)."""

    TEXT = HELP
    WIDTH = 78
    BINDINGS = [
        Binding("escape", "dismiss", "Close", id="help.close"),
        Binding("f1", "dismiss", "Close", id="help.close_f1", show=False),
        Binding("q", "dismiss", "Close", id="help.close_q", show=False),
    ]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { max-width: 100%; height: auto; max-height: 100%;
        border: round $accent; background: $surface; padding: 0 1; }
    """

    def compose(self) -> ComposeResult:
        scroll = VerticalScroll()
        scroll.styles.width = self.WIDTH
        with scroll:
            yield Static(self.TEXT, markup=True)


class PromptScreen(ModalScreen[str | None]):
    """Asks for one value; dismisses with the text, or None on escape."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="prompt.cancel")]
    DEFAULT_CSS = """
    PromptScreen { align: center middle; }
    PromptScreen > Vertical { width: 70; max-width: 100%; height: auto; border: round $accent;
        background: $surface; padding: 0 1; }
    """

    def __init__(self, title: str, value: str = "", hint: str = "", typed: str = "") -> None:
        """``value``: the proposed text (selected, so typing replaces it); ``typed``: what
        the user already typed to open the prompt (kept, the cursor after it)."""
        super().__init__()
        self.title_text = title
        self.value = typed or value
        self.typed = typed
        self.hint = hint

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.title_text)
            yield Input(value=self.value, id="prompt-input", select_on_focus=not self.typed)
            if self.hint:
                yield Label(self.hint, classes="dim")

    def on_mount(self) -> None:
        inp = self.query_one(Input)
        inp.cursor_blink = self.app.cursor_blink_enabled
        inp.focus()

    def on_key(self, event) -> None:
        """Keys typed before the input has focus (a fast typist, a paste) go into it, not to
        the screen below or the bindings."""
        inp = self.query_one(Input)
        if not inp.has_focus and event.is_printable:
            if inp.select_on_focus and inp.value == self.value and not self.typed:
                inp.value = ""                  # typing replaces the proposal, as it would
                inp.select_on_focus = False
            inp.insert_text_at_cursor(event.character)
            event.stop()
            event.prevent_default()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)


class PinScreen(ModalScreen[None]):
    """A/B: every metric that differs between the pinned analysis and the shown one."""

    BINDINGS = [
        Binding("escape", "dismiss", "Close", id="pin.close"),
        Binding("b", "dismiss", "Close", id="pin.close_b", show=False),
        Binding("q", "dismiss", "Close", id="pin.close_q", show=False),
    ]
    DEFAULT_CSS = """
    PinScreen { align: center middle; }
    PinScreen > Vertical { width: 100%; max-width: 110; height: 100%; max-height: 40;
        border: round $accent; background: $surface; padding: 0 1; }
    PinScreen #pin-edits { height: auto; }
    PinScreen DataTable { height: 1fr; }
    """

    def __init__(self, report) -> None:
        super().__init__()
        self.report = report

    def compose(self) -> ComposeResult:
        from textual.widgets import DataTable
        r = self.report
        edits = "; ".join(r.edits) if r.edits else "no edit since the pin"
        from rich.text import Text
        with Vertical():
            yield Static(Text.assemble(("A/B", "bold"), f": A the pinned analysis, B the shown one. "
                                       f"Edited: {edits}. {len(r.rows)} metrics differ, {r.unchanged} "
                                       "equal. ", ("escape closes", "dim")), id="pin-edits")
            yield DataTable(id="pin-table", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        from textual.widgets import DataTable
        table = self.query_one(DataTable)
        table.add_columns("metric", "A (pinned)", "B (now)", "change")
        for row in self.report.rows:
            table.add_row(*row)
        table.focus()
