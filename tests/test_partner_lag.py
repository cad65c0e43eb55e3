"""bench/partner_lag.py: the partner-lag probe's figures on made-up rows whose ratios are worked by hand."""

from __future__ import annotations

from bench_script import load_bench

bench = load_bench("partner_lag")


def lag_row(n, bn, mode, lag, ms, stages=4):
    return {"N": str(n), "BN": str(bn), "BK": "128", "STAGES": str(stages), "mode": mode, "lag_us": str(lag),
            "ms": str(ms)}


def test_split_and_together_pair_up_by_lag_and_the_continued_cost_is_bn32_over_bn64_together_at_0():
    # BN 32 at N 8192: split 0.05 / together 0.05 at lag 0, split 0.055 / together 0.05 at 2 us -> 1.1 at 2 us;
    # BN 64 together at lag 0 0.04: the continued pieces' cost 0.05 / 0.04 = 1.25
    rows = [lag_row(8192, 32, "split", 0, 0.05), lag_row(8192, 32, "together", 0, 0.05),
            lag_row(8192, 32, "split", 2, 0.055), lag_row(8192, 32, "together", 2, 0.05),
            lag_row(8192, 64, "split", 0, 0.04), lag_row(8192, 64, "together", 0, 0.04)]
    t = bench.lag_table(rows)
    assert t[(8192, 32, 128, 0, 4)] == {0.0: (0.05, 0.05), 2.0: (0.055, 0.05)}
    assert abs(t[(8192, 32, 128, 0, 4)][2.0][0] / t[(8192, 32, 128, 0, 4)][2.0][1] - 1.1) < 1e-12
    assert abs(bench.continued_cost(t, 8192, 128, 0, 4) - 1.25) < 1e-12
    assert bench.continued_cost(t, 8192, 128, 0, 3) is None       # no rows at 3 stages


def test_pairs_are_positions_2j_and_2j_plus_1_and_their_gaps_in_us():
    # pids 0-3 (rows out of order): pair (0, 1) starts 0 and 30 ns apart, ends at 10,000 and 10,500 ns: gaps 0.03
    # and 0.5 us; pair (2, 3) starts together, ends 20,000 and 19,000: gaps 0 and 1 us. Medians (0.03 + 0) / 2 =
    # 0.015 and (0.5 + 1) / 2 = 0.75 us; p90 of two sorted values is rank floor(0.9 x 2) = 1: the larger. Lives
    # 10, 10.47, 20, 19 us, median (10.47 + 19) / 2 = 14.735. SMs 4, 5 (one TPC) and 6, 9 (not): one TPC 0.5; SMs
    # 4, 5, 6, 9 one CTA each
    rows = [{"pid": "1", "smid": "5", "start_ns": "30", "end_ns": "10500"},
            {"pid": "0", "smid": "4", "start_ns": "0", "end_ns": "10000"},
            {"pid": "2", "smid": "6", "start_ns": "0", "end_ns": "20000"},
            {"pid": "3", "smid": "9", "start_ns": "0", "end_ns": "19000"}]
    g = bench.pair_gaps(rows)
    assert g["ctas"] == 4
    assert abs(g["life_us"] - 14.735) < 1e-9
    assert g["start_gap_us"] == (0.015, 0.03, 0.03)
    assert g["end_gap_us"] == (0.75, 1.0, 1.0)
    assert g["same_tpc"] == 0.5
    assert g["ctas_an_sm"] == (1, 1)


def test_a_missing_directory_is_one_line_and_exit_2(tmp_path, capsys):
    assert bench.main([str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "lag.csv: no such file" in err


def test_rows_of_two_warp_counts_stay_apart():
    # the s45 set runs BN 32 and 64 at 8 and 4 warps: together at lag 0 BN 32 0.06 (8 warps) and 0.05 (4 warps), BN 64
    # 0.05 and 0.04: the continued cost 0.06 / 0.05 = 1.2 at 8 warps and 0.05 / 0.04 = 1.25 at 4, not one warps' rows
    # overwriting the other's
    rows = []
    for warps, (a, b) in ((8, (0.06, 0.05)), (4, (0.05, 0.04))):
        for bn, ms in ((32, a), (64, b)):
            r = lag_row(8192, bn, "together", 0, ms)
            r["WARPS"] = str(warps)
            rows.append(r)
    t = bench.lag_table(rows)
    assert abs(bench.continued_cost(t, 8192, 128, 8, 4) - 1.2) < 1e-12
    assert abs(bench.continued_cost(t, 8192, 128, 4, 4) - 1.25) < 1e-12


def test_classes_split_the_lives_by_the_ctas_an_sm_and_the_pairs_within_and_across():
    # SM 0 runs pids 0, 2, 4 (three CTAs), SM 1 runs pids 1, 3 (two). Lives: pid 0 10 us, 2 12, 4 14 -> median 12 on
    # the 3-CTA SM; pid 1 8, 3 9 -> median 8.5 on the 2-CTA SM. Pairs (0, 1) and (2, 3) sit on SMs of 3 and 2: across,
    # end gaps |10 - 8| = 2 and |12 - 9| = 3 us, median 2.5, p90 (rank floor(0.9 x 2) = 1) 3; none within
    rows = [{"pid": "0", "smid": "0", "start_ns": "0", "end_ns": "10000"},
            {"pid": "1", "smid": "1", "start_ns": "0", "end_ns": "8000"},
            {"pid": "2", "smid": "0", "start_ns": "0", "end_ns": "12000"},
            {"pid": "3", "smid": "1", "start_ns": "0", "end_ns": "9000"},
            {"pid": "4", "smid": "0", "start_ns": "0", "end_ns": "14000"}]
    c = bench.count_classes(rows)
    assert c["lives"] == {2: 8.5, 3: 12.0}
    assert c["across"] == (2, 2.5, 3.0)
    assert c["within"] == (0, None, None)


def test_a_compressed_timeline_is_read_in_its_place(tmp_path, capsys):
    # lag.csv with one BN 32 split / together pair at lag 0 (0.05 / 0.05 -> 1.000) and a gzipped timeline of one
    # unheld launch: pids 0, 1 on SMs 0 and 1, ending at 10,000 and 10,500 ns: one pair 0.5 us apart at the end
    import csv
    import gzip
    (tmp_path / "lag.csv").write_text("N,BN,BK,WARPS,STAGES,mode,lag_us,ms\n8192,32,128,4,4,split,0,0.05\n"
                                      "8192,32,128,4,4,together,0,0.05\n")
    with gzip.open(tmp_path / "timeline.csv.gz", "wt", newline="") as f:
        w = csv.writer(f)
        w.writerow(["N", "BN", "BK", "WARPS", "STAGES", "rep", "pid", "smid", "start_ns", "end_ns"])
        w.writerow([8192, 32, 128, 4, 4, 0, 0, 0, 0, 10000])
        w.writerow([8192, 32, 128, 4, 4, 0, 1, 1, 0, 10500])
    assert bench.main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "split / together 0 us 1.000" in out
    assert "at the end 0.50 / 0.50 / 0.50" in out
