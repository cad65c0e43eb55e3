"""Attention on a GPU (issue 15): which mmas a trip waits for, the trip's serial chain, the
prefetch that waits behind it, causal trip counts and the launch order of the flash kernels
(the padding of each mma path: tests/test_mma_layout.py).

Every expected number is derived here by hand from hw_profiles/h200_sxm.toml (and its base
h100_sxm.toml): clock 1.98 GHz; bf16 tensor 4096 flop/cycle x 1.98 x efficiency 0.74 =
6001.4592 flop/ns per SM; an elementwise f32 op takes one of 128 lanes a cycle: 253.44
elements/ns; exp2 on the special-function units: 16 x 1.98 = 31.68 /ns; the trip's own
overhead (pipeline.iteration_overhead) 100 cycles = 50.505 ns; L2 11,000 B/ns over 132 SMs =
83.333 B/ns per SM; DRAM 4800 x 0.883 = 4238.4 B/ns over 132 = 32.109 B/ns; latencies 700 ns
(DRAM), 200 ns (L2).
"""

from pathlib import Path

import pytest

from tfx.analysis import mma_path
from tfx.analysis.analyze import analyze
from tfx.analysis.machine import Machine
from tfx.hw import load_profile
from tfx.lang import parse_file

KERNELS = Path(__file__).resolve().parent.parent / "kernels"
PROFILE = load_profile("h200_sxm")
TENSOR = 4096 * 1.98 * 0.74            # flop/ns per SM
VECTOR = 128 * 1.98                    # elements/ns
SPECIAL = 16 * 1.98                    # exp2/ns
OVERHEAD = 100 / 1.98                  # ns


def machine():
    return Machine(PROFILE, "cta")


def terms(kernel, params, resources):
    a = analyze(parse_file(str(KERNELS / kernel)), None, PROFILE, params, resources=resources)
    return {t.name: t for t in a.terms}


# ------------------------------------------------------------------ which mma Triton waits for
def _loops(kernel, params):
    a = analyze(parse_file(str(KERNELS / kernel)), None, PROFILE, params)
    return [n for n in a.root.walk() if n.kind == "loop"]


def _mmas(loop):
    return [c for c in loop.walk() if c.kind == "op" and c.op is not None and c.op.opcode == "mma"]


def test_attention_qk_waits_pv_is_properly_async():
    """dotCanBeProperlyAsync rule 2: QK^T's scores are read by the softmax in the same trip, so
    it waits at once; PV's output is only carried (the next trip rescales it after its own
    QK^T wait: rule 3b), so it runs on while the trip goes on."""
    p = dict(B=1, H=32, S=4096, D=128, BLOCK_M=128, BLOCK_N=64, WARPS=8, STAGES=2)
    loop = _loops("flash_attention.tile", p)[0]
    qk, pv = _mmas(loop)
    m = machine()
    assert mma_path.properly_async(qk, loop, m, 8) == 0
    assert mma_path.properly_async(pv, loop, m, 8) == 1
    assert mma_path.trip_waits_for_mma(loop)


def test_gemm_k_loop_is_properly_async_and_does_not_wait():
    p = dict(M=4096, N=4096, K=4096, BM=128, BN=128, BK=64, WARPS=8, STAGES=3, GROUP_M=8)
    loop = _loops("gemm.tile", p)[0]
    (mma,) = _mmas(loop)
    assert mma_path.properly_async(mma, loop, machine(), 8) == 1
    assert not mma_path.trip_waits_for_mma(loop)


