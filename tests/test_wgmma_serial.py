"""Serialized warpgroup mmas (tfx.analysis.wgmma_serial): which serial trips ptxas serializes
and what the waits add.

By hand, from hw_profiles/h200_sxm.toml: clock 1.98 GHz; a thread may have 255 registers
(occupancy.max_regs_per_thread); a serialized wgmma waits 57 cycles past its tensor time with
A from shared memory, 48 with A from registers (instruction_latency.wgmma_serial,
wgmma_serial_rs: calibration/h200/measured/wgmma_serial). Triton 3.6's SASS of the same
kernels (ptxas C7511, every HGMMA followed by WARPGROUP.DEPBAR.LE gsb0, 0x0) serializes
128 x 128 on 4 warps at D = 128 and D = 64, and nothing else of the issue-15 rows.
"""

from pathlib import Path

import pytest

from tfx.analysis import mma_path, wgmma_serial
from tfx.analysis.analyze import analyze
from tfx.analysis.machine import Machine
from tfx.hw import load_profile
from tfx.lang import parse_file

KERNELS = Path(__file__).resolve().parent.parent / "kernels"
PROFILE = load_profile("h200_sxm")


def _loop(d, bm, bn, warps, kernel="flash_attention.tile"):
    p = dict(B=1, H=32, S=4096, D=d, BLOCK_M=bm, BLOCK_N=bn, WARPS=warps, STAGES=3)
    a = analyze(parse_file(str(KERNELS / kernel)), None, PROFILE, p)
    return next(n for n in a.root.walk() if n.kind == "loop")


def _mmas(loop):
    return [c for c in loop.walk() if c.kind == "op" and c.op is not None and c.op.opcode == "mma"]


@pytest.mark.parametrize("d, bm, bn, warps, regs, serial", [
    # S = QK^T: bm x bn fp32 over 32 x warps threads; O: bm x d fp32; P (PV's A, from
    # registers): bm x bn bf16, two to a register
    (128, 128, 128, 4, 128 * 128 / 128 + 128 * 128 / 128 + 128 * 128 / 2 / 128, 1),   # 128 + 128 + 64 = 320
    (64, 128, 128, 4, 128 * 128 / 128 + 128 * 64 / 128 + 128 * 128 / 2 / 128, 1),    # 128 + 64 + 64 = 256
    (128, 128, 64, 4, 128 * 64 / 128 + 128 * 128 / 128 + 128 * 64 / 2 / 128, 0),     # 64 + 128 + 32 = 224
    (128, 128, 128, 8, 128 * 128 / 256 + 128 * 128 / 256 + 128 * 128 / 2 / 256, 0),  # 64 + 64 + 32 = 160
])
def test_which_trips_serialize(d, bm, bn, warps, regs, serial):
    m = Machine(PROFILE, "cta")
    loop = _loop(d, bm, bn, warps)
    assert wgmma_serial.trip(loop, m, warps).registers == pytest.approx(regs)
    assert wgmma_serial.serialized(loop, m, warps) == serial


def test_causal_kernel_serializes_both_loops():
    """flash_prefill's unmasked and diagonal loops hold the same registers: both serialize."""
    m = Machine(PROFILE, "cta")
    p = dict(B=1, H=32, S=4096, D=128, BLOCK_M=128, BLOCK_N=128, WARPS=4, STAGES=3)
    a = analyze(parse_file(str(KERNELS / "flash_prefill.tile")), None, PROFILE, p)
    loops = [n for n in a.root.walk() if n.kind == "loop"]
    assert len(loops) == 2
    assert [wgmma_serial.serialized(lp, m, 4) for lp in loops] == [1, 1]


