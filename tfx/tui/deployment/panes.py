"""The model screen's widgets: the knobs panel and the six tabs.

Each pane has a ``show(...)`` that repaints it from plain results; the text
and the rows come from ``tfx.tui.deployment.core`` so the tests and the screen agree.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, DataTable, Static

from tfx.hw.units import format_tokens_per_s
from tfx.present import formatting as fmt
from tfx.tui.deployment import core

# styles of the memory parts (16-colour names: no truecolor assumed)
PART_STYLE = {"weights": "cyan", "kv_cache": "magenta", "activations": "yellow", "workspace": "blue",
              "free": "bright_black", "capacity": "bold red"}


def _keep_cursor(table: DataTable, key: str | None) -> None:
    """Put the cursor back on the row keyed ``key`` after a rebuild (first row otherwise)."""
    if table.row_count == 0:
        return
    row = 0
    if key is not None:
        try:
            row = table.get_row_index(key)
        except Exception:  # noqa: BLE001 - the row is gone
            row = min(table.cursor_row, table.row_count - 1)
    table.move_cursor(row=row, animate=False)


def _cursor_key(table: DataTable) -> str | None:
    if table.row_count == 0:
        return None
    try:
        return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
    except Exception:  # noqa: BLE001
        return None


# ------------------------------------------------------------------ knobs

class KnobsTable(DataTable):
    """The knobs panel: one row per knob; enter types a value, x/h (app-wide) nudge it."""

    BINDINGS = [
        Binding("enter", "edit", "Edit", id="knobs.edit"),
    ]

    def on_mount(self) -> None:
        if not self.columns:
            self.add_column("knob", key="knob")
            self.add_column("value", key="value")

    def show(self, knobs: core.Knobs, good: core.Knobs) -> None:
        key = _cursor_key(self)
        self.clear()
        for spec in core.KNOBS:
            v = str(getattr(knobs, spec.field))
            if len(v) > 13:
                v = v[:12] + "…"
            cell = Text(v, style="yellow" if getattr(knobs, spec.field) != getattr(good, spec.field) else "")
            self.add_row(Text(f" {spec.label:<8} ", style="bold"), cell, key=spec.field)
        _keep_cursor(self, key)

    @property
    def field(self) -> str:
        return _cursor_key(self) or core.KNOBS[0].field

    def select(self, field: str) -> None:
        _keep_cursor(self, field)

    def action_edit(self) -> None:
        self.app.prompt_knob(self.field)

    def on_key(self, event) -> None:
        """Typing on the panel edits the highlighted knob: a printable key that no enabled
        binding takes opens its prompt with that key typed, so a value (``nosuchmodel``,
        ``8192``) reaches the prompt instead of single-letter bindings."""
        if not event.is_printable or event.character in (" ",):
            return
        active = self.screen.active_bindings.get(event.key)
        if active is not None and active.enabled:
            return
        event.stop()
        event.prevent_default()
        self.app.prompt_knob(self.field, typed=event.character)


# ------------------------------------------------------------------ 1 layout

class LayoutPane(VerticalScroll):
    DEFAULT_CSS = """
    LayoutPane { height: 1fr; padding: 0 1; }
    LayoutPane > Static { width: 1fr; }
    """

    def compose(self) -> ComposeResult:
        yield Static("", id="layout-text")

    def show(self, lines: list[str]) -> None:
        t = Text()
        for i, line in enumerate(lines):
            if i == 0 or line.startswith("node "):
                t.append(line + "\n", style="bold")
            elif line.startswith(("TP ", "CP ", "PP ", "DP ", "EP ")):
                head, sep, rest = line.partition(":")
                t.append(head, style="cyan")
                t.append(sep + rest + "\n")
            elif line.startswith("each device"):
                t.append(line + "\n", style="bold")
            else:
                t.append(line + "\n")
        self.query_one("#layout-text", Static).update(t)


# ------------------------------------------------------------------ 2 suggest

class ParetoTable(DataTable):
    BINDINGS = [Binding("enter", "load", "Load", id="suggest.load")]

    def action_load(self) -> None:
        if self.row_count:
            self.app.load_pareto(self.cursor_row)


class SuggestPane(Vertical):
    DEFAULT_CSS = """
    SuggestPane { height: 1fr; }
    SuggestPane > Horizontal { height: 1; }
    SuggestPane Button { margin: 0 1 0 0; min-width: 10; }
    SuggestPane #suggest-devices { width: 1fr; color: $text-muted; }
    SuggestPane #suggest-caption { height: auto; max-height: 3; padding: 0 1; }
    SuggestPane ParetoTable { height: 1fr; }
    """

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield Button("Attention a", id="suggest-attn", compact=True, action="app.suggest('attn')")
            yield Button("FFN f", id="suggest-ffn", compact=True, action="app.suggest('ffn')")
            yield Button("Both b", id="suggest-both", compact=True, action="app.suggest('both')")
            yield Static("", id="suggest-devices")
        yield Static("[dim]a / f / b: search the parallelism of the attention, the FFN or both; "
                     "the fastest configuration on the frontier is loaded into the knobs[/dim]",
                     id="suggest-caption")
        yield ParetoTable(id="pareto-table", cursor_type="row", zebra_stripes=True)

    def show_devices(self, n: int, running: bool) -> None:
        self.query_one("#suggest-devices", Static).update(
            f" <= {n} devices (n)" + ("  [yellow]searching...[/yellow]" if running else ""))

    def show(self, out) -> None:
        s = out.result
        table = self.query_one(ParetoTable)
        table.clear(columns=True)
        for c in core.SUGGEST_COLUMNS:
            table.add_column(c, key=c)
        for i, row in enumerate(core.suggest_rows(s)):
            table.add_row(*row, key=str(i))
        k = out.knobs
        self.query_one("#suggest-caption", Static).update(
            core.suggest_caption(s) + f"  [dim]({k.model} {k.mode} b{k.batch} ctx {k.ctx}; "
            "enter loads a row)[/dim]")


# ------------------------------------------------------------------ 3 memory

class MemoryTable(DataTable):
    pass


class MemoryPane(Vertical):
    DEFAULT_CSS = """
    MemoryPane { height: 1fr; }
    MemoryPane #memory-caption { height: auto; padding: 0 1; }
    MemoryPane MemoryTable { height: auto; max-height: 100%; }
    MemoryPane #memory-bar { height: auto; padding: 0 1; }
    """

    def compose(self) -> ComposeResult:
        yield Static("", id="memory-caption")
        yield MemoryTable(id="memory-table", cursor_type="none", show_cursor=False)
        yield Static("", id="memory-bar")

    def on_mount(self) -> None:
        self._result = None
        self._notes: list[str] = []

    def on_resize(self) -> None:
        if self._result is not None:
            self.show(self._result, self._notes)

    def show(self, r, notes: list[str] | None = None) -> None:
        self._result = r
        self._notes = list(notes or [])
        width = self.size.width or 60
        bar_w = max(8, width - 36)
        table = self.query_one(MemoryTable)
        table.clear(columns=True)
        for c in ("part", "per device", "of cap", "bar"):
            table.add_column(c, key=c)
        for row in core.memory_rows(r, bar_w):
            table.add_row(row.label, row.bytes and fmt.nbytes(row.bytes) or "0 B", fmt.ratio_pct(row.share),
                          Text(row.bar, style=PART_STYLE[row.key]), key=row.key)
        total = core.mem_total(r)
        table.add_row(Text("total", style="bold"), Text(fmt.nbytes(total), style="bold"),
                      Text(fmt.ratio_pct(total / r.capacity), style="bold" if r.fits else "bold red"),
                      "", key="total")
        table.add_row("capacity", fmt.nbytes(r.capacity), "100.0%", "", key="capacity")
        fit = Text("fits", style="green") if r.fits else Text("DOES NOT FIT", style="bold red")
        cap = Text(f"memory per device, {r.parallelism.label()} on {fmt.counted(r.devices, 'device')}: ")
        cap.append(f"{fmt.nbytes(total)} of {fmt.nbytes(r.capacity)} ")
        cap.append_text(fit)
        self.query_one("#memory-caption", Static).update(cap)
        bar = Text()
        for seg, key in core.stacked_bar(r, max(10, width - 4)):
            bar.append(seg, style=PART_STYLE.get(key, ""))
        bar.append("\n")
        for key, label, char in core.MEMORY_PARTS:
            bar.append(char, style=PART_STYLE[key])
            bar.append(f" {'act' if key == 'activations' else label}  ")
        bar.append("· free", style=PART_STYLE["free"])
        if not r.fits:
            bar.append("  | capacity", style=PART_STYLE["capacity"])
        bar.append("\n")
        for line in self._notes:
            bar.append(line + "\n", style="dim")
        bar.append("workspace: CUDA context, library and NCCL buffers (estimate); docs/model-latency.md",
                   style="dim")
        self.query_one("#memory-bar", Static).update(bar)


# ------------------------------------------------------------------ 4 stages

class StagesTable(DataTable):
    pass


class StagesPane(Vertical):
    DEFAULT_CSS = """
    StagesPane { height: 1fr; }
    StagesPane #stages-caption { height: 1; padding: 0 1; }
    StagesPane StagesTable { height: 1fr; }
    StagesPane #formula { height: auto; max-height: 6; padding: 0 1; border-top: solid $panel; }
    """

    def compose(self) -> ComposeResult:
        yield Static("", id="stages-caption")
        yield StagesTable(id="stages-table", cursor_type="row", zebra_stripes=True)
        yield Static("", id="formula")

    def on_mount(self) -> None:
        self._result = None

    def show(self, r) -> None:
        self._result = r
        table = self.query_one(StagesTable)
        key = _cursor_key(table)
        table.clear(columns=True)
        for c in core.STAGE_COLUMNS:
            table.add_column(c, key=c)
        for row in core.stage_rows(r):
            bound = row[3]
            style = {"memory": "", "compute": "green", "comm": "magenta", "launch": "yellow"}.get(bound, "dim")
            table.add_row(*row[:3], Text(bound, style=style), *row[4:], key=row[0])
        _keep_cursor(table, key)
        self.query_one("#stages-caption", Static).update(
            f"[b]{fmt.ns(r.latency_ns)}[/b] = attention {fmt.ns(r.attention_ns)} + "
            f"FFN {fmt.ns(r.ffn_ns)}; {fmt.count(r.launches)} launches; {format_tokens_per_s(r.tokens_per_s)} tokens/s")
        self._formula()

    def _formula(self) -> None:
        table = self.query_one(StagesTable)
        name = _cursor_key(table)
        s = core.stage_by_name(self._result, name) if (self._result is not None and name) else None
        text = Text()
        if s is not None:
            text.append(f"{s.name}", style="bold")
            text.append(f" ({s.bound}-bound): ")
            text.append(s.formula)
        self.query_one("#formula", Static).update(text)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if self._result is not None:
            self._formula()


# ------------------------------------------------------------------ 5 compare

class CompareTable(DataTable):
    BINDINGS = [Binding("enter", "load", "Load", id="compare.load_enter", show=False)]

    def action_load(self) -> None:
        self.app.action_load_saved()


class ComparePane(Vertical):
    DEFAULT_CSS = """
    ComparePane { height: 1fr; }
    ComparePane #compare-caption { height: auto; padding: 0 1; }
    ComparePane CompareTable { height: 1fr; }
    """

    def compose(self) -> ComposeResult:
        yield Static("", id="compare-caption")
        # the row labels stay in view when the cursor scrolls to a later column
        yield CompareTable(id="compare-table", cursor_type="column", zebra_stripes=True, fixed_columns=1)

    def show(self, saved: list) -> None:
        table = self.query_one(CompareTable)
        col = table.cursor_column
        table.clear(columns=True)
        cols, rows = core.compare_table(saved)
        caption = self.query_one("#compare-caption", Static)
        if not saved:
            caption.update("nothing saved yet: [b]s[/b] saves the current configuration under a name; "
                           "two or more are compared side by side, the best of each row marked *")
            return
        caption.update(f"{len(saved)} saved; best of each row marked *; left/right choose a column, "
                       "l loads it, d deletes it")
        for i, c in enumerate(cols):
            table.add_column(c, key=f"c{i}")
        for name, cells, best in rows:
            table.add_row(Text(name, style="bold" if name in ("latency", "model") else ""),
                          *[Text(v + (" *" if b else ""), style="bold green" if b else "")
                            for v, b in zip(cells, best)], key=name)
        table.move_cursor(column=max(1, min(col, len(cols) - 1)), animate=False)

    def selected(self) -> int | None:
        """Index of the saved configuration under the column cursor."""
        table = self.query_one(CompareTable)
        c = table.cursor_column
        return c - 1 if c >= 1 and table.row_count else None


# ------------------------------------------------------------------ 6 hardware

class HardwarePane(Vertical):
    DEFAULT_CSS = """
    HardwarePane { height: 1fr; }
    HardwarePane Button { margin: 0 1 0 0; }
    HardwarePane #sweep-caption { height: auto; max-height: 3; padding: 0 1; color: $text-muted; }
    HardwarePane .title { height: 1; padding: 0 1; text-style: bold; }
    HardwarePane #rank-table { height: auto; }
    HardwarePane #cost-table { height: 1fr; }
    """

    def compose(self) -> ComposeResult:
        yield Button("Sweep r", id="sweep-run", compact=True, action="app.sweep")
        yield Static("", id="sweep-caption")
        yield Static("doubling one knob (configuration re-chosen)", classes="title")
        yield DataTable(id="rank-table", cursor_type="row")
        yield Static("Pareto: latency vs cost (1 = one base device)", classes="title")
        yield DataTable(id="cost-table", cursor_type="row", zebra_stripes=True)

    def show_state(self, text: str) -> None:
        self.query_one("#sweep-caption", Static).update(text)

    def show(self, out) -> None:
        h = out.result
        k = out.knobs
        self.show_state(core.sweep_caption(h) + f" [dim]({k.model} {k.mode} b{k.batch} ctx {k.ctx}, "
                        f"<= {out.max_devices} devices)[/dim]")
        rank = self.query_one("#rank-table", DataTable)
        rank.clear(columns=True)
        for c in ("knob x2", "speed-up", "latency", "configuration"):
            rank.add_column(c, key=c)
        for row in core.sweep_ranking_rows(h):
            rank.add_row(*row, key=row[0])
        cost = self.query_one("#cost-table", DataTable)
        cost.clear(columns=True)
        for c in ("latency", "cost", "dev", "configuration", "hardware factors"):
            cost.add_column(c, key=c)
        for i, row in enumerate(core.sweep_pareto_rows(h)):
            cost.add_row(*row, key=str(i))


class ServePane(VerticalScroll):
    """Throughput per GPU, TTFT and TPOT of the current configuration served (tfx.model.serve)."""

    DEFAULT_CSS = "ServePane { height: 1fr; padding: 0 1; }"

    def compose(self) -> ComposeResult:
        yield Static("the serving view runs when this tab opens", id="serve-text")

    def show_state(self, text: str) -> None:
        self.query_one("#serve-text", Static).update(text)

    def show(self, out) -> None:
        self.show_state("\n".join(core.serve_lines(out.result)))
