"""SVG snapshots of every tab of the model screen at 80x24 and 160x48 (snapshots/tui/deployment/).

Regenerate with ``TFX_UPDATE_SNAPSHOTS=1 python -m pytest tests/test_tui_deployment_snapshots.py``
(refused on any Textual but 8.2.8). Llama 3.1 70B, decode, batch 1, 8K context, tp8 on
h200_nvl8; jobs run inline and are shown before the screenshot; cursor blink is off.
The Suggest tab shows a search of both blocks, the Compare tab two saved configurations
(tp8 and tp4), the Hardware tab its sweep, the Serve tab both serving modes.
"""

from __future__ import annotations

import pytest

from tests.test_tui_deployment_support import compare_snapshot, make_app, run
from tests.test_tui_support import settled_screenshot
from tfx.tui.deployment.app import TABS


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
@pytest.mark.parametrize("tab", TABS)
def test_tab_snapshot(tab, size):
    async def go():
        app = make_app(config="tp=8")
        async with app.run_test(size=size) as pilot:
            await app.wait_for()
            await pilot.pause()
            if tab == "compare":
                app.save_current("tp8")
                app.set_knob("tp", "4")
                app.save_current("tp4")
                app.set_knob("tp", "8")
            app.action_tab(tab)          # the digit keys are covered in test_tui_deployment.py
            await pilot.pause()
            assert app.active_tab == tab
            if tab == "suggest":
                app.action_suggest("both")
                await app.wait_for("suggest")
            if tab == "hardware":
                await app.wait_for("sweep")
            if tab == "serve":
                await app.wait_for("serve")
            await app.wait_for()
            return await settled_screenshot(app, pilot, f"tfx open --model {tab}")
    svg = run(go())
    compare_snapshot(f"{tab}_{size[0]}x{size[1]}", svg)
