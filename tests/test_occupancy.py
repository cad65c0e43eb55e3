"""The occupancy model against CUDA's calculator: oracle rows, hand-derived limits, budgets.

Every expected number below is derived by hand in the test's docstring from the
limits it names; none is copied from the program's output.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tfx.analysis.occupancy import (
    INFEASIBLE_CODE, LIMITER_NAMES, LIMITERS, OccupancyLimits, Resources,
    blocks_per_sm_array, compute_occupancy, max_regs_for, max_smem_for,
    max_threads_for,
)
from tfx.errors import TfxError

DATA = Path(__file__).parent / "data" / "occupancy"

# cudaDeviceProp of an H200 (device.txt of the calibration set) plus the
# allocation rules of compute capability 9.0.
H200 = OccupancyLimits(
    threads_per_warp=32, max_threads_per_sm=2048, max_warps_per_sm=64, max_blocks_per_sm=32,
    max_threads_per_block=1024, regs_per_sm=65536, regs_per_block=65536,
    max_regs_per_thread=255, reg_alloc_unit=256, warp_alloc_granularity=4,
    smem_per_sm=233472, smem_per_block_optin=232448, smem_alloc_unit=128,
    reserved_smem_per_block=1024,
)
# RTX 5070 Ti, compute capability 12.0.
SM120 = OccupancyLimits(
    threads_per_warp=32, max_threads_per_sm=1536, max_warps_per_sm=48, max_blocks_per_sm=24,
    max_threads_per_block=1024, regs_per_sm=65536, regs_per_block=65536,
    max_regs_per_thread=255, reg_alloc_unit=256, warp_alloc_granularity=4,
    smem_per_sm=102400, smem_per_block_optin=101376, smem_alloc_unit=128,
    reserved_smem_per_block=1024,
)


def occ(limits, threads, regs, smem, static=0, hint=None):
    return compute_occupancy(limits, Resources(threads, regs, smem, static), hint=hint)


# --------------------------------------------------------------------------- oracle

def _oracle_rows():
    with open(DATA / "occupancy_sample.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def test_oracle_sample_has_all_rows():
    rows = _oracle_rows()
    assert len(rows) == 672
    assert {r["status"] for r in rows} == {"ok"}


def test_scalar_reproduces_every_oracle_row():
    """cudaOccupancyMaxActiveBlocksPerMultiprocessor on an H200: 4 kernels x 12 block
    sizes x 14 dynamic shared-memory sizes; every row must agree exactly."""
    mismatches = []
    for line, row in enumerate(_oracle_rows(), start=2):
        got = occ(H200, int(row["threads"]), int(row["num_regs"]), int(row["dyn_smem"]),
                  int(row["static_smem"])).blocks_per_sm
        if got != int(row["blocks_per_sm"]):
            mismatches.append((line, row, got))
    assert mismatches == []


def test_vectorized_reproduces_every_oracle_row():
    rows = _oracle_rows()
    col = lambda name: np.array([int(r[name]) for r in rows])  # noqa: E731
    blocks, codes = blocks_per_sm_array(H200, col("threads"), col("num_regs"),
                                        col("dyn_smem"), col("static_smem"))
    assert blocks.tolist() == col("blocks_per_sm").tolist()
    # A zero in the oracle is a launch that cannot run: the limiter says so.
    assert ((blocks == 0) == (codes == INFEASIBLE_CODE)).all()


# --------------------------------------------------------------------------- one test per limiter

def test_threads_limiter():
    """1024 threads, 16 registers, no shared memory on an H200.

    threads: 2048 // 1024 = 2; warps: 1024/32 = 32 per CTA, 64 // 32 = 2;
    blocks: 32; registers: 16*32 = 512 per warp (a multiple of 256),
    65536 // 512 = 128 warps, 128 // 32 = 4; shared memory: 0 + 1024 reserved
    = 1024 B, 233472 // 1024 = 228. Minimum 2, threads and warps tie: "threads".
    Active warps 2*32 = 64 of 64: 100 %.
    """
    o = occ(H200, 1024, 16, 0)
    assert o.blocks_per_sm == 2
    assert o.limiter == "threads"
    assert o.limiters == ("threads", "warps")
    assert o.limit_blocks == {"threads": 2, "warps": 2, "blocks": 32, "registers": 4,
                              "shared memory": 228}
    assert o.active_warps == 64
    assert o.occupancy_pct == 100.0


def test_warps_limiter_rounds_partial_warps_up():
    """80 threads (2.5 warps, allocated as 3), 16 registers, no shared memory, H200.

    threads: 2048 // 80 = 25; warps: 64 // 3 = 21; blocks: 32; registers: 512
    per warp, 128 warps, 128 // 3 = 42; shared memory 228. Minimum 21, warps alone:
    the partial warp costs 4 CTAs. Active warps 21*3 = 63: 63/64 = 98.4375 %.
    """
    o = occ(H200, 80, 16, 0)
    assert o.blocks_per_sm == 21
    assert o.limiter == "warps"
    assert o.limiters == ("warps",)
    assert o.limit_blocks["threads"] == 25
    assert o.active_warps == 63
    assert o.occupancy_pct == pytest.approx(98.4375)


def test_blocks_limiter():
    """32 threads (1 warp), 16 registers, no shared memory, H200.

    threads: 2048 // 32 = 64; warps: 64 // 1 = 64; blocks: 32; registers:
    128 warps // 1 = 128; shared memory 228. Minimum 32: the hardware's CTA cap.
    Active warps 32: 50 %.
    """
    o = occ(H200, 32, 16, 0)
    assert (o.blocks_per_sm, o.limiter, o.limiters) == (32, "blocks", ("blocks",))
    assert o.occupancy_pct == 50.0
    assert "hardware maximum of 32" in o.next_cta["blocks"].sentence
    assert o.next_cta["blocks"].budget is None


def test_registers_limiter():
    """256 threads, 168 registers, no shared memory, H200.

    registers: 168*32 = 5376 = 21*256 per warp; 65536 // 5376 = 12 warps (12*5376
    = 64512), already a multiple of 4; 256 threads = 8 warps; 12 // 8 = 1.
    threads 2048 // 256 = 8, warps 64 // 8 = 8, blocks 32, smem 228. Minimum 1.
    """
    o = occ(H200, 256, 168, 0)
    assert (o.blocks_per_sm, o.limiter) == (1, "registers")
    assert o.regs_per_warp_alloc == 5376
    assert o.limit_blocks["registers"] == 1


def test_registers_are_held_per_sub_partition():
    """96 threads (3 warps), 96 registers, H200: the granularity of 4 costs a CTA.

    96*32 = 3072 per warp (a multiple of 256); 65536 // 3072 = 21 warps, rounded
    down to a multiple of 4 -> 20 warps; 20 // 3 = 6 CTAs. Without the rounding
    it would be 21 // 3 = 7. threads 2048 // 96 = 21, warps 64 // 3 = 21.
    """
    o = occ(H200, 96, 96, 0)
    assert (o.blocks_per_sm, o.limiter) == (6, "registers")


def test_register_allocation_rounds_per_warp():
    """100 registers/thread is allocated as 104: 100*32 = 3200 -> ceil(3200/256) = 13
    units = 3328 per warp. 256 threads = 8 warps: 65536 // 3328 = 19 -> 16 warps
    (multiple of 4) -> 16 // 8 = 2 CTAs."""
    o = occ(H200, 256, 100, 0)
    assert o.regs_per_warp_alloc == 3328
    assert (o.blocks_per_sm, o.limiter) == (2, "registers")


