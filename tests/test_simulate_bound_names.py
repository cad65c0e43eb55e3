"""`tfx simulate` names its bound by the roofline's names (issue 14 item 2), in its JSON and in
every line of its text, and the explorer's Timeline pane shows the same comparison."""

from __future__ import annotations

import json

from tfx.bundled import bundled_kernel
from tfx.cli.main import main

GEMM = str(bundled_kernel("gemm.tile"))


def test_simulate_names_the_bound_as_the_roofline_does(capsys):
    """gemm 4096^3 on h200_sxm (the tutorial's section 3): every CTA re-reads its A and B
    tiles through L2, 2.15 GB of reads over the L2 rate, the l2 term 198.28 us above tensor's
    128.38 us, so the roofline is bound by l2; the simulator's busiest engine is the copy
    engine that moves those bytes, so its bound is l2 too, never the engine's own name
    'copy' in place of it."""
    assert main(["simulate", GEMM, "--hw", "h200_sxm", "--json", "--no-events"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["bottleneck_engine"] == "copy"
    assert data["bound_by"] == "l2"
    assert data["analysis"]["roofline_bound_by"] == "l2"
    assert data["analysis"]["predicted_bound_by"] == "l2"
    assert main(["simulate", GEMM, "--hw", "h200_sxm"]) == 0
    out = capsys.readouterr().out
    eff = next(line for line in out.splitlines() if line.lstrip().startswith("efficiency"))
    assert "(copy engine busy / makespan; bound by l2)" in eff
    assert "bottleneck copy" not in out
