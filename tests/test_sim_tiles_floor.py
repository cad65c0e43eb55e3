"""--tiles extrapolation keeps busy time and makespan consistent: an engine serves its
commands one at a time, so no batch lasts less than its busiest engine's uncapped work and
the reported efficiency (busy / makespan) never exceeds 100% (issue 13 leftovers)."""

from __future__ import annotations

import json

from tests.test_tui_support import GEMM
from tfx.cli.main import main
from tfx.sim.lower import COPY, N_ENGINES, TENSOR
from tfx.sim.run import busy_floor_ns


def test_busy_floor_is_the_busiest_engine_over_the_unit_positions():
    work = [0.0] * N_ENGINES
    work[COPY], work[TENSOR] = 100.25, 80.0
    # copy 100.25 ns x 2 positions = 200.5 -> 201 ns (ceil); tensor 80 x 2 = 160 ns
    assert busy_floor_ns(work, 2) == 201
    # a shared DRAM server (copy_share 3): copy 100.25 x 2 x 3 = 601.5 -> 602 ns; tensor unshared 160
    assert busy_floor_ns(work, 2, 3) == 602
    # 0.5 positions per unit (more units than positions): tensor 40 ns vs copy 50.125 -> 51
    assert busy_floor_ns(work, 0.5) == 51


def test_tiles_extrapolation_never_reports_efficiency_above_100_percent(capsys):
    # gemm K=2048 --tiles 8 reported 105.2% before: the slope of the 4- and 8-trip runs
    # extrapolated a makespan shorter than the copy engine's exact uncapped work
    assert main(["simulate", GEMM, "--hw", "h200_sxm", "--set", "K=2048", "--tiles", "8", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    text = json.dumps(data)
    assert data["pipeline_efficiency"] <= 1.0, text[:400]
    for engine in data["engines"].values():
        assert engine["utilization"] <= 1.0