def test_shared_memory_limiter_counts_the_reserved_kilobyte():
    """128 threads, 32 registers, 116,736 B dynamic shared memory, H200.

    116736 + 1024 reserved = 117760 B, a multiple of 128; 233472 // 117760 = 1.
    Without the reservation 233472 // 116736 = 2 exactly, so this row tells the
    rules apart (the oracle has it: k64, 32 threads, 116736 -> 1).
    threads 16, warps 16, blocks 32, registers 1024/warp -> 64 warps // 4 = 16.
    """
    o = occ(H200, 128, 32, 116736)
    assert (o.blocks_per_sm, o.limiter) == (1, "shared memory")
    assert o.smem_per_cta_alloc == 117760


def test_shared_memory_rounds_to_allocation_unit_and_adds_static():
    """128 threads, 32 registers, 40,000 B static + 3,076 B dynamic on an H200.

    40000 + 3076 + 1024 = 44100 -> ceil(44100/128) = 345 units = 44160 B;
    233472 // 44160 = 5 (5*44160 = 220800; 6 would need 264960).
    """
    o = occ(H200, 128, 32, 3076, static=40000)
    assert o.smem_per_cta_alloc == 44160
    assert (o.blocks_per_sm, o.limiter) == (5, "shared memory")


def test_zero_registers_do_not_limit():
    """0 registers: no register limit at all (CUDA treats the allocation as 0).
    32 threads: threads 64, warps 64, blocks 32, smem 228 -> 32, "blocks"."""
    o = occ(H200, 32, 0, 0)
    assert o.limit_blocks["registers"] is None
    assert (o.blocks_per_sm, o.limiter) == (32, "blocks")


