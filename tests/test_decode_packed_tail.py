"""The tail of a launch of lock-step one-stage decode trips (tfx.analysis.decode_trip.packed_tail):
an SM's slots free together and the tail takes the first to free, r a SM; every expected number
derived by hand."""

import numpy as np

from tfx.analysis import decode_trip


def test_the_tail_packs_r_a_sm():
    """116 tail CTAs at 3 a SM: the waves model's ceil(116 / 132) = 1 a SM on min(116, 132) = 116
    SMs becomes 3 a SM on ceil(116 / 3) = 39; 300 CTAs (ceil(300 / 132) = 3 already): 3 a SM on
    100 SMs, not 132; a tail of 2 under r = 3: both on one SM; not packed: the waves model's."""
    assert decode_trip.packed_tail(True, 116, 3, 1, 116) == (3, 39)
    assert decode_trip.packed_tail(True, 300, 3, 3, 132) == (3, 100)
    assert decode_trip.packed_tail(True, 2, 3, 1, 2) == (2, 1)
    assert decode_trip.packed_tail(False, 116, 3, 1, 116) == (1, 116)


def test_a_sweep_packs_elementwise():
    """Arrays: packed where asked, the waves model's elsewhere (the rows above)."""
    r, n = decode_trip.packed_tail(np.array([True, False, True]), np.array([116, 116, 2]), np.array([3, 3, 3]),
                                   np.array([1, 1, 1]), np.array([116, 116, 2]))
    assert list(r) == [3, 1, 2] and list(n) == [39, 116, 1]


def test_only_a_tail_after_one_full_wave_of_lockstep_trips_packs():
    """Lock-step loops and one full wave pack; a pipelined split loop beside its one-stage masked
    loop, no full wave (the CTAs start spread, decode_timeline run15: 256 CTAs at 2 a SM ran 2 on
    124 SMs, 1 on 8), two or more full waves (the SMs out of phase by then) or no decode trip loop
    do not; arrays elementwise."""
    assert decode_trip.packs([True], 1) is True
    assert decode_trip.packs([True, True], 1) is True
    assert decode_trip.packs([False, True], 1) is False
    assert decode_trip.packs([True], 0) is False
    assert decode_trip.packs([True], 2) is False
    assert decode_trip.packs([], 1) is False
    assert list(decode_trip.packs([np.array([False, True, True])], np.array([1, 1, 2]))) == [False, True, False]


def test_the_breakdown_says_how_the_tail_packed():
    """The tail wave line's clause: 3 CTAs a SM on 39 SMs; one of each in the singular."""
    assert decode_trip.describe_packed(3, 39).endswith(
        "the tail takes the first to free, 3 CTAs a SM on 39 SMs (calibration/h200/measured/decode_timeline_s14)")
    assert "the first to free, 1 CTA a SM on 1 SM (" in decode_trip.describe_packed(1, 1)
