"""bench/sm_group_rates.py: the fast SM group of made-up timelines whose lives are counted by hand."""

from __future__ import annotations

from bench_script import load_bench

bench = load_bench("sm_group_rates")


def test_an_sm_under_the_threshold_is_fast_and_the_ratios_are_of_the_rest():
    # SMs 0-3 one first-wave CTA each, lives 100, 100, 110, 60 us (ns below); of the four sorted 60, 100, 100, 110
    # the median is (100 + 100) / 2 = 100 and 0.85 x 100 = 85: only SM 3 (60) is fast. The rest's lives 100, 100, 110 have median 100: fast over rest 60 / 100 = 0.6; the makespan
    # 110 us over 100 = 1.1
    ctas = [(0, 0, 100_000), (1, 0, 100_000), (2, 0, 110_000), (3, 0, 60_000)]
    g = bench.fast_group(ctas, 0.85)
    assert g["fast_sms"] == [3]
    assert abs(g["fast_over_rest"] - 0.6) < 1e-12
    assert abs(g["makespan_over_rest"] - 1.1) < 1e-12
    assert g["per_sm"] == [(1, 4)]


def test_late_ctas_are_not_first_wave_and_counts_are_compared_apart():
    # SMs 0, 1 hold two first-wave CTAs (lives 200 and 200, 200 and 120 -> SM 1's median 160), SMs 2, 3 one each
    # (100 and 100); a CTA on SM 2 starting at 3 us (> 2 us after the first start) is late and not counted. Count 2:
    # median of SM medians 200 and 160 = 180, 0.85 x 180 = 153: neither SM fast (160 > 153); count 1: 100, 100,
    # none fast. The rest's lives sorted 100, 100, 120, 200, 200, 200 have median (120 + 200) / 2 = 160; the makespan is the late CTA's end 3 + 250 = 253 us: 253 / 160
    ctas = [(0, 0, 200_000), (0, 0, 200_000), (1, 0, 200_000), (1, 0, 120_000), (2, 0, 100_000), (3, 0, 100_000),
            (2, 3_000, 253_000)]
    g = bench.fast_group(ctas, 0.85)
    assert g["fast_sms"] == []
    assert g["fast_over_rest"] is None
    assert g["per_sm"] == [(1, 2), (2, 2)]
    assert abs(g["makespan_over_rest"] - 253 / 160) < 1e-12


def test_ranges():
    # consecutive runs join with a dash, lone SMs stand alone
    assert bench.ranges([0, 1, 34, 35, 36, 48]) == "0-1,34-36,48"


def test_stamped_phases_rates_and_the_balanced_makespan():
    # four CTAs on SMs 0-3, two chunks of 100 B each. SMs 0-2 stamp at 100 and 200 ns, SM 3 at 50 and 100: the
    # median end is 200, 0.85 x 200 = 170, so SM 3 (100) is fast. Phase 1 (0, 100]: chunks ended 3 (SMs 0-2 at
    # 100) + 2 (SM 3) = 5 x 100 B / 100 ns = 5 B/ns, the rest's 3; phase 2 from the fast SM's end 100 to the rest's
    # first end 200: 3 chunks, 3 B/ns (nothing given back). Balanced: 8 chunks x 100 B / 5 B/ns = 160 ns; the
    # makespan 200 / 160 = 1.25; the fast end over the rest's 100 / 200 = 0.5
    ctas = {0: (0, [0, 100, 200]), 1: (1, [0, 100, 200]), 2: (2, [0, 100, 200]), 3: (3, [0, 50, 100])}
    g = bench.stamped_phases(ctas, 100, 0.85)
    assert g["fast_sms"] == [3]
    assert (g["all_p1"], g["rest_p1"], g["rest_p2"]) == (5.0, 3.0, 3.0)
    assert g["fast_end_over_rest"] == 0.5
    assert g["makespan_over_balanced"] == 1.25


def test_a_missing_file_is_one_line_and_exit_2(tmp_path, capsys):
    assert bench.main([str(tmp_path / "none.csv")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "none.csv: no such file" in err


def test_placement_classes_group_sms_by_their_ctas_and_their_tpcs():
    # first wave: SM 0 three CTAs (lives 300, 310, 320 us -> median 310), SM 1 three (330 -> 330, 330, 330), so TPC
    # 0-1 holds 6; SM 2 three (300 each) and SM 3 two (200, 220 -> 210): TPC 2-3 holds 5. A CTA starting 5 us in
    # (late) is left out. Classes: (3, 6, rest) SMs 0, 1: medians 310, 330 -> 320, least 310, most 330;
    # (3, 5, rest) SM 2: 300; (2, 5, fast) SM 3 named fast: 210
    us = 1000
    ctas = [(0, 0, 300 * us), (0, 0, 310 * us), (0, 0, 320 * us), (1, 0, 330 * us), (1, 0, 330 * us),
            (1, 0, 330 * us), (2, 0, 300 * us), (2, 0, 300 * us), (2, 0, 300 * us), (3, 0, 200 * us),
            (3, 0, 220 * us), (3, 5 * us, 400 * us)]
    c = bench.placement_classes(ctas, fast_sms=[3])
    assert c == {(2, 5, True): (1, 210 * us, 210 * us, 210 * us), (3, 5, False): (1, 300 * us, 300 * us, 300 * us),
                 (3, 6, False): (2, 320 * us, 310 * us, 330 * us)}