def test_zero_shared_memory_does_not_limit_without_reservation():
    """With no reserved shared memory (pre-sm_80) and no shared memory the CTA takes
    no allocation: unlimited by shared memory."""
    limits = OccupancyLimits(**{**H200.to_json(), "reserved_smem_per_block": 0})
    o = occ(limits, 32, 16, 0)
    assert o.limit_blocks["shared memory"] is None
    assert o.blocks_per_sm == 32


# --------------------------------------------------------------------------- infeasible

@pytest.mark.parametrize("threads, regs, smem, words", [
    (1025, 32, 0, "1,025 threads per CTA exceed the maximum of 1,024"),
    (128, 256, 0, "256 registers per thread exceed the maximum of 255"),
    # a count past a thousand with its separator, as the threads above (it printed '100000 registers')
    (128, 100000, 0, "100,000 registers per thread exceed the maximum of 255"),
    # 232,449 B: one byte over the opt-in maximum 232,448.
    (128, 32, 232449, "exceed the opt-in maximum of 232,448 B"),
    # 1024 threads * 65 regs: 65*32 = 2080 -> 2304 per warp, * 32 warps = 73,728 > 65,536.
    (1024, 65, 0, "needs 73,728 registers; a CTA may have 65,536"),
])
def test_infeasible_names_the_reason(threads, regs, smem, words):
    o = occ(H200, threads, regs, smem)
    assert o.blocks_per_sm == 0
    assert o.limiter == "infeasible"
    assert o.limiters == ()
    assert words in o.reason
    assert o.active_warps == 0


def test_largest_feasible_neighbours():
    """1024 threads * 64 regs = 2048 per warp * 32 warps = 65,536: exactly one CTA.
    232,448 B (the opt-in maximum) + 1024 = 233,472 = the whole SM: exactly one CTA."""
    assert occ(H200, 1024, 64, 0).blocks_per_sm == 1
    assert occ(H200, 128, 32, 232448).blocks_per_sm == 1


# --------------------------------------------------------------------------- the RTX 5070 Ti story

def test_sm120_build_that_ignored_the_hint():
    """384 threads, 168 registers, 100,484 B on sm_120.

    registers: 5376 per warp, 65536 // 5376 = 12 warps (multiple of 4); 384 threads
    = 12 warps; 12 // 12 = 1. shared memory: 100484 + 1024 = 101508 -> 794 units of
    128 = 101632 B; 102400 // 101632 = 1. threads 1536 // 384 = 4, warps 48 // 12 = 4,
    blocks 24. One CTA, registers and shared memory tie. 12 of 48 warps = 25 %.

    One more CTA: shared memory 102400 // 2 = 51200 (a multiple of 128) - 1024 =
    50176 B; registers: 2*12 = 24 warps, 65536 // 24 = 2730 -> 2560 (10 units)
    -> 2560 / 32 = 80 registers.
    """
    o = occ(SM120, 384, 168, 100484)
    assert o.blocks_per_sm == 1
    assert o.limiters == ("registers", "shared memory")
    assert o.limiter == "registers"
    assert o.occupancy_pct == 25.0
    assert o.next_cta["shared memory"].sentence == (
        "2 CTAs need at most 50,176 B of shared memory per CTA; this kernel uses 100,484 B")
    assert o.next_cta["registers"].budget == 80
    assert o.next_cta["registers"].excess == 168 - 80


