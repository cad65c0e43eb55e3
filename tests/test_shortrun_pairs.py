"""bench/shortrun_pairs.py: BN = 32 rows matched with their BN = 64 twins, on made-up rows."""

from __future__ import annotations

from bench_script import load_bench

bench = load_bench("shortrun_pairs")


def row(n, bn, stages, measured):
    return ({"M": 16, "N": n, "K": 8192, "BN": bn, "BK": 128, "WARPS": 4, "STAGES": stages}, measured, measured)


def test_a_bn32_row_meets_its_twin_at_the_same_n_and_at_twice_n():
    # BN 32 at N 8192 s4 has BN 64 twins at N 8192 (same N) and 16384 (same CTAs: 8192 / 32 = 16384 / 64 = 256);
    # the s3 BN 32 row has no twin; a BN 64 row alone starts nothing
    rows = [row(8192, 32, 4, 0.05), row(8192, 64, 4, 0.04), row(16384, 64, 4, 0.07), row(8192, 32, 3, 0.06),
            row(4096, 64, 4, 0.02)]
    t = bench.twins(rows)
    assert [(label, a[0]["N"], b[0]["N"]) for label, a, b in t] == [("same N", 8192, 8192), ("same CTAs", 8192, 16384)]
    # the measured ratios the tool prints: 0.05 / 0.04 = 1.25 at the same N; per column 0.05 x 2 / 0.07 = 1.4286
    assert abs(t[0][1][1] / t[0][2][1] - 1.25) < 1e-12
    assert abs(t[1][1][1] * (t[1][2][0]["N"] / t[1][1][0]["N"]) / t[1][2][1] - 0.1 / 0.07) < 1e-12


def test_a_missing_file_is_one_line_and_exit_2(tmp_path, capsys):
    assert bench.main([str(tmp_path / "gemm.csv")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "gemm.csv: no such file" in err
