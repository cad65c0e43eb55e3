"""What makes `tfx open` start fast, kept honest (bench/tui_startup.py times it; no timing here).

* The key bar is rebuilt only when the keys it shows change (Textual's ``Footer``
  rebuilds on every ``bindings_updated``, four times for nothing before the first
  analysis was on screen).
* Focus starts on the IR pane's scope tree (no move from the tab bar, no extra refresh).
* The cyclic garbage collector is paused while the explorer starts and runs again once
  the first analysis is drawn, in the app and in its forked workers.
"""

from __future__ import annotations

import gc
import subprocess
import sys

import pytest

from tests.test_tui_support import make_app, run


def _keys(app) -> list:
    from textual.widgets._footer import FooterKey
    return list(app.query_one("KeyFooter").query(FooterKey))


def test_key_bar_rebuilds_only_when_its_keys_change():
    """IR pane, scope tree focused: the app's shown bindings f1 d r p q and the palette's
    ctrl+p = 6 keys. Bindings published again, unchanged: the same 6 widgets stay.
    Pane 3 focuses the parameter table, whose enter, x and h come first: 3 + 6 = 9 new keys."""
    async def go():
        app = make_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            before = _keys(app)
            assert [k.key for k in before] == ["f1", "d", "r", "p", "q", "ctrl+p"]
            for _ in range(3):
                app.screen.refresh_bindings()
                await pilot.pause()
            after = _keys(app)
            assert len(after) == 6 and all(a is b for a, b in zip(after, before))
            await pilot.press("3")
            await pilot.pause()
            keys = _keys(app)
            assert [k.key for k in keys] == ["enter", "x", "h", "f1", "d", "r", "p", "q", "ctrl+p"]
            assert not any(k is b for k in keys for b in before)
    run(go())


def test_focus_starts_on_the_scope_tree(monkeypatch):
    """The first widget focused is the scope tree itself, not the tab bar (Textual's default)."""
    from tfx.tui import app as app_module
    focused = []
    original = app_module.MainScreen.set_focus

    def record(self, widget, *args, **kw):
        focused.append(getattr(widget, "id", None))
        return original(self, widget, *args, **kw)

    monkeypatch.setattr(app_module.MainScreen, "set_focus", record)

    async def go():
        app = make_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            assert app.focused.id == "ir-tree"
    run(go())
    while focused and focused[-1] is None:       # focus cleared as the app closes
        focused.pop()
    assert focused and set(focused) == {"ir-tree"}


def test_collector_paused_while_starting_and_on_after_the_first_analysis():
    from tfx.tui.open_command import collector_paused
    assert gc.isenabled()
    seen = {}

    async def go():
        app = make_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            seen["after first analysis"] = gc.isenabled()

    with collector_paused():
        seen["paused"] = gc.isenabled()
        run(go())
    assert seen == {"paused": False, "after first analysis": True}
    assert gc.isenabled()


def test_collector_paused_is_undone_when_the_app_fails():
    from tfx.tui.open_command import collector_paused
    with pytest.raises(RuntimeError):
        with collector_paused():
            raise RuntimeError("the app died before its first analysis")
    assert gc.isenabled()


