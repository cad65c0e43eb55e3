"""Helpers for the model-screen tests (no test functions here).

Snapshots live in snapshots/tui/deployment/; the comparison canonicalises the SVG the
same way as the kernel explorer's (tests/test_tui_support.py): Rich's class
hashes and the order its style classes are numbered in are not part of the screen.
"""

from __future__ import annotations

import asyncio

from tests.test_tui_support import SNAPSHOT_DIR as TUI_SNAPSHOT_DIR
from tests.test_tui_support import compare_snapshot as shared_compare_snapshot

SNAPSHOT_DIR = TUI_SNAPSHOT_DIR / "deployment"


def make_app(model: str = "llama3.1-70b", config: str | None = None, **kw):
    """The model screen with jobs run inline (``sync``) and no cursor blink or animation."""
    from tfx.tui.deployment.app import ModelApp
    from tfx.tui.deployment.core import make_knobs
    knobs = make_knobs(model, kw.pop("hw", "h200_nvl8"), kw.pop("mode", "decode"), kw.pop("batch", 1),
                       kw.pop("ctx", 8192), config)
    kw.setdefault("sync", True)
    kw.setdefault("blink", False)
    app = ModelApp(knobs, **kw)
    app.animation_level = "none"     # the tab underline slides otherwise; snapshots race it
    return app


def run(coro):
    return asyncio.run(coro)


def notes(app) -> list[str]:
    return [f"{n.title}: {n.message}" for n in app._notifications]


def compare_snapshot(name: str, svg: str) -> None:
    """Compare ``svg`` with snapshots/tui/deployment/<name>.svg (see tests/test_tui_support.py)."""
    shared_compare_snapshot(name, svg, SNAPSHOT_DIR)
