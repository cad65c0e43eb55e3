"""bench/h200/row_states_summary.py: the pair phases of the stamped two-CTA rmsnorm/softmax
kernels and the probe a kernel never stores (softmax stamps no W). Every expected number is
worked out by hand in the test's comment."""

import math

import numpy as np
import pytest

from bench_script import load_bench

R = load_bench("h200/row_states_summary")


def test_pair_phases_offset_pair():
    # Two CTAs 100 ns apart, a pair every 1,000 ns: starts 0, 100, 1000, 1100, ... (12 starts).
    # head 4, tail 6: k = 4, 5. k = 4: cycle t[6] - t[4] = 3000 - 2000 = 1000, phase
    # min(2100 - 2000, 3000 - 2100) / 1000 = 100 / 1000 = 0.1; k = 5: cycle 3100 - 2100 = 1000,
    # phase min(3000 - 2100, 3100 - 3000) / 1000 = 0.1.
    t = [x for i in range(6) for x in (1000 * i, 1000 * i + 100)]
    ph, cyc = R.pair_phases(t)
    assert list(ph) == [0.1, 0.1]
    assert list(cyc) == [1000.0, 1000.0]


def test_pair_phases_alternation_and_lock_step():
    # Alternation: a start every 500 ns; cycle t[k+2] - t[k] = 1000, phase min(500, 500) / 1000
    # = 0.5. Lock step: both CTAs at 0, 1000, ...: phase min(0, 1000) / 1000 = 0.
    ph, cyc = R.pair_phases([500 * i for i in range(12)])
    assert list(ph) == [0.5, 0.5] and list(cyc) == [1000.0, 1000.0]
    ph, cyc = R.pair_phases([1000 * (i // 2) for i in range(12)])
    assert list(ph) == [0.0, 0.0] and list(cyc) == [1000.0, 1000.0]


def test_probe_absent():
    # A never-stored probe reads one value in every warp and rep: each CTA's min equals its max.
    assert R.probe_absent(np.array([-5, -7]), np.array([-5, -7]))
    assert not R.probe_absent(np.array([-5, 3]), np.array([-5, 9]))


class _Npz(dict):
    @property
    def files(self):
        return list(self)


def test_phases_softmax_without_w():
    # One SM, 8 CTAs, CTA i starts at 1000 i clocks, %globaltimer = 0.5 ns a clock (slope 0.5);
    # X last at +400, probe 4 (e) at +600, last y at +800 clocks; W never stored (min = max).
    # Middle CTAs: i >= 2 x 1 SM and i < 8 - 4 x 1: i = 2, 3. span 800 x 0.5 = 400 ns, X wait 400 x
    # 0.5 = 200, reduce (X to e) 200 x 0.5 = 100, W wait none (nan), tail (e to y) 200 x 0.5 = 100.
    start = np.arange(8) * 1000
    cta = _Npz()
    k = "softmax_1x16_16384"
    cta[f"{k}.sm"] = np.zeros(8, dtype=np.int16)
    cta[f"{k}.gstart"] = (start // 2).astype(np.uint32)
    cta[f"{k}.start_min"] = start.astype(np.int32)
    cta[f"{k}.x_max"] = (start + 400).astype(np.int32)
    cta[f"{k}.red_max"] = (start + 600).astype(np.int32)
    cta[f"{k}.y_max"] = (start + 800).astype(np.int32)
    cta[f"{k}.w_min"] = np.full(8, -5, dtype=np.int32)
    cta[f"{k}.w_max"] = np.full(8, -5, dtype=np.int32)
    p = R.phases(cta, k)
    assert p["rate"] == pytest.approx(0.5, rel=1e-12)
    assert list(p["span"]) == pytest.approx([400.0, 400.0], rel=1e-12)
    assert list(p["xw"]) == pytest.approx([200.0, 200.0], rel=1e-12)
    assert list(p["red"]) == pytest.approx([100.0, 100.0], rel=1e-12)
    assert all(math.isnan(x) for x in p["ww"])
    assert list(p["tail"]) == pytest.approx([100.0, 100.0], rel=1e-12)
