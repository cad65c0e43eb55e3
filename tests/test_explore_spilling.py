"""tfx explore marks the configurations that spill registers and, where its top pick spills, names the fastest
listed one that does not (docs/explore.md, "A top pick that spills"; issue 15: no spilling configuration ranked
first where a non-spilling one is faster): text, JSON and the line under the table say the same."""

from __future__ import annotations

import json

from tfx.bundled import bundled_kernel
from tfx.cli.main import main
from tfx.present.formatting import rank_cell, spilling_sentence

PREFILL = str(bundled_kernel("flash_prefill.tile"))
SHAPE = "B=200,H=16,S=1024,D=128"


def test_a_spilling_top_pick_is_marked_and_the_fastest_unspilled_row_named(capsys):
    """flash_prefill at B200 H16 S1024 D128 (an issue-15 causal shape whose first pick spilled wrongly).
    Its top pick, 128x64 on 4 warps (128 threads), holds per thread: the O accumulator 128 x 128 fp32 / 128
    = 128 registers, S 128 x 64 fp32 / 128 = 64, P 128 x 64 bf16 = 128 x 64 x 2 B / 128 / 4 B = 32: 224, plus
    the 32 of the base = 256 against the 255 a thread may have: 1 word spills. The next, 128x32 on 8 warps (256
    threads): O 128 x 128 / 256 = 64, S 128 x 32 / 256 = 16, P 128 x 32 x 2 B / 256 / 4 B = 8: 88 + 32 = 120
    registers, none spilled. So row 1 reads `1†`, row 2 `2`, and the line names #2, slower by its predicted
    time over the first's - 1."""
    assert main(["explore", PREFILL, "--hw", "h200_sxm", "--set", SHAPE, "--top", "3", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    first, second = data["top"][:2]
    assert first["params"] == {"BLOCK_M": 128, "BLOCK_N": 64, "WARPS": 4, "STAGES": 2}
    assert (first["regs_per_thread"], first["spilled_registers"]) == (255, 1)
    assert second["params"] == {"BLOCK_M": 128, "BLOCK_N": 32, "WARPS": 8, "STAGES": 3}
    assert (second["regs_per_thread"], second["spilled_registers"]) == (120, 0)
    assert (rank_cell(1, first), rank_cell(2, second)) == ("1†", "2")
    best = data["spilling"]["best_unspilled"]
    assert best["rank"] == 2
    assert abs(best["slower"] - (second["predicted_ns"] / first["predicted_ns"] - 1)) < 1e-12
    line = spilling_sentence(True, (2, best["slower"]))
    assert data["spilling"]["summary"] == line
    assert "; the fastest row that does not spill, #2, is predicted " in line and line.endswith("% slower")
    # the text prints the same line under its table, and the table's rank cell
    assert main(["explore", PREFILL, "--hw", "h200_sxm", "--set", SHAPE, "--top", "3"]) == 0
    out = capsys.readouterr().out
    assert line in out and "│ 1† │" in out


def test_no_line_where_no_listed_row_spills(capsys):
    """gemm.tile's default sweep at 4096^3: its top rows are 128x256 on 8 warps, a 128 x 256 fp32 accumulator
    over 256 threads = 128 registers a thread plus the wgmma's operands (in shared memory) and the base, well
    under 255; the frontier's tiles are smaller or have more threads a row: no listed row spills, so no row
    carries a `†`, JSON `spilling` is null and the text has no such line."""
    assert main(["explore", str(bundled_kernel("gemm.tile")), "--hw", "h200_sxm", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["spilling"] is None
    assert all(e["spilled_registers"] == 0 for e in data["top"] + data["pareto"])
    assert main(["explore", str(bundled_kernel("gemm.tile")), "--hw", "h200_sxm"]) == 0
    assert "spills registers" not in capsys.readouterr().out


def test_every_listed_row_spilling_is_said():
    """Where the top pick spills and no listed row does not, the line says so instead of naming a row."""
    assert spilling_sentence(True, None).endswith("; every listed row spills")
    assert spilling_sentence(False, None) == "† spills registers: its excess is priced as local-memory traffic"
