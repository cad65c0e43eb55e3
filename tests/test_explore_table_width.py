"""tfx explore's configuration tables fit an 80-column terminal (session 11, audit11): gemm's 11
columns (6 swept parameters + #, time, smem/CTA, regs, CTAs/SM) took 92 columns with rich's
heavy rules, so at COLUMNS=80 the last column, CTAs/SM, was cropped whole. Where the ruled table
does not fit, it drops its outer edges and vertical rules: two characters between columns."""

from __future__ import annotations

import io
from types import SimpleNamespace

from rich.console import Console

from tfx.cli.cmd_explore import config_table, fit_table

NAMES = ["BM", "BN", "BK", "WARPS", "STAGES", "GROUP_M"]
ROW = {"near_tie": True, "params": dict(BM=256, BN=128, BK=64, WARPS=8, STAGES=3, GROUP_M=8),
       "predicted_ns": 207_230, "smem_per_cta": 147_456, "regs_per_thread": 160, "blocks_per_sm": 1}


def _render(width: int) -> list[str]:
    r = SimpleNamespace(space=SimpleNamespace(names=NAMES, knob_paths=[]), onchip_label="smem/CTA",
                        onchip_key="smem_per_cta", occupancy=True)
    out = io.StringIO()
    console = Console(file=out, width=width, color_system=None)
    console.print(fit_table(config_table(r, "top 1 by predicted time", [ROW]), width))
    return out.getvalue().rstrip("\n").split("\n")


def test_gemms_table_fits_80_columns_with_every_column():
    """Cells' widths: # 2 ('1≈'), BM 3, BN 3, BK 2, WARPS 5, STAGES 6, GROUP_M 7, time 9
    ('207.23 us'), smem/CTA 9 ('147,456 B'), regs 4, CTAs/SM 7 = 57. Ruled: 57 + 11 x 3 + 1 = 91
    > 80; without rules: 57 + 10 x 2 + 1 + 1 = 79."""
    lines = _render(80)
    assert max(len(x) for x in lines) <= 80
    assert "  #   BM   BN  BK  WARPS  STAGES  GROUP_M       time   smem/CTA  regs  CTAs/SM " in lines
    assert " 1≈  256  128  64      8       3        8  207.23 us  147,456 B   160        1 " in lines


def test_a_wide_terminal_keeps_the_ruled_table():
    lines = _render(200)
    assert "┃  # ┃  BM ┃  BN ┃ BK ┃ WARPS ┃ STAGES ┃ GROUP_M ┃      time ┃  smem/CTA ┃ regs ┃ CTAs/SM ┃" in lines
    assert "│ 1≈ │ 256 │ 128 │ 64 │     8 │      3 │       8 │ 207.23 us │ 147,456 B │  160 │       1 │" in lines
