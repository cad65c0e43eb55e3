"""SVG snapshots of every pane at 80x24 and 160x48, kept in snapshots/tui/.

Regenerate with ``TFX_UPDATE_SNAPSHOTS=1 python -m pytest tests/test_tui_snapshots.py``
(refused on any Textual but 8.2.8). The analysis runs inline and is shown
before the screenshot; cursor blink is off.
"""

from __future__ import annotations

import pytest

from tests.test_tui_support import compare_snapshot, make_app, run, settled_screenshot

PANES = ("ir", "traffic", "roofline", "timeline", "explore", "hardware")


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
@pytest.mark.parametrize("pane", PANES)
def test_pane_snapshot(pane, size):
    async def go():
        app = make_app()
        async with app.run_test(size=size) as pilot:
            await app.wait_for_generation()
            await pilot.pause()        # TabbedContent applies its initial tab on mount
            app.action_pane(pane)      # the digit keys are covered in test_tui.py
            await pilot.pause()
            assert app.active_pane == pane
            return await settled_screenshot(app, pilot, f"tfx open {pane}")
    svg = run(go())
    compare_snapshot(f"{pane}_{size[0]}x{size[1]}", svg)
