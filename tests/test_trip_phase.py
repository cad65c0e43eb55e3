"""bench/trip_phase.py: the trip stamps' period and phase on made-up stamps worked by hand."""

from __future__ import annotations

import csv
import gzip

from bench_script import load_bench

bench = load_bench("trip_phase")


def write_stamps(folder, rows, timing_rows=""):
    """measure_trip_phase.py's two files in ``folder``: the stamp rows gzipped, timing.csv with its header and
    ``timing_rows``."""
    with gzip.open(folder / "trips.csv.gz", "wt", newline="") as f:
        w = csv.DictWriter(f, list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    (folder / "timing.csv").write_text("N,BN,WARPS,STAGES,ctas,ms_plain,ms_stamped,regs,spills,smem_bytes,"
                                       "blocks_per_sm\n" + timing_rows)


CTAS_HEADER = "N,K,BN,BK,WARPS,STAGES,pid,smid,first_ns,last_ns,steady_mean_ns,steady_median_ns\n"
TIMING_HEADER = "N,K,BN,BK,WARPS,STAGES,ctas,ms_plain,ms_stamped,regs,spills,smem_bytes,blocks_per_sm\n"


def write_grid(folder, ctas_rows, timing_rows, ctas_header=CTAS_HEADER, timing_header=TIMING_HEADER):
    """measure_trip_phase.py's grid files in ``folder``: ctas.csv and timing.csv, each its header and rows."""
    (folder / "ctas.csv").write_text(ctas_header + ctas_rows)
    (folder / "timing.csv").write_text(timing_header + timing_rows)


def test_period_is_the_median_step_past_the_prologue():
    # starts 0, 50, 90, 120, then every 100 from 200: past the first 4 trips (PROLOGUE) the steps are 100 -> 100
    clks = [0, 50, 90, 120, 200, 300, 400, 500]
    assert bench.period(clks) == 100


def test_two_ctas_half_a_trip_apart_have_phase_one_half_and_together_zero():
    # B starts a trip every 100 cycles from 0; A every 100 from 50: each A start lies 50 past B's last = 0.5 of the
    # period, folded min(0.5, 0.5) = 0.5. C every 100 from 10: 10 / 100 = 0.1 past, folded 0.1; and 90 past
    # (0.9, folded 0.1) gives the same
    b = [100 * i for i in range(20)]
    a = [50 + 100 * i for i in range(20)]
    c = [10 + 100 * i for i in range(20)]
    c2 = [90 + 100 * i for i in range(20)]
    assert set(bench.trip_phases(a, b, 100)) == {0.5}
    assert all(abs(x - 0.1) < 1e-12 for x in bench.trip_phases(c, b, 100))
    assert all(abs(x - 0.1) < 1e-12 for x in bench.trip_phases(c2, b, 100))
    # spans that do not overlap: no phase
    assert bench.trip_phases([10_000 + 100 * i for i in range(20)], b, 100) == []


def test_launch_figures_pair_the_ctas_of_one_sm_only(tmp_path, capsys):
    # SM 0 holds pids 0 and 1 (in turn: phase 0.5), SM 1 holds pid 2 alone (no pair); periods all 100 cycles: the
    # launch has 3 CTAs, one SM of 1 and one of 2, one pair at phase 0.5, none together
    rows = []
    for pid, sm, start in ((0, 0, 0), (1, 0, 50), (2, 1, 0)):
        for k in range(12):
            rows.append({"N": "8192", "BN": "32", "WARPS": "8", "STAGES": "3", "rep": "0", "pid": str(pid),
                         "smid": str(sm), "k": str(k), "clk": str(start + 100 * k)})
    g = bench.launch_figures(bench.launches(rows)[(8192, 32, 8, 3, 0)])
    assert g["ctas"] == 3 and g["sms_by_count"] == {1: 1, 2: 1}
    assert g["period"] == 100 and g["pairs"] == 1 and g["phase"] == 0.5 and g["together"] == 0.0
    # A's steady starts 450 .. 1150 against B's 400 .. 1100: the seven inside B's span (450 .. 1050) all sit at 0.5,
    # the last tenth (0.4-0.5, 0.5 itself included)
    assert g["tenths"] == [0.0, 0.0, 0.0, 0.0, 1.0]
    # the script over the same stamps, with a timing row: 0.05 ms plain, 0.051 stamped -> 1.020 x
    write_stamps(tmp_path, rows, "8192,32,8,3,3,0.05,0.051,40,0,24576,6\n")
    assert bench.main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "50.00 us plain, stamped 1.020 x" in out
    assert "3 CTAs (1 SMs of 1, 1 SMs of 2); period 100 cycles; 1 pairs on one SM, phase 0.500" in out
    assert "trips by tenth of a phase 0.00 / 0.00 / 0.00 / 0.00 / 1.00" in out


def test_a_missing_directory_is_one_line_and_exit_2(tmp_path, capsys):
    assert bench.main([str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "trips.csv.gz: no such file" in err


def test_the_global_timer_gives_the_period_in_ns(tmp_path, capsys):
    # one CTA stamped every 100 cycles and every 50 ns (a 2 GHz clock): period 100 cycles = 50 ns
    rows = [{"N": "8192", "BN": "64", "WARPS": "8", "STAGES": "3", "rep": "0", "pid": "0", "smid": "0", "k": str(k),
             "clk": str(100 * k), "ns": str(50 * k)} for k in range(12)]
    write_stamps(tmp_path, rows)
    assert bench.main([str(tmp_path)]) == 0
    assert "period 100 cycles = 50 ns, mean 50 ns; 0 pairs on one SM" in capsys.readouterr().out


def test_the_mean_period_holds_the_slow_steps_the_median_leaves_out():
    # steady starts (past the 4 of the prologue) 400, 500, 600, 1000, 1100: steps 100, 100, 400, 100 -> median 100,
    # mean (1100 - 400) / 4 = 175
    clks = [0, 100, 200, 300, 400, 500, 600, 1000, 1100]
    assert bench.period(clks) == 100
    assert bench.mean_period(clks) == 175


def test_the_grid_gives_each_launch_its_mean_trip_and_the_rest_of_its_time(tmp_path, capsys):
    # two CTAs of N 8192 BN 64 BK 128 (64 trips of K 8192) with steady mean trips 600 and 700 ns: median 650 ns; the
    # launch timed 0.05 ms plain = 50,000 ns, 64 x 650 = 41,600 of it the loop: 8,400 ns = 8.40 us beyond
    # (files without a K column: the grid's GRID_K, 8192)
    write_grid(tmp_path, "8192,64,128,4,3,0,0,0,40000,600.0,600\n8192,64,128,4,3,1,1,0,45000,700.0,700\n",
               "8192,64,128,4,3,2,0.05,0.051,64,0,40960,5\n",
               ctas_header=CTAS_HEADER.replace("K,", "", 1), timing_header=TIMING_HEADER.replace("K,", "", 1))
    assert bench.main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    # the stamps span 0 .. 45,000 ns: 50,000 - 45,000 = 5.00 us outside them; the last CTA's last trip (45,000) past
    # the median of 40,000 and 45,000 (42,500): 2.50 us. At the middle, the median of the midpoints 20,000 and 22,500
    # = 21,250 ns, the CTAs stand at 21,250 / 40,000 x 63 = 33.47 and 21,250 / 45,000 x 63 = 29.75 trips: 3.7 apart
    # (10th and 90th percentile by nearest rank of two: the lower and the upper). SM rates 1/600 and 1/700 per ns,
    # the median their mean: the faster 2 / (1 + 600 / 700) = 1.077 x it, under 1.12: no SM ahead
    assert ("N 8192 BN 64 BK 128 W 4 S 3: 2 CTAs, 64 trips, mean trip 650 ns, the CTAs 3.7 trips apart at the middle "
            "(10th-90th), 0 SMs ahead (90th percentile SM 1.077 x the median's rate); the launch 50.00 us, 8.40 beyond "
            "(outside the stamps 5.00, the last CTA's end 2.50 past the median)") in out


def test_a_grid_over_k_names_each_launch_by_its_k(tmp_path, capsys):
    # one CTA at K 2048 and one at K 4096 (BK 128: 16 and 32 trips), mean trips 500 ns; launches 0.02 and 0.03 ms:
    # 20,000 - 16 x 500 = 12.00 us and 30,000 - 32 x 500 = 14.00 us beyond
    write_grid(tmp_path, "8192,2048,64,128,4,4,0,0,0,7500,500.0,500\n8192,4096,64,128,4,4,0,0,0,15500,500.0,500\n",
               "8192,2048,64,128,4,4,1,0.02,0.02,64,0,61440,3\n8192,4096,64,128,4,4,1,0.03,0.03,64,0,61440,3\n")
    assert bench.main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    # (one CTA each: no spread, its SM the median)
    for k, trips, launch, beyond in ((2048, 16, "20.00", "12.00"), (4096, 32, "30.00", "14.00")):
        assert (f"N 8192 K {k} BN 64 BK 128 W 4 S 4: 1 CTAs, {trips} trips, mean trip 500 ns, the CTAs 0.0 trips apart "
                f"at the middle (10th-90th), 0 SMs ahead (90th percentile SM 1.000 x the median's rate); the launch "
                f"{launch} us, {beyond} ") in out


def test_the_ctas_spread_in_k_is_their_10th_to_90th_percentile_position_at_the_middle():
    # 11 CTAs start at 0 and make their last trip start (trip 100 of 101) at 1000 x (1 + i / 10) ns, i = 0..10: the
    # middle is the median midpoint, 1500 / 2 = 750 ns, where CTA i stands at 750 / (1000 (1 + i / 10)) x 100 =
    # 75 / (1 + i / 10) trips. Nearest ranks of 11: the 10th percentile round(0.1 x 10) = 1, the second lowest
    # (i = 9: 75 / 1.9 = 39.474), the 90th round(9.0) = 9, the second highest (i = 1: 75 / 1.1 = 68.182): 28.708
    ends = [(0, 1000 + 100 * i) for i in range(11)]
    assert abs(bench.k_spread(ends, 101) - (75 / 1.1 - 75 / 1.9)) < 1e-9
    # a CTA whose stamps end before the middle is held at its last trip: two CTAs (0, 100) and (0, 1000), trips 11:
    # the middle median(50, 500) = 275 is past the first's end: it stands at 10, the other at 275 / 1000 x 10 = 2.75
    assert abs(bench.k_spread([(0, 100), (0, 1000)], 11) - 7.25) < 1e-12


def test_an_sm_runs_ahead_at_1_12_times_the_median_sms_rate():
    # five SMs, each SM's rate the inverse of its CTAs' mean trip: 1/500 (SM 0: trips 450 and 550, mean 500), 1/500,
    # 1/400, 1/600, 1/500; the median 1/500. SM 2 is 500 / 400 = 1.25 x it (ahead, >= 1.12); SM 3 0.83 x. The 90th
    # percentile by nearest rank of five: round(0.9 x 4) = 4, the fastest: 1.25
    ahead, p90 = bench.fast_sms({0: [450.0, 550.0], 1: [500.0], 2: [400.0], 3: [600.0], 4: [500.0]})
    assert ahead == 1 and abs(p90 - 1.25) < 1e-12


def test_continued_pieces_pair_bn_32_with_bn_64_where_both_are_one_wave():
    # N 8192, BK 128, 4 stages, K 8192: BN 32's mean trip 660 ns over BN 64's 600 = 1.100; B in flight (4 - 1) x 128
    # x 8192 x 2 B = 6,291,456 B = 6.29 MB; read across (3 + 2.0 trips of spread) x 2,097,152 B = 10.49 MB; BN 32's
    # 5 SMs ahead. The same pair at 3 stages is left out: its BN 64 launch is not one wave
    one = dict(k_spread=2.0, fast_sms=(5, 1.3), one_wave=True)
    figures = {(8192, 32, 128, 4, 4, 8192): dict(one, mean_ns=660.0),
               (8192, 64, 128, 4, 4, 8192): dict(one, mean_ns=600.0),
               (8192, 32, 128, 4, 3, 8192): dict(one, mean_ns=700.0),
               (8192, 64, 128, 4, 3, 8192): dict(one, mean_ns=600.0, one_wave=False)}
    [(n, bk, w, st, k, cost, in_flight, span, ahead)] = bench.continued_pieces(figures)
    assert (n, bk, w, st, k, ahead) == (8192, 128, 4, 4, 8192, 5)
    assert abs(cost - 1.1) < 1e-12 and abs(in_flight - 6.291456) < 1e-12 and abs(span - 10.48576) < 1e-12


def test_tfx_loop_against_the_loop_to_the_last_cta_and_its_edges():
    # 64 trips, the median CTA's mean trip 500 ns, the last CTA ending 2,000 ns past the median's: the loop to the last
    # CTA 64 x 500 + 2,000 = 34,000 ns. tfx's round 550 ns: its loop 64 x 550 = 35,200 ns, 35,200 / 34,000 = 1.0353;
    # its launch 47,000 ns: edges 47,000 - 35,200 = 11,800 ns
    g = {"trips": 64, "mean_ns": 500.0, "end_spread_ns": 2000.0}
    to_last, edges = bench.loop_and_edges(g, 550.0, 47_000.0)
    assert abs(to_last - 35_200 / 34_000) < 1e-12 and edges == 11_800.0


def test_a_grid_at_another_m_names_its_m(tmp_path, capsys):
    # timing.csv with an M column (TRIP_SET=mkgrid): the launch keeps M 64 and its line starts with it; one CTA, mean
    # trip 500 ns over K 8192 / BK 128 = 64 trips: 64 x 500 = 32,000 ns of the launch's 40,000 (0.04 ms): 8.00 us beyond
    write_grid(tmp_path, "8192,8192,64,128,4,4,0,0,0,31500,500.0,500\n",
               "64,8192,8192,64,128,4,4,1,0.04,0.04,64,0,61440,3\n", timing_header="M," + TIMING_HEADER)
    assert bench.main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("M 64 N 8192 BN 64 BK 128 W 4 S 4: 1 CTAs, 64 trips, mean trip 500 ns")
    assert "the launch 40.00 us, 8.00 beyond" in out
