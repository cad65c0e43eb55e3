"""bench/h200/ncu_rows_s20_summary.py: a row launch's warp life from Nsight's issue and stall counts,
the launch's time outside it, and the lone CTA's twin. Every expected number is worked out by hand in
the test's comment."""

import pytest

from bench_script import load_bench

S = load_bench("h200/ncu_rows_s20_summary")


def _row(family="softmax", M=1024, N=2048, bm=8, warps=16, ctas=128, insns=1_228_800, cycles=9000,
         ncu_ms="0.00600", **stalls):
    row = {"family": family, "M": str(M), "N": str(N), "BLOCK_M": str(bm), "WARPS": str(warps),
           "sm__ctas_launched.sum": str(ctas), "smsp__inst_executed.sum": str(insns),
           "sm__cycles_elapsed.avg": str(cycles), "ncu_ms": ncu_ms, "status": "ok", "stall_misc": ""}
    row.update({f"stall_{k}": str(v) for k, v in stalls.items()})
    return row


def test_life_by_hand():
    # 128 CTAs x 16 warps = 2,048 warps; 1,228,800 instructions / 2,048 = 600 a warp. ncu's clock:
    # 9,000 cycles / 6,000 ns = 1.5 a ns. Stalls an issued instruction: long_scoreboard 2.5 + drain 0.5
    # + lg_throttle 0.25 + selected 1.0 + barrier 0.75 = 5.0 (the empty stall_misc is no number): life
    # 600 x 5.0 = 3,000 cycles / 1.5 = 2,000 ns; outside 6,000 - 2,000 = 4,000 ns. Load wait 2.5 x 600
    # / 1.5 = 1,000 ns, drain 0.5 x 600 / 1.5 = 200 ns, LSU queue 0.25 x 600 / 1.5 = 100 ns, rest
    # 2,000 - 1,300 = 700 ns. CTAs a SM: ceil(128 / 132) = 1.
    x = S.life(_row(long_scoreboard=2.5, drain=0.5, lg_throttle=0.25, selected=1.0, barrier=0.75))
    assert x["r"] == 1
    assert x["ghz"] == pytest.approx(1.5)
    assert x["insns"] == pytest.approx(600)
    assert x["life_ns"] == pytest.approx(2000)
    assert x["outside_ns"] == pytest.approx(4000)
    assert (x["long_scoreboard"], x["drain"], x["lg_throttle"], x["rest"]) == pytest.approx((1000, 200, 100, 700))


def test_twins_same_rows_a_sm():
    # (8, 16) on 128 CTAs: one a SM, 8 rows a SM. (4, 8) on 256 CTAs: ceil(256 / 132) = 2 a SM x 4
    # rows = 8: its twin. (2, 4) on 512 CTAs: ceil(512 / 132) = 4 a SM x 2 = 8: a twin too. (1, 8) on
    # 1,024: 8 x 1 = 8, but of another shape (N 4096): no twin. (16, 16) on 64 CTAs is at one a SM: not
    # a twin (r = 1), and it has none of its own (16 rows a SM; no launch at r > 1 holds 16).
    rows = [_row(bm=8, warps=16, ctas=128, selected=1), _row(bm=4, warps=8, ctas=256, selected=1),
            _row(bm=2, warps=4, ctas=512, selected=1), _row(N=4096, bm=1, warps=8, ctas=1024, selected=1),
            _row(bm=16, warps=16, ctas=64, selected=1)]
    pairs = [(a["BLOCK_M"], b["BLOCK_M"]) for a, b in S.twins(rows)]
    assert pairs == [("8", "4"), ("8", "2")]
