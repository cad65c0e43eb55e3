"""bench/spearman_ceiling.py: the Spearman a perfect model would reach against a re-timing. Its parts, by hand."""

from __future__ import annotations

import csv
import random
from pathlib import Path

from bench_script import load_bench

sc = load_bench("spearman_ceiling")
MEASURED = Path(__file__).resolve().parent.parent / "calibration" / "h200" / "measured"
CONFIG = ("BM", "BN", "BK", "WARPS", "STAGES")


def test_far_apart_times_keep_their_order():
    """Times 1..5 ms, each 20% or more from the next, under a noise of standard deviation 0.1%: a swap needs a draw of
    more than 100 standard deviations, so every re-timing ranks them as measured: Spearman 1 in all, none under 0.85."""
    assert sc.ceiling([1.0, 2.0, 3.0, 4.0, 5.0], 0.001, 500, random.Random(0)) == (1.0, 0.0)


def test_times_inside_the_noise_rank_at_random():
    """Five times 0.01% apart under a noise of 5% (500 times the spacing): each re-timing's order is a uniform random
    permutation. rho = 1 - 6 sum d^2 / (n (n^2 - 1)) = 1 - sum d^2 / 20 for n = 5, at least 0.85 only where
    sum d^2 <= 3: the identity (0) and the four swaps of neighbours (2 each), 5 of the 5! = 120 permutations, 4.2%. So about 95.8% of
    the draws fall under 0.85; over 2,000 draws the share's standard deviation is sqrt(0.958 x 0.042 / 2000) = 0.45%:
    above 0.9 by far more than ten of them."""
    _, below = sc.ceiling([1.0, 1.0001, 1.0002, 1.0003, 1.0004], 0.05, 2000, random.Random(1))
    assert below > 0.9


def test_the_one_session_retiming_is_the_near_tie_tables():
    """RETIMING is gemm_m480_retime.csv over gemm_m480.csv minus one for the eight configurations (the table of
    tfx.explore.near_tie and tests/test_near_tie.py: 0.174048 / 0.173216 - 1 = 0.00480, ..., 0.286112 / 0.280960 - 1 =
    0.01834), to five decimals."""
    first = {tuple(r[k] for k in CONFIG): float(r["measured_ms"])
             for r in csv.DictReader(open(MEASURED / "gemm_m480.csv"))}
    again = {tuple(r[k] for k in CONFIG): float(r["measured_ms"])
             for r in csv.DictReader(open(MEASURED / "issue15" / "run2" / "gemm_m480_retime.csv"))}
    assert sorted(round(again[k] / first[k] - 1, 5) for k in first) == sorted(sc.RETIMING)


def test_retiming_sd_pairs_run73_with_run68(tmp_path):
    """A made-up pair: two shapes, run68 at 1.0 / 2.0 and 1.0 / 3.0 ms, run73 at 1.01 / 2.02 (ratios 1.01, 1.01: the
    shape's own shift, nothing left) and 1.0 / 3.3 (1.00, 1.10: median 1.05, residuals -0.05 and +0.05). Residuals 0,
    0, -0.05, +0.05: mean 0, sample variance (0.0025 + 0.0025) / 3, standard deviation sqrt(0.005 / 3) = 0.040825.
    Both decode families' file ('decode') maps to gqa_decode; a failed row is left out."""
    head = "kernel,measured_ms,SPLITS,shape,status\n"
    for run, rows in (("run68", [("1.0", 1, "a"), ("2.0", 2, "a"), ("1.0", 1, "b"), ("3.0", 2, "b")]),
                      ("run73", [("1.01", 1, "a"), ("2.02", 2, "a"), ("1.0", 1, "b"), ("3.3", 2, "b"),
                                 ("9.9", 3, "b")])):
        (tmp_path / run).mkdir()
        name = "decode.csv" if run == "run68" else "decode_retime.csv"
        lines = [f"k,{ms},{s},{shape},{'ok' if s < 3 else 'error'}" for ms, s, shape in rows]
        (tmp_path / run / name).write_text(head + "\n".join(lines) + "\n")
    out = sc.retiming_sd(tmp_path)
    assert set(out) == {"gqa_decode"}
    assert abs(out["gqa_decode"] - (0.005 / 3) ** 0.5) < 1e-12


def test_the_model_column_is_the_spearman_validate_prints():
    """--model prices a shape's rows as bench/accuracy.py and tfx validate do: its Spearman is the one
    tfx.analysis.measured.figures gives the same rows (run79's softmax 1376256x1024, 14 rows)."""
    from tfx.analysis.measured import Predictor, figures, read_measurements
    rows = [r for r in read_measurements(MEASURED / "issue15" / "run79" / "rows.csv")
            if r.family == "softmax" and r.shape == "1376256x1024"]
    assert len(rows) == 14
    key = ("softmax", "run79", "1376256x1024")
    got = sc.model_spearmans({key: rows}, "h200_sxm")[key]
    assert got == figures("softmax", "1376256x1024", Predictor("h200_sxm").compare(rows)).spearman