def test_sm120_build_that_honoured_the_hint():
    """256 threads, 128 registers, 44,068 B on sm_120, hint occupancy=2.

    registers: 128*32 = 4096 per warp; 65536 // 4096 = 16 warps; 16 // 8 = 2.
    shared memory: 44068 + 1024 = 45092 -> 353 units = 45184; 102400 // 45184 = 2.
    threads 1536 // 256 = 6, warps 48 // 8 = 6, blocks 24. Two CTAs: hint met.
    """
    o = occ(SM120, 256, 128, 44068, hint=2)
    assert o.blocks_per_sm == 2
    assert o.limiters == ("registers", "shared memory")
    assert o.hint_met is True
    assert o.hint_budget is None


@pytest.mark.parametrize("threads, regs, smem, regs_budget", [
    # 4 CTAs * 12 warps = 48 warps; 65536 // 48 = 1365 -> 1280 (5 units) -> 40 regs.
    (384, 168, 100484, 40),
    # 4 CTAs * 8 warps = 32 warps; 65536 // 32 = 2048 -> 64 regs.
    (256, 128, 44068, 64),
])
def test_sm120_hint_four_is_unattainable_as_compiled(threads, regs, smem, regs_budget):
    """occupancy=4 on sm_120: shared memory 102400 // 4 = 25600 - 1024 = 24576 B per CTA."""
    o = occ(SM120, threads, regs, smem, hint=4)
    assert o.hint_met is False
    b = o.hint_budget
    assert b.blockers == ("registers", "shared memory")
    assert b.max_regs_per_thread == regs_budget
    assert b.max_smem_per_cta == 24576
    assert b.reachable
    assert "unattainable as compiled (limited by registers and shared memory)" in b.sentence
    assert f"at most {regs_budget} registers per thread (uses {regs})" in b.sentence
    assert f"at most 24,576 B of shared memory per CTA (uses {smem:,} B)" in b.sentence


def test_hint_above_the_cta_cap_is_unattainable_on_the_gpu():
    """sm_120 holds at most 24 CTAs; 32 threads * 16 regs allows 24 (blocks limiter)."""
    o = occ(SM120, 32, 16, 0, hint=25)
    assert o.hint_met is False
    assert o.hint_budget.blockers == ("blocks",)
    assert not o.hint_budget.reachable
    assert "at most 24 CTAs" in o.hint_budget.sentence


def test_hint_blocked_by_threads_gives_a_thread_budget():
    """1024 threads, 16 regs on an H200 (2 CTAs, threads limit), hint 3:
    threads 2048 // 3 = 682; warps 64 // 3 = 21 -> 672 threads; registers at 16:
    512 per warp, 128 warps // 3 = 42 warps. Budget min(682, 672, 1344) = 672."""
    o = occ(H200, 1024, 16, 0, hint=3)
    b = o.hint_budget
    assert b.blockers == ("threads", "warps")
    assert b.max_threads_per_cta == 672
    assert "at most 672 threads per CTA (uses 1,024)" in b.sentence


def test_hint_validation():
    with pytest.raises(TfxError):
        occ(H200, 128, 32, 0, hint=0)


# --------------------------------------------------------------------------- budgets are tight

configs = st.tuples(
    st.sampled_from([H200, SM120]),
    st.integers(1, 1024),   # threads
    st.integers(0, 255),    # regs
    st.integers(1, 40),     # CTAs wanted
)


@settings(max_examples=400, deadline=None)
@given(configs)
def test_budgets_are_the_largest_amounts_that_fit(cfg):
    """Each budget holds the other resources fixed; they are set to amounts that
    cannot get in the way (no shared memory, or one warp with no registers)."""
    limits, threads, regs, ctas = cfg

    def fits(res, limit_names):
        o = compute_occupancy(limits, res)
        return o.feasible and all(o.limit_blocks[n] is None or o.limit_blocks[n] >= ctas
                                  for n in limit_names)

    r = max_regs_for(limits, threads, ctas)
    if r is not None:
        assert fits(Resources(threads, r, 0), ["registers"])
    if r is None or r < limits.max_regs_per_thread:
        assert not fits(Resources(threads, (r or 0) + 1, 0), ["registers"])

    s = max_smem_for(limits, ctas)
    if s is not None:
        assert fits(Resources(32, 0, s), ["shared memory"])
    if s is None or s < limits.smem_per_block_optin:
        assert not fits(Resources(32, 0, (s if s is not None else -1) + 1), ["shared memory"])

    t = max_threads_for(limits, regs, ctas)
    by_threads = ["threads", "warps", "registers"]
    if t is not None:
        assert fits(Resources(t, regs, 0), by_threads)
        if t < limits.max_threads_per_block:
            assert not fits(Resources(t + 1, regs, 0), by_threads)
    else:
        assert not fits(Resources(1, regs, 0), by_threads)


