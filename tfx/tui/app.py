"""The ``tfx open`` application: panes, bindings, the analysis worker and the edit loop.

Every edit (knob, parameter, profile, reload) builds a ``core.Job`` with a new
generation number and hands it to a ``ProcessPoolExecutor`` (pure-Python work
in a thread would hold the GIL and keystrokes would wait); results whose
generation is not the latest are dropped. ``sync=True`` runs jobs inline
(tests). A failing job becomes a notification with the TfxError's first line
and the last good state is restored; the app never dies of bad input.
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
from textual.widgets import Footer, Static, TabbedContent, TabPane

from tfx.errors import TfxError
from tfx.tui import core
from tfx.tui.commands import TfxCommands
from tfx.tui.screens import HelpScreen, PromptScreen
from tfx.tui.widgets.explore import ExplorePane
from tfx.tui.widgets.hardware import FactsTable, HardwarePane
from tfx.tui.widgets.ir import IRPane, ScopeTree
from tfx.tui.widgets.roofline import ParamsTable, RooflinePane
from tfx.tui.widgets.timeline import GanttView, TimelinePane
from tfx.tui.widgets.traffic import TrafficPane

PANES = ("ir", "traffic", "roofline", "timeline", "explore", "hardware")
TITLES = ("1 IR", "2 Traffic", "3 Roofline", "4 Timeline", "5 Explore", "6 Hardware")


class TfxApp(App):
    TITLE = "tfx open"
    COMMANDS = App.COMMANDS | {TfxCommands}
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
        Binding("r", "reload", "Reload", id="app.reload"),
        Binding("ctrl+s", "export_svg", "SVG", id="app.export_svg", show=False),
        Binding("ctrl+j", "export_json", "JSON", id="app.export_json", show=False),
        Binding("ctrl+t", "export_trace", "Trace", id="app.export_trace", show=False),
        Binding("q", "quit", "Quit", id="app.quit"),
    ]

    def __init__(self, kernel_path: str, profile: str, knobs: dict | None = None,
                 params: dict | None = None, kernel_name: str | None = None, sync: bool = False,
                 blink: bool = True, export_dir: str | None = None) -> None:
        super().__init__()
        self.kernel_path = str(kernel_path)
        self.kernel_name = kernel_name
        self.profile_name = str(profile)
        self.knobs: dict[str, str] = dict(knobs or {})
        self.params: dict[str, int] = dict(params or {})
        self.kernel_text: str | None = None
        self.sync = sync
        self.cursor_blink_enabled = blink
        self.export_dir = Path(export_dir) if export_dir else Path.cwd()
        self.generation = 0
        self.shown_generation = -1
        self.outcome: core.Outcome | None = None
        self.analysis = None
        self.domain = "total"
        self.last_diff = ""
        self.good = (dict(self.knobs), dict(self.params), self.profile_name)
        self._dirty: set[str] = set(PANES)
        self._pool: cf.ProcessPoolExecutor | None = None
        self._base_profile = None
        self.timings: list[float] = []      # submit -> panes repainted, seconds
        self._submitted: dict[int, float] = {}
        self.sim_events: list[core.Event] = []
        if not sync:
            # The resource tracker hands sys.stderr's fd to its process; start it before
            # Textual replaces sys.stderr with a capture that has no file descriptor.
            from multiprocessing import resource_tracker
            resource_tracker.ensure_running()

    # ------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        yield Static("tfx open: loading...", id="status")
        with TabbedContent(id="tabs", initial="ir"):
            with TabPane(TITLES[0], id="ir"):
                yield IRPane(id="ir-pane")
            with TabPane(TITLES[1], id="traffic"):
                yield TrafficPane(id="traffic-pane")
            with TabPane(TITLES[2], id="roofline"):
                yield RooflinePane(id="roofline-pane")
            with TabPane(TITLES[3], id="timeline"):
                yield TimelinePane(id="timeline-pane")
            with TabPane(TITLES[4], id="explore"):
                yield ExplorePane(id="explore-pane")
            with TabPane(TITLES[5], id="hardware"):
                yield HardwarePane(id="hardware-pane")
        yield Static("", id="diff")
        yield Footer()

    def on_mount(self) -> None:
        if self.sync:
            self.submit()
        else:
            self.call_after_refresh(self._start)

    def _start(self) -> None:
        self.submit(first=True)
        self._pool = cf.ProcessPoolExecutor(max_workers=1,
                                            mp_context=multiprocessing.get_context("spawn"))
        self._pool.submit(core.warm)

    async def on_unmount(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    # ------------------------------------------------------------ jobs
    def make_job(self) -> core.Job:
        return core.Job(self.generation, self.kernel_path, self.kernel_text, self.kernel_name,
                        self.profile_name, tuple(sorted(self.knobs.items())),
                        tuple(sorted(self.params.items())))

    def submit(self, first: bool = False) -> int:
        """Start analysing the current state; returns its generation."""
        self.generation += 1
        job = self.make_job()
        self._submitted[job.generation] = time.perf_counter()
        if self.sync:
            self.apply(core.run_job(job))
        else:
            self.run_worker(self._run(job, first), group="analysis", exit_on_error=False)
        return job.generation

    async def _run(self, job: core.Job, first: bool) -> None:
        loop = asyncio.get_running_loop()
        if first or self._pool is None:   # the pool is still starting: a thread, once
            out = await loop.run_in_executor(None, core.run_job, job)
        else:
            try:
                out = await loop.run_in_executor(self._pool, core.run_job, job)
            except Exception as exc:  # noqa: BLE001 - a broken pool must not kill the app
                out = core.Outcome(job.generation, error=f"error: worker failed: {exc}")
        self.apply(out)

    async def wait_for_generation(self, generation: int | None = None, timeout: float = 30) -> None:
        """Tests and the bench: wait until ``generation`` (default the latest) is shown."""
        generation = self.generation if generation is None else generation
        deadline = time.monotonic() + timeout
        while self.shown_generation < generation:
            if time.monotonic() > deadline:
                raise TimeoutError(f"generation {generation} not shown")
            await asyncio.sleep(0.005)

    def apply(self, out: core.Outcome) -> None:
        if out.generation != self.generation:   # stale: a newer edit is on its way
            return
        if out.error is not None:
            self.shown_generation = out.generation
            self.notify(out.error.splitlines()[0], title="analysis failed", severity="error", timeout=6)
            self.knobs, self.params, self.profile_name = (dict(self.good[0]), dict(self.good[1]),
                                                          self.good[2])
            self._base_profile = None
            self._status()
            return
        old = self.analysis
        self.outcome, self.analysis = out, out.analysis
        self.kernel_text = out.source_text if self.kernel_text is None else self.kernel_text
        self.good = (dict(self.knobs), dict(self.params), self.profile_name)
        self.last_diff = core.diff_summary(old, self.analysis) if old is not None else ""
        self._dirty = set(PANES)
        self.refresh_pane(self.active_pane)
        self._status()
        self.shown_generation = out.generation
        t0 = self._submitted.pop(out.generation, None)
        if t0 is not None:
            self.timings.append(time.perf_counter() - t0)

    # ------------------------------------------------------------ panes
    @property
    def active_pane(self) -> str:
        return self.query_one(TabbedContent).active or "ir"

    def refresh_pane(self, pane: str) -> None:
        if self.analysis is None or pane not in self._dirty:
            return
        self._dirty.discard(pane)
        a = self.analysis
        if pane == "ir":
            self.query_one(IRPane).show(a, self._canonical_text(), self.domain)
        elif pane == "traffic":
            self.query_one(TrafficPane).show(a, self.domain)
        elif pane == "roofline":
            self.query_one(RooflinePane).show(self.outcome, self.params)
        elif pane == "timeline":
            self._show_timeline()
        elif pane == "explore":
            self._show_explore()
        elif pane == "hardware":
            self.query_one(HardwarePane).show(a.profile, self.knobs)

    def _canonical_text(self) -> str:
        from tfx.lang import print_kernel
        return print_kernel(self.analysis.kernel)

    def _show_timeline(self) -> None:
        pane = self.query_one(TimelinePane)
        simulate, why = core.sim_status()
        if simulate is None:
            self.sim_events = []
            pane.show_unavailable(why)
            return
        try:
            result = simulate(self.analysis, tiles=16)   # 16 trips per loop, the rest extrapolated
        except TfxError as err:
            pane.show_unavailable(f"simulation failed: {err.headline()}")
            return
        except Exception as exc:  # noqa: BLE001 - the simulator's API may differ from what we expect
            pane.show_unavailable("the simulator is not available in this build "
                                  f"(tfx.sim.simulate failed: {type(exc).__name__}: {exc})")
            return
        self.sim_result = result
        tl = getattr(result, "timeline", None)
        if tl is not None and hasattr(tl, "engines"):
            self.sim_events = [core.Event(str(tl.engines[e[2]]), e[0], e[1], str(tl.labels[e[3]]))
                               for e in tl.events if e[5] == 0 and e[1] > e[0]]
        else:
            self.sim_events = core.events_from(result)
        stalls = getattr(result, "stalls", {}) or {}
        stall_text = ("stalls (ns, all units): " + ", ".join(f"{k} {core.fmt_ns(v)}" for k, v in stalls.items())
                      if isinstance(stalls, dict) else "")
        caption = (f"tfx.sim: makespan {core.fmt_ns(getattr(result, 'makespan_ns', 0))}, "
                   f"{len(self.sim_events)} events on unit 0 ({getattr(result, 'mode', '')}, "
                   "16 trips per loop simulated)")
        pane.show_events(self.sim_events, caption, [stall_text] if stall_text else [])

    def _show_explore(self) -> None:
        pane = self.query_one(ExplorePane)
        explore, why = core.explore_status()
        if explore is None:
            pane.show_unavailable(why)
            return
        pane.show_unavailable("the explorer is present but not wired to this pane yet; "
                              "nothing is shown rather than invented data")

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        pane = event.pane.id or ""
        self.refresh_pane(pane)
        self._focus_pane(pane)

    def _focus_pane(self, pane: str) -> None:
        target = {"ir": ScopeTree, "traffic": None, "roofline": ParamsTable, "timeline": GanttView,
                  "hardware": FactsTable}.get(pane)
        # A pane with nothing focusable focuses the tab bar: otherwise Textual moves focus
        # to a widget of another pane and TabbedContent follows it there.
        from textual.widgets import Tabs
        try:
            if target is not None:
                self.query_one(target).focus()
            elif pane == "traffic":
                self.query_one("#traffic-table").focus()
            else:
                self.query_one(TabbedContent).query_one(Tabs).focus()
        except Exception:  # noqa: BLE001 - a pane not mounted yet
            pass

    def _status(self) -> None:
        a = self.analysis
        knobs = f"  {len(self.knobs)} knob(s)" if self.knobs else ""
        if a is None:
            text = f"{Path(self.kernel_path).name} on {self.profile_name}: no analysis"
        else:
            h = core.headline(a)
            text = (f"[b]{a.kernel.name}[/b] on [b]{a.profile.name}[/b]{knobs}  "
                    f"predicted [b]{h['predicted']}[/b]  {h['bound']}-bound  {h['occupancy']}  "
                    f"[dim]{self.domain} gen {self.generation}[/dim]")
        self.query_one("#status", Static).update(text)
        self.query_one("#diff", Static).update(
            self.last_diff or "[dim]edit a parameter (3) or a hardware fact (6); what moves shows here[/dim]")

    # ------------------------------------------------------------ actions
    def action_pane(self, pane: str) -> None:
        self.query_one(TabbedContent).active = pane
        self._focus_pane(pane)

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_domain(self) -> None:
        doms = core.domains_of(self.analysis) if self.analysis else ["logical", "total"]
        self.domain = doms[(doms.index(self.domain) + 1) % len(doms)] if self.domain in doms else "total"
        self._dirty |= {"ir", "traffic"}
        self.refresh_pane(self.active_pane)
        self._status()

    def action_reload(self) -> None:
        self.kernel_text = None    # the worker reads the file again
        self.submit()
        self.notify(f"reloading {self.kernel_path}", timeout=2)

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

    def set_knob(self, path: str, text: str) -> int:
        self.knobs[path] = text
        return self.submit()

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
        fact = self.current_fact(path)
        def done(value: str | None) -> None:
            if value:
                self.set_knob(path, value)
        self.push_screen(PromptScreen(f"knob {path} (now {core.fmt_fact(fact)})",
                                      "", "a value with a unit (3.2TB/s), a number in "
                                      f"{fact.unit}, or x2, /2"), done)

    # parameters --------------------------------------------------------
    def set_param(self, name: str, text: str) -> int | None:
        try:
            value = int(text.replace("_", ""), 0)
        except ValueError:
            self.notify(f"parameter {name}={text}: expected an integer", severity="error")
            return None
        self.params[name] = value
        return self.submit()

    def prompt_param(self, name: str) -> None:
        cur = self.analysis.params.get(name) if self.analysis else ""
        def done(value: str | None) -> None:
            if value:
                self.set_param(name, value)
        self.push_screen(PromptScreen(f"parameter {name} (now {cur})", str(cur)), done)

    def switch_profile(self, name: str) -> None:
        self.profile_name = name
        self.knobs.clear()
        self._base_profile = None
        self.submit()

    def load_explore_point(self, row: int) -> None:  # pragma: no cover - needs tfx.explore
        self.notify("the explorer is not available in this build", severity="warning")

    # exports -----------------------------------------------------------
    def _export_path(self, suffix: str) -> Path:
        stem = Path(self.kernel_path).stem
        return self.export_dir / f"tfx-{stem}-{self.profile_name}-{self.active_pane}{suffix}"

    def action_export_svg(self) -> None:
        p = self._export_path(".svg")
        self.save_screenshot(p.name, str(p.parent))
        self.notify(f"saved {p}")

    def action_export_json(self) -> None:
        if self.analysis is None:
            return
        p = self._export_path(".json").with_name(self._export_path(".json").name.replace(
            f"-{self.active_pane}", ""))
        from tfx.cli.common import _json_default
        p.write_text(json.dumps(self.analysis.to_json(), indent=2, default=_json_default) + "\n")
        self.notify(f"saved {p}")

    def action_export_trace(self) -> None:
        simulate, why = core.sim_status()
        if simulate is None or not self.sim_events:
            self.notify(why or "no timeline to export (open the Timeline pane first)",
                        severity="warning")
            return
        p = self._export_path(".trace.json")
        result = getattr(self, "sim_result", None)
        trace = result.chrome_trace() if hasattr(result, "chrome_trace") else core.chrome_trace(self.sim_events)
        p.write_text((trace if isinstance(trace, str) else json.dumps(trace)) + "\n")
        self.notify(f"saved {p}")

    def action_save_profile(self) -> None:
        default = f"{self.base_profile().name}_edited"
        def done(value: str | None) -> None:
            if not value or self.analysis is None:
                return
            try:
                path = core.save_profile(self.analysis.profile, value)
            except TfxError as err:
                self.notify(err.headline(), severity="error")
                return
            self.notify(f"saved {path}")
        self.push_screen(PromptScreen("save profile as (name)", default,
                                      f"written to {core.user_profiles_dir()}"), done)
