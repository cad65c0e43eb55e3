"""Issue 15's "done when" per family (tfx.analysis.verdict) and `tfx validate` printing it, text
and --json. The rows are made up here; every figure is worked out in the docstrings.

One family, gemm_bf16, three shapes (measured ms -> predicted ms; * the row spills):

    A  1.0 -> 1.1   2.0 -> 2.2   4.0 -> 3.6
    B  1.0 -> 1.0   2.0 -> 2.2   2.1 -> 2.0
    C  1.0 -> 1.1   1.2 -> 1.0*  2.0 -> 2.0   3.0 -> 3.0   4.0 -> 4.0

Errors (predicted - measured) / measured:
    A  +0.1, +0.1, 3.6/4 - 1 = -0.1: |e| median 10%, signed median (-0.1, 0.1, 0.1) +10%
    B  0, +0.1, 2.0/2.1 - 1 = -0.0476: |e| (0, 0.0476, 0.1) median 4.76%; signed (-0.0476, 0, 0.1) 0
    C  +0.1, 1.0/1.2 - 1 = -0.1667, 0, 0, 0: |e| (0, 0, 0, 0.1, 0.1667) median 0; signed 0
The family: median over shapes of |e| (0, 0.0476, 0.1) = 4.76% -> "4.8%"; signed (0, 0, 0.1) 0 -> "+0.0%".
Spearman (1 - 6 sum d^2 / (n (n^2 - 1))):
    A  predicted ranks 1 2 3 = measured ranks: +1
    B  predicted ranks 1 3 2 against measured 1 2 3: d^2 = 0 + 1 + 1 = 2, 1 - 12 / 24 = +0.50 < 0.85
    C  predicted ranks 2 1 3 4 5 against measured 1 2 3 4 5: d^2 = 2, 1 - 12 / 120 = +0.90
   min over shapes +0.50.
Regret (measured time of the row ranked first / best measured - 1):
    A  the 1.1 prediction measured 1.0, the best: 0;  B  the 1.0 prediction measured 1.0: 0
    C  the 1.0 prediction (the spilling row) measured 1.2 against the best 1.0: 20% > 10%;
       and a non-spilling row (1.0) is faster than that spilling first pick: spilling first in C.
Best of the top three (the best measured among the three rows predicted fastest / best measured - 1):
    A and B have three rows, all of them picks: 0; C's three predicted fastest are the 1.0 (measured
    1.2), the 1.1 (1.0) and the 2.0 (2.0): the best 1.0 is among them: 0. The family's worst: "0.0%".
Spilling first picks: only C's first pick spills; the first non-spilling row by prediction is its 1.1 (measured
    1.0, the best): faster than the spilling pick's 1.2, regret 0 against 20%: 1 shape, faster in 1, slower in 0,
    mean regret "20.0%" against "0.0%".
Rows apart: spilling C's 1.2 row alone, |e| 16.7%, signed -16.7%. Non-spilling, the other 10:
    |e| 0 0 0 0 0.0476 0.1 0.1 0.1 0.1 0.1: median (0.0476 + 0.1) / 2 = 0.0738 -> "7.4%";
    signed -0.1 -0.0476 0 0 0 0 0.1 0.1 0.1 0.1: median (0 + 0) / 2 = 0 -> "+0.0%".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tfx.analysis import measured
from tfx.analysis.measured import Compared, MeasuredRow, summarize
from tfx.analysis.verdict import family_verdict, family_verdicts, format_verdict
from tfx.cli.main import main
from tfx.errors import SourceLocation

ROOT = Path(__file__).resolve().parent.parent
GEMM = ROOT / "kernels" / "gemm.tile"

# (shape, BM) -> (measured ms, predicted ms, spills): BM only tells a shape's rows apart
ROWS = {("A", 16): (1.0, 1.1, 0), ("A", 32): (2.0, 2.2, 0), ("A", 64): (4.0, 3.6, 0),
        ("B", 16): (1.0, 1.0, 0), ("B", 32): (2.0, 2.2, 0), ("B", 64): (2.1, 2.0, 0),
        ("C", 16): (1.0, 1.1, 0), ("C", 32): (1.2, 1.0, 3), ("C", 64): (2.0, 2.0, 0),
        ("C", 128): (3.0, 3.0, 0), ("C", 256): (4.0, 4.0, 0)}

SUMMARY = ("  => gemm_bf16: median over shapes of median |error| 4.8%, signed +0.0%; min Spearman +0.50; "
           "max regret 20.0% (best of the top 3: 0.0%); spilling ranked first wrongly in 1 shape")
DONE_WHEN = ("     done when: median ok, Spearman >= 0.85 missed in 1 of 3 (B), regret <= 10% missed in 1 of 3 (C), "
             "no spilling first missed in 1 of 3 (C)")


def _compared():
    out = []
    for i, ((shape, bm), (meas, pred, spills)) in enumerate(ROWS.items()):
        row = MeasuredRow(SourceLocation("run1/m.csv", i + 2, 1), GEMM, None, meas, {"BM": bm}, spills=spills,
                          notes={"family": "gemm_bf16", "shape": shape})
        out.append(Compared(row, pred, bool(spills)))
    return out


def test_the_verdict_text_by_hand():
    """The lines under the family's table (the module docstring's arithmetic), the spilling rows apart."""
    compared = _compared()
    (v,) = family_verdicts(summarize(compared), compared)
    assert format_verdict(v) == [
        SUMMARY, DONE_WHEN,
        "     non-spilling rows: 10, median |error| 7.4%, signed +0.0%",
        "     spilling rows: 1, median |error| 16.7%, signed -16.7%",
        "     spilling first picks: 1 shape; the first non-spilling pick ran faster in 1, slower in 0; mean regret "
        "20.0% (the spilling pick) against 0.0%"]
    assert not v.done


def test_the_verdict_json_by_hand():
    """The same numbers and verdicts, unrounded: 2.0 / 2.1 - 1 = -1/21 (B's median |error|, the
    family's median over shapes); (1/21 + 0.1) / 2 the non-spilling rows' median |error|; C's
    regret 1.2 / 1.0 - 1 = 0.2."""
    compared = _compared()
    j = family_verdicts(summarize(compared), compared)[0].to_json()
    assert j["family"] == "gemm_bf16" and j["shapes"] == 3 and j["rows"] == 11
    assert j["median_abs_error"] == pytest.approx(1 / 21) and j["median_error"] == pytest.approx(0.0)
    assert j["min_spearman"] == pytest.approx(0.5) and j["max_regret"] == pytest.approx(0.2)
    assert j["spilling_first_wrongly"] == 1 and j["done"] is False
    c = j["criteria"]
    assert c["median_abs_error"] == {"threshold": 0.15, "passed": True, "value": pytest.approx(1 / 21)}
    assert c["spearman"] == {"threshold": 0.85, "passed": False, "shapes": 3, "missing": ["B"], "unranked": []}
    assert c["regret"] == {"threshold": 0.10, "passed": False, "shapes": 3, "missing": ["C"]}
    assert c["no_spilling_first"] == {"threshold": 0, "passed": False, "shapes": 3, "missing": ["C"]}
    assert j["non_spilling_rows"] == {"rows": 10, "median_abs_error": pytest.approx((1 / 21 + 0.1) / 2),
                                      "median_error": pytest.approx(0.0)}
    assert j["spilling_rows"] == {"rows": 1, "median_abs_error": pytest.approx(0.2 / 1.2),
                                  "median_error": pytest.approx(-0.2 / 1.2)}
    assert "within_one_campaign" not in j
    # C's spilling first pick (measured 1.2, regret 0.2) against its first non-spilling pick (the 1.0, regret 0)
    assert j["spilling_first_picks"] == {"shapes": 1, "unspilled_faster": 1, "unspilled_slower": 0,
                                         "mean_regret": pytest.approx(0.2), "mean_unspilled_regret": 0.0}
    (c_shape,) = [g for g in summarize(compared) if g.shape == "C"]
    assert c_shape.to_json()["unspilled_pick"] == {"params": {"BM": 16}, "measured_ms": 1.0, "predicted_ms": 1.1,
                                                   "regret": 0.0}


def test_shape_a_alone_is_done_and_a_two_row_shape_is_named_unranked():
    """A alone meets every clause (|e| 10% <= 15%, Spearman +1, regret 0, nothing spills): done.
    Add D, measured 1.0 -> 1.0 and 2.0 -> 2.0 (errors 0: median over shapes (0, 0.1) = 5%): two
    rows have no rank correlation, so the Spearman clause cannot judge D and says so; the family
    is still done (only a measured Spearman under 0.85 misses)."""
    figs = summarize([c for c in _compared() if c.row.shape == "A"])
    v = family_verdict("gemm_bf16", figs)
    assert v.done and v.criteria[1].unranked == ()
    assert v.spill_first is None and v.to_json()["spilling_first_picks"] is None   # A's first pick does not spill
    d = [Compared(MeasuredRow(SourceLocation("m.csv", 20 + i, 1), GEMM, None, t, {"BM": 16 << i},
                              notes={"family": "gemm_bf16", "shape": "D"}), t, False) for i, t in enumerate((1.0, 2.0))]
    v = family_verdict("gemm_bf16", figs + summarize(d))
    assert v.done and v.median_abs_error == pytest.approx(0.05)
    assert format_verdict(v)[1] == ("     done when: median ok, Spearman >= 0.85 ok; unranked in 1 of 2 (D), "
                                    "regret <= 10% ok, no spilling first ok")


def test_a_median_past_the_threshold_misses():
    """A's rows with every prediction 1.2x its measurement: errors +20% throughout, the median
    over shapes 20% > 15% (the clause names the median; it is over shapes, not any one)."""
    rows = [Compared(c.row, c.row.measured_ms * 1.2, False) for c in _compared() if c.row.shape == "A"]
    v = family_verdict("gemm_bf16", summarize(rows))
    assert format_verdict(v)[1].startswith("     done when: median 20.0% > 15%, Spearman >= 0.85 ok")
    assert v.to_json()["criteria"]["median_abs_error"]["passed"] is False and not v.done


def test_within_one_campaign_joins_the_json_where_asked():
    """campaigns=True: the rows' folder (run1) and shape group them as the shapes do here, so the
    worst regret is C's 20% and the lowest Spearman B's +0.50, both in run1; the best of the top
    three is 0 in every shape, and the first shape of the worst, A, is named."""
    compared = _compared()
    v = family_verdict("gemm_bf16", summarize(compared), compared, campaigns=True)
    assert format_verdict(v)[1] == ("     within one campaign: max regret 20.0% (run1 C), best of the top 3 0.0% "
                                    "(run1 A), min Spearman +0.50 (run1 B)")
    w = v.to_json()["within_one_campaign"]
    assert w["max_regret_shape"] == "C" and w["min_spearman"] == pytest.approx(0.5)


def test_the_best_of_the_top_three_by_hand():
    """Shape E, five rows, measured ms -> predicted ms: 1.0 -> 5, 1.1 -> 4, 1.2 -> 2, 1.3 -> 1, 1.5 -> 3.
    Ranked first: the 1 (measured 1.3): regret 1.3 / 1.0 - 1 = 30%. The three ranked first are the
    1 (1.3), the 2 (1.2) and the 3 (1.5): the best of them 1.2, 1.2 / 1.0 - 1 = 20%. Spearman: predicted
    ranks 5 4 2 1 3 against measured 1 2 3 4 5, d^2 = 16 + 4 + 1 + 9 + 4 = 34, 1 - 6 x 34 / 120 = -0.70.
    The table's row carries both regrets; the family line and the JSON the worst shape's."""
    from tfx.analysis.measured import format_table
    e = [Compared(MeasuredRow(SourceLocation("run2/m.csv", 2 + i, 1), GEMM, None, meas, {"BM": 16 << i},
                              notes={"family": "gemm_bf16", "shape": "E"}), pred, False)
         for i, (meas, pred) in enumerate(((1.0, 5.0), (1.1, 4.0), (1.2, 2.0), (1.3, 1.0), (1.5, 3.0)))]
    (g,) = summarize(e)
    assert g.regret == pytest.approx(0.3) and g.top_picks_regret == pytest.approx(0.2)
    assert g.to_json()["top_picks_regret"] == pytest.approx(0.2)
    header, row = format_table([g]).splitlines()
    assert header.split()[-5:] == ["regret", "top3", "spill", "spill", "med|err|"]
    assert row.split()[5:8] == ["-0.70", "30.0%", "20.0%"]
    v = family_verdict("gemm_bf16", [g], e, campaigns=True)
    assert "max regret 30.0% (best of the top 3: 20.0%)" in format_verdict(v)[0]
    assert "best of the top 3 20.0% (run2 E)" in format_verdict(v)[1]
    j = v.to_json()
    assert j["top_picks"] == 3 and j["max_top_picks_regret"] == pytest.approx(0.2)
    assert j["within_one_campaign"]["max_top_picks_regret_shape"] == "E"


@pytest.fixture
def rows_csv(tmp_path, monkeypatch):
    """The rows as a measurements CSV, and the Predictor's prices replaced by the predicted
    column above (the model's own prices are not what this test is about)."""
    lines = ["kernel,family,shape,measured_ms,M,N,K,BM,spills"]
    lines += [f"{GEMM},gemm_bf16,{shape},{meas},4096,4096,4096,{bm},{spills}"
              for (shape, bm), (meas, _, spills) in ROWS.items()]
    p = tmp_path / "m.csv"
    p.write_text("\n".join(lines) + "\n")

    def compare(self, rows, use_measured=True):
        return [Compared(r, ROWS[(r.shape, r.params["BM"])][1], bool(r.spills)) for r in rows]
    monkeypatch.setattr(measured.Predictor, "compare", compare)
    monkeypatch.delenv("COLUMNS", raising=False)
    return p


def test_validate_prints_the_verdict_under_the_family_table(rows_csv, capsys):
    assert main(["validate", str(rows_csv)]) == 0
    out = capsys.readouterr().out.splitlines()
    at = out.index(SUMMARY)
    # the table's last shape (C) right above; the done-when and the rows apart below
    assert out[at - 1].startswith("  gemm_bf16          C ")
    assert out[at + 1:at + 4] == [DONE_WHEN, "     non-spilling rows: 10, median |error| 7.4%, signed +0.0%",
                                  "     spilling rows: 1, median |error| 16.7%, signed -16.7%"]
    # the ranked-first lines stay: C's first pick, BM=32 (1.2 ms = 1.20 ms, the one unit policy), against
    # the best, BM=16 (1.00 ms); M, N, K are gemm's shape parameters, left out of the label
    assert "  gemm_bf16 C: ranked first BM=32 (1.20 ms measured), best measured BM=16 (1.00 ms)" in out[at:]


def test_validate_json_carries_the_family_verdict(rows_csv, capsys):
    assert main(["validate", str(rows_csv), "--json"]) == 0
    (f,) = json.loads(capsys.readouterr().out)["families"]
    assert f["family"] == "gemm_bf16" and f["done"] is False and f["spilling_first_wrongly"] == 1
    assert f["criteria"]["spearman"]["missing"] == ["B"] and f["criteria"]["regret"]["missing"] == ["C"]
    assert f["min_spearman"] == pytest.approx(0.5) and f["max_regret"] == pytest.approx(0.2)