# ------------------------------------------------------------------ the breakdown's two terms
def test_serial_chain_term_of_four_resident_ctas():
    """flash_attention B1 H32 S4096 D128 at BLOCK_M=64, BLOCK_N=32, 4 warps, 2 stages, with the
    compiled resources (126 regs, 48 KiB: 4 CTAs per SM). One CTA's trip:
      tensor: QK^T 2 x 64 x 32 x 128 + PV 2 x 64 x 128 x 32 = 1,048,576 flop = 174.720 ns;
      vector: mul, reduce max, sub, reduce sum, cast on 64 x 32 = 2048 each (10,240), max, sub,
        mul, add on 64 (256), acc rescale 64 x 128 = 8192: 18,688 / 253.44 = 73.737 ns;
      special: exp2 on 2048 + 64 = 2112 / 31.68 = 66.667 ns; overhead 50.505 ns:
      chain 365.629 ns; 4 CTAs in turn: 1462.52 ns a trip.
    Without the mechanism a round is the busiest engine: the L2 transfer of 4 CTAs' K and V
    tiles, 4 x 2 x 32 x 128 x 2 = 65,536 B / 83.333 = 786.43 ns (over one CTA's chain and the
    plain pipelined loads: latency 208.52 + 196.61 = 405.13 ns, see the prefetch test).
    It adds 1462.52 - 786.43 = 676.09 ns over 127 trips = 85,864 ns a wave; 2048 CTAs over
    528 slots: 3 full waves: 257,592 ns."""
    t = terms("flash_attention.tile", dict(B=1, H=32, S=4096, D=128, BLOCK_M=64, BLOCK_N=32, WARPS=4, STAGES=2),
              dict(threads=128, regs=126, smem=49152, spills=0))
    chain = 1_048_576 / TENSOR + 18_688 / VECTOR + 2112 / SPECIAL + OVERHEAD
    assert chain == pytest.approx(365.629, abs=1e-3)
    busiest = 4 * 2 * 32 * 128 * 2 / (11_000 / 132)
    assert t["serial chain"].ns == pytest.approx(3 * 127 * (4 * chain - busiest), rel=1e-6)


def test_prefetch_wait_term_of_a_two_stage_attention_loop():
    """flash_attention B1 H32 S8192 D128 at 128 x 64, 8 warps, 2 stages, 1 CTA per SM. The
    prefetch is issued after QK^T (it waits: 2 x 128 x 64 x 128 = 2,097,152 flop = 349.44 ns)
    and the softmax (vector 57,856 elements = 228.28 ns: five ops on 128 x 64 = 8192, four on
    128, the acc rescale on 128 x 128 = 16,384; special 8192 + 128 = 8320 = 262.63 ns), not
    after PV (properly async): 840.35 ns. The loads: K and V tiles 2 x 64 x 128 x 2 = 32,768 B
    at the L2 share, 393.22 ns, after a latency: 3 of the 132 CTAs of a wave start a new head
    (cols = 8192 / 128 = 64 pm per head: ceil(132 / 64) = 3 heads), so 3/132 of the reads
    miss: 3/132 x 700 + 129/132 x 200 = 211.36 ns; in flight 604.58 ns. A trip:
    (840.35 + 604.58) / 1 = 1444.93 ns against one CTA's chain 349.44 x 2 + 228.28 + 262.63
    + 50.51 = 1240.30 ns: +204.63 ns over 127 trips, 2048 / 132 = 15 full waves."""
    t = terms("flash_attention.tile", dict(B=1, H=32, S=8192, D=128, BLOCK_M=128, BLOCK_N=64, WARPS=8, STAGES=2),
              dict(threads=256, regs=148, smem=98304, spills=0))
    qk = 2 * 128 * 64 * 128 / TENSOR
    softmax = 57_856 / VECTOR + 8320 / SPECIAL
    in_flight = (3 / 132 * 700 + 129 / 132 * 200) + 32_768 / (11_000 / 132)
    chain = 2 * qk + softmax + OVERHEAD
    assert t["prefetch wait"].ns == pytest.approx(15 * 127 * ((qk + softmax + in_flight) - chain), rel=1e-6)


def test_unpipelined_wait_is_one_latency_and_one_transfer_at_one_stage_only():
    """STAGES = 1: one L2 latency (200 ns) plus one CTA's transfer (16,384 B / 83.333 B/ns =
    196.608 ns) = 396.608 ns a round; 0 from 2 stages on (the pipeliner prefetches)."""
    fetch = 16_384 / (11_000 / 132)
    assert mma_path.unpipelined_wait(1, 200, fetch) == pytest.approx(396.608, abs=1e-3)
    assert mma_path.unpipelined_wait(2, 200, fetch) == 0
    import numpy as np
    got = mma_path.unpipelined_wait(np.array([1, 2, 3]), 200, fetch)
    assert list(got) == pytest.approx([396.608, 0, 0], abs=1e-3)


