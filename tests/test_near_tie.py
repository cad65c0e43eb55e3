"""A near tie is not a ranking (tfx.explore.near_tie): the band is the measured re-timing noise,
the tie is counted exactly across chunks, and text, JSON and the explorer's Explore pane say it
from the one ExploreResult. Every expected number is derived by hand in the docstrings."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from tfx.cli.main import main
from tfx.explore import explore
from tfx.explore.near_tie import RETIMING_NOISE, near_tie, near_times
from tfx.hw import load_profile
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "explore"
MEASURED = ROOT / "calibration" / "h200" / "measured"
CONFIG = ("BM", "BN", "BK", "WARPS", "STAGES")


def test_band_is_the_largest_retiming_disagreement():
    """gemm_m480.csv timed eight configurations; issue15/run2/gemm_m480_retime.csv timed them
    again. The largest disagreement is BM=128 BN=256 BK=128 WARPS=8 STAGES=2: 0.280960 ms, then
    0.286112 ms; (0.286112 - 0.280960) / 0.280960 = 0.005152 / 0.280960 = 0.0183371 (1.8%).
    The next largest, 128x256x64 w8 st4, is 0.183424 / 0.180880 - 1 = 0.002544 / 0.180880
    = 0.014065: below it."""
    assert RETIMING_NOISE == pytest.approx(0.005152 / 0.280960, rel=1e-12)
    assert round(RETIMING_NOISE, 6) == 0.018337
    first = {tuple(r[k] for k in CONFIG): float(r["measured_ms"])
             for r in csv.DictReader(open(MEASURED / "gemm_m480.csv"))}
    again = {tuple(r[k] for k in CONFIG): float(r["measured_ms"])
             for r in csv.DictReader(open(MEASURED / "issue15" / "run2" / "gemm_m480_retime.csv"))}
    assert len(first) == len(again) == 8 and set(first) == set(again)
    disagreement = {k: max(again[k] / first[k], first[k] / again[k]) - 1 for k in first}
    worst = max(disagreement, key=disagreement.get)
    assert worst == ("128", "256", "128", "8", "2")
    assert disagreement[worst] == pytest.approx(RETIMING_NOISE, rel=1e-12)
    assert sorted(disagreement.values())[-2] == pytest.approx(0.002544 / 0.180880, rel=1e-9)


def test_tie_by_hand():
    """Band 0.25 (exact in binary): times 8, 9, 10, 11 ns. 8 x 1.25 = 10, so 8, 9 and 10 are
    inside (10 on the edge counts) and 11 is the first outside: 3 configurations, the slowest
    10, next gap 11 / 8 - 1 = 0.375, spread 10 / 8 - 1 = 0.25."""
    t = near_tie(np.array([11.0, 9.0, 8.0, 10.0]), band=0.25)
    assert (t.configs, t.best_ns, t.slowest_ns, t.next_gap, t.spread) == (3, 8.0, 10.0, 0.375, 0.25)
    assert t.tied
    assert t.summary() == ("near tie: top 3 within 25.0% of the best, the re-timing noise: "
                           "measure them (their order is noise)")
    assert t.summary(shown=2).endswith("(their order is noise) (2 listed: a top of 3 lists them all)")
    assert t.summary(shown=3) == t.summary()


def test_no_tie_single_and_none():
    """8 and 12 ns at band 0.25: 12 > 10, the first pick stands alone, 12 / 8 - 1 = 50% ahead.
    Three equal times are a tie of three with nothing outside; one time is no ranking at all."""
    t = near_tie(np.array([12.0, 8.0]), band=0.25)
    assert (t.configs, t.tied, t.next_gap) == (1, False, 0.5)
    assert t.summary() == "top pick 50.0% ahead of the next: outside the 25.0% re-timing noise"
    same = near_tie(np.array([5.0, 5.0, 5.0]), band=0.25)
    assert (same.configs, same.next_gap, same.spread) == (3, None, 0.0)
    assert near_tie(np.array([5.0]), band=0.25).summary() == "one feasible configuration"
    assert near_tie(np.zeros(0)) is None


def test_chunks_keep_what_the_merge_needs():
    """Band 0.25. Chunk A = 8, 12, 13: its band ends at 10, it keeps 8 and the fastest outside,
    12. Chunk B = 9.5, 10.5, 20: its band ends at 11.875, it keeps 9.5, 10.5 and 20. Merged,
    the best is 8 and the band ends at 10: 8 and 9.5 are tied, 10.5 is the first outside
    (10.5 / 8 - 1 = 0.3125), as over all six times at once."""
    a = near_times(np.array([13.0, 8.0, 12.0]), band=0.25)
    b = near_times(np.array([20.0, 10.5, 9.5]), band=0.25)
    assert a.tolist() == [8.0, 12.0] and b.tolist() == [9.5, 10.5, 20.0]
    merged = near_tie(np.concatenate([a, b]), band=0.25)
    whole = near_tie(np.array([8.0, 12.0, 13.0, 9.5, 10.5, 20.0]), band=0.25)
    assert merged == whole
    assert (merged.configs, merged.slowest_ns, merged.next_gap) == (2, 9.5, 0.3125)


def toy_knob_sweep(**kw):
    """tile2d on the toy GPU at BM=32, BN=64, WARPS=2 and 4 (tests/test_explore.py derives it: 26,214,400
    B through 1 TB/s DRAM plus one 1000 ns latency, reached by every configuration that fills the
    100 SMs: 3200 CTAs against 100 x 20 (WARPS=2) and 100 x 12 (WARPS=4) resident), DRAM bandwidth
    x1.02, x1.05, x1.06, both warp counts at each point:
    ceil(26,214.4 / 1.02 + 1000) = ceil(26,700.39) = 26,701 ns,
    ceil(26,214.4 / 1.05 + 1000) = ceil(25,966.10) = 25,967 ns,
    ceil(26,214.4 / 1.06 + 1000) = ceil(25,730.57) = 25,731 ns."""
    return explore(parse_file(DATA / "tile2d.tile"), None, load_profile(str(DATA / "toy_gpu.toml")),
                   sweeps={"BM": [32], "BN": [64], "WARPS": [2, 4]},
                   knob_sweeps={"memory.gmem.bandwidth": ["x1.02", "x1.05", "x1.06"]}, **kw)


def test_explore_counts_the_tie_by_hand():
    """The best is 25,731 ns at DRAM x1.06, reached by WARPS=2 and WARPS=4: a tie of 2. At x1.05
    both take 25,967 ns, inside 25,731 x 1.018337 = 26,202.8, but a faster memory is not a
    configuration one picks instead of the best: the tie counts only the best's knob point, where
    nothing lies outside the band (next_gap None). One configuration a chunk (six chunks) and all
    in one give the same tie."""
    for chunk in (1, 6):
        r = toy_knob_sweep(chunk_size=chunk)
        assert [e["predicted_ns"] for e in r.top] == [25731, 25731, 25967, 25967, 26701, 26701]
        assert [e["knobs"]["memory.gmem.bandwidth"] for e in r.top[:3]] == ["x1.06", "x1.06", "x1.05"]
        assert [e["near_tie"] for e in r.top] == [True, True, False, False, False, False]
        t = r.near_tie
        assert (t.configs, t.best_ns, t.slowest_ns, t.next_gap) == (2, 25731, 25731, None)
        assert r.to_json()["near_tie"] == t.to_json()


def test_explore_tie_ignores_other_problem_shapes():
    """tile2d with its shape parameter N swept too (N = 102400 and 101888 = 64 x 1592, BM=32, BN=64,
    WARPS=2). The best is N = 102,400 at 27,215 ns (tests/test_explore.py); the smaller problem moves
    fewer bytes (4 x 64 x 101,888 = 26,083,328) so it is no slower and lies inside the band, yet a
    smaller problem is not an alternative to the bigger one: the best is alone on its shape, a tie
    of one with nothing outside it (next_gap None), and no row is marked."""
    r = explore(parse_file(DATA / "tile2d.tile"), None, load_profile(str(DATA / "toy_gpu.toml")),
                sweeps={"BM": [32], "BN": [64], "WARPS": [2], "N": [102400, 101888]})
    assert [e["params"]["N"] for e in r.top] == [102400, 101888]
    assert r.top[0]["predicted_ns"] == 27215
    assert r.top[1]["predicted_ns"] <= 27215 * (1 + RETIMING_NOISE)     # the old count tied them
    assert [e["near_tie"] for e in r.top] == [False, False]
    assert (r.near_tie.configs, r.near_tie.best_ns, r.near_tie.next_gap) == (1, 27215, None)


def test_explore_tie_matches_every_column_across_chunks():
    """gemm at 1024^3 over its declared tile domains in chunks of 97 configurations: the tie the
    chunks' kept times give equals the count over every feasible configuration's column."""
    r = explore(parse_file(ROOT / "kernels" / "gemm.tile"), None, load_profile("h200_sxm"),
                fixed={"M": 1024, "N": 1024, "K": 1024}, chunk_size=97, keep_columns=True)
    assert r.chunks > 10
    t = r.columns["time"][r.columns["code"] == 0]
    best = t.min()
    inside = t[t <= best * (1 + RETIMING_NOISE)]
    assert (r.near_tie.configs, r.near_tie.best_ns, r.near_tie.slowest_ns) == (inside.size, best, inside.max())
    outside = t[t > best * (1 + RETIMING_NOISE)]
    assert r.near_tie.next_gap == pytest.approx(outside.min() / best - 1, rel=1e-12)


def test_cli_text_and_json_say_it_from_one_result(capsys, monkeypatch):
    """The toy sweep's tie of 2 (test_explore_counts_the_tie_by_hand), band 0.018337 -> "1.8%":
    the JSON's summary is the sentence the text prints; with --top 1 the text adds that one row of
    the two is listed. Piped text, as a pipe gets it (pytest-xdist's workers set COLUMNS=80, where
    a table too wide for 80 columns is drawn without rules: cmd_explore.fit_table)."""
    monkeypatch.delenv("COLUMNS", raising=False)
    args = ["explore", str(DATA / "tile2d.tile"), "--hw", str(DATA / "toy_gpu.toml"), "--sweep", "BM=32",
            "--sweep", "BN=64", "--sweep", "WARPS=2,4", "--knob-sweep", "memory.gmem.bandwidth=x1.02,x1.05,x1.06"]
    sentence = ("near tie: top 2 within 1.8% of the best, the re-timing noise: measure them "
                "(their order is noise)")
    assert main([*args, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    tie = data["near_tie"]
    assert (tie["configs"], tie["tied"], tie["best_ns"], tie["slowest_ns"]) == (2, True, 25731, 25731)
    assert tie["band"] == RETIMING_NOISE and "gemm_m480_retime.csv" in tie["band_source"]
    assert tie["summary"] == sentence
    assert [e["near_tie"] for e in data["top"]] == [True, True, False, False, False, False]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert sentence in text.splitlines()
    # the top table marks the two tied rows: "1≈" and "2≈", not "3"
    ranks = [line.split("│")[1].strip() for line in text.splitlines() if line.startswith("│")][:3]
    assert ranks == ["1≈", "2≈", "3"]
    # with --top 1 every surface says that one row of the two is listed, in the same sentence
    longer = sentence + " (1 listed: a top of 2 lists them all)"
    assert main([*args, "--top", "1"]) == 0
    assert longer in capsys.readouterr().out.splitlines()
    assert main([*args, "--top", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["near_tie"]["summary"] == longer


def test_summary_rounding_and_zero_best():
    """100,000 and 101,840 ns: 101,840 > 100,000 x 1.018337 = 101,833.7, outside; the gap
    0.0184 and the band 0.018337 both print "1.8%" to one decimal, so both get two: 1.84% vs
    1.83%. Times 0 and 5 ns: two feasible configurations, the 0 ns best inside alone, 5 outside
    (a gap from 0 has no ratio). One time: the only feasible configuration."""
    assert near_tie(np.array([100000.0, 101840.0])).summary() == (
        "top pick 1.84% ahead of the next: outside the 1.83% re-timing noise")
    zero = near_tie(np.array([0.0, 5.0]))
    assert (zero.configs, zero.next_gap, zero.alone) == (1, None, False)
    assert zero.summary() == "top pick ahead of the next (it takes 0 ns): outside the 1.8% re-timing noise"
    one = near_tie(np.array([7.0]))
    assert (one.alone, one.summary()) == (True, "one feasible configuration")
    # a gap that rounds apart from the band keeps one decimal: 103,000 / 100,000 - 1 = 3.0%
    assert near_tie(np.array([100000.0, 103000.0])).summary() == (
        "top pick 3.0% ahead of the next: outside the 1.8% re-timing noise")


def test_a_best_alone_on_its_shape_is_not_called_the_one_feasible_configuration(capsys):
    """copy.tile swept over N only (its declared sweep, 11 sizes): every configuration is its own
    problem shape, so the best (the smallest N) has no alternative, though 11 are feasible: the
    sentence says it is the only one of its shape and hardware point, and no top-3 advice follows."""
    assert main(["explore", "kernels/copy.tile", "--sweep", "N", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["feasible"] == 11
    assert (out["near_tie"]["alone"], out["near_tie"]["others"]) == (True, True)
    assert out["near_tie"]["summary"] == ("the only feasible configuration of its problem shape and hardware "
                                          "point: nothing to rank it against")
    assert out["top_picks"] is None
