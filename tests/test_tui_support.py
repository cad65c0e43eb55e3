"""Helpers for the explorer tests (not a test module itself: no test functions)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from tfx.bundled import bundled_kernel

PINNED_TEXTUAL = "8.2.8"
SNAPSHOT_DIR = Path(__file__).resolve().parent.parent / "snapshots" / "tui"
GEMM = str(bundled_kernel("gemm.tile"))


def make_app(**kw):
    from tfx.tui.app import TfxApp
    kw.setdefault("sync", True)
    kw.setdefault("blink", False)
    app = TfxApp(kw.pop("kernel", GEMM), kw.pop("profile", "h200_sxm"), **kw)
    app.animation_level = "none"    # the tab underline slides otherwise; snapshots race it
    return app


def shown(app, selector: str) -> str:
    """The text a widget shows, with runs of whitespace (line wraps included) made one space."""
    return " ".join(str(app.query_one(selector).render()).split())


def run(coro):
    return asyncio.run(coro)


def first_column(table) -> list[str]:
    """A DataTable's first column as shown, top to bottom."""
    return [str(table.get_row_at(i)[0]) for i in range(table.row_count)]


def cursor_to(table, label: str) -> None:
    """Move the table's cursor to the row whose first column shows ``label``."""
    table.move_cursor(row=first_column(table).index(label))


async def settled_screenshot(app, pilot, title: str, rounds: int = 50) -> str:
    """The screenshot once the screen stopped changing. First the workers finish, the
    scheduled animations run and three pauses let focus moves and the footer's bindings
    settle; then two screenshots in a row 0.1 s apart must be the same (a freshly shown
    pane repaints after its first layout, and a scroll bar that appears narrows the text it
    wraps; on a loaded machine one fixed pause was not always enough). At most ``rounds``
    tries; the last one otherwise."""
    import re
    await app.workers.wait_for_complete()
    await pilot.wait_for_scheduled_animations()
    for _ in range(3):
        await pilot.pause()
    previous = None
    for _ in range(rounds):
        await pilot.pause(0.1)
        svg = app.export_screenshot(title=title)
        shape = _canonical(re.sub(r"terminal-\d+", "terminal-0", svg))
        if shape == previous:
            return svg
        previous = shape
    return svg


def compare_snapshot(name: str, svg: str, directory: Path = SNAPSHOT_DIR) -> None:
    """Compare ``svg`` with ``directory``/<name>.svg (snapshots/tui/ by default);
    TFX_UPDATE_SNAPSHOTS=1 rewrites it.

    Regeneration is refused on any Textual but the pinned one: another version
    renders differently and would silently move every golden file.
    """
    import re

    import textual
    # Rich names the SVG's CSS classes after a hash of the segments, styles' meta
    # included, which differs from run to run; the drawing does not.
    svg = re.sub(r"terminal-\d+", "terminal-0", svg)
    path = directory / f"{name}.svg"
    if os.environ.get("TFX_UPDATE_SNAPSHOTS") == "1":
        if textual.__version__ != PINNED_TEXTUAL:
            raise AssertionError(f"refusing to update snapshots with textual {textual.__version__}; "
                                 f"they are made with {PINNED_TEXTUAL}")
        directory.mkdir(parents=True, exist_ok=True)
        path.write_text(svg, encoding="utf-8")
        return
    assert path.exists(), f"no snapshot {path}; run with TFX_UPDATE_SNAPSHOTS=1"
    expected = path.read_text(encoding="utf-8")
    if _canonical(expected) != _canonical(svg):
        label = str(path.relative_to(SNAPSHOT_DIR).with_suffix("")) if path.is_relative_to(SNAPSHOT_DIR) else name
        out = Path("/tmp") / (label.replace("/", "_") + ".actual.svg")
        out.write_text(svg, encoding="utf-8")
        raise AssertionError(f"snapshot {label} differs; the new screen is in {out}")


def _canonical(svg: str) -> str:
    """The SVG with each style class replaced by its definition: Rich numbers classes
    in order of first use, which is not part of what the screen shows."""
    import re
    styles = dict(re.findall(r"\.terminal-0-(r\d+) \{([^}]*)\}", svg))
    body = re.sub(r"\.terminal-0-r\d+ \{[^}]*\}\n?", "", svg)
    return re.sub(r'class="terminal-0-(r\d+)"', lambda m: f'style="{styles.get(m.group(1), "")}"', body)