# --------------------------------------------------------------------------- vectorized == scalar

@settings(max_examples=60, deadline=None)
@given(st.sampled_from([H200, SM120]),
       st.lists(st.tuples(st.integers(1, 1100), st.integers(0, 260),
                          st.integers(0, 240000), st.integers(0, 50000)),
                min_size=1, max_size=60))
def test_vectorized_equals_scalar(limits, rows):
    t, r, d, s = (np.array(c) for c in zip(*rows))
    blocks, codes = blocks_per_sm_array(limits, t, r, d, s)
    for i, (ti, ri, di, si) in enumerate(rows):
        o = occ(limits, ti, ri, di, static=si)
        assert (blocks[i], LIMITER_NAMES[codes[i]]) == (o.blocks_per_sm, o.limiter)


def test_vectorized_dense_grid_equals_scalar():
    """Every block size 1..1024 at a spread of register and shared-memory sizes."""
    t, r, d = np.meshgrid(np.arange(1, 1025), [0, 1, 24, 64, 65, 100, 128, 168, 255],
                          [0, 1, 8192, 50176, 50177, 101376], indexing="ij")
    t, r, d = t.ravel(), r.ravel(), d.ravel()
    blocks, codes = blocks_per_sm_array(SM120, t, r, d)
    rng = np.random.default_rng(0)
    for i in rng.choice(t.size, 3000, replace=False):
        o = occ(SM120, int(t[i]), int(r[i]), int(d[i]))
        assert (int(blocks[i]), LIMITER_NAMES[codes[i]]) == (o.blocks_per_sm, o.limiter)


def test_vectorized_broadcasts_and_refuses_bad_values():
    blocks, codes = blocks_per_sm_array(H200, [32, 1024], 16, 0)
    assert blocks.tolist() == [32, 2]
    assert [LIMITER_NAMES[c] for c in codes] == ["blocks", "threads"]
    with pytest.raises(TfxError, match=r"threads\[1\] = 0"):
        blocks_per_sm_array(H200, [32, 0], 16, 0)
    with pytest.raises(TfxError, match="regs"):
        blocks_per_sm_array(H200, [32], [-1], 0)
    with pytest.raises(TfxError, match="whole numbers"):
        blocks_per_sm_array(H200, [32.5], [1], 0)


# --------------------------------------------------------------------------- inputs and JSON

def test_resources_refuse_bad_values():
    with pytest.raises(TfxError, match="threads must be >= 1"):
        Resources(0, 32, 0)
    with pytest.raises(TfxError, match="smem_dynamic"):
        Resources(32, 32, -1)
    with pytest.raises(TfxError, match="origin"):
        Resources(32, 32, 0, origin="guess")


def test_limits_refuse_bad_values():
    with pytest.raises(TfxError, match="smem_alloc_unit"):
        OccupancyLimits(**{**H200.to_json(), "smem_alloc_unit": 0})


class _FakeProfile:
    name = "fake"
    source_path = "fake.toml"

    def __init__(self, facts):
        self.facts = facts

    def value(self, path):
        return self.facts[path]


def test_limits_from_profile_reads_occupancy_facts():
    facts = {f"occupancy.{k}": float(v) for k, v in SM120.to_json().items()}
    assert OccupancyLimits.from_profile(_FakeProfile(facts)) == SM120
    facts["occupancy.smem_alloc_unit"] = 127.5
    with pytest.raises(TfxError, match="whole number") as err:
        OccupancyLimits.from_profile(_FakeProfile(facts))
    assert str(err.value).startswith("fake.toml:occupancy.smem_alloc_unit")


def test_json_has_the_contract_keys():
    j = occ(SM120, 384, 168, 100484, hint=2).to_json()
    for key in ("blocks_per_sm", "limiter", "active_warps", "occupancy_pct", "hint_met",
                "budget", "limit_blocks", "next_cta"):
        assert key in j
    assert j["budget"]["max_smem_per_cta"] == 50176
    assert j["limit_blocks"]["shared memory"] == 1
    assert set(j["next_cta"]) == set(LIMITERS)
