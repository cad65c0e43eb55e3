"""bench/cta_placement.py: adjacent launch positions' TPCs and rate classes, on made-up timelines
whose expected shares are counted by hand in each test."""

from __future__ import annotations

from bench_script import load_bench

bench = load_bench("cta_placement")


def rows(smids, starts=None):
    starts = starts or [0] * len(smids)
    return [{"pid": str(i), "smid": str(s), "t_start_ns": str(t)} for i, (s, t) in enumerate(zip(smids, starts))]


def test_full_round_on_tpcs_and_a_split_remainder():
    # 4 SMs (TPCs {0, 1} and {2, 3}); 6 CTAs: round 0 = positions 0-3 on SMs 0, 1, 2, 3 (pairs (0, 1) and (2, 3),
    # both on one TPC: 2/2); round 1 = positions 4, 5 on SMs 0 and 2 (one a TPC: 0/1). SM counts: 0 -> 2, 1 -> 1,
    # 2 -> 2, 3 -> 1, so the pairs (0, 1), (2, 3), (4, 5) sit on SMs of counts (2, 1), (2, 1), (2, 2): 1 of 3 equal
    s = bench.summary(rows([0, 1, 2, 3, 0, 2]), units=4)
    assert s["rounds"] == {0: (2, 2), 1: (0, 1)}
    assert s["per_sm"] == {1: 2, 2: 2}
    assert abs(s["equal_class"] - 1 / 3) < 1e-12


def test_later_starts_are_not_the_first_wave():
    # positions 4 and 5 start at 5 us (slots freed): the first wave is positions 0-3, one CTA on each of the 4 SMs,
    # its two pairs on SMs of count 1 and 1: both equal
    s = bench.summary(rows([0, 1, 2, 3, 3, 1], [0, 0, 0, 0, 5000, 5000]), units=4)
    assert s["first_wave"] == 4
    assert s["per_sm"] == {1: 4}
    assert s["equal_class"] == 1.0


def test_decode_grid_runs_bh_fastest():
    # decode's grid (B x HKV, SPLITS): launch order is (sp, bh); bh 0..1 of sp 0 first, then sp 1
    r = [{"bh": "0", "sp": "1", "smid": "2", "t_start_ns": "0"}, {"bh": "1", "sp": "0", "smid": "1", "t_start_ns": "0"},
         {"bh": "0", "sp": "0", "smid": "0", "t_start_ns": "0"}, {"bh": "1", "sp": "1", "smid": "3", "t_start_ns": "0"}]
    assert [x["smid"] for x in bench.launch_order(r)] == ["0", "1", "2", "3"]
