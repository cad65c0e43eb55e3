"""A what-if keystroke repaints the IR pane and the status lines in place (session 11, audit11):
each Static.update laid the whole screen out again (Textual's default), which was most of the
app's side of a keystroke for attention and decode (bench/keystroke_speed.py: 'active' 94-106 ms
of CPU). The IR text (no_wrap, its width auto) is laid out again only where its count of lines
or its widest line moves, the scope's records only where their folded height moves, the
one-line status and diff lines never (height 1, the screen's width)."""

from __future__ import annotations

import pickle
from dataclasses import replace

from tests.test_tui_support import make_app, run
from tfx.bundled import bundled_kernel


def _keystroke(app, name, value):
    from tfx.tui import core
    job = replace(app.analysis_job(app.generation + 1), params=tuple(sorted({**app.params, name: value}.items())))
    out = pickle.loads(pickle.dumps(core.run_job(job)))
    app.params[name] = value
    app.jobs.generation["analysis"] = job.generation
    app.apply(out)


def layout_requests(monkeypatch):
    """The ids of the widgets that ask Textual for a layout while ``watch[0]`` is True:
    (asked, watch)."""
    from textual.widget import Widget
    asked: list = []
    watch = [False]
    refresh = Widget.refresh

    def spy(self, *regions, repaint=True, layout=False, recompose=False):
        if layout and watch[0]:
            asked.append(self.id or type(self).__name__)
        return refresh(self, *regions, repaint=repaint, layout=layout, recompose=recompose)

    monkeypatch.setattr(Widget, "refresh", spy)
    return asked, watch


def test_an_edit_of_as_many_digits_lays_nothing_out(monkeypatch):
    """gqa_decode's STAGES 3 -> 4 -> 3: the IR text (the kernel's canonical text, which shows the
    parameter's default) is as it was, the kernel scope's records keep their lines, the status
    and diff lines are one line each: no widget asks for a layout (on main: ir-text, ir-records,
    status and diff, each keystroke)."""
    asked, watch = layout_requests(monkeypatch)

    async def go():
        app = make_app(kernel=str(bundled_kernel("gqa_decode.tile")))
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            _keystroke(app, "STAGES", 4)          # the first edit: its sizes are recorded
            await pilot.pause()
            watch[0] = True
            _keystroke(app, "STAGES", 3)
            await pilot.pause()
            _keystroke(app, "STAGES", 4)
            await pilot.pause()
            watch[0] = False
            assert asked == []
    run(go())


def test_records_of_another_height_are_laid_out():
    """Selecting a leaf op after the kernel's scope: its records fold to another height, which
    the Static takes (it kept the kernel's height when nothing laid it out)."""
    async def go():
        app = make_app(kernel=str(bundled_kernel("gqa_decode.tile")))
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            pane = app.query_one("#ir-pane")
            records = app.query_one("#ir-records")
            before = records.content_size.height
            leaf = next(n for n in app.analysis.root.walk() if not n.children and n.kind == "op")
            pane.goto(leaf.id)
            await pilot.pause()
            after = records.content_size.height
            want = records.get_content_height(records.content_size, app.size, records.content_size.width)
            assert after == want and after != before
    run(go())


def test_the_panes_not_shown_are_redrawn_without_a_layout(monkeypatch):
    """After an edit, the Traffic, Roofline and Hardware panes redrawn while the IR pane is shown
    (as bench/keystroke_speed.py's 'others'): the Traffic caption (height 1), the Hardware
    caption and fact source (heights 1 and 2) repaint in place; the roofline chart and text,
    in a pane not shown (no width), wait for the layout that showing their pane does. None asks
    for a layout (on main all five did: traffic-caption, roofline-chart, roofline-text,
    hw-caption, hw-source)."""
    asked, watch = layout_requests(monkeypatch)

    async def go():
        app = make_app(kernel=str(bundled_kernel("gqa_decode.tile")))
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            for key in ("2", "3", "6", "1"):      # mount the Traffic, Roofline and Hardware panes
                await pilot.press(key)
                await pilot.pause()
            _keystroke(app, "STAGES", 4)          # the first edit marks STAGES set ('*'): the
            await pilot.pause()                   # parameter table's column widens, a layout
            for pane in ("traffic", "roofline", "hardware"):
                app.refresh_pane(pane)
            await pilot.pause()
            _keystroke(app, "STAGES", 3)
            await pilot.pause()
            watch[0] = True
            for pane in ("traffic", "roofline", "hardware"):
                app.refresh_pane(pane)
            await pilot.pause()
            watch[0] = False
            assert asked == []
            await pilot.press("3")                # shown: the roofline text is laid out whole,
            await pilot.pause()                   # as tall as Textual measures its text
            text = app.query_one("#roofline-text")
            size = text.content_size
            assert size.height == text.get_content_height(size, app.size, size.width) > 0
    run(go())
