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
SMEM = 128 * 1.98                      # B/ns through one SM's shared-memory port
# an SS warpgroup mma's operands come at the port's 128 B a cycle of the SM clock under the mmas,
# warp_mma.clock_fraction = 0.907 of 1.98 GHz: 128 x 1.98 x 0.907 = 229.870 B/ns (mma_path.group_ns;
# measured, calibration/h200/measured/chain_s12/mma_rate.csv: m64n16k16 / m64n32k16 at 229.5 B/ns)
SMEM_MMA = SMEM * 0.907
WGMMA_WAIT = 88 / 1.98                 # ns: instruction_latency.wgmma_wait
RS_GROUP = 50 / 1.98                   # ns: instruction_latency.wgmma_rs_group


def mva(tensor, simt, delay, resident):
    """Mean value analysis written out (tfx.analysis.chain_overlap): Q(0) = 0, then for each n
    R = D (1 + Q), cycle = R_tensor + R_simt + delay, Q = n R / cycle."""
    q_t = q_s = 0.0
    for n in range(1, resident + 1):
        r_t, r_s = tensor * (1 + q_t), simt * (1 + q_s)
        cycle = r_t + r_s + delay
        q_t, q_s = n * r_t / cycle, n * r_s / cycle
    return cycle


def test_serial_chain_term_of_four_resident_ctas():
    """flash_attention B1 H32 S4096 D128 at BLOCK_M=64, BLOCK_N=32, 4 warps, 2 stages, with the
    compiled resources (126 regs, 48 KiB: 4 CTAs per SM). One CTA's trip on the stations:
      tensor: QK^T reads Q (A, 64 x 16 x 2 = 2048 B) and K (B, 32 x 16 x 2 = 1024 B) from shared
        memory for each of its 128 / 16 = 8 wgmma m64n32k16: 24,576 B / 229.870 = 106.913 ns,
        longer than its 2 x 64 x 32 x 128 flop / 6001.46 = 87.360 ns; PV reads P from registers
        (RS): 87.360 + 50 cycles = 112.613 ns; 219.525 ns (the trip's shared-memory port time,
        K and V written 16,384 B + Q, K, V read 32,768 B = 193.94 ns, is shorter);
      simt: vector 18,688 / 253.44 = 73.737 ns (mul, reduce max, sub, reduce sum, cast on 64 x 32;
        max, sub, mul, add on 64; the acc rescale on 64 x 128) + special 2112 / 31.68 = 66.667 ns
        + overhead 50.505 ns = 190.909 ns;
      delay: the dependent path's latency beyond its ops' work: the waits for QK^T and PV,
        2 x 88 cycles = 88.889 ns; reduce max over 32 columns, 2 x 32 / 8 = 8 values a thread:
        7 x 4 + 2 x (24 + 4) = 84 cycles = 42.424 ns against its 2048 / 253.44 = 8.081 ns of
        work: 34.343 ns; the row max (64 values, 0.253 ns of work) waits one fma, 4 cycles =
        2.020 ns: 1.768 ns; 125.000 ns.
    Four CTAs share the stations (mean value analysis, written out in ``mva``): n = 1 535.43 ns
    (queues 219.53 / 535.43 = 0.4100, 190.91 / 535.43 = 0.3566); n = 2 219.53 x 1.4100 + 190.91 x
    1.3566 + 125 = 693.51; n = 3 873.98; n = 4 1067.06 ns a round, against 4 x 535.43 = 2141.74 ns
    in turn. Without the mechanism a round is the busiest
    engine: the L2 transfer of 4 CTAs' K and V tiles, 4 x 2 x 32 x 128 x 2 = 65,536 B / 83.333 =
    786.43 ns (the prefetch, issued after 219.525 - 112.613 + 190.909 - 50.505 + 125 = 372.32 ns,
    with its 405.13 ns in flight, is shorter). It adds 1067.06 - 786.43 ns over 127 trips a wave;
    2048 CTAs over 528 slots: 3 full waves."""
    t = terms("flash_attention.tile", dict(B=1, H=32, S=4096, D=128, BLOCK_M=64, BLOCK_N=32, WARPS=4, STAGES=2),
              dict(threads=128, regs=126, smem=49152, spills=0))
    tensor = 8 * (2048 + 1024) / SMEM_MMA + (2 * 64 * 128 * 32 / TENSOR + RS_GROUP)
    assert tensor == pytest.approx(219.525, abs=1e-3)
    simt = 18_688 / VECTOR + 2112 / SPECIAL + OVERHEAD
    assert simt == pytest.approx(190.909, abs=1e-3)
    delay = 2 * WGMMA_WAIT + (84 / 1.98 - 2048 / VECTOR) + (4 / 1.98 - 64 / VECTOR)
    assert delay == pytest.approx(125.000, abs=1e-3)
    round_ns = mva(tensor, simt, delay, 4)
    assert round_ns == pytest.approx(1067.06, abs=1e-2)
    busiest = 4 * 2 * 32 * 128 * 2 / (11_000 / 132)
    assert t["serial chain"].ns == pytest.approx(3 * 127 * (round_ns - busiest), rel=1e-6)
    assert "prefetch wait" not in t


