"""A/B in the explorer (issue 14 item 5): pin the shown analysis, compare later edits with it;
the kernel file is reanalysed when it changes on disk and a broken text keeps the last good
analysis. Driven through the real app (inline jobs)."""

from __future__ import annotations

import os
from pathlib import Path

from tests.test_tui_support import GEMM, make_app, run


def _diff_line(app) -> str:
    return str(app.query_one("#diff").render())


def test_pin_then_edit_a_knob_and_a_parameter():
    """Pinned at STAGES 3 on 132 SMs, then STAGES 4 and 264 SMs.

    smem peak = STAGES copies of a BM x BK and a BK x BN bf16 tile, 3 * (128*64 + 64*128) * 2 B
    = 98,304 B (98.30 KB) -> 4 * 32,768 = 131,072 B (131.07 KB), +33.3%;
    compute = flops at the tensor peak, which is per SM: twice the SMs halve it, 128.63 us ->
    64.32 us (-50.0%); so does the memory roof, the shared-memory ports' 5,368,709,120 B (the
    wgmma operand reads and the copies' writes, whatever the stages) over 128 B x SMs x 1.98 GHz:
    160,479.4 -> 160,480 ns at 132 SMs, 80,239.7 -> 80,240 at 264 (-50.0%); CTAs/SM fall 2 -> 1
    (228 KB of smem holds one 131 KB CTA, not two). The line keeps the first four changes, so the
    smem peak is read from the pinned screen's rows.
    """
    async def go():
        app = make_app()
        async with app.run_test(size=(120, 30)) as pilot:
            await pilot.press("p")
            await pilot.pause()
            assert _diff_line(app).startswith("A/B vs pin: no edit since the pin")
            app.set_param("STAGES", "4")
            app.set_knob("hierarchy.sm.count", "264")
            await pilot.pause()
            line = _diff_line(app)
            assert line.startswith("A/B vs pin [knob hierarchy.sm.count=264, STAGES 3 -> 4]: ")
            assert "compute 128.63 us -> 64.32 us (-50.0%)" in line
            assert "memory 160.48 us -> 80.24 us (-50.0%)" in line
            await pilot.press("b")
            await pilot.pause()
            assert type(app.screen).__name__ == "PinScreen"
            rows = {r[0]: r[1:] for r in app.screen.report.rows}
            assert rows["memory.peak.smem"] == ("98.30 KB", "131.07 KB", "+33.3%")
            assert rows["occupancy.blocks_per_sm"] == ("2", "1", "-50.0%")
            await pilot.press("escape", "P")
            await pilot.pause()
            assert app.pin is None and not _diff_line(app).startswith("A/B")
    run(go())


def test_profile_switch_is_compared_with_the_pin():
    async def go():
        app = make_app()
        async with app.run_test(size=(120, 30)) as pilot:
            await pilot.press("p")
            app.switch_profile("h100_sxm")
            await pilot.pause()
            assert _diff_line(app).startswith("A/B vs pin [profile h200_sxm -> h100_sxm]: predicted")
    run(go())


def test_kernel_edited_on_disk_is_reanalysed_and_a_broken_text_keeps_the_last_good(tmp_path):
    """STAGES' default 3 -> 4 in the file: reanalysed (smem peak 131,072 B, see above) and the
    pin names the edit; then a broken text: a notification, the STAGES 4 analysis stays, and a
    later parameter edit still analyses the last good text."""
    path = tmp_path / "gemm.tile"
    text = Path(GEMM).read_text()
    path.write_text(text)

    def rewrite(new: str) -> None:
        st = os.stat(path)
        path.write_text(new)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))   # a later mtime, surely

    async def go():
        app = make_app(kernel=str(path))
        async with app.run_test(size=(120, 30)) as pilot:
            await pilot.press("p")
            assert app.check_kernel_file() is False               # nothing changed yet
            rewrite(text.replace("param STAGES = 3 in", "param STAGES = 4 in"))
            assert app.check_kernel_file() is True
            await pilot.pause()
            assert app.analysis.metrics["memory.peak.smem"] == 131_072
            assert _diff_line(app).startswith("A/B vs pin [kernel text (+1 -1 lines)]")
            rewrite(text.replace("param STAGES = 3 in", "param STAGES = in"))
            assert app.check_kernel_file() is True
            await pilot.pause()
            assert any(n.title == "analysis failed" for n in app._notifications)
            assert app.analysis.metrics["memory.peak.smem"] == 131_072
            assert "param STAGES = 4 in" in app.kernel_text
            app.set_param("BK", "32")              # 4 * (128*32 + 32*128) * 2 B = 65,536 B
            await pilot.pause()
            assert app.analysis.metrics["memory.peak.smem"] == 65_536
    run(go())
