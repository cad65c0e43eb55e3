"""``tfx open --model``: the model screen (tabs, knobs panel, the three workers).

Every knob edit builds a ``core.Job("latency", generation, knobs)`` and hands it
to the app's ``JobRunner`` (``tfx.tui.jobs``, shared with ``tfx open``): two
spawned worker processes; suggest and hw-sweep jobs go to the same workers
with their own generation counters. A result whose generation is not the
latest of its kind is dropped. ``sync=True`` runs jobs inline (tests). A
failing job becomes a notification and the last good knobs come back; a
configuration that does not fit is shown (memory tab in red) with a warning.
"""

from __future__ import annotations

import time
from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import ContentSwitcher, Static, Tab, Tabs

from tfx.errors import TfxError
from tfx.tui.base import ExplorerApp
from tfx.tui.jobs import JobRunner
from tfx.present import formatting as fmt
from tfx.tui.deployment import core
from tfx.tui.deployment.commands import ModelCommands
from tfx.tui.deployment.panes import (ComparePane, HardwarePane, KnobsTable, LayoutPane, MemoryPane, ServePane,
                                 StagesPane, SuggestPane)
from tfx.tui.screens import HelpScreen, PromptScreen
from tfx.tui.widgets.footer import KeyFooter

TABS = ("layout", "suggest", "memory", "stages", "compare", "hardware", "serve")
TITLES = ("1 Layout", "2 Suggest", "3 Memory", "4 Stages", "5 Compare", "6 Hardware", "7 Serve")

#: actions that only make sense on one tab (hidden from the footer elsewhere)
TAB_ACTIONS = {"suggest": "suggest", "max_devices": ("suggest", "hardware"), "load_saved": "compare",
               "delete_saved": "compare", "sweep": "hardware"}

HELP = """\
[b]tfx open --model[/b]: one transformer on many devices. Every knob edit reruns the
latency and memory model in a worker process; the line above the footer says what moved.

[b]Knobs[/b] (left panel; k focuses it, tab moves on)
  up/down     choose a knob          enter/e  type a value (8192, 8k, x2, /2, a name)
  x           x2 (or the next value)  h        /2 (or the previous value)
  u           undo the last edit       z        hide/show the panel (wider tabs)
[b]Anywhere[/b]
  1..6        Layout, Suggest, Memory, Stages, Compare, Hardware
  s           save the configuration (name) for the Compare tab
  ctrl+p      command palette: model, profile, suggest, sweep, export
  ctrl+s      save the screen as SVG   ctrl+j  save the latency result as JSON
  f1          this help                q       quit
[b]Suggest[/b]  a attention, f FFN, b both: search in a worker, load the fastest
  configuration of the Pareto frontier; enter on a row loads it; n sets the device limit.
[b]Stages[/b]  up/down in the table (tab to focus it): the formula of the stage below.
[b]Compare[/b]  left/right choose a saved configuration; l loads it, d deletes it.
[b]Hardware[/b]  r reruns the sweep (it runs when the tab opens); n sets the device limit.

[dim]escape or f1 closes[/dim]"""


class ModelHelpScreen(HelpScreen):
    TEXT = HELP
    WIDTH = 92