def test_serial_chain_of_a_64_row_tile_on_8_warps():
    """flash_attention B1 H32 S4096 D128 at BLOCK_M=64, BLOCK_N=32, 8 warps, 3 stages, with the
    compiled resources (89 regs, 64 KiB: 2 CTAs per SM). As Triton 3.6.0 lays it (its ttgir and
    SASS, bench/h200/compile_attn_sass.py f,128,64,32,8,3): QK^T feeds PV, so its 8 warps go on
    M and both warpgroups compute the same 64 rows, each as 2 x 8 wgmma m64n16k16
    (mmaVersionToInstrShape: maxN = 32 / (8 / 4) = 16); PV only reads P: warps 4 x 2, each
    warpgroup 64 x 64 of the 64 x 128 accumulator, 2 wgmma m64n64k16 (RS).
      tensor: QK^T 2 x 128 x 32 x 128 = 1,048,576 flop = 174.72 ns, its operands through the
        port longer: A 2 warpgroups x 2 instructions x 64 x 128 x 2 B + B 2 x 128 x 32 x 2 B =
        81,920 B / 229.870 = 356.38 ns; PV 2 x 64 x 128 x 32 = 524,288 flop = 87.36 ns + the RS
        group 50 cycles = 112.61 ns; 468.99 ns (the trip's port time, 81,920 + PV's V 8,192 +
        K and V written 16,384 = 106,496 B / 253.44 = 420.20 ns, is shorter);
      simt: the scores' ops run on both warpgroups (vector 10,496 elements: mul, reduce max,
        sub, reduce sum, cast on 64 x 32, max, sub, mul, add on 64; special 2,112 exp2), the
        acc rescale on PV's 64 x 128 = 8,192 once: 2 x (10,496 / 253.44 + 2,112 / 31.68) +
        8,192 / 253.44 + overhead 50.505 = 298.99 ns;
      delay: each warpgroup's dependent path over its 64 rows (half of each op's work): the two
        mma waits 88.889 ns, reduce max over 32 columns 84 cycles = 42.424 ns against 2048 / 2 /
        253.44 = 4.040 ns, the row max 2.020 ns against 0.126 ns: 129.167 ns, less the two
        warpgroups' overlap 1/2 x min(468.99, 298.99) = 149.49 ns.
    Two CTAs share the stations (mva, delay 129.167 - 149.495 = -20.328 ns): one alone 468.99 +
    298.99 - 20.33 = 747.65 ns, queues 468.99 / 747.65 = 0.6273 and 298.99 / 747.65 = 0.3999;
    two: 468.99 x 1.6273 + 298.99 x 1.3999 - 20.33 = 763.18 + 418.56 - 20.33 = 1161.41 ns a round
    (the chain_s12 trip of this tile, L2-resident, measured 797 and 1,260 ns at one and two CTAs
    a SM: calibration/h200/measured/chain_s12/attn_trip.csv), over the busiest engine, the port's
    2 x 106,496 / 253.44 = 840.40 ns: +321.00 ns over 127 trips, 2048 / 264 = 7 full waves."""
    t = terms("flash_attention.tile", dict(B=1, H=32, S=4096, D=128, BLOCK_M=64, BLOCK_N=32, WARPS=8, STAGES=3),
              dict(threads=256, regs=89, smem=65536, spills=0))
    qk_ops = (2 * 2 * 64 * 128 * 2 + 2 * 128 * 32 * 2) / SMEM_MMA
    assert qk_ops == pytest.approx(356.38, abs=1e-2) and qk_ops > 2 * 128 * 32 * 128 / TENSOR
    tensor = qk_ops + 2 * 64 * 128 * 32 / TENSOR + RS_GROUP
    assert tensor == pytest.approx(468.99, abs=1e-2)
    simt = 2 * (10_496 / VECTOR + 2112 / SPECIAL) + 8192 / VECTOR + OVERHEAD
    assert simt == pytest.approx(298.99, abs=1e-2)
    exposed = 2 * WGMMA_WAIT + (84 / 1.98 - 1024 / VECTOR) + (4 / 1.98 - 32 / VECTOR)
    assert exposed == pytest.approx(129.167, abs=1e-3)
    round_ns = mva(tensor, simt, exposed - min(tensor, simt) / 2, 2)
    assert round_ns == pytest.approx(1161.41, abs=1e-2)
    port = 2 * (81_920 + 8192 + 16_384) / SMEM
    assert t["serial chain"].ns == pytest.approx(7 * 127 * (round_ns - port), rel=1e-6)


