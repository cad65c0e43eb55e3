"""Counts in the breakdown's prose through the one unit policy (tfx.hw.units.format_counted /
format_counted_verb / verb_for), where each line formatted its count with ``:g`` and matched the
noun or the verb to it by hand: a mean count that is not whole reads with two decimals and the
plural ("1.50 trips", as format_count writes any count that is not whole), an exact Fraction as
well as a float (format_count formatted a Fraction with ``,.2f``, which Python's Fraction does
not take), and a count of one in the singular with its verb. Every expected string is written
from the inputs by hand."""

from __future__ import annotations

from fractions import Fraction

from tfx.analysis import load_trip, pipeline_depth, warp_trip
from tfx.hw.units import format_count, format_counted, format_time_ns


def test_a_fraction_is_a_count_with_two_decimals():
    # 3 / 2 = 1.5 -> "1.50"; 63 / 1 is whole -> "63"; a Fraction of exactly one is singular
    assert format_count(Fraction(3, 2)) == "1.50"
    assert format_count(Fraction(63)) == "63"
    assert format_counted(Fraction(3, 2), "trip") == "1.50 trips"
    assert format_counted(Fraction(2, 2), "trip") == "1 trip"


def _pipeline_detail(trips):
    # round trip 600 ns, 100 ns of it under the asynchronous mma, every byte from DRAM (miss 1:
    # no L2 clause), 2 resident CTAs: the one other CTA fills the delay
    return pipeline_depth.detail(7, 600, 100, 1, 500, 2, 1000, 1200, format_time_ns, 50, trips)


def test_pipeline_depth_counts_a_mean_of_trips_with_the_policy():
    assert _pipeline_detail(Fraction(3, 2)).endswith("adds 50.00 ns over 1.50 trips a wave (included in the waves above)")
    assert _pipeline_detail(1).endswith("adds 50.00 ns over 1 trip a wave (included in the waves above)")
    assert _pipeline_detail(1200).endswith("over 1,200 trips a wave (included in the waves above)")


def test_an_unpipelined_trip_at_a_mean_of_resident_ctas():
    """2 warp-wide 16-byte loads x 100 ns + 0 narrow x 50 ns = 200 ns a trip; a mean of 3 / 2
    CTAs a SM (a tail wave's): 1.5 x 200 = 300 ns a round; '1.50 CTAs' (it read '1.5 CTAs')."""
    f = load_trip.LoadTrip(10, 32, sync_load_ns=100, sync_narrow_load_ns=50)
    copies = load_trip.TripCopies(wide_instructions=2)
    assert load_trip.describe_sync(Fraction(3, 2), copies, f) == (
        "its loads into registers hold the SM's load path 2 x 100.00 ns (16 B a thread) + 0 x 50.00 ns "
        "(4-8 B) = 200.00 ns a trip; 1.50 CTAs per SM: a round takes at least 300.00 ns")
    assert "; 1 CTA per SM: a round takes at least 200.00 ns" in load_trip.describe_sync(1, copies, f)


def _warp_line(resident):
    # busiest sub-partition 2 warps x 400 ns / resident = the queued issue; 2 warps of the CTA's own
    t = warp_trip.WarpTrip(issue=800 / resident, copies=100, delay=0, resident=resident, busiest=2,
                           warp_ns=400, own_warps=2)
    return warp_trip.describe(12, t, format_time_ns)


def test_warp_trip_turns_agree_with_the_count():
    # 1 CTA: 2 x 400 ns / 1 = 800 ns; 2 CTAs: 2 x 400 / 2 = 400 ns
    assert "in series: 1 CTA takes turns at the sub-partitions (each 2 x 400.00 ns / 1 = 800.00 ns)" in _warp_line(1)
    assert "in series: 2 CTAs take turns at the sub-partitions (each 2 x 400.00 ns / 2 = 400.00 ns)" in _warp_line(2)
