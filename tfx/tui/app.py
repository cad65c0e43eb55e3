"""The ``tfx open`` application: panes, bindings and the edit loop.

Every edit (knob, parameter, profile, reload) builds a ``core.Job`` and hands it
to the app's ``JobRunner`` (``tfx.tui.jobs``, shared with the model screen): it
runs in a worker process, comes back as a ``JobDone`` message, and a result that
is no longer the latest is dropped. ``sync=True`` runs jobs inline (tests). A
failing job becomes a notification with the TfxError's first line and the last
good state is restored; the app never dies of bad input.

Three kinds of job, each in a worker of its own so none waits behind another:
``analysis`` (every edit), ``explore`` (the Explore pane's sweep; at most one in
flight, a sweep of inputs since changed is dropped) and ``simulate`` (the
Timeline pane's simulation, run when that pane shows a new analysis).

Start-up is arranged for a fast first paint: the worker processes are forked in
``__init__``, before Textual starts its threads, and left idle; only the IR pane is
composed up front, the other panes (and their modules) are mounted the first time
they are shown. The first analysis runs in this process right after the first
paint (``on_ready``, ``first_analysis``), then the workers import what later jobs need. Focus starts
on the scope tree (``MainScreen``), the key bar is rebuilt only when its keys change
(``KeyFooter``), and the garbage collector is paused until the first analysis is drawn
(``tfx.tui.open_command.collector_paused``, ``startup_done``).
"""

from __future__ import annotations

import importlib
import time
from dataclasses import replace
from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Static, TabbedContent, TabPane

from tfx.errors import TfxError
from tfx.hw.units import format_percent_change
from tfx.present import formatting as fmt
from tfx.tui.base import ExplorerApp
from tfx.tui.jobs import JobRunner, noop, worker_init
from tfx.tui.lazy import lazy_module
from tfx.tui.widgets.footer import KeyFooter
from tfx.tui.widgets.ir import IRPane

# first used by the first analysis, after the first frame (tfx.tui.lazy)
core = lazy_module("tfx.tui.core")
report = lazy_module("tfx.present.analysis_report")
diff = lazy_module("tfx.present.diff")

PANES = ("ir", "traffic", "roofline", "timeline", "explore", "hardware")
TITLES = ("1 IR", "2 Traffic", "3 Roofline", "4 Timeline", "5 Explore", "6 Hardware")
# pane -> (module, class): imported and mounted the first time the pane is shown
PANE_WIDGETS = {
    "ir": ("tfx.tui.widgets.ir", "IRPane"),
    "traffic": ("tfx.tui.widgets.traffic", "TrafficPane"),
    "roofline": ("tfx.tui.widgets.roofline", "RooflinePane"),
    "timeline": ("tfx.tui.widgets.timeline", "TimelinePane"),
    "explore": ("tfx.tui.widgets.explore", "ExplorePane"),
    "hardware": ("tfx.tui.widgets.hardware", "HardwarePane"),
}
WATCH_S = 0.5          # how often the kernel file is checked for edits made elsewhere
WARM_AFTER_S = 0.3     # the workers warm up this long after the first analysis is shown


def _file_stamp(path: str):
    """What tells a file changed on disk: (mtime in ns, size); None when it cannot be read."""
    import os
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


FOCUS = {"ir": "#ir-tree", "traffic": "#traffic-table", "roofline": "#params-table",
         "timeline": "#gantt", "explore": "#topk", "hardware": "#facts-table"}


class MainScreen(Screen):
    """The explorer's screen: focus starts on the IR pane's scope tree, where the IR pane
    puts it (Textual's default, the first focusable widget, is the tab bar: focus then
    moved, one more refresh and a rebuild of the key bar before the first analysis)."""

    AUTO_FOCUS = FOCUS["ir"]


def _commands_provider():
    from tfx.tui.commands import TfxCommands
    return TfxCommands