def test_a_worker_forked_while_paused_runs_the_collector():
    """worker_init (every worker process) turns the collector back on: a worker forked
    while the app starts inherits it paused, and a sweep makes plenty of cycles."""
    code = ("import gc, sys; gc.disable(); from tfx.tui.jobs import worker_init; worker_init(); "
            "sys.exit(0 if gc.isenabled() else 3)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_first_analysis_leaves_the_hint_rerun_for_later_with_the_same_result():
    """gemm on h200_sxm keeps 3 x (128x64 + 64x128) x 2 B = 98,304 B of shared memory per
    CTA: 2 CTAs fit the SM's 233,472 B (1,024 B reserved per CTA). The hint is one more CTA,
    3, which leaves 233,472 / 3 - 1,024 = 76,800 B per CTA (600 allocation units of 128 B), and
    registers: its estimated 192 a thread (docs/analysis.md section 6) against 3 CTAs of 4 warps,
    3 warps a sub-partition of 16,384: 5,461 -> 5,376 a warp (a multiple of 256) = 168 a thread."""
    from dataclasses import replace

    from tests.test_tui_support import GEMM
    from tfx.tui import core
    job = core.Job(1, GEMM, None, None, "h200_sxm")
    full = core.run_job(job)
    later_job = replace(job, later_hint=True)
    later = core.run_job(later_job)
    assert later.hint_pending and later.hint is None and later.hinted is None and later.hint_note == ""
    assert later.analysis.metrics == full.analysis.metrics
    core.finish_hint(later, later_job)
    assert not later.hint_pending and not full.hint_pending
    assert (later.hint, later.hint_note) == (full.hint, full.hint_note) == (
        3, "rerun with 168 registers/thread (no spill assumed) and 76,800 B shared memory/CTA")
    assert later.hinted.metrics == full.hinted.metrics
    core.finish_hint(later, later_job)            # once only
    assert later.hint == 3


def test_roofline_pane_after_the_in_app_first_analysis_reads_as_with_inline_jobs():
    """The real start (first analysis in the app, the hint rerun after the first frame):
    the Roofline pane shows the same lines as when every job runs inline."""
    from tests.test_tui_support import shown
    texts = {}

    async def go(sync: bool):
        app = make_app(sync=sync)
        async with app.run_test(size=(100, 40)) as pilot:
            await app.wait_for_generation(1)
            await pilot.press("3")
            await pilot.pause()
            texts[sync] = shown(app, "#roofline-text")

    run(go(True))
    run(go(False))
    assert "At occupancy 3" in texts[True] and "76,800 B shared memory/CTA" in texts[True]
    assert "rerun with 168 registers/thread (no spill assumed) and" in texts[True]
    assert texts[False] == texts[True]


def test_app_import_defines_no_dataclass_of_the_core():
    """`import tfx.tui.app` leaves the explorer's core (a dozen dataclasses, each compiling
    its generated methods) and the analysis report for the first analysis, after the
    first frame: no dataclass of theirs is defined by the import."""
    code = (
        "import dataclasses, sys\n"
        "made = []\n"
        "real = dataclasses.dataclass\n"
        "def spy(cls=None, **kw):\n"
        "    def wrap(c):\n"
        "        made.append(c.__module__)\n"
        "        return real(c, **kw)\n"
        "    return wrap if cls is None else wrap(cls)\n"
        "dataclasses.dataclass = spy\n"
        "import tfx.tui.app\n"
        "print(sorted(set(m for m in made if m.startswith('tfx'))))\n"
        "from tfx.tui import core\n"
        "core.Job\n"
        "print(sorted(set(m for m in made if m.startswith('tfx'))))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, after = out.stdout.splitlines()
    assert before == "[]"
    assert after == "['tfx.present.analysis_report', 'tfx.tui.core']"


def test_a_lazy_module_is_the_module_every_import_and_pickle_finds():
    code = (
        "import pickle, sys\n"
        "from tfx.tui.lazy import lazy_module\n"
        "core = lazy_module('tfx.tui.core')\n"
        "import tfx.tui.core\n"
        "from tfx.tui import core as again\n"
        "assert tfx.tui.core is core and again is core and sys.modules['tfx.tui.core'] is core\n"
        "job = core.Job(1, 'k.tile', None, None, 'h200_sxm')\n"
        "assert pickle.loads(pickle.dumps(job)) == job\n"
        "assert lazy_module('tfx.tui.core') is core\n"
        "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"
    with pytest.raises(ModuleNotFoundError):
        from tfx.tui.lazy import lazy_module
        lazy_module("tfx.tui.no_such_module")


def test_the_first_analysis_runs_once_after_the_first_layout(monkeypatch):
    """Not in sync mode: the app runs its first analysis itself when Textual says the first
    frame is drawn (Ready), once, with the screen laid out at its size."""
    from textual.geometry import Size

    from tfx.tui import app as app_module
    calls = []
    original = app_module.TfxApp.first_analysis

    def record(self):
        calls.append(self.screen.outer_size)
        return original(self)

    monkeypatch.setattr(app_module.TfxApp, "first_analysis", record)

    async def go():
        app = make_app(sync=False)
        async with app.run_test(size=(80, 24)) as pilot:
            await app.wait_for_generation(1)
            await pilot.pause()
            app.on_ready()                      # a second Ready would not analyse again
            assert app.generation == 1 and app.analysis is not None
    run(go())
    assert calls == [Size(80, 24)]


def test_the_model_screen_runs_the_collector_again_after_its_first_result_even_refused():
    """tfx open --model: the collector comes back after the first latency result is drawn,
    also when that first configuration is refused (the screen stays open for the next
    edit). ep=2 on the dense llama3.1-70b is refused (ep > 1 on a dense model)."""
    from tests.test_tui_deployment_support import make_app as make_model_app
    from tfx.tui.open_command import collector_paused
    seen = {}

    async def go(config):
        app = make_model_app(config=config)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            seen[config] = (app.result is not None, gc.isenabled())

    for config in (None, "ep=2"):
        with collector_paused():
            run(go(config))
    assert seen == {None: (True, True), "ep=2": (False, True)}
