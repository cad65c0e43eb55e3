"""bench/trip_sets.py: the session-25 k-loop sets in one table. Its pure parts, by hand."""

from __future__ import annotations

import pytest

from bench_script import load_bench

trip_sets = load_bench("trip_sets")


def test_median_pct_formats_signed_then_absolute():
    # errors +10%, -20%, +5%: signed median +5% (the middle of -20, +5, +10); |error| median of 10, 20, 5 = 10%
    assert trip_sets.median_pct([0.10, -0.20, 0.05]) == "  +5.0% /  10.0%"


def test_an_unknown_set_is_one_line_and_exit_2(capsys):
    with pytest.raises(SystemExit) as e:
        trip_sets.main(["nope_s25"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("unknown set 'nope_s25': expected one of shallow_s25, ")


def test_every_named_set_is_stored_with_the_column_it_splits_on():
    # each set's CSV exists in the repository and has its axis column (the table would print "missing")
    import csv
    for name, axis in trip_sets.SETS:
        path = trip_sets.MEASURED / name / "copy_issue.csv"
        assert path.exists(), name
        assert axis in next(csv.reader(open(path))), (name, axis)
