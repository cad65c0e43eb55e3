"""bench/compare_models.py: two model trees' figures, rankings first. Its pure parts, by hand."""

from __future__ import annotations

import pytest

from bench_script import load_bench

cm = load_bench("compare_models")


def test_family_figures_are_the_median_of_medians_the_min_spearman_and_the_max_regret():
    # medians 0.02, 0.06, 0.04 -> median 0.04; Spearman 0.9, None (unranked), 0.7 -> min 0.7; regrets 0, 0.12, 0.03 -> 0.12
    shapes = {"a": [0.02, 0.9, 0.0, False], "b": [0.06, None, 0.12, False], "c": [0.04, 0.7, 0.03, False]}
    assert cm.family_figures(shapes) == (0.04, 0.7, 0.12)


def test_failures_name_each_shape_and_clause():
    # a: Spearman 0.84 < 0.85 fails; b: regret 0.101 > 0.10 fails and a spilling first pick; c: 0.85 and 0.10 pass
    shapes = {"a": [0.01, 0.84, 0.0, False], "b": [0.01, 0.99, 0.101, True], "c": [0.01, 0.85, 0.10, False]}
    assert cm.failures(shapes) == {("a", "spearman"), ("b", "regret"), ("b", "spilling first")}


def test_campaign_move_needs_a_figure_past_its_step():
    # median |error| moves at 0.3 points, Spearman at 0.02, regret at 0.5 points
    assert cm.campaign_move((0.050, 0.90, 0.0), (0.048, 0.91, 0.004)) == ""           # -0.2 pt, +0.01, +0.4 pt
    assert cm.campaign_move((0.050, 0.90, 0.0), (0.046, 0.90, 0.0)) == "better"       # -0.4 pt
    assert cm.campaign_move((0.050, 0.90, 0.0), (0.050, 0.87, 0.0)) == "worse"        # Spearman -0.03
    assert cm.campaign_move((0.050, 0.90, 0.02), (0.040, 0.90, 0.03)) == "mixed"      # -1 pt, regret +1 pt
    assert cm.campaign_move((0.050, None, 0.0), (0.050, 0.5, 0.0)) == "better"        # unranked (-1) -> 0.5


def test_compare_counts_clause_failures_per_family_and_gives_the_verdict():
    base = {"runs": {"run1": {"f": {"s1": [0.05, 0.90, 0.02, False], "s2": [0.05, 0.80, 0.0, False]},
                              "g": {"s3": [0.03, 0.95, 0.0, False]}}},
            "pooled": {"f": {"s1": [0.05, 0.90, 0.02, False], "s2": [0.05, 0.80, 0.0, False]},
                       "g": {"s3": [0.03, 0.95, 0.0, False]}}}
    # f: s2's Spearman 0.80 -> 0.90 passes, s1's regret 0.02 -> 0.15 fails: +1 -1, neither more nor fewer;
    # g: s3's Spearman 0.95 -> 0.80 fails: +1 -0, more failures -> the rankings are worse
    cand = {"runs": {"run1": {"f": {"s1": [0.05, 0.90, 0.15, False], "s2": [0.05, 0.90, 0.0, False]},
                              "g": {"s3": [0.03, 0.80, 0.0, False]}}},
            "pooled": {"f": {"s1": [0.05, 0.90, 0.15, False], "s2": [0.05, 0.90, 0.0, False]},
                       "g": {"s3": [0.03, 0.80, 0.0, False]}}}
    lines, verdict = cm.compare(base, cand)
    assert verdict == "worse"
    # f's pooled: median 5.0%, min Spearman 0.80 -> 0.90, max regret 2.0% -> 15.0%; its campaign: Spearman +0.10
    # (better) and regret +13 points (worse): mixed
    assert lines[0] == ("f: pooled 5.0% / +0.80 / 2.0% -> 5.0% / +0.90 / 15.0%; campaigns better 0, worse 0, "
                        "mixed 1; clause failures +1 -1")
    assert lines[1] == "  newly failing: run1 s1 (regret)"
    assert lines[2] == "  newly passing: run1 s2 (spearman)"
    assert lines[-1] == "rankings: worse (families with more clause failures 1, with fewer 0)"


def test_reference_lines_name_the_tables_that_got_worse():
    # SDPA 12.0% -> 14.6% grows 2.6 points > 0.3: worse; Triton GEMM 6.4% -> 5.7% falls 0.7 points (better, but one
    # worse table makes the clause fail); copy 0.2% -> 0.4% grows 0.2 points <= 0.3: not named
    base = {"copy": 0.002, "Triton GEMM": 0.064, "SDPA": 0.120}
    cand = {"copy": 0.004, "Triton GEMM": 0.057, "SDPA": 0.146}
    assert cm.reference_lines(base, cand) == [
        "reference (median |error|): copy 0.2 -> 0.4%, Triton GEMM 6.4 -> 5.7%, SDPA 12.0 -> 14.6%",
        "existing figures: worse: SDPA"]


def test_reference_lines_hold_and_name_what_improved():
    # cuBLAS 3.9% -> 3.5%: -0.4 points, better; Triton attention 3.4% -> 3.6%: +0.2 points, within 0.3: held
    base = {"cuBLAS": 0.039, "Triton attention": 0.034}
    cand = {"cuBLAS": 0.035, "Triton attention": 0.036}
    assert cm.reference_lines(base, cand)[1] == "existing figures: held (better: cuBLAS)"
    # a table only one tree priced is left out; none in common: no lines
    assert cm.reference_lines({"copy": 0.002}, {}) == []


def test_compare_ends_with_the_reference_clause():
    shapes = {"s": [0.05, 0.9, 0.0, False]}
    figs = {"runs": {"run1": {"f": shapes}}, "pooled": {"f": shapes}}
    # the same campaigns; the copy table 0.2% -> 0.2%: held
    lines, verdict = cm.compare({**figs, "reference": {"copy": 0.002}}, {**figs, "reference": {"copy": 0.002}})
    assert verdict == "same"
    assert lines[-2:] == ["reference (median |error|): copy 0.2 -> 0.2%", "existing figures: held"]


@pytest.mark.parametrize("argv, says", [
    (["/nonexistent"], "expected BASE_TREE CANDIDATE_TREE"),
    (["/nonexistent", "/also"], "/nonexistent: not a checkout of this repository"),
    (["a", "b", "--bogus"], "unknown flag '--bogus'"),
    (["a", "b", "--only"], "--only expects a comma list"),
    (["a", "b", "--hw"], "--hw expects a profile (h200_sxm, h100_sxm)"),
    (["a", "b", "--hw", "h999"], "--hw 'h999': no issue 15 campaigns measured on it (measured: h200_sxm, h100_sxm)"),
])
def test_bad_input_is_one_line_and_exit_2(argv, says, capsys):
    with pytest.raises(SystemExit) as e:
        cm.main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and says in err
