"""Helpers for the model-screen tests (no test functions here).

Snapshots live in snapshots/tui/model/; the comparison canonicalises the SVG the
same way as the kernel explorer's (tests/test_tui_support.py): Rich's class
hashes and the order its style classes are numbered in are not part of the screen.
"""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

PINNED_TEXTUAL = "8.2.8"
SNAPSHOT_DIR = Path(__file__).resolve().parent.parent / "snapshots" / "tui" / "model"


def make_app(model: str = "llama3.1-70b", config: str | None = None, **kw):
    """The model screen with jobs run inline (``sync``) and no cursor blink or animation."""
    from tfx.tui.model.app import ModelApp
    from tfx.tui.model.core import make_knobs
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
    """Compare ``svg`` with snapshots/tui/model/<name>.svg; TFX_UPDATE_SNAPSHOTS=1 rewrites it
    (refused on any Textual but the pinned one: another version renders differently)."""
    import textual
    svg = re.sub(r"terminal-\d+", "terminal-0", svg)
    path = SNAPSHOT_DIR / f"{name}.svg"
    if os.environ.get("TFX_UPDATE_SNAPSHOTS") == "1":
        if textual.__version__ != PINNED_TEXTUAL:
            raise AssertionError(f"refusing to update snapshots with textual {textual.__version__}; "
                                 f"they are made with {PINNED_TEXTUAL}")
        SNAPSHOT_DIR.mkdir(parents=True, exist_ok=True)
        path.write_text(svg, encoding="utf-8")
        return
    assert path.exists(), f"no snapshot {path}; run with TFX_UPDATE_SNAPSHOTS=1"
    if _canonical(path.read_text(encoding="utf-8")) != _canonical(svg):
        out = Path("/tmp") / f"model_{name}.actual.svg"
        out.write_text(svg, encoding="utf-8")
        raise AssertionError(f"snapshot model/{name} differs; the new screen is in {out}")


def _canonical(svg: str) -> str:
    styles = dict(re.findall(r"\.terminal-0-(r\d+) \{([^}]*)\}", svg))
    body = re.sub(r"\.terminal-0-r\d+ \{[^}]*\}\n?", "", svg)
    return re.sub(r'class="terminal-0-(r\d+)"', lambda m: f'style="{styles.get(m.group(1), "")}"', body)
