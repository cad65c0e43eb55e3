"""``tfx open --model``: the model screen (tabs, knobs panel, the three workers).

Every knob edit builds a ``core.Job("latency", generation, knobs)`` and hands it
to a ``ProcessPoolExecutor``; suggest and hw-sweep jobs go to the same pool
with their own generation counters. A result whose generation is not the
latest of its kind is dropped. ``sync=True`` runs jobs inline (tests). A
failing job becomes a notification and the last good knobs come back; a
configuration that does not fit is shown (memory tab in red) with a warning.
"""

from __future__ import annotations

import asyncio
import concurrent.futures as cf
import json
import multiprocessing
import time
from pathlib import Path

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import ContentSwitcher, Footer, Static, Tab, Tabs
from textual.worker import Worker, WorkerState

from tfx.errors import TfxError
from tfx.tui.deployment import core
from tfx.tui.deployment.commands import ModelCommands
from tfx.tui.deployment.panes import (ComparePane, HardwarePane, KnobsTable, LayoutPane, MemoryPane, StagesPane,
                                 SuggestPane)
from tfx.tui.screens import HelpScreen, PromptScreen

TABS = ("layout", "suggest", "memory", "stages", "compare", "hardware")
TITLES = ("1 Layout", "2 Suggest", "3 Memory", "4 Stages", "5 Compare", "6 Hardware")

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


class ModelApp(App):
    TITLE = "tfx open --model"
    COMMANDS = App.COMMANDS | {ModelCommands}
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
        self.generation = {"latency": 0, "suggest": 0, "sweep": 0}
        self.shown = {"latency": -1, "suggest": -1, "sweep": -1}
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
        self._pool: cf.ProcessPoolExecutor | None = None
        if not sync:
            # the resource tracker hands sys.stderr's fd to its process: start it before
            # Textual replaces sys.stderr with a capture that has no file descriptor
            from multiprocessing import resource_tracker
            resource_tracker.ensure_running()

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
        yield Static("", id="diff")
        yield Footer()

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
        self.submit(first=True)
        self._pool = cf.ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("spawn"))
        for _ in range(2):
            self._pool.submit(core.warm, self.knobs)

    async def on_unmount(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    # ------------------------------------------------------------ jobs
    def _job(self, kind: str, **kw) -> core.Job:
        self.generation[kind] += 1
        return core.Job(kind, self.generation[kind], self.knobs, max_devices=self.max_devices, **kw)

    def submit(self, first: bool = False) -> int:
        """Rerun latency and memory for the current knobs; returns the generation."""
        job = self._job("latency")
        self._submitted[job.generation] = time.perf_counter()
        self._dispatch(job, first)
        return job.generation

    def _dispatch(self, job: core.Job, first: bool = False) -> None:
        if self.sync:
            self.apply(core.run_job(job))
        else:
            self.run_worker(self._run(job, first), group=job.kind, exit_on_error=False)

    async def _run(self, job: core.Job, first: bool) -> None:
        loop = asyncio.get_running_loop()
        if first or self._pool is None:     # the pool is still starting: a thread, once
            out = await loop.run_in_executor(None, core.run_job, job)
        else:
            try:
                out = await loop.run_in_executor(self._pool, core.run_job, job)
            except cf.process.BrokenProcessPool:
                # a worker died (killed, out of memory): a fresh pool, and this job in a thread
                self._pool.shutdown(wait=False, cancel_futures=True)
                self._pool = cf.ProcessPoolExecutor(max_workers=2,
                                                    mp_context=multiprocessing.get_context("spawn"))
                out = await loop.run_in_executor(None, core.run_job, job)
            except Exception as exc:  # noqa: BLE001 - a broken pool must not kill the app
                out = core.Outcome(job.kind, job.generation, job.knobs, error=f"error: worker failed: {exc}")
        self.apply(out)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR:
            err = event.worker.error
            self.notify(f"{type(err).__name__}: {err}", title=f"{event.worker.group} failed",
                        severity="error", timeout=6)

    async def wait_for(self, kind: str = "latency", generation: int | None = None, timeout: float = 60) -> None:
        """Tests and the bench: wait until ``generation`` (default the latest) of ``kind`` is shown."""
        generation = self.generation[kind] if generation is None else generation
        deadline = time.monotonic() + timeout
        while self.shown[kind] < generation:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{kind} generation {generation} not shown")
            await asyncio.sleep(0.005)

    def apply(self, out: core.Outcome) -> None:
        if out.generation != self.generation[out.kind]:
            return                          # stale: a newer request is on its way
        self.shown[out.kind] = out.generation
        {"latency": self._apply_latency, "suggest": self._apply_suggest, "sweep": self._apply_sweep}[out.kind](out)

    def _apply_latency(self, out: core.Outcome) -> None:
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
            self.notify(f"{core.fmt_b(core.mem_total(r))} per device > {core.fmt_b(r.capacity)}; "
                        "raise TP or PP, or 2 Suggest",
                        title=f"{core.short_config(r.parallelism.label())} does not fit", severity="warning",
                        timeout=5)
        t0 = self._submitted.pop(out.generation, None)
        if t0 is not None:
            self.timings.append(time.perf_counter() - t0)
        if self.active_tab == "hardware":
            self._sweep_if_stale()

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
            self.screen.focus_next()

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

    def prompt_knob(self, field: str) -> None:
        spec = core.SPEC[field]
        cur = str(getattr(self.knobs, field))
        opts = core.choices(field, self.knobs)
        hint = ("a whole number: 8192, 8k (= 8192), x2, /2" if spec.kind == "int"
                else "one of " + ", ".join(opts[:10]) + (", ..." if len(opts) > 10 else "")
                + (" or a .toml path" if spec.kind in ("model", "hw") else ""))

        def done(value: str | None) -> None:
            if value:
                self.set_knob(field, value)
        self.push_screen(PromptScreen(f"{spec.label} (now {cur})", cur, hint), done)

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
        self.notify(f"loaded {core.short_config(c.parallelism.label())} ({c.devices} devices, {core.fmt_ns(c.latency_ns)}"
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
    def _export_path(self, suffix: str) -> Path:
        label = self.good.short_label().replace(" ", "_").replace("=", "-").replace("@", "-")
        m = self.good.model
        model = Path(m).stem if m.endswith(".toml") else m
        return self.export_dir / f"tfx-{model}-{label}-{self.active_tab}{suffix}"

    def action_export_svg(self) -> None:
        p = self._export_path(".svg")
        self.save_screenshot(p.name, str(p.parent))
        self.notify(f"saved {p}")

    def action_export_json(self) -> None:
        if self.result is None:
            return
        p = self._export_path(".json")
        p = p.with_name(p.name.replace(f"-{self.active_tab}", ""))
        p.write_text(json.dumps(self.result.to_json(), indent=2) + "\n")
        self.notify(f"saved {p} (tfx model compare reads it)")