def test_pipeline_depth_term_of_a_two_stage_attention_loop():
    """flash_attention B1 H32 S8192 D128 at 128 x 64, 8 warps (two warpgroups of 64 rows),
    2 stages, 1 CTA per SM. The CTA's stations: QK^T 2 x 128 x 64 x 128 = 2,097,152 flop =
    349.44 ns (its operands, 2 x 8 wgmma m64n64k16 of 4096 B, 65,536 B / 253.44 = 258.59 ns,
    come faster); PV from registers 349.44 + 25.25 = 374.69 ns: tensor 724.13 ns; vector 57,856
    elements = 228.28 ns (five ops on 128 x 64 = 8192, four on 128, the acc rescale on
    128 x 128 = 16,384), special 8192 + 128 = 8320 exp2 = 262.63 ns, overhead 50.51 ns: simt
    541.41 ns. Each warpgroup's dependent path over its 64 rows (half of each op): the two mma
    waits 88.89 ns, reduce max over 64 columns (2 x 64 / 8 = 16 values: 15 x 4 + 2 x 28 = 116
    cycles = 58.59 ns against 4096 / 253.44 = 16.16 ns) 42.42 ns, the row max (64 values, 0.25
    ns) 1.77 ns: 133.08 ns exposed; the two warpgroups overlap 1/2 x min(724.13, 541.41) =
    270.71 ns of the chain: delay -137.63 ns; the CTA's trip 724.13 + 541.41 - 137.63 =
    1127.92 ns.

    At 2 stages the copies issued at the end of a trip are the next trip's (tfx.analysis.
    pipeline_depth): their round trip is the load-trip chain 242 / 1.98 = 122.22 ns, the
    latency and K and V, 2 x 64 x 128 x 2 = 32,768 B, at the slower of the L2 share (83.333
    B/ns: 393.22 ns) and the SM's port (65 x 1.98 = 128.7 B/ns: 254.61 ns). The latency: 3 of
    the 132 CTAs of a wave start a new head (64 query blocks per head: ceil(132 / 64) = 3
    heads), so 3/132 of the reads are first touches; the head a wave starts in is the one the
    previous wave ended in whenever the wave starts mid-head (132 i mod 64 = 4 i mod 64: all but
    1 - gcd(132, 64) / 64 = 15/16 of the waves), x (1 - 132/2048) (its K and V stay in L2:
    tfx.analysis.l2_reuse.cross_value_share), so (3 - 15/16 x 1916/2048) / 132 = 2.122925 /
    132 = 1.6083% miss: 0.016083 x 700 + 0.983917 x 200 = 208.04 ns. Of the 2048 CTAs on 132
    slots, 1 - 132/2048 = 93.5547% start after the first wave and drift apart: their bytes
    come at the port, the first wave's at the share (pipeline_depth.serial_copy_transfer_ns):
    0.064453 x 393.22 + 0.935547 x 254.61 = 263.54 ns; the round trip 122.22 + 208.04 + 263.54
    = 593.80 ns; less PV, which runs on meanwhile (374.69 ns), for the 98.3917% of the bytes
    that hit L2: 215.59 ns, a delay of the CTA's chain. One CTA a SM: the round is 1127.92 +
    215.59 = 1343.51 ns, over the old floor, one CTA's throughput sum (its tensor engine 2 x
    349.44 + vector 228.28 + special 262.63 + overhead 50.51 = 1240.30 ns, the largest without
    the delay): +103.21 ns over 127 trips, 2048 / 132 = 15 full waves. The prefetch no longer
    binds above it: its copies leave after a CTA barrier behind PV's issue, when the later of
    the two warpgroups is past its compute, the second one's QK^T under the first one's softmax
    (chain_overlap.prefetch_overlap_ns): QK^T 349.44 + softmax 228.28 + 262.63 = 840.35 ns less
    1/2 x min(349.44, 490.91) = 174.72 ns, 665.63 ns; the rest of the chain before the copies
    (chain_overlap.issue_ns: tensor 724.13 - PV 374.69 + simt 541.41 - overhead 50.51 + delay
    -137.63 = 702.72 ns) is longer and sets it. With the copies' streamed round trip
    (tfx.analysis.decode_trip, whose L2-resident bytes keep the SM's L2 share: 0.016083 x 557
    (DRAM's idle round trip) + 0.983917 x 200 + 393.22 = 598.96 ns) that is 1301.68 ns a trip,
    under the round with the delay (1343.51): no prefetch wait (it was 840.35 + 598.96 =
    1439.31 ns, +95.80 ns a trip, before the overlap)."""
    t = terms("flash_attention.tile", dict(B=1, H=32, S=8192, D=128, BLOCK_M=128, BLOCK_N=64, WARPS=8, STAGES=2),
              dict(threads=256, regs=148, smem=98304, spills=0))
    qk = 2 * 128 * 64 * 128 / TENSOR
    assert 16 * 4096 / SMEM < qk
    pv = qk + RS_GROUP
    tensor = qk + pv
    softmax = 57_856 / VECTOR + 8320 / SPECIAL
    simt = softmax + OVERHEAD
    exposed = 2 * WGMMA_WAIT + (116 / 1.98 - 4096 / VECTOR) + (4 / 1.98 - 64 / VECTOR)
    assert exposed == pytest.approx(133.08, abs=1e-2)
    delay = exposed - min(tensor, simt) / 2
    round_ns = tensor + simt + delay
    assert round_ns == pytest.approx(1127.92, abs=1e-2)
    miss = (3 - 15 / 16 * 1916 / 2048) / 132
    drifted = 1 - 132 / 2048
    transfer = (1 - drifted) * 32_768 / (11_000 / 132) + drifted * 32_768 / (65 * 1.98)
    assert transfer == pytest.approx(263.54, abs=1e-2)
    trip = 242 / 1.98 + (miss * 700 + (1 - miss) * 200) + transfer
    assert trip == pytest.approx(593.80, abs=1e-2)
    # (the round trip with the port for the drifted CTAs: 215.59 ns, as before session 19.) Now
    # the first wave's CTAs wait the round trip at the share less PV, 122.22 + 208.04 + 393.22 -
    # 374.69 = 348.79 x 0.983917 = 343.18 ns; the drifted ones the lead 122.22 + 208.04 = 330.26,
    # under PV (0 left), then 32,768 B at the drifted fill rate 107.5 x 1.98 = 212.85 B/ns:
    # 153.95 x 0.983917 = 151.47 ns (pipeline_depth.drifted_exposed_ns): 0.064453 x 343.18 +
    # 0.935547 x 151.47 = 163.83 ns. The round 1127.92 + 163.83 = 1291.75 ns; the prefetch's
    # in-flight copies are no longer than that wait (702.72 + 374.69 + 163.83 = 1241.24 ns,
    # under the round), so it does not bind
    assert (trip - pv) * (1 - miss) == pytest.approx(215.59, abs=1e-2)
    first = (242 / 1.98 + (miss * 700 + (1 - miss) * 200) + 32_768 / (11_000 / 132) - pv) * (1 - miss)
    assert first == pytest.approx(343.18, abs=1e-2)
    late = 32_768 / (107.5 * 1.98) * (1 - miss)
    assert late == pytest.approx(151.47, abs=1e-2)
    depth = (1 - drifted) * first + drifted * late
    assert depth == pytest.approx(163.83, abs=1e-2)
    throughput = 2 * qk + 57_856 / VECTOR + 8320 / SPECIAL + OVERHEAD
    assert throughput == pytest.approx(1240.30, abs=1e-2)
    assert t["pipeline depth"].ns == pytest.approx(15 * 127 * (round_ns + depth - throughput), rel=1e-4)
    stream = miss * 557 + (1 - miss) * 200 + 32_768 / (11_000 / 132)
    assert stream == pytest.approx(598.96, abs=1e-2)
    softmax_sum = 57_856 / VECTOR + 8320 / SPECIAL
    assert qk + softmax_sum == pytest.approx(840.35, abs=1e-2)
    overlapped = qk + softmax_sum - min(qk, softmax_sum) / 2
    assert overlapped == pytest.approx(665.63, abs=1e-2)
    issue = tensor - pv + simt - OVERHEAD + delay
    assert issue == pytest.approx(702.72, abs=1e-2) and issue > overlapped
    assert issue + stream == pytest.approx(1301.68, abs=1e-2)
    # capped at the copies' wait the chain prices: 702.72 + 374.69 + 163.83 = 1241.24 ns
    assert issue + pv + depth == pytest.approx(1241.24, abs=1e-2) and issue + pv + depth < round_ns + depth
    assert "prefetch wait" not in t
    assert "serial chain" not in t


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
    they wait for their next K and V tiles together, the copies' round trip (tfx.analysis.
    pipeline_depth.round_trip_ns): the load-trip chain 242 / 1.98 = 122.22 ns, the latency and
    one CTA's 2 x 32 x 128 x 2 = 16,384 B: the 1 - 528/2048 = 74.21875% of the 2048 CTAs that
    start after the first wave drift apart and take them at the SM's port (/ 128.7 = 127.30 ns),
    the first wave's at the slower of the L2 share (/ 83.333 = 196.61 ns) and the port
    (pipeline_depth.serial_copy_transfer_ns): 0.2578125 x 196.61 + 0.7421875 x 127.30 = 145.17
    ns. The latency: a wave of 528 CTAs starts 9 heads of
    64 query blocks, whose first reads miss unless the previous wave read that head: the one it
    starts in, whenever the wave starts mid-head (528 i mod 64 = 16 i mod 64: 1 - gcd(528, 64)
    / 64 = 3/4 of the waves), x (1 - 528/2048) (tfx.analysis.l2_reuse.cross_value_share): miss
    (9 - 3/4 x 1520/2048) / 528 = 8.443359 / 528 = 1.5991%, latency 0.015991 x 700 + 0.984009 x
    200 = 208.00 ns: 122.22 + 208.00 + 145.17 = 475.39 ns a round on top of the chains, which
    are the longest of everything else (the busiest engine 786.43 ns; one CTA alone 475.39 +
    174.72 + 73.74 + 66.67 + its shared-memory reads < 1462.52). Over 127 trips and 3 full
    waves: 3 x 127 x 475.39 ns; the last key block's loop (1 trip, its masked chain 4 x 389.87
    ns) the same wait once."""
    a = analyze(parse_file(str(KERNELS / "flash_attention.tile")), None, PROFILE,
                dict(B=1, H=32, S=4096, D=128, BLOCK_M=64, BLOCK_N=32, WARPS=4, STAGES=1),
                resources=dict(threads=128, regs=126, smem=49152, spills=0))
    waits = [t.ns for t in a.terms if t.name == "load wait"]
    t = {t.name: t for t in a.terms}
    miss = (9 - 3 / 4 * 1520 / 2048) / 528
    latency = miss * 700 + (1 - miss) * 200
    assert latency == pytest.approx(208.00, abs=1e-2)
    drifted = 1 - 528 / 2048
    wait = 242 / 1.98 + latency + (1 - drifted) * 16_384 / (11_000 / 132) + drifted * 16_384 / (65 * 1.98)
    assert wait == pytest.approx(475.39, abs=1e-2)
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
    CTA per SM: 132 CTAs cover ceil(132 / 32) = 5 heads, so 5/132 of the K and V reads are
    first touches in the wave (the old order, heads fastest, put 128 heads in a wave: 3% hit);
    the head a wave starts in was read by the previous wave (for straddle_share(132, 32) =
    14/132 of its CTAs), and it is one of the wave's 5 heads whenever the wave starts mid-head:
    132 i mod 32 = 4 i mod 32, all but 1 - gcd(132, 32) / 32 = 7/8 of the waves, x (1 -
    132/4096) (tfx.analysis.l2_reuse.cross_value_share), so (5 - 7/8 x 3964/4096) / 132 =
    0.0314636 of the reads miss. Per CTA: K and V over 7.5 + 1 trips of 2 x 128 x 128 x 2 B =
    557,056 B, Q 64 x 128 x 2 = 16,384 B (its own, a miss); writes O 16,384 B and LSE 256 B go
    to DRAM. Hit ratio of all requests: 1 - (16,384 + 557,056 x 0.0314636 + 16,640) / (573,440
    + 16,640) = 0.91433."""
    a = analyze(parse_file(str(KERNELS / "flash_prefill.tile")), None, PROFILE,
                dict(B=4, H=32, S=2048, D=128, BLOCK_M=64, BLOCK_N=128, WARPS=4, STAGES=3),
                resources=dict(threads=128, regs=255, smem=212992, spills=0))
    expected = 1 - (16_384 + 557_056 * (5 - 7 / 8 * 3964 / 4096) / 132 + 16_640) / (573_440 + 16_640)
    assert float(a.launches[0].l2_hit_ratio) == pytest.approx(expected, rel=1e-9)