def test_load_wait_term_of_a_one_stage_attention_loop():
    """The serial-chain config above at STAGES = 1 (same compiled resources: 4 CTAs per SM).
    Triton prefetches nothing; the 4 CTAs' chains (4 x 365.629 = 1462.52 ns) end together and
    they wait for their next K and V tiles together: latency 9/528 x 700 + 519/528 x 200 =
    208.52 ns (a wave of 528 CTAs starts 9 heads of 64 query blocks, whose first reads miss)
    plus one CTA's transfer 2 x 32 x 128 x 2 = 16,384 B / 83.333 = 196.61 ns: 405.13 ns a
    round on top of the chains, which are the longest of everything else (the busiest engine
    786.43 ns; one CTA alone 208.52 + 196.61 + 174.72 + 73.74 + 66.67 + its shared-memory
    reads < 1462.52). Over 127 trips and 3 full waves: 3 x 127 x 405.13 ns; the last key
    block's loop (1 trip, its masked chain 4 x 389.87 ns) the same wait once: 3 x 405.13 ns."""
    a = analyze(parse_file(str(KERNELS / "flash_attention.tile")), None, PROFILE,
                dict(B=1, H=32, S=4096, D=128, BLOCK_M=64, BLOCK_N=32, WARPS=4, STAGES=1),
                resources=dict(threads=128, regs=126, smem=49152, spills=0))
    waits = [t.ns for t in a.terms if t.name == "load wait"]
    t = {t.name: t for t in a.terms}
    latency = 9 / 528 * 700 + 519 / 528 * 200
    assert latency == pytest.approx(208.52, abs=1e-2)
    wait = latency + 2 * 32 * 128 * 2 / (11_000 / 132)
    assert waits == pytest.approx([3 * 127 * wait, 3 * 1 * wait], rel=1e-6)
    assert "serial chain" not in t and "prefetch wait" not in t


# ------------------------------------------------------------------ causal trips, launch order
def test_causal_trip_counts_are_exact_means_when_block_n_exceeds_block_m():
    """flash_prefill S=2048, BLOCK_M=64, BLOCK_N=128: query block pm runs floor(pm x 64 / 128)
    unmasked blocks (0, 0, 1, 1, ..., 15, 15 over pm = 0..31: mean 7.5) and one diagonal block
    (cdiv((pm + 1) x 64, 128) - floor(pm / 2) = 1), not the stated bounds 16 and 2."""
    loops = _loops("flash_prefill.tile", dict(B=4, H=32, S=2048, D=128, BLOCK_M=64, BLOCK_N=128, WARPS=4, STAGES=3))
    assert [float(lp.trips) for lp in loops] == [7.5, 1.0]


def test_flash_kernels_launch_query_blocks_fastest():
    """FlashAttention-2's grid is (query blocks, batch x heads) with the query block in
    blockIdx.x / program_id(0), which varies fastest: a wave holds every query block of a few
    heads, which share their K and V through L2. B4 H32 S2048 at BLOCK_M=64, BLOCK_N=128, one
    CTA per SM: 132 CTAs cover ceil(132 / 32) = 5 heads, so 5/132 of the K and V reads miss
    (the old order, heads fastest, put 128 heads in a wave: 3% hit). Per CTA: K and V over
    7.5 + 1 trips of 2 x 128 x 128 x 2 B = 557,056 B, Q 64 x 128 x 2 = 16,384 B (its own, a
    miss); writes O 16,384 B and LSE 256 B go to DRAM. Hit ratio of all requests:
    1 - (16,384 + 557,056 x 5/132 + 16,640) / (573,440 + 16,640) = 0.90828."""
    a = analyze(parse_file(str(KERNELS / "flash_prefill.tile")), None, PROFILE,
                dict(B=4, H=32, S=2048, D=128, BLOCK_M=64, BLOCK_N=128, WARPS=4, STAGES=3),
                resources=dict(threads=128, regs=255, smem=212992, spills=0))
    expected = 1 - (16_384 + 557_056 * 5 / 132 + 16_640) / (573_440 + 16_640)
    assert float(a.launches[0].l2_hit_ratio) == pytest.approx(expected, rel=1e-9)