def test_waits_and_what_the_other_slab_hides():
    """128 x 128 on 4 warps, D = 128: one warpgroup, two 64-row slabs. QK^T: 2 slabs x 128 / 16
    = 16 wgmma, 15 more waits x 57 = 855 cycles; PV (A = P from registers): 2 x 128 / 16 = 16,
    15 x 48 = 720 cycles; 1575 cycles / 1.98 GHz = 795.4545 ns a trip. The other slab's SIMT
    work hides up to (2 - 1) / 2 of it: with 1000 ns of vector + special work a trip, 500 ns,
    so 295.4545 ns are added; with 2000 ns all 795.4545 are hidden, with none none is."""
    m = Machine(PROFILE, "cta")
    loop = _loop(128, 128, 128, 4)
    qk, pv = _mmas(loop)
    t = wgmma_serial.trip(loop, m, 4)
    assert [(x.node, x.instructions, x.a_in_registers) for x in t.mmas] == [(qk, 16, False), (pv, 16, True)]
    assert t.slabs == 2
    detail = wgmma_serial.detail(7, loop, m, 4, 1000.0, lambda x: f"{float(x):.4f} ns")
    assert "16 wgmma a warpgroup, 15 more waits x 57 cycles (shared memory)" in detail
    assert "16 wgmma a warpgroup, 15 more waits x 48 cycles (A from registers)" in detail
    assert f"= {1575 / 1.98:.4f} ns a trip" in detail and "hides 500.0000 ns" in detail
    assert wgmma_serial.added_ns(loop, m, 4, 0.0) == pytest.approx(1575 / 1.98)
    assert wgmma_serial.added_ns(loop, m, 4, 1000.0) == pytest.approx(1575 / 1.98 - 500.0)
    assert wgmma_serial.added_ns(loop, m, 4, 2000.0) == pytest.approx(0.0)


def test_d64_waits():
    """D = 64: QK^T 2 slabs x 64 / 16 = 8 wgmma, 7 x 57 = 399 cycles; PV 2 x 128 / 16 = 16,
    15 x 48 = 720: 1119 cycles = 565.1515 ns a trip."""
    m = Machine(PROFILE, "cta")
    loop = _loop(64, 128, 128, 4)
    assert wgmma_serial.added_ns(loop, m, 4, 0.0) == pytest.approx(1119 / 1.98)


def test_unserialized_trip_adds_nothing_and_pv_stays_async():
    m = Machine(PROFILE, "cta")
    loop = _loop(128, 128, 64, 8)
    qk, pv = _mmas(loop)
    assert wgmma_serial.added_ns(loop, m, 8, 0.0) == 0
    assert mma_path.properly_async(pv, loop, m, 8) == 1


def test_serialized_pv_is_waited():
    """Every serialized wgmma is waited at once: PV no longer runs on under the trip."""
    m = Machine(PROFILE, "cta")
    loop = _loop(128, 128, 128, 4)
    qk, pv = _mmas(loop)
    assert mma_path.properly_async(pv, loop, m, 4) == 0


def test_breakdown_names_the_term():
    p = dict(B=1, H=32, S=4096, D=128, BLOCK_M=128, BLOCK_N=128, WARPS=4, STAGES=3)
    a = analyze(parse_file(str(KERNELS / "flash_attention.tile")), None, PROFILE, p,
                resources={"threads": 128, "regs": 255, "smem": 163840, "spills": 4})
    t = {t.name: t for t in a.terms}
    assert "serialized wgmma" in t
    assert "320 registers" in t["serialized wgmma"].detail and "C7511" in t["serialized wgmma"].detail
    a8 = analyze(parse_file(str(KERNELS / "flash_attention.tile")), None, PROFILE,
                 {**p, "BLOCK_N": 64, "WARPS": 8})
    assert "serialized wgmma" not in {t.name for t in a8.terms}


def test_array_sweep_matches_scalars():
    """explore's vectorized sweeps: WARPS as an array gives the scalar answers elementwise."""
    import numpy as np
    m = Machine(PROFILE, "cta")
    loop = _loop(128, 128, 128, 4)
    out = wgmma_serial.serialized(loop, m, np.array([4, 8]))
    assert list(out) == [1, 0]


def test_array_waits_match_scalars():
    import numpy as np
    m = Machine(PROFILE, "cta")
    loop = _loop(128, 128, 128, 4)
    w = wgmma_serial.added_ns(loop, m, np.array([4, 8]), np.array([1000.0, 1000.0]))
    assert w[0] == pytest.approx(1575 / 1.98 - 500.0)
    assert w[1] == 0


def test_each_mma_is_planned_once_a_call(monkeypatch):
    """added_ns lays out the trip once: one mma_layout.plan per shaped mma (QK^T, PV) and one
    more for the CTA's warpgroups (mma_path.warpgroups plans the scores' mma): 3 calls, where it
    planned 13 before (extra_cycles re-planned every mma through serialized, twice over)."""
    from tfx.analysis import mma_layout
    m = Machine(PROFILE, "cta")
    loop = _loop(128, 128, 128, 4)
    calls = []
    real = mma_layout.plan

    def counting(*a, **k):
        calls.append(a[0])
        return real(*a, **k)
    monkeypatch.setattr(mma_layout, "plan", counting)
    assert wgmma_serial.added_ns(loop, m, 4, 1000.0) == pytest.approx(1575 / 1.98 - 500.0)
    assert len(calls) == 3