class TfxApp(ExplorerApp):
    TITLE = "tfx open"
    COMMANDS = ExplorerApp.COMMANDS | {_commands_provider}
    CSS = """
    #status { height: 1; background: $panel; padding: 0 1; }
    #diff { height: 1; padding: 0 1; color: $text-muted; }
    TabbedContent { height: 1fr; }
    TabbedContent > ContentSwitcher { height: 1fr; }
    TabPane { height: 1fr; padding: 0; }
    """
    BINDINGS = [
        *(Binding(str(i + 1), f"pane('{p}')", TITLES[i][2:], id=f"pane.{p}", show=False)
          for i, p in enumerate(PANES)),
        Binding("f1", "help", "Help", id="app.help"),
        Binding("ctrl+p", "command_palette", "Commands", id="app.palette", show=False),
        Binding("d", "domain", "Domain", id="app.domain"),
        Binding("g", "codegen", "Codegen", id="app.codegen", show=False),
        Binding("r", "reload", "Reload", id="app.reload"),
        Binding("p", "pin", "Pin", id="app.pin"),
        Binding("P", "unpin", "Unpin", id="app.unpin", show=False),
        Binding("b", "pin_table", "A/B", id="app.pin_table", show=False),
        Binding("c", "run_check", "Check", id="app.run_check", show=False),
        Binding("ctrl+s", "export_svg", "SVG", id="app.export_svg", show=False),
        Binding("ctrl+j", "export_json", "JSON", id="app.export_json", show=False),
        Binding("ctrl+t", "export_trace", "Trace", id="app.export_trace", show=False),
        Binding("q", "quit", "Quit", id="app.quit"),
    ]

    def __init__(self, kernel_path: str, profile: str, knobs: dict | None = None,
                 params: dict | None = None, kernel_name: str | None = None, sync: bool = False,
                 blink: bool = True, export_dir: str | None = None, measured: list | None = None,
                 codegen: str | None = None) -> None:
        super().__init__()
        self.kernel_path = str(kernel_path)
        self.kernel_name = kernel_name
        self.profile_name = str(profile)
        self.knobs: dict[str, str] = dict(knobs or {})
        self.params: dict[str, int] = dict(params or {})
        # the code generator every pane prices (tfx.analysis.codegen; None: the default, triton);
        # g cycles it, tfx open --codegen sets it
        self.codegen: str | None = codegen
        self.kernel_text: str | None = None
        self.sync = sync
        self.cursor_blink_enabled = blink
        self.export_dir = Path(export_dir) if export_dir else Path.cwd()
        self.outcome: core.Outcome | None = None
        self.analysis = None
        self.domain = "total"
        self.last_diff = ""
        self.good = (dict(self.knobs), dict(self.params), self.profile_name, None, self.codegen)
        self.pin: core.Pin | None = None       # the A/B reference (p pins, P unpins)
        self.measured = list(measured or [])   # tfx open --measured: tfx.analysis.measured rows
        self._kernel_stamp = _file_stamp(self.kernel_path)
        self.analysis_generation = -1          # the generation of the analysis shown
        self.first_error: str | None = None   # why the first analysis failed (tfx open exits 2)
        self._dirty: set[str] = set(PANES)
        self._mounted: set[str] = {"ir"}
        # one worker process for analyses (it stays warm), one for the Explore pane's
        # sweeps and one for the Timeline pane's simulations
        self.jobs = JobRunner({"analysis": 1, "explore": 1, "simulate": 1},
                              {"analysis": "analysis", "explore": "explore", "simulate": "simulate",
                               # tfx run's quick check shares the simulation's worker
                               "runcheck": "simulate"},
                              sync=sync, initializer=worker_init)
        self.jobs.app = self
        self._base_profile = None
        self.timings: list[float] = []      # submit -> panes repainted, seconds
        self._submitted: dict[int, float] = {}
        self.sim_events: list[core.Event] = []
        self.sim_result = None            # the Timeline pane's simulation (tfx.sim.SimResult)
        self.sim_outcome: core.SimOutcome | None = None
        # the Explore pane's sweep: what it should show, what runs, what it shows
        self.sweep: tuple | None = None     # swept parameter names (None: the kernel's tile params)
        self._sweep_kernel: str | None = None
        self._explore_want: core.ExploreJob | None = None
        self.explore_outcome: core.ExploreOutcome | None = None
        if not sync:
            # Fork the workers now, while only this thread exists (a fork-context pool
            # forks at its first submit, then starts a thread: every pool is made first,
            # then each worker is started by a no-op). They import what they need once
            # the first analysis is shown (apply), so none competes with the first screen.
            self.jobs.start()
            for lane in ("analysis", "explore", "simulate"):
                self.jobs.warm(lane, noop)

    # generations of the analysis (tests and the bench read them)
    @property
    def generation(self) -> int:
        return self.jobs.generation["analysis"]

    @property
    def shown_generation(self) -> int:
        return self.jobs.shown["analysis"]

    # ------------------------------------------------------------ layout
    def get_default_screen(self) -> Screen:
        return MainScreen(id="_default")

    def compose(self) -> ComposeResult:
        yield Static("tfx open: loading...", id="status")
        with TabbedContent(id="tabs", initial="ir"):
            with TabPane(TITLES[0], id="ir"):
                yield IRPane(id="ir-pane")
            for title, pane in zip(TITLES[1:], PANES[1:]):
                yield TabPane(title, id=pane)      # filled the first time it is shown
        yield Static("", id="diff")
        yield KeyFooter(compact=True)

    def on_mount(self) -> None:
        self.set_interval(WATCH_S, self.check_kernel_file)
        if self.sync:
            self.submit()

    def on_ready(self) -> None:
        """Textual's Ready: the first frame is drawn. The first analysis runs now rather than
        once the screen has settled: what start-up still owes the screen (the layout of what
        mounted after the first frame, the key bar's keys) is then drawn with the analysis,
        in one frame instead of ~3 full ones before it (~30 ms CPU less on the bench)."""
        if not self.sync and self.generation == 0:
            self.first_analysis()

    def first_analysis(self) -> None:
        """The first analysis, here, right after the first paint (~70 ms of CPU for gemm).
        Its result has to be unpickled in this process anyway, which imports the analysis
        modules here too: run in the worker, the first analysis cost those imports twice
        and the first frame waited for them; the analysis worker imports them once the
        result is shown (apply), ready for the first edit."""
        generation = self.jobs.next_generation("analysis")
        self._submitted[generation] = time.perf_counter()
        # the occupancy-hint rerun (two more analyses, ~15 ms) feeds the Roofline pane only:
        # it runs once the first screen is drawn (finish_hint)
        self.jobs.deliver("analysis", generation,
                          core.run_job(replace(self.make_job(generation), later_hint=True)))

    def finish_hint(self) -> None:
        """Complete the shown outcome's occupancy-hint rerun if the first analysis left it."""
        if self.outcome is not None and self.outcome.hint_pending:
            core.finish_hint(self.outcome)

    @property
    def _pool(self):
        """The analysis worker's pool (tests look at it)."""
        return self.jobs.pools["analysis"]

    # ------------------------------------------------------------ jobs
    def make_job(self, generation: int | None = None) -> core.Job:
        return core.Job(self.generation if generation is None else generation, self.kernel_path,
                        self.kernel_text, self.kernel_name, self.profile_name,
                        tuple(sorted(self.knobs.items())), tuple(sorted(self.params.items())),
                        codegen=self.codegen)

    def analysis_job(self, generation: int) -> core.Job:
        """The job of an edit: the occupancy-hint rerun (a second analysis, about half the
        cost of a keystroke) feeds the Roofline pane only; it runs in the worker while that
        pane is shown, else when the pane is next drawn (refresh_pane -> finish_hint)."""
        return replace(self.make_job(generation), later_hint=self.active_pane != "roofline")

    def submit(self) -> int:
        """Start analysing the current state; returns its generation."""
        job = self.analysis_job(self.jobs.next_generation("analysis"))
        self._submitted[job.generation] = time.perf_counter()
        self.jobs.submit("analysis", core.run_job, job, job.generation)
        return job.generation

    async def wait_for_generation(self, generation: int | None = None, timeout: float = 30) -> None:
        """Tests and the bench: wait until ``generation`` (default the latest) is shown."""
        await self.jobs.wait_shown("analysis", generation, timeout)

    async def wait_for_explore(self, timeout: float = 30) -> None:
        """Tests: wait until the Explore pane shows the sweep of the current inputs."""
        import asyncio
        deadline = time.monotonic() + timeout
        while (self._explore_want is None or self.explore_outcome is None
               or self.explore_outcome.job != self._explore_want):
            if time.monotonic() > deadline:
                raise TimeoutError("the sweep was not shown")
            await asyncio.sleep(0.005)

    async def wait_for_timeline(self, timeout: float = 30) -> None:
        """Tests: wait until the Timeline pane shows the simulation of the shown analysis."""
        import asyncio
        deadline = time.monotonic() + timeout
        while self.sim_outcome is None or self.sim_outcome.generation != self.analysis_generation:
            if time.monotonic() > deadline:
                raise TimeoutError("the simulation was not shown")
            await asyncio.sleep(0.005)

    def done_analysis(self, out: core.Outcome) -> None:
        self.apply(out)

    def apply(self, out: core.Outcome) -> None:
        if out.generation != self.generation:   # stale: a newer edit is on its way
            return
        if out.error is not None:
            self.jobs.mark_shown("analysis", out.generation)
            if self.analysis is None:
                # Nothing was ever analysed: the kernel, --hw, --knob or --set given on the
                # command line is bad. tfx open says so in one line and exits 2 (tfx.tui.open_command)
                # instead of showing an empty explorer.
                self.first_error = out.error.splitlines()[0]
                self.exit(return_code=2)
                return
            self.notify(out.error.splitlines()[0], title="analysis failed", severity="error", timeout=6)
            self.knobs, self.params, self.profile_name = (dict(self.good[0]), dict(self.good[1]),
                                                          self.good[2])
            # a broken kernel text (a reload, the file edited on disk) keeps the last good
            # text: later edits analyse it, the shown analysis stays
            self.kernel_text = self.good[3]
            self.codegen = self.good[4]
            self._base_profile = None
            self._status()
            return
        old = self.analysis
        self.outcome, self.analysis = out, out.analysis
        self.analysis_generation = out.generation
        self.kernel_text = out.source_text if self.kernel_text is None else self.kernel_text
        self.good = (dict(self.knobs), dict(self.params), self.profile_name, self.kernel_text, self.codegen)
        self.last_diff = diff.summary(old, self.analysis) if old is not None else ""
        self._dirty = set(PANES)
        self.refresh_pane(self.active_pane)
        self._status()
        self.jobs.mark_shown("analysis", out.generation)
        if old is None:
            self.call_after_refresh(self.startup_done)
            # the first analysis is on screen: the workers import what later jobs need,
            # a moment later, so the terminal draws the frame first (on 2 cores the
            # imports would compete with it); a person reads the screen longer than that
            self.set_timer(WARM_AFTER_S, self._warm_workers)
        t0 = self._submitted.pop(out.generation, None)
        if t0 is not None:
            self.timings.append(time.perf_counter() - t0)

    def _warm_workers(self) -> None:
        self.finish_hint()
        self.jobs.warm("analysis", core.warm_analysis)
        self.jobs.warm("explore", core.warm_explore)
        self.jobs.warm("simulate", core.warm_simulate)

    # ------------------------------------------------------------ panes
    @property
    def active_pane(self) -> str:
        return self.query_one(TabbedContent).active or "ir"

    def pane_widget(self, pane: str):
        """The pane's widget, or None while it has not been mounted."""
        if pane not in self._mounted:
            return None
        return self.query_one(f"#{pane}-pane")

    async def ensure_pane(self, pane: str) -> None:
        """Import and mount the pane's widget the first time the pane is shown."""
        if pane in self._mounted or pane not in PANE_WIDGETS:
            return
        module, cls = PANE_WIDGETS[pane]
        widget = getattr(importlib.import_module(module), cls)(id=f"{pane}-pane")
        self._mounted.add(pane)
        await self.query_one(f"TabPane#{pane}", TabPane).mount(widget)

    def refresh_pane(self, pane: str) -> None:
        if self.analysis is None or pane not in self._dirty or pane not in self._mounted:
            return
        self._dirty.discard(pane)
        a = self.analysis
        w = self.pane_widget(pane)
        if pane == "ir":
            w.show(a, self._canonical_text(), self.domain)
        elif pane == "traffic":
            w.show(a, self.domain)
        elif pane == "roofline":
            self.finish_hint()
            w.show(self.outcome, self.params,
                   core.measured_line(core.measured_view(self.measured, self.kernel_path,
                                                         self.profile_name, a))
                   if self.measured else None)
        elif pane == "timeline":
            self._show_timeline(w)
        elif pane == "explore":
            self._show_explore(w)
        elif pane == "hardware":
            w.show(a.profile, self.knobs, self.base_profile())

    def _canonical_text(self) -> str:
        from tfx.lang import print_kernel
        return print_kernel(self.analysis.kernel)

    def _show_timeline(self, pane) -> None:
        """The simulation of the shown analysis: drawn when it is here, else started in the
        simulation worker (``done_simulate`` draws it)."""
        shown = self.sim_outcome
        if shown is not None and shown.generation == self.analysis_generation:
            self._draw_timeline(pane, shown)
            return
        pane.show_unavailable("simulating in the worker process...")
        self.jobs.submit("simulate", core.run_simulation,
                         core.SimJob(self.analysis_generation, self.analysis))

    def done_simulate(self, out: core.SimOutcome) -> None:
        if out.generation != self.analysis_generation:   # the analysis moved on meanwhile
            return
        self.sim_outcome = out
        self.sim_result = out.result
        pane = self.pane_widget("timeline")
        if pane is not None:
            self._draw_timeline(pane, out)

    def _draw_timeline(self, pane, out: core.SimOutcome) -> None:
        if out.error is not None:
            self.sim_events = []
            pane.show_unavailable(f"simulation failed: {out.error}")
            return
        result = out.result
        tl = result.timeline
        self.sim_events = [core.Event(tl.engines[e[2]], e[0], e[1], tl.labels[e[3]])
                           for e in tl.events if e[5] == 0 and e[1] > e[0]]
        stall_text = "stalls per unit: " + ", ".join(f"{k} {fmt.ns(v)}" for k, v in result.stalls.items())
        trips = (f"{result.tiles} trips per loop simulated, the rest extrapolated" if result.tiles
                 else "every trip simulated, as tfx simulate")
        caption = (f"tfx.sim: makespan {fmt.ns(result.makespan_ns)}, "
                   f"{len(self.sim_events)} events on unit 0 ({result.mode}, {trips})")
        from tfx.present.simulation import comparison_lines
        # the simulated, predicted and roofline times side by side, each bound named as on
        # every other surface, and the gap's reason (the same lines as `tfx simulate`)
        caption = "\n".join([caption, *comparison_lines(result)])
        worst = result.stalls_by_op(3)
        lines = [stall_text] + (["waited most: " + "; ".join(f"{op} {fmt.ns(ns)} ({why})"
                                                             for op, why, ns in worst)] if worst else [])
        pane.show_events(self.sim_events, caption, lines)

    # explore -------------------------------------------------------------
    def _show_explore(self, pane) -> None:
        if self.kernel_text is None:          # a reload is on its way; apply() refreshes us
            pane.show_running("reloading the kernel...")
            self._dirty.add("explore")
            return
        k = self.analysis.kernel
        names = core.sweepable(k)
        if not names:
            pane.show_message(f"no parameter of {k.name} declares a domain "
                              "(param BM = 128 in {64, 128}); nothing to sweep")
            return
        if self.sweep is None or self._sweep_kernel != k.name:
            self.sweep, self._sweep_kernel = core.default_sweep(k), k.name
        pane.set_params(names, set(self.sweep), core.shape_params(k))
        job = core.explore_job(self.analysis, self.kernel_path, self.kernel_text,
                               self.kernel_name, self.profile_name, self.knobs, self.params,
                               self.sweep, codegen=self.codegen)
        self._explore_want = job
        shown = self.explore_outcome
        if shown is not None and shown.job == job:      # same space: only "you are here" moved
            self._draw_explore(pane, shown)
            return
        self._start_sweep(pane)

    def _start_sweep(self, pane) -> None:
        job = self._explore_want
        if self.jobs.busy("explore"):             # one at a time; resubmitted when it returns
            return
        fixed = " ".join(f"{n}={v}" for n, v in job.fixed)
        pane.show_running(f"sweeping {', '.join(job.sweep) or 'nothing'}"
                          + (f" with {fixed}" if fixed else "") + " in the worker process...")
        self.jobs.submit("explore", core.run_explore, job)

    def done_explore(self, out: core.ExploreOutcome) -> None:
        self._explore_done(out)

    def _explore_done(self, out: core.ExploreOutcome) -> None:
        pane = self.pane_widget("explore")
        if out.job != self._explore_want:        # the inputs moved while it ran
            shown = self.explore_outcome
            if (self.active_pane == "explore" and pane is not None
                    and (shown is None or shown.job != self._explore_want)):
                self._start_sweep(pane)
            return
        self.explore_outcome = out
        if pane is not None:
            self._draw_explore(pane, out)

    def _draw_explore(self, pane, out: core.ExploreOutcome) -> None:
        if out.error is not None:
            pane.show_message(out.error)
            return
        a = self.analysis
        params = {k: int(fmt.num(v)) for k, v in a.params.items()} if a is not None else {}
        pane.show_outcome(out, core.explore_point(a) if a is not None else None, params)

    def explore_inputs_changed(self) -> None:
        """The swept parameters were toggled in the pane's list."""
        pane = self.pane_widget("explore")
        if pane is None:
            return
        chosen = pane.swept()
        if self.sweep is not None and set(chosen) == set(self.sweep):
            return
        self.sweep = tuple(chosen)
        self._dirty.add("explore")
        self.refresh_pane("explore")

    def load_explore_point(self, params: dict) -> int | None:
        """Enter on a top-k or frontier row: its parameters, as a normal parameter edit."""
        cur = self.analysis.params if self.analysis is not None else {}
        values = {k: int(v) for k, v in params.items()}
        if all(fmt.num(cur.get(k, -1)) == v for k, v in values.items()):
            self.notify("that is the current configuration", timeout=2)
            return None
        self.params.update(values)
        self.notify("loaded " + " ".join(f"{k}={v}" for k, v in values.items()), timeout=3)
        return self.submit()

    # focus -----------------------------------------------------------------
    async def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        pane = event.pane.id or ""
        await self.ensure_pane(pane)
        self.refresh_pane(pane)
        self._focus_pane(pane)

    def _focus_pane(self, pane: str) -> None:
        try:
            self.query_one(FOCUS[pane]).focus()
        except Exception:  # noqa: BLE001 - a pane not mounted yet
            pass

    def _status(self) -> None:
        a = self.analysis
        n = len(self.knobs)
        knobs = f"  {fmt.counted(n, 'knob')}" if n else ""
        if a is None:
            text = f"{Path(self.kernel_path).name} on {self.profile_name}: no analysis"
        else:
            h = report.headline(a)
            text = (f"[b]{a.kernel.name}[/b] on [b]{a.profile.name}[/b]{fmt.compiled_as(a.codegen)}{knobs}  "
                    f"predicted [b]{h['predicted']}[/b]  {h['bound']}-bound  {h['occupancy']}")
            if self.measured:
                view = core.measured_view(self.measured, self.kernel_path, self.profile_name, a)
                text += (f"  measured [b]{fmt.ns(view.measured_ns)}[/b] ({format_percent_change(view.error)})"
                         if view.row is not None else "  [dim]not measured here[/dim]")
        # one line each (#status, #diff: height 1, the screen's width): a new text repaints them
        # in place, no layout of the screen
        self.query_one("#status", Static).update(text, layout=False)
        if self.pin is not None and a is not None:
            from rich.text import Text      # plain text: knob values are not markup
            line = Text(core.pin_line(self.pin, a, self._shown_inputs()))
        else:
            line = self.last_diff or ("[dim]edit a parameter (3) or a hardware fact (6); what moves "
                                      "shows here; p pins this analysis for A/B[/dim]")
        self.query_one("#diff", Static).update(line, layout=False)

    # ------------------------------------------------------------ actions
    def action_pane(self, pane: str) -> None:
        tabs = self.query_one(TabbedContent)
        if tabs.active == pane:
            self._focus_pane(pane)
            return
        # Park focus on the tab bar while the pane mounts: left on a widget of the old
        # pane, Textual would move it back there and TabbedContent would follow.
        from textual.widgets import Tabs
        tabs.query_one(Tabs).focus()
        tabs.active = pane      # TabActivated mounts, refreshes and focuses the pane

    def action_run_check(self) -> None:
        """Run the kernel at a small size on random data in a worker (tfx.execute.quick) and
        toast the check: max error per output against its twins, or unwritten outputs."""
        # the machine's counts of the current analysis (units(sm) under the knobs): the run
        # launches the kernel the panes price
        units = tuple(sorted(self.analysis.units.items())) if self.analysis is not None else ()
        job = (self.kernel_path, self.kernel_text, self.kernel_name, tuple(sorted(self.params.items())), units)
        self.jobs.submit("runcheck", core.run_check, job)
        self.notify("run check: running the kernel at a small size", timeout=2)

    def done_runcheck(self, outcome: dict) -> None:
        from tfx.execute.quick import summary
        self.notify(summary(outcome), title="run check", timeout=12,
                    severity="information" if outcome["pass"] else "error")

    def action_help(self) -> None:
        from tfx.tui.screens import HelpScreen
        self.push_screen(HelpScreen())

    def action_domain(self) -> None:
        doms = report.domains_of(self.analysis) if self.analysis else ["logical", "total"]
        self.domain = doms[(doms.index(self.domain) + 1) % len(doms)] if self.domain in doms else "total"
        self._dirty |= {"ir", "traffic"}
        self.refresh_pane(self.active_pane)
        self._status()
        self.notify(f"counting domain: {self.domain}", timeout=2)

    def action_codegen(self) -> None:
        """g: the next code generator (tfx.analysis.codegen.CODEGENS, in order); every pane
        follows (the analysis, the Roofline pane's hint, the Timeline's simulation, the Explore
        pane's ranking). Refused, in the one line of every surface, on a tiled profile."""
        from tfx.analysis.codegen import CODEGENS, DEFAULT
        names = list(CODEGENS)
        now = self.codegen or DEFAULT
        self.set_codegen(names[(names.index(now) + 1) % len(names)])

    def set_codegen(self, name: str) -> int | None:
        """Price every pane as ``name`` compiles the kernel; a refusal is a notification and
        nothing changes."""
        from tfx.analysis.codegen import check_profile
        try:
            prof = self.analysis.profile if self.analysis is not None else self.base_profile()
            check_profile(name, prof, where="codegen")
        except TfxError as err:
            self.notify(err.headline(), title="code generator not changed", severity="error", timeout=6)
            return None
        if name == (self.codegen or self._default_codegen()):
            return None
        self.codegen = name
        self.notify(f"compiled as {name}: every pane reprices", timeout=2)
        return self.submit()

    @staticmethod
    def _default_codegen() -> str:
        from tfx.analysis.codegen import DEFAULT
        return DEFAULT

    def action_reload(self) -> None:
        self.kernel_text = None    # the worker reads the file again
        self._kernel_stamp = _file_stamp(self.kernel_path)
        self.submit()
        self.notify(f"reloading {self.kernel_path}", timeout=2)

    def check_kernel_file(self) -> bool:
        """Reload the kernel when its file changed on disk (a kernel author editing it in
        another terminal); returns whether it did. A broken new text is a notification and
        the last good analysis stays (``apply``)."""
        stamp = _file_stamp(self.kernel_path)
        if stamp is None or stamp == self._kernel_stamp:
            return False
        self._kernel_stamp = stamp
        self.kernel_text = None
        self.submit()
        self.notify(f"{Path(self.kernel_path).name} changed on disk; reanalysing", timeout=2)
        return True

    # A/B ---------------------------------------------------------------
    def _shown_inputs(self) -> core.Inputs:
        """The inputs of the analysis shown (the last good state)."""
        knobs, params, profile, text, codegen = self.good
        return core.Inputs(profile, tuple(sorted(knobs.items())), tuple(sorted(params.items())), text or "",
                           codegen)

    def action_pin(self) -> None:
        """Pin the shown analysis: every later edit is compared against it (p again re-pins)."""
        if self.analysis is None:
            return
        self.pin = core.Pin(self.analysis, self._shown_inputs())
        self.notify(f"pinned {self.analysis.kernel.name} on {self.analysis.profile.name}: later edits "
                    "are compared with it (b: metric by metric, P unpins)", timeout=4)
        self._status()

    def action_unpin(self) -> None:
        if self.pin is not None:
            self.pin = None
            self.notify("unpinned", timeout=2)
            self._status()

    def action_pin_table(self) -> None:
        if self.pin is None or self.analysis is None:
            self.notify("nothing pinned: p pins the shown analysis", severity="warning", timeout=3)
            return
        from tfx.tui.screens import PinScreen
        self.push_screen(PinScreen(core.pin_report(self.pin, self.analysis, self._shown_inputs())))

    def goto_scope(self, scope_id: str) -> None:
        self.action_pane("ir")
        self.refresh_pane("ir")
        self.query_one(IRPane).goto(scope_id)

    # knobs -------------------------------------------------------------
    def base_profile(self):
        if self._base_profile is None or self._base_profile.name != Path(self.profile_name).stem:
            from tfx.hw import load_profile
            self._base_profile = load_profile(self.profile_name)
        return self._base_profile

    def knob_paths(self) -> list[str]:
        try:
            return [p for p, _ in self.base_profile().facts()]
        except TfxError:
            return []

    def current_fact(self, path: str):
        prof = self.analysis.profile if self.analysis is not None else self.base_profile()
        return prof.fact(path)

    def set_knob(self, path: str, text: str) -> int | None:
        """Set a knob and rerun; a value equal to the profile's own drops the knob (the
        ``*`` marker and the knob count follow)."""
        if self._is_base_value(path, text):
            if self.knobs.pop(path, None) is None:
                return None
            self.notify(f"{path} is back to the profile's value; knob removed", timeout=2)
            return self.submit()
        self.knobs[path] = text
        return self.submit()

    def _is_base_value(self, path: str, text: str) -> bool:
        try:
            base = self.base_profile()
            return base.with_knobs({path: text}).fact(path).value == base.fact(path).value
        except (TfxError, KeyError, ArithmeticError, ValueError):
            return False          # the analysis says what is wrong with it

    def nudge_knob(self, path: str, factor: float) -> int | None:
        fact = self.current_fact(path)
        if not fact.available:
            self.notify(f"{path} is unavailable; type a value instead", severity="warning")
            return None
        return self.set_knob(path, core.knob_text(core.nudge(fact, factor)))

    def reset_knob(self, path: str) -> None:
        if self.knobs.pop(path, None) is not None:
            self.submit()

    def reset_all_knobs(self) -> None:
        if self.knobs:
            self.knobs.clear()
            self.submit()

    def prompt_knob(self, path: str) -> None:
        from tfx.tui.screens import PromptScreen
        fact = self.current_fact(path)

        def done(value: str | None) -> None:
            if value:
                self.set_knob(path, value)
        self.push_screen(PromptScreen(f"knob {path} (now {fmt.fact(fact)})",
                                      "", "a value with a unit (3.2TB/s), a number in "
                                      f"{fact.unit}, or x2, /2"), done)

    # parameters --------------------------------------------------------
    def set_param(self, name: str, text: str) -> int | None:
        try:
            value = int(text.replace("_", ""), 0)
        except ValueError:
            self.notify(f"parameter {name}={text}: expected an integer", severity="error")
            return None
        problem = self._domain_problem(name, value)
        if problem:      # as ``--set`` refuses it; the previous value and every other edit stay
            self.notify(problem, severity="error")
            return None
        self.params[name] = value
        return self.submit()

    def _domain_problem(self, name: str, value: int) -> str | None:
        """Why ``value`` is outside parameter ``name``'s declared domain (None when it is
        not), judged under the other parameters of the last good analysis."""
        from tfx.ir.bind import bind, domain_problem, unset_domain_problem
        a = self.analysis
        if a is None:
            return None
        problem = domain_problem(a.kernel, name, value, {**a.units, **a.params, name: value})
        if problem is None:     # a default whose domain names this parameter (HQ's HKV..8192 step HKV)
            given = {n: v for n, v in {**self.params, name: value}.items() if isinstance(v, int)}
            try:
                found = unset_domain_problem(a.module, a.kernel, given,
                                             bind(a.module, a.kernel, given, units=a.units))
            except TfxError:
                found = None    # the analysis itself says what is wrong with these values
            problem = found[1] if found else None
        return problem

    def _domain_hint(self, name: str) -> str:
        from tfx.ir.bind import domain_hint
        a = self.analysis
        # the machine's counts too: a sweep may name them ({units(sm) / 4, ...})
        return domain_hint(a.kernel, name, {**a.units, **a.params}) if a is not None else ""

    def prompt_param(self, name: str) -> None:
        from tfx.tui.screens import PromptScreen
        cur = self.analysis.params.get(name) if self.analysis else ""

        def done(value: str | None) -> None:
            if value:
                self.set_param(name, value)
        self.push_screen(PromptScreen(f"parameter {name} (now {cur})", str(cur), self._domain_hint(name)), done)

    def switch_profile(self, name: str) -> None:
        """Rerun on another profile, keeping each knob the new profile has (a knob it
        lacks, or refuses, is dropped and the toast names it)."""
        from tfx.hw import load_profile
        try:
            new = load_profile(name)
        except TfxError as err:
            self.notify(err.headline(), title="profile not switched", severity="error", timeout=6)
            return
        kept, dropped = {}, []
        for path, text in self.knobs.items():
            try:
                new.with_knobs({path: text})
                kept[path] = text
            except (TfxError, KeyError, ArithmeticError, ValueError):
                dropped.append(f"{path}={text}")
        from tfx.analysis.codegen import refusal
        if self.codegen is not None and refusal(self.codegen, new) is not None:
            # a tiled profile compiles its own kernels: the chosen code generator does not apply
            self.notify(f"code generator {self.codegen} dropped: {name} is a {new.kind} profile "
                        "(its own tool chain compiles)", title=f"switched to {name}", severity="warning",
                        timeout=6)
            self.codegen = None
        self.profile_name = name
        self.knobs = kept
        self._base_profile = None
        if kept or dropped:
            words = [f"kept {fmt.counted(len(kept), 'knob')}"] if kept else []
            if dropped:
                words.append(f"dropped {', '.join(dropped)} ({name} has no such fact or refuses it)")
            self.notify("; ".join(words), title=f"switched to {name}",
                        severity="warning" if dropped else "information", timeout=6)
        self.submit()

    # exports -----------------------------------------------------------
    def export_stem(self, pane: bool = True) -> str:
        """``tfx-<kernel>-<profile>[-<pane>]``, each part a safe file-name fragment (a
        profile given as a path keeps only its name)."""
        from tfx.files import safe_file_stem
        parts = ["tfx", safe_file_stem(self.kernel_path), safe_file_stem(self.profile_name)]
        return "-".join(parts + ([self.active_pane] if pane else []))

    def action_export_json(self) -> None:
        if self.analysis is None:
            self.notify("no analysis to export yet", severity="warning")
            return
        import json
        self.export_text(".json", json.dumps(self.analysis.to_json(), indent=2) + "\n",
                         stem=self.export_stem(pane=False))

    def action_export_trace(self) -> None:
        if self.sim_result is None:
            self.notify("no timeline to export (open the Timeline pane first)", severity="warning")
            return
        import json
        self.export_text(".trace.json", json.dumps(self.sim_result.chrome_trace()) + "\n")

    def action_save_profile(self) -> None:
        from tfx.tui.screens import PromptScreen
        default = f"{self.base_profile().name}_edited"

        def done(value: str | None) -> None:
            if not value or self.analysis is None:
                return
            from tfx.hw.user_profiles import save_user_profile
            try:
                path = save_user_profile(self.analysis.profile, value)
            except TfxError as err:
                self.notify(err.headline(), title="profile not saved", severity="error", timeout=8)
                return
            self.notify(f"saved {path}; tfx hw list shows it, --hw {value} uses it", timeout=6)
        from tfx.hw.user_profiles import user_profiles_dir
        self.push_screen(PromptScreen("save profile as (name)", default,
                                      f"written to {user_profiles_dir()}"), done)