class ModelApp(ExplorerApp):
    TITLE = "tfx open --model"
    COMMANDS = ExplorerApp.COMMANDS | {ModelCommands}
    CSS = """
    #status { height: 1; background: $panel; padding: 0 1; }
    #diff { height: 1; padding: 0 1; color: $text-muted; }
    #main { height: 1fr; }
    KnobsTable { width: 24; height: 1fr; border-right: tall $panel; }
    KnobsTable.-hidden { display: none; }
    #panes { width: 1fr; height: 1fr; }
    """
    BINDINGS = [
        *(Binding(str(i + 1), f"tab('{t}')", TITLES[i][2:], id=f"model.tab.{t}", show=False)
          for i, t in enumerate(TABS)),
        Binding("x", "nudge(2.0)", "x2", id="model.knob.double"),
        Binding("h", "nudge(0.5)", "/2", id="model.knob.halve"),
        Binding("e", "edit", "Edit knob", id="model.knob.edit", show=False),
        Binding("u", "undo", "Undo", id="model.knob.undo", show=False),
        Binding("k", "focus_knobs", "Knobs", id="model.knobs.focus", show=False),
        Binding("a", "suggest('attn')", "Attn", id="model.suggest.attn"),
        Binding("f", "suggest('ffn')", "FFN", id="model.suggest.ffn"),
        Binding("b", "suggest('both')", "Both", id="model.suggest.both"),
        Binding("n", "max_devices", "Devices", id="model.max_devices", show=False),
        Binding("l", "load_saved", "Load", id="model.compare.load"),
        Binding("d", "delete_saved", "Delete", id="model.compare.delete"),
        Binding("r", "sweep", "Sweep", id="model.sweep"),
        Binding("s", "save", "Save", id="model.save", show=False),
        Binding("z", "zoom", "Zoom", id="model.zoom", show=False),
        Binding("f1", "help", "Help", id="model.help"),
        Binding("ctrl+p", "command_palette", "Commands", id="model.palette", show=False),
        Binding("ctrl+s", "export_svg", "SVG", id="model.export_svg", show=False),
        Binding("ctrl+j", "export_json", "JSON", id="model.export_json", show=False),
        Binding("q", "quit", "Quit", id="model.quit"),
    ]

    def __init__(self, knobs: core.Knobs, sync: bool = False, blink: bool = True,
                 export_dir: str | None = None, max_devices: int = 64) -> None:
        super().__init__()
        self.knobs = knobs
        self.good = knobs                 # the knobs of the result shown
        self.sync = sync
        self.cursor_blink_enabled = blink
        self.export_dir = Path(export_dir) if export_dir else Path.cwd()
        self.max_devices = max_devices
        self.jobs = JobRunner({"model": 2}, {"latency": "model", "suggest": "model", "sweep": "model",
                                             "serve": "model"},
                              sync=sync, start_method="spawn")
        self.jobs.app = self
        self.result = None                # LatencyResult shown
        self.layout: list[str] = []
        self.memory_notes: list[str] = []
        self.suggestion: core.Outcome | None = None
        self.sweep_out: core.Outcome | None = None
        self.saved: list[core.Saved] = []
        self.undo: list[core.Knobs] = []
        self.last_diff = ""
        self.timings: list[float] = []    # submit -> repainted, seconds
        self._submitted: dict[int, float] = {}

    # generations by kind (tests and the bench read them)
    @property
    def generation(self) -> dict[str, int]:
        return self.jobs.generation

    @property
    def shown(self) -> dict[str, int]:
        return self.jobs.shown

    @property
    def _pool(self):
        return self.jobs.pools["model"]

    # ------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        yield Static("tfx open --model: loading...", id="status")
        yield Tabs(*(Tab(title, id=f"tab-{t}") for t, title in zip(TABS, TITLES)), id="tabs")
        with Horizontal(id="main"):
            yield KnobsTable(id="knobs", cursor_type="row", show_header=False, cell_padding=0)
            with ContentSwitcher(id="panes", initial="layout"):
                yield LayoutPane(id="layout")
                yield SuggestPane(id="suggest")
                yield MemoryPane(id="memory")
                yield StagesPane(id="stages")
                yield ComparePane(id="compare")
                yield HardwarePane(id="hardware")
                yield ServePane(id="serve")
        yield Static("", id="diff")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one(KnobsTable).show(self.knobs, self.good)
        self.query_one(KnobsTable).select("tp")
        self.query_one(KnobsTable).focus()
        self.query_one(SuggestPane).show_devices(self.max_devices, False)
        self.query_one(ComparePane).show(self.saved)
        self.query_one(HardwarePane).show_state("r runs the hardware sweep (it runs when this tab opens)")
        self._status()
        if self.sync:
            self.submit()
        else:
            self.call_after_refresh(self._start)

    def _start(self) -> None:
        self.submit(first=True)       # in a thread: the spawned workers are still importing
        self.jobs.start()
        for _ in range(2):
            self.jobs.warm("model", core.warm, self.knobs)

    # ------------------------------------------------------------ jobs
    def _job(self, kind: str, **kw) -> core.Job:
        return core.Job(kind, self.jobs.next_generation(kind), self.knobs, max_devices=self.max_devices, **kw)

    def submit(self, first: bool = False) -> int:
        """Rerun latency and memory for the current knobs; returns the generation."""
        job = self._job("latency")
        self._submitted[job.generation] = time.perf_counter()
        self._dispatch(job, first)
        return job.generation

    def _dispatch(self, job: core.Job, first: bool = False) -> None:
        self.jobs.submit(job.kind, core.run_job, job, job.generation, in_thread=first)

    async def wait_for(self, kind: str = "latency", generation: int | None = None, timeout: float = 60) -> None:
        """Tests and the bench: wait until ``generation`` (default the latest) of ``kind`` is shown."""
        await self.jobs.wait_shown(kind, generation, timeout)

    def apply(self, out: core.Outcome) -> None:
        if not self.jobs.is_latest(out.kind, out.generation):
            return                          # stale: a newer request is on its way
        self.jobs.mark_shown(out.kind, out.generation)
        {"latency": self._apply_latency, "suggest": self._apply_suggest, "sweep": self._apply_sweep,
         "serve": self._apply_serve}[out.kind](out)

    def done_latency(self, out: core.Outcome) -> None:
        self.apply(out)

    done_suggest = done_sweep = done_serve = done_latency

    def _apply_latency(self, out: core.Outcome) -> None:
        if self.result is None:     # the first result, or its refusal, is being drawn
            self.call_after_refresh(self.startup_done)
        if out.error is not None:
            self.notify(out.error.splitlines()[0], title="configuration refused", severity="error", timeout=6)
            self.knobs = self.good
            self.query_one(KnobsTable).show(self.knobs, self.good)
            self._status()
            return
        old, old_knobs = self.result, self.good
        r = out.result
        if old is not None and out.knobs != old_knobs and out.generation != self._undo_gen:
            self.undo.append(old_knobs)
            del self.undo[:-50]
        self.result, self.good = r, out.knobs
        self.layout = out.layout
        self.memory_notes = out.memory_notes
        self.last_diff = core.diff_line(old, r, old_knobs, out.knobs) if old is not None else ""
        self._repaint()
        if not r.fits:
            self.clear_notifications()
            self.notify(f"{fmt.nbytes(core.mem_total(r))} per device > {fmt.nbytes(r.capacity)}; "
                        "raise TP or PP, or 2 Suggest",
                        title=f"{core.short_config(r.parallelism.label())} does not fit", severity="warning",
                        timeout=5)
        t0 = self._submitted.pop(out.generation, None)
        if t0 is not None:
            self.timings.append(time.perf_counter() - t0)
        if self.active_tab == "hardware":
            self._sweep_if_stale()
        if self.active_tab == "serve":
            self._serve_if_stale()

    def _apply_suggest(self, out: core.Outcome) -> None:
        self.query_one(SuggestPane).show_devices(self.max_devices, False)
        if out.error is not None:
            self.notify(out.error.splitlines()[0], title="suggest failed", severity="error", timeout=6)
            return
        if out.knobs.workload_key() != self.knobs.workload_key():
            self.notify("the model or workload changed while searching; press a/f/b again",
                        severity="warning", timeout=4)
            return
        self.suggestion = out
        self.query_one(SuggestPane).show(out)
        if not out.result.pareto:
            self.notify(f"no configuration on <= {out.max_devices} devices fits", title="suggest",
                        severity="warning", timeout=6)
            return
        self.load_pareto(0, note=f"fastest for {core.SCOPE_NAMES[out.scope]}")

    def _apply_sweep(self, out: core.Outcome) -> None:
        if out.error is not None:
            self.query_one(HardwarePane).show_state(f"[red]{out.error.splitlines()[0]}[/red]")
            self.notify(out.error.splitlines()[0], title="hardware sweep failed", severity="error", timeout=6)
            return
        self.sweep_out = out
        self.query_one(HardwarePane).show(out)

    def _apply_serve(self, out: core.Outcome) -> None:
        if out.error is not None:
            self.query_one(ServePane).show_state(f"[red]{out.error.splitlines()[0]}[/red]")
            return
        self.query_one(ServePane).show(out)

    def _serve_if_stale(self) -> None:
        if self._serve_requested != self.good:
            self._serve_requested = self.good
            self._dispatch(self._job("serve"))

    _serve_requested = None

    # ------------------------------------------------------------ painting
    def _repaint(self) -> None:
        r = self.result
        self.query_one(KnobsTable).show(self.knobs, self.good)
        if r is not None:
            self.query_one(LayoutPane).show(self.layout)
            self.query_one(MemoryPane).show(r, self.memory_notes)
            self.query_one(StagesPane).show(r)
        self._status()

    def _status(self) -> None:
        self.query_one("#status", Static).update(core.status_line(self.good, self.result))
        self.query_one("#diff", Static).update(
            self.last_diff or "[dim]choose a knob on the left (up/down), x doubles, h halves, enter types; "
                              "what moves shows here[/dim]")

    @property
    def active_tab(self) -> str:
        return self.query_one(ContentSwitcher).current or "layout"

    def on_tabs_tab_activated(self, event: Tabs.TabActivated) -> None:
        if event.tab is None or event.tab.id is None:
            return
        name = event.tab.id.removeprefix("tab-")
        self.query_one(ContentSwitcher).current = name
        self.refresh_bindings()
        if name == "hardware":
            self._sweep_if_stale()
        if name == "serve":
            self._serve_if_stale()

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        tabs = TAB_ACTIONS.get(action)
        if tabs is None:
            return True
        try:
            active = self.active_tab
        except Exception:  # noqa: BLE001 - before mount
            return True
        return active in (tabs if isinstance(tabs, tuple) else (tabs,))

    # ------------------------------------------------------------ actions: tabs, help
    def action_tab(self, name: str) -> None:
        # switch the content now, not when Tabs' message arrives: a key typed right after
        # the digit (2 then b) is checked against the tab it meant
        self.query_one(ContentSwitcher).current = name
        self.query_one(Tabs).active = f"tab-{name}"
        self.refresh_bindings()

    def action_help(self) -> None:
        self.push_screen(ModelHelpScreen())

    def action_focus_knobs(self) -> None:
        table = self.query_one(KnobsTable)
        table.remove_class("-hidden")
        table.focus()

    def action_zoom(self) -> None:
        """Hide or show the knobs panel (x and h still nudge the highlighted knob)."""
        table = self.query_one(KnobsTable)
        table.toggle_class("-hidden")
        if table.has_class("-hidden") and table.has_focus:
            self.focus_tab_content()

    def focus_tab_content(self) -> None:
        """Focus the active tab's first focusable widget (the Compare table, the Stages
        table...), not the tab bar, where left/right would switch tabs."""
        pane = self.query_one(f"#{self.active_tab}")
        target = next((w for w in pane.query("*") if w.focusable), None)
        if target is None and pane.focusable:
            target = pane
        if target is not None:
            target.focus()
        else:
            self.set_focus(None)

    # ------------------------------------------------------------ actions: knobs
    def set_knobs(self, knobs: core.Knobs) -> int | None:
        if knobs == self.knobs:
            return None
        self.knobs = knobs
        self.query_one(KnobsTable).show(self.knobs, self.good)
        return self.submit()

    def set_knob(self, field: str, text: str) -> int | None:
        try:
            knobs = core.parse_value(self.knobs, field, text)
        except TfxError as err:
            self.notify(err.headline(), title="knob", severity="error", timeout=5)
            return None
        return self.set_knobs(knobs)

    def action_nudge(self, factor: float) -> None:
        self.set_knobs(core.nudge(self.knobs, self.query_one(KnobsTable).field, factor))

    def action_edit(self) -> None:
        self.prompt_knob(self.query_one(KnobsTable).field)

    def prompt_knob(self, field: str, typed: str = "") -> None:
        spec = core.SPEC[field]
        cur = str(getattr(self.knobs, field))
        opts = core.choices(field, self.knobs)
        hint = ("a whole number: 8192, 8k (= 8192), x2, /2" if spec.kind == "int"
                else "one of " + ", ".join(opts[:10]) + (", ..." if len(opts) > 10 else "")
                + (" or a .toml path" if spec.kind in ("model", "hw") else ""))

        def done(value: str | None) -> None:
            if value:
                self.set_knob(field, value)
        self.push_screen(PromptScreen(f"{spec.label} (now {cur})", cur, hint, typed=typed), done)

    def action_undo(self) -> None:
        if not self.undo:
            self.notify("nothing to undo", timeout=2)
            return
        knobs = self.undo.pop()
        self.knobs = knobs
        self.query_one(KnobsTable).show(self.knobs, self.good)
        self._undo_gen = self.submit()

    # ------------------------------------------------------------ actions: suggest
    def action_suggest(self, scope: str) -> None:
        job = self._job("suggest", scope=scope)
        self.query_one(SuggestPane).show_devices(self.max_devices, True)
        self._dispatch(job)

    def run_suggest(self, scope: str) -> None:
        """The palette's entry: show tab 2 and search."""
        self.action_tab("suggest")
        self.action_suggest(scope)

    def load_pareto(self, row: int, note: str = "") -> None:
        s = self.suggestion.result if self.suggestion else None
        if s is None or not (0 <= row < len(s.pareto)):
            return
        c = s.pareto[row]
        self.notify(f"loaded {core.short_config(c.parallelism.label())} ({c.devices} devices, {fmt.ns(c.latency_ns)}"
                    + (f"; {note})" if note else ")"), title="suggest", timeout=4)
        self.set_knobs(self.knobs.with_parallelism(c.parallelism))

    def action_max_devices(self) -> None:
        def done(value: str | None) -> None:
            if not value:
                return
            try:
                n = int(value.strip().replace("_", ""))
                if n < 1:
                    raise ValueError
            except ValueError:
                self.notify(f"devices={value}: expected a whole number >= 1", severity="error")
                return
            self.max_devices = n
            self.query_one(SuggestPane).show_devices(n, False)
            if self.active_tab == "hardware":
                self._sweep_if_stale()
        self.push_screen(PromptScreen(f"search on at most how many devices (now {self.max_devices})",
                                      str(self.max_devices), "suggest and the hardware sweep use it"), done)

    # ------------------------------------------------------------ actions: hardware sweep
    def action_sweep(self) -> None:
        self.query_one(HardwarePane).show_state("[yellow]sweeping...[/yellow]")
        self._dispatch(self._job("sweep"))

    def run_sweep(self) -> None:
        """The palette's entry: show tab 6 and sweep."""
        self.action_tab("hardware")
        self._sweep_requested = (self.good.workload_key(), self.max_devices)
        self.action_sweep()

    def _sweep_if_stale(self) -> None:
        o = self.sweep_out
        key = (self.good.workload_key(), self.max_devices)
        if self._sweep_requested == key:
            return
        if o is None or (o.knobs.workload_key(), o.max_devices) != key:
            self._sweep_requested = key
            self.action_sweep()

    _sweep_requested: tuple | None = None
    _undo_gen: int = -1

    # ------------------------------------------------------------ actions: save and compare
    def action_save(self) -> None:
        if self.result is None:
            return
        default = self.good.short_label()
        names = {s.name for s in self.saved}
        if default in names:
            default = f"{default} {self.good.model}"

        def done(value: str | None) -> None:
            if value:
                self.save_current(value)
        self.push_screen(PromptScreen("save this configuration as", default,
                                      "compared side by side on tab 5"), done)

    def save_current(self, name: str) -> None:
        if self.result is None:
            return
        self.saved = [s for s in self.saved if s.name != name]
        self.saved.append(core.saved_from(name, self.good, self.result))
        self.query_one(ComparePane).show(self.saved)
        self.notify(f"saved {name!r} ({len(self.saved)} saved; tab 5 compares them)", timeout=3)

    def action_load_saved(self) -> None:
        i = self.query_one(ComparePane).selected()
        if i is None or i >= len(self.saved):
            return
        self.set_knobs(self.saved[i].knobs)
        self.notify(f"loaded {self.saved[i].name!r}", timeout=3)

    def action_delete_saved(self) -> None:
        i = self.query_one(ComparePane).selected()
        if i is None or i >= len(self.saved):
            return
        gone = self.saved.pop(i)
        self.query_one(ComparePane).show(self.saved)
        self.notify(f"deleted {gone.name!r}", timeout=3)

    # ------------------------------------------------------------ exports
    def export_stem(self, tab: bool = True) -> str:
        """``tfx-<model>-<configuration>[-<tab>]``, each part a safe file-name fragment."""
        from tfx.files import safe_file_stem
        label = self.good.short_label().replace(" ", "_").replace("=", "-").replace("@", "-")
        parts = ["tfx", safe_file_stem(self.good.model), safe_file_stem(label)]
        return "-".join(parts + ([self.active_tab] if tab else []))

    def action_export_json(self) -> None:
        if self.result is None:
            self.notify("no result to export yet", severity="warning")
            return
        import json
        path = self.export_text(".json", json.dumps(self.result.to_json(), indent=2) + "\n",
                                stem=self.export_stem(tab=False))
        if path is not None:
            self.notify("tfx model compare reads it", timeout=3)
