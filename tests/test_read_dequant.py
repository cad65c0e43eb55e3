"""bench/h200/read_dequant_s62.py on a hand-written probe output (the numbers below are made up to test the
arithmetic, not measurements)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("read_dequant_s62", ROOT / "bench" / "h200" / "read_dequant_s62.py")
reader = importlib.util.module_from_spec(spec)
spec.loader.exec_module(reader)

RATES = """op,warps,chains,instructions_per_step,lanes_per_cycle_sm,cycles_per_warp_instruction_subpartition,cycles_per_chain_step,sms_used
i2f_s16,1,8,1,10.0,12.8,40.0,132
i2f_s16,8,8,1,12.5,10.24,300.0,132
i2f_s16,1,1,1,0.5,256.0,20.0,132
f2f_bf16_f16,8,8,1,16.0,8.0,250.0,132
"""
NCU = """config,measured_ms,status,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio
gemm_w4a16 16 4096 4096 16 64 256 8 5 8,0.04,ok,61.5 %,20 %,3.25 ratio,0.5 ratio
"""


@pytest.fixture
def probe(tmp_path):
    (tmp_path / "dequant_rates.csv").write_text(RATES)
    (tmp_path / "dequant_ncu.csv").write_text(NCU)
    return tmp_path


def test_rates_take_the_best_many_chain_row_and_the_one_chain_step(probe):
    """i2f_s16: the 8-chain rows give 10.0 and 12.5 lanes a cycle, the best 12.5; its one-chain row (0.5 lanes, not
    a rate to keep) gives 20.0 cycles a step; f2f has no one-chain row."""
    best, latency = reader.read_rates(probe / "dequant_rates.csv")
    assert best == {"i2f_s16": 12.5, "f2f_bf16_f16": 16.0}
    assert latency == {"i2f_s16": 20.0}


def test_a_launch_costs_its_cycles_over_the_weights_it_converts(probe):
    """M / BM = 16 / 16 = 1 CTA row converting N x K = 4096 x 4096 = 16,777,216 weights; 0.04 ms x 1.98 GHz =
    79,200 cycles on each of 132 SMs = 10,454,400 SM-cycles / 16,777,216 = 0.6231 cycles a weight a SM. The pipes
    sort by share (xu 61.5 over alu 20), the stalls by warps (mio_throttle 3.25 over wait 0.5)."""
    (r,) = reader.launch_rows(probe / "dequant_ncu.csv", 132, 1.98)
    assert r["family"] == "gemm_w4a16"
    assert r["cycles_per_weight"] == pytest.approx(10_454_400 / 16_777_216)
    assert [k for _, k in r["pipes"]][0].startswith("sm__inst_executed_pipe_xu")
    assert [v for v, _ in r["stalls"]] == [3.25, 0.5]


def test_the_report_sets_each_launch_against_the_xu_at_its_measured_rate(probe, capsys):
    """One I2F a weight at the measured 12.5 a cycle a SM: a floor of 1 / 12.5 = 0.080 cycles a weight, which the
    launch's 0.6231 exceeds 0.6231 / 0.08 = 7.79x; i2f_s16's rate is 12.5 / 16 = 0.78x [PG]'s."""
    assert reader.main([str(probe)]) == 0
    out = capsys.readouterr().out
    assert "i2f_s16          12.50 lanes a cycle a SM (0.78x [PG]'s 16); 20.0 cycles a chain step" in out
    assert "0.623 cycles a weight, the XU at its measured rate 0.080 (7.79x) [ok]" in out
