"""The "done when" line bench/accuracy.py and tfx validate print (tfx.analysis.verdict, moved from
bench/accuracy.py with its text unchanged): issue 15's criteria over one family's shapes. The rows
are made up here; each verdict is worked out in a comment."""

from __future__ import annotations

from pathlib import Path

from tfx.analysis.measured import Compared, MeasuredRow, figures
from tfx.analysis.verdict import campaign_line, family_verdict, within_campaign
from tfx.errors import SourceLocation


def criteria_line(figs):
    from tfx.analysis.verdict import criteria_line
    return criteria_line(family_verdict("gemm_bf16", figs))


def shape(name, pairs, spilling=()):
    """figures of one shape from (measured_ms, predicted_ms) pairs, row i spilling if i in ``spilling``."""
    rows = []
    for i, (meas, pred) in enumerate(pairs):
        r = MeasuredRow(SourceLocation("gemm.csv", i + 2, 1), Path("kernels/gemm.tile"), None, meas,
                        {"BM": i}, notes={"family": "gemm_bf16", "shape": name})
        rows.append(Compared(r, pred, i in spilling))
    return figures("gemm_bf16", name, rows)


def test_every_criterion_met():
    # measured 1.0, 2.0, 3.0 predicted 1.1, 2.1, 3.1: errors +10%, +5%, +3.3%: median 5% <= 15%; the
    # predicted order is the measured one (Spearman +1), the top-ranked is the best (regret 0)
    a = shape("A", [(1.0, 1.1), (2.0, 2.1), (3.0, 3.1)])
    assert criteria_line([a]) == (
        "     done when: median ok, Spearman >= 0.85 ok, regret <= 10% ok, no spilling first ok")


def test_each_miss_names_its_shapes():
    # A as above. B: measured 1.2, 1.0, 3.0 predicted 1.0, 1.1, 3.0: the top-ranked (1.0 predicted)
    # measured 1.2, the best 1.0: regret 20% > 10%; ranks predicted 1, 2, 3 against measured 2, 1, 3:
    # d^2 = 1 + 1 + 0 = 2, Spearman 1 - 6 x 2 / (3 x 8) = 0.5 < 0.85. C: the spilling row measured
    # 1.5 predicted 0.5 ranks first, a non-spilling row (1.0) is faster: regret 50%; ranks 1, 2, 3 vs
    # 3, 1, 2: d^2 = 4 + 1 + 1 = 6, Spearman 1 - 36 / 24 = -0.5. Errors: A +10, +5, +3.3; B -16.7,
    # +10, 0; C -66.7, +10, 0: medians 5, 0, 0 (abs: 5, 10, 10): the median over shapes 10% <= 15%
    a = shape("A", [(1.0, 1.1), (2.0, 2.1), (3.0, 3.1)])
    b = shape("B", [(1.2, 1.0), (1.0, 1.1), (3.0, 3.0)])
    c = shape("C", [(1.5, 0.5), (1.0, 1.1), (2.0, 2.0)], spilling=(0,))
    assert criteria_line([a, b, c]) == (
        "     done when: median ok, Spearman >= 0.85 missed in 2 of 3 (B; C), regret <= 10% missed in 2 of 3 "
        "(B; C), no spilling first missed in 1 of 3 (C)")


def test_a_median_past_15_percent_is_named():
    # measured 1.0, 2.0 predicted 1.3, 2.4: errors +30%, +20%: median 25% > 15%
    a = shape("A", [(1.0, 1.3), (2.0, 2.4)])
    assert criteria_line([a]).startswith("     done when: median 25.0% > 15%, Spearman >= 0.85 ok")


def test_a_long_list_of_misses_names_five():
    # seven shapes like B above: measured 1.2, 1.0, 3.0 predicted 1.0, 1.1, 3.0: regret 1.2 / 1.0 - 1 = 20%,
    # Spearman 1 - 6 x 2 / (3 x 8) = 0.5, |errors| 16.7, 10, 0: median 10% <= 15%. Each clause names five and
    # counts the other two
    figs = [shape(f"S{i}", [(1.2, 1.0), (1.0, 1.1), (3.0, 3.0)]) for i in range(7)]
    assert criteria_line(figs) == (
        "     done when: median ok, Spearman >= 0.85 missed in 7 of 7 (S0; S1; S2; S3; S4; 2 more), "
        "regret <= 10% missed in 7 of 7 (S0; S1; S2; S3; S4; 2 more), no spilling first ok")


def campaign_rows(run, pairs):
    """Compared rows of shape "S" in campaign folder ``run`` from (measured_ms, predicted_ms) pairs."""
    out = []
    for i, (meas, pred) in enumerate(pairs):
        r = MeasuredRow(SourceLocation(f"issue15/{run}/gemm.csv", i + 2, 1), Path("kernels/gemm.tile"), None, meas,
                        {"BM": i}, notes={"family": "gemm_bf16", "shape": "S"})
        out.append(Compared(r, pred, False))
    return out


def test_the_worst_shape_within_one_campaign():
    # run1: measured 1.0, 2.0, 3.0 predicted 1.0, 2.0, 3.0: regret 0, Spearman +1. run2 (another day): measured
    # 1.3, 1.2, 2.0 predicted 1.0, 1.1, 3.0: its top-ranked row (predicted 1.0) measured 1.3 against its best 1.2,
    # regret 1.3 / 1.2 - 1 = 8.3%; predicted ranks 1, 2, 3 against measured ranks 2, 1, 3: d^2 = 1 + 1 + 0 = 2,
    # Spearman 1 - 6 x 2 / (3 x 8) = +0.50. Each campaign's three rows are all its top three picks: the best of
    # them is its best, 0 in both, and the first campaign of that worst, run1, is named.
    # The line names the worst campaign and shape for each
    rows = campaign_rows("run1", [(1.0, 1.0), (2.0, 2.0), (3.0, 3.0)]) + \
        campaign_rows("run2", [(1.3, 1.0), (1.2, 1.1), (2.0, 3.0)])
    assert campaign_line(within_campaign(rows)) == (
        "     within one campaign: max regret 8.3% (run2 S), best of the top 3 0.0% (run1 S), "
        "min Spearman +0.50 (run2 S)")
