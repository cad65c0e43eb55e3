"""tfx.analysis.row_body: a loop-free CTA body (row kernels) on a launch of more than one wave;
the resident CTAs overlap, so a batch takes max(throughput, one CTA's chain). Every expected
number is derived by hand below from the h200_sxm profile:

    DRAM   4.8 TB/s x 0.883 (memory.gmem.efficiency) = 4,238.4 B/ns for the device
    L2     11 TB/s = 11,000 B/ns for the device
    vector bf16 512 flop/cycle x 1.98 GHz = 1,013.76 flop/ns; an elementwise op is one
           lane-cycle per element (half the FMA rate): 506.88 elements/ns
    DRAM latency 700 ns (memory.gmem.latency), launch 3 us (launch.overhead)
The predicted time is rounded up to whole ns (analyze: ceil_int).
"""

import pytest

from tfx.analysis import row_body
from tfx.analysis.analyze import analyze
from tfx.hw import load_profile
from tfx.lang import parse_text

ROWSCALE = """
kernel rowscale {
  param M = 1616
  param N = 8192
  param BLOCK_M = 4
  attr threads = 256
  tensor X : bf16[M, N] @gmem in
  tensor Y : bf16[M, N] @gmem out
  mesh cta[cdiv(M, BLOCK_M)] as (pm) capture(X, Y) {
    %x = load X[pm * BLOCK_M : BLOCK_M, :] -> rmem
    %y = mul %x, 2.0
    store %y -> Y[pm * BLOCK_M : BLOCK_M, :]
  }
}
"""
# 255 registers x 256 threads: the whole 64K register file, one CTA per SM
ONE_CTA = {"threads": 256, "regs": 255, "spills": 0, "smem": 0}


def _analyze(params=None, resources=ONE_CTA):
    return analyze(parse_text(ROWSCALE), None, load_profile("h200_sxm"), params or {}, resources=resources)


def test_chain_sets_a_one_cta_batch():
    """One CTA per SM: each CTA loads 4 x 8192 x 2 = 65,536 B and stores as many; its mul is
    32,768 bf16 elements. Full batch (132 SMs active, r = 1):
      load   max(65,536 / (4,238.4 / 132) = 2,041.05, 65,536 / (11,000 / 132) = 786.43) = 2,041.05 ns
      store  posted (row_body.batch, ``successor``: more CTAs take the slot after it): its
             bytes at the SM's port to L2, 65,536 / 83.333 = 786.43 ns
      mul    32,768 / 506.88 = 64.646 ns
      throughput = memory 131,072 / 32.109 = 4,082.08 ns (vector 64.646 ns beside it)
      chain      = 700 + 2,041.05 + 64.646 + 786.43 = 3,592.13 ns  < throughput: the DRAM sets it
             (one CTA queues behind no other: the queue of 1 is the chain)
    404 CTAs = 3 full waves of 132 + a tail of 8 CTAs on 8 SMs (r = 1, 8 active):
      the first wave starts together and runs in lock step, op by op:
             load max(2,041.04, latency 700) + mul 64.646 + store 2,041.04 = 4,146.73 ns
             (65,536 x 132 / 4,238.4 = 2,041.04 exactly; the 2,041.05 above rounds up)
      the other 2 full waves overlap: 2 x 4,082.08 = 8,164.17 ns; waves 12,310.90 ns
      tail DRAM: 4,238.4 / 8 = 529.8 B/ns each would exceed one SM's ceiling 41 x 1.98 =
             81.18 B/ns (pipeline.sm_dram_bandwidth_per_cycle, tfx.analysis.memory_parallelism)
      tail throughput: 131,072 B / 81.18 = 1,614.60 ns
      tail chain (the last CTAs: no successor, so the stores are not posted): each transfer at
             the SM's DRAM ceiling, over L2's 65,536 / 83.333 = 786.43 ns: 65,536 / 81.18 = 807.29 ns
             700 + 807.29 + 64.646 + 807.29 = 2,379.23 ns
    total = 3,000 + 700 + 12,310.90 + 2,379.23 = 18,390.13, up to 18,391 ns"""
    a = _analyze()
    assert a.metrics["performance.predicted_ns"] == 18391
    terms = {t.name: t for t in a.terms}
    assert terms["waves"].ns == pytest.approx(4146.73 + 2 * 4082.08, abs=0.01)
    assert "the first wave in lock step 4.15 us (its CTAs start together) + 2 full waves overlapping x 4.08 us" \
        in terms["waves"].detail
    assert terms["tail wave"].ns == pytest.approx(2379.23, abs=0.01)
    assert ("one CTA's chain 3.59 us = latency 700.00 ns + copy 2.83 us + vector 64.65 ns (its stores posted: "
            "786.43 ns at its port to L2, the write-back to DRAM under the next CTA's loads)") in terms["overlap"].detail
    assert "bound by the throughput" in terms["overlap"].detail


def test_two_ctas_queue_at_the_memory_pipe():
    """128 registers x 256 threads = 32,768: two CTAs per SM (r = 2). Each CTA needs the
    SM's memory pipe for service D = 131,072 / 32.109 = 4,082.08 ns and spends Z = 700 +
    64.646 = 764.646 ns of its chain alone (latency, mul). Mean value analysis:
      n = 1: R = 4,082.08, cycle 4,846.73, Q = 4,082.08 / 4,846.73 = 0.84223
      n = 2: R = 4,082.08 x 1.84223 = 7,520.14, cycle = 7,520.14 + 764.65 = 8,284.79 ns
    a batch of 2 takes 8,284.79 ns, between the overlap bound max(2 D = 8,164.17, chain
    4,846.73) and the lock-step sum 8,293.49 (load 4,082.10 + mul 129.29 + store 4,082.10).
    404 CTAs on 264 slots: 1 full wave + 140 CTAs (r = cdiv(140, 132) = 2 on 132 SMs, the
    same 8,284.79: a tail has no successor, so its CTAs queue). The one full wave is the
    first, in lock step: 8,293.49 ns.
    total = 3,000 + 700 + 8,293.49 + 8,284.79 = 20,278.3, up to 20,279 ns.
    A full batch (more CTAs follow in its slots) of this body, whose one load comes before any
    reduce, alternates instead (row_body.alternation_ns): max(2 x 4,082.08 = 8,164.17,
    4,082.08 + 764.65 = 4,846.73) = 8,164.17 ns, which the overlap line prints."""
    a = _analyze(resources={"threads": 256, "regs": 128, "spills": 0, "smem": 0})
    assert a.metrics["performance.predicted_ns"] == 20279
    assert ("2 CTAs alternating at the memory pipe (each CTA's DRAM reads go out in one round at its start: "
            "one's transfer runs under the other's compute), max(2 x 4.08 us, 4.08 us + 764.65 ns) = 8.16 us"
            in {t.name: t for t in a.terms}["overlap"].detail)


ROWWEIGHT = """
kernel rowweight {
  param M = 1616
  param N = 8192
  param BLOCK_M = 4
  attr threads = 256
  tensor X : bf16[M, N] @gmem in
  tensor W : bf16[N] @gmem in
  tensor Y : bf16[M, N] @gmem out
  mesh cta[cdiv(M, BLOCK_M)] as (pm) capture(X, W, Y) {
    %x = load X[pm * BLOCK_M : BLOCK_M, :] -> rmem
    %w = load W[:] -> rmem
    %wb = broadcast %w to [BLOCK_M, N]
    %y = mul %x, %wb
    store %y -> Y[pm * BLOCK_M : BLOCK_M, :]
  }
}
"""


def test_dram_and_l2_move_a_ctas_bytes_at_the_same_time():
    """rowscale times a weight row W[N] that every CTA reads: it hits L2 but for its first
    touch in the launch: the first wave of 132 CTAs reads it once, and the next waves find it
    in L2 (tfx.analysis.l2_reuse.cross_wave_share, "same": 1 - 132/404 of the CTAs), so
    16,384 / 132 x 132 / 404 = 16,384 / 404 = 40.55 B of DRAM per CTA. One CTA per SM:
      DRAM bytes per CTA 65,536 (X) + 40.55 (W) + 65,536 (Y) = 131,112.55
      L2 bytes per CTA   65,536 + 16,384 + 65,536 = 147,456
      throughput = max(131,112.55 / 32.109 = 4,083.35, 147,456 / 83.333 = 1,769.47) = 4,083.35 ns
        (each op's longer one summed, 2,041.04 + 196.61 + 2,041.04 = 4,278.69, would put
         the weight's L2 transfer after the rows' DRAM transfer)
      chain: the loads move together, max(65,576.55 / 32.109 = 2,042.30, 81,920 / 83.333 =
        983.04) = 2,042.30; the store posted at the SM's port to L2, 65,536 / 83.333 = 786.43;
        mul 64.646: 700 + 2,042.30 + 64.646 + 786.43 = 3,593.38 ns < throughput, which sets the batch
    404 CTAs = 3 full waves + 8: the first wave op by op, load X 2,041.04 + load W max(0.1,
    latency 700) = 700 + mul 64.646 + store 2,041.04 = 4,846.73; 2 x 4,083.35 = 8,166.70;
    the tail of 8 CTAs on 8 SMs (no successor: stores not posted): DRAM at one SM's ceiling,
    41 B/cycle x 1.98 GHz = 81.18 B/ns (less than 4,238.4 / 8), the port still 83.333: loads
    max(65,576.55 / 81.18 = 807.79, 81,920 / 83.333 = 983.04) = 983.04, store max(65,536 /
    81.18 = 807.29, 786.43) = 807.29: 700 + 983.04 + 64.646 + 807.29 = 2,554.98.
    total = 3,000 + 700 + 4,846.73 + 8,166.70 + 2,554.98 = 19,268.41, up to 19,269 ns"""
    a = analyze(parse_text(ROWWEIGHT), None, load_profile("h200_sxm"), {}, resources=ONE_CTA)
    assert a.metrics["performance.predicted_ns"] == 19269
    overlap = {t.name: t for t in a.terms}["overlap"].detail
    assert "throughput 4.08 us (memory over 1 CTA: max(DRAM 4.08 us, L2 1.77 us))" in overlap
    assert "one CTA's chain 3.59 us = latency 700.00 ns + copy 2.83 us + vector 64.65 ns" in overlap


def test_mva_asymptotes():
    """One customer: service + think. Many: r x service once the server saturates:
    r = 32, D = 100, Z = 100: R(n) grows to about 32 x 100 - 100; the cycle is within 1 ns
    of 3,200 = r x D."""
    assert row_body.mva_cycle(1, 100.0, 50.0) == pytest.approx(150.0)
    assert row_body.mva_cycle(32, 100.0, 100.0) == pytest.approx(3200.0, abs=1.0)


def test_waves_ns_first_in_lock_step_then_overlap():
    """3 full waves, the first 4,146.75 in lock step, then 2 x 4,846.73 = 13,840.21; one full
    wave is only its first; none is 0 (a launch of less than a wave has only its tail)."""
    assert row_body.waves_ns(3, 4146.75, 4846.73) == pytest.approx(13840.21)
    assert row_body.waves_ns(1, 4146.75, 4846.73) == pytest.approx(4146.75)
    assert row_body.waves_ns(0, 4146.75, 4846.73) == 0


def test_one_wave_keeps_the_lock_step_pricing():
    """M = 528: 132 CTAs, one wave of one CTA per SM: they start together and run in lock
    step, priced op by op (load max(2,041.05, 700) + mul 64.646 + store 2,041.05 = 4,146.75):
    3,000 + 700 + 4,146.75 = 7,846.75, up to 7,847 ns, and no overlap term."""
    a = _analyze({"M": 528})
    assert a.metrics["performance.predicted_ns"] == 7847
    assert "overlap" not in {t.name for t in a.terms}


def test_a_loop_body_is_not_straight():
    """A body with a loop (a k-loop GEMM) keeps the loop model: row_body.applies is False."""
    gemm = parse_text("""
kernel k {
  param N = 1024
  attr threads = 128
  tensor X : bf16[N, N] @gmem in
  tensor Y : bf16[N, 64] @gmem out
  mesh cta[cdiv(N, 64)] as (pm) capture(X, Y) {
    %acc = zeros bf16[64, 64] @rmem
    loop k = 0 to cdiv(N, 64) carry(%acc) capture(X, pm) {
      %t = load X[pm * 64 : 64, k * 64 : 64] -> rmem
      %acc = add %acc, %t
    }
    store %acc -> Y[pm * 64 : 64, :]
  }
}
""")
    a = analyze(gemm, None, load_profile("h200_sxm"), {}, resources=ONE_CTA)
    assert "overlap" not in {t.name for t in a.terms}


def _machine():
    from tfx.analysis.machine import Machine
    return Machine(load_profile("h200_sxm"), "cta")


def test_reduction_chain_of_one_row_over_sixteen_warps():
    """softmax's row max at N = 1024, one row, 16 warps (512 threads), f32: 16-byte vectors
    of 4 floats, so cdiv(1024, 4) = 256 threads cover the row (t = min(512, 256) = 256);
    each folds cdiv(1024, 256) = 4 elements: 3 dependent adds of pipeline.dependent_issue
    4 cycles / 1.98 GHz = 2.0202 ns = 6.061 ns; 32 lanes: log2 32 = 5 shuffle steps of
    (smem latency 15 + 2.0202) = 85.101 ns; 256 / 32 = 8 warps: 4 x 15 + log2 8 = 3 x 17.0202
    = 111.061 ns. Chain 6.061 + 85.101 + 111.061 = 202.222 ns."""
    assert row_body.reduction_chain_ns(1024, 1024, 4, 512, _machine()) == pytest.approx(202.222, abs=1e-3)


def test_reduction_chain_in_one_warp_has_no_shared_memory_step():
    """2 rows of 4096 f32 over one warp (32 threads): t = min(32, 1024) = 32, each thread
    folds 4096 / 32 = 128 elements: 127 x 2.0202 = 256.566 ns; 5 shuffle steps 85.101 ns;
    one warp: no shared-memory exchange. 341.667 ns."""
    assert row_body.reduction_chain_ns(8192, 4096, 4, 32, _machine()) == pytest.approx(341.667, abs=1e-3)


def test_no_reduction_chain_without_the_fact():
    """A profile without pipeline.dependent_issue prices no chain (the sip accelerator)."""
    from tfx.analysis.machine import Machine
    m = Machine(load_profile("sip"), "pe")
    assert row_body.reduction_chain_ns(8192, 4096, 4, 32, m) == 0


def test_reduction_chain_without_its_fold():
    """The same row max as above with ``serial_fold=False`` (element_chain_ns counts the
    fold with the ops that feed it): 202.222 - the 3 dependent adds 6.061 = 196.162 ns."""
    m = _machine()
    assert row_body.reduction_chain_ns(1024, 1024, 4, 512, m, serial_fold=False) == pytest.approx(196.162, abs=1e-3)


def test_op_latency_at_the_measured_instruction_latencies():
    """h200_sxm instruction_latency: fma 4, ex2 17 cycles. exp scales to base 2 and runs
    ex2: 4 + 17 = 21; exp2: 17; a sub or a cast: one fma, 4; a view or a load: none."""
    from tfx.analysis import trip_latency
    lat = trip_latency.facts(_machine())
    assert row_body.op_latency_cycles("exp", lat) == 21
    assert row_body.op_latency_cycles("exp2", lat) == 17
    assert row_body.op_latency_cycles("sub", lat) == 4
    assert row_body.op_latency_cycles("cast", lat) == 4
    assert row_body.op_latency_cycles("broadcast", lat) == 0
    assert row_body.op_latency_cycles("load", lat) == 0


def test_softmax_element_chain_sets_the_compute_of_its_chain():
    """kernels/softmax.tile, M = 4096, N = 8192, BLOCK_M = 1, WARPS = 4 (128 threads), 128
    compiled registers: 128 x 128 = 16,384 per CTA, 4 CTAs per SM (7.76 waves).
    Element chain (row_body.element_chain_ns; fma 4, ex2 17 cycles): f32 elements in 16-byte
    vectors of 4, t = min(128, 8192 / 4) = 128 threads, n = 8192 / 128 = 64 elements each.
      cast (feed 4) -> reduce max: 64 x (4 + 4 the dependent max) = 512 cycles
      sub (4 + 4 = 8; the broadcast row max arrives at 0) -> exp (8 + 4 + 17 = 29)
                    -> reduce sum: 64 x (29 + 4) = 2,112 cycles
      2,624 cycles / 1.98 GHz = 1,325.25 ns
    The CTA's issue: vector cast 8192 bf16 / 506.88 = 16.162 ns, max, sub, sum, mul, cast
    5 x 8192 f32 / 253.44 = 161.616 ns: 177.78 ns; special exp 8192 / (16 x 1.98 = 31.68) =
    258.586 + recip 1 / 31.68 = 0.032: 258.62 ns. The chain's excess, phase by phase (a
    reduce closes a phase: its result reaches the ops after it through its barrier):
      phase 0 (cast, max): issue 16.162 + 32.323 = 48.485; chain 512 / 1.98 = 258.586: 210.101
      phase 1 (sub, exp, sum): issue 32.323 + 258.586 + 32.323 = 323.232; chain 2,112 / 1.98 =
        1,066.667: 743.434
      phase 2 (recip, mul, cast, store) feeds no reduce: issue only
    210.101 + 743.434 = 953.54 ns (against the whole issue it was 1,325.25 - 436.40 = 888.86:
    the normalization's 64.68 ns of issue cannot run under the chains before it). The
    reductions keep their shuffles and barriers, not the fold: per reduce 5 steps x (15 +
    2.0202) = 85.101 ns + 4 warps: 4 x 15 + 2 x 17.0202 = 94.040 ns; two reduces 358.28 ns."""
    from tfx.lang import parse_file
    from pathlib import Path
    src = Path(__file__).resolve().parent.parent / "kernels" / "softmax.tile"
    a = analyze(parse_file(src), None, load_profile("h200_sxm"),
                {"M": 4096, "N": 8192, "BLOCK_M": 1, "WARPS": 4},
                resources={"threads": 128, "regs": 128, "spills": 0, "smem": 0})
    overlap = {t.name: t for t in a.terms}["overlap"].detail
    assert "4 CTAs resident per SM" in overlap
    assert "vector 177.78 ns + special 258.62 ns + reduce 358.28 ns + element chain 953.54 ns" in overlap


def test_no_element_chain_without_latency_facts():
    """Without the profile's instruction_latency facts the term is off (0)."""
    assert row_body.element_chain_ns(None, 128, _machine(), None) == 0


def _rmsnorm(warps, regs):
    from pathlib import Path
    from tfx.lang import parse_file
    src = Path(__file__).resolve().parent.parent / "kernels" / "rmsnorm.tile"
    return analyze(parse_file(src), None, load_profile("h200_sxm"),
                   {"M": 2048, "N": 32768, "BLOCK_M": 1, "WARPS": warps},
                   resources={"threads": 32 * warps, "regs": regs, "spills": 0, "smem": 0})


def test_rmsnorm_one_cta_posts_its_stores_and_its_scaling_waits_for_the_sum():
    """kernels/rmsnorm.tile, M = 2048, N = 32768, BLOCK_M = 1 (issue-15 run12's held-out shape):
    16 warps at 112 registers (512 x 112 = 57,344) and 8 warps at 238 (256 x 238 = 60,928) both
    hold one CTA per SM; measured 75.3 and 88.2 us.
    The CTA's bytes: X 65,536 B (DRAM), W 65,536 B (L2; its DRAM share 65,536 / 2048 = 32 B a
    CTA: the first wave's touch, l2_reuse), Y 65,536 B.
      loads together: max(65,568 / 32.109 = 2,042.04, 131,072 / 83.333 = 1,572.86) = 2,042.04 ns
      store posted (one CTA a SM, more CTAs follow): 65,536 / 83.333 = 786.43 ns at its port
      copy 2,042.04 + 786.43 = 2,828.47 ns
    Issue (one CTA): cast x 32,768 / 506.88 = 64.646, sq and sum 2 x 32,768 / 253.44 = 258.586
    (phase 0: 323.232 ns); mul x inv_rms, mul w, cast y 3 x 129.293 + cast w 64.646 + the two
    scalar ops 0.008 = 452.53 (phase 1); vector 775.77 ns; rsqrt 1 / 31.68 = 0.03 ns special.
    Element chain (phase 0 only: phase 1 feeds no reduce): cast (4) -> sq (8) -> sum: n x 12
    cycles, n = 32,768 / t elements a thread:
      16 warps: t = 512, n = 64: 768 cycles = 387.88 ns, over phase 0's issue 323.23: 64.65 ns
       8 warps: t = 256, n = 128: 1,536 cycles = 775.76 ns, over it: 452.53 ns
      (against the whole issue 775.77, as before, both 0: the scaling after the sum cannot
       issue under the chain that feeds it)
    Reductions (shuffles and barriers): 5 x (15 + 2.0202) = 85.10 + 4 x 15 + log2(w) x 17.0202:
      16 warps 85.10 + 60 + 68.08 = 213.18 ns; 8 warps 85.10 + 60 + 51.06 = 196.16 ns
    Later load rounds (row_body.LOAD_ROUNDS, the compiled binaries): 16 warps load their 8 X
    vectors a thread in one round; the 8-warp binary issues 7 of its 16, then the other 9 after
    the first ones' data arrived: one more DRAM latency for a CTA alone on its SM, 700 ns.
    Chains: 700 + 2,828.47 + 775.77 + 0.03 + 213.18 + 64.65 = 4,582.10 ns (16 warps)
            700 + 2,828.47 + 775.77 + 0.03 + 196.16 + 452.53 + 700 = 5,652.96 ns (8 warps)
    both over the throughput 131,104 / 32.109 = 4,083.08 ns: the chain sets each batch, and
    16 warps now rank first (before: 5.77 and 5.76 us, the 8 warps first, regret 17.1%)."""
    one = {t.name: t for t in _rmsnorm(16, 112).terms}["overlap"].detail
    assert ("one CTA's chain 4.58 us = latency 700.00 ns + copy 2.83 us + vector 775.77 ns + special 0.03 ns + "
            "reduce 213.18 ns + element chain 64.65 ns (its stores posted: 786.43 ns at its port to L2") in one
    eight = {t.name: t for t in _rmsnorm(8, 238).terms}["overlap"].detail
    assert "one CTA's chain 5.65 us" in eight
    assert "reduce 196.16 ns + element chain 452.53 ns + later load rounds 700.00 ns" in eight
    assert "later load rounds" not in one
    assert (_rmsnorm(16, 112).metrics["performance.predicted_ns"]
            < _rmsnorm(8, 238).metrics["performance.predicted_ns"])



def _softmax_two_a_sm(spills=0):
    from pathlib import Path
    from tfx.lang import parse_file
    src = Path(__file__).resolve().parent.parent / "kernels" / "softmax.tile"
    return analyze(parse_file(src), None, load_profile("h200_sxm"),
                   {"M": 16384, "N": 16384, "BLOCK_M": 1, "WARPS": 16},
                   resources={"threads": 512, "regs": 63, "spills": spills, "smem": 64})


def test_alternation_bound_by_hand():
    """Two CTAs alternating at the memory pipe take max(2 x service, service + think):
    service 2,041.04 and think 2,031.45 ns: max(4,082.08, 4,072.49) = 4,082.08 ns; a CTA
    whose own path is longer, service 1,000 and think 1,500 ns: max(2,000, 2,500) = 2,500 ns."""
    assert row_body.alternation_ns(2041.04, 2031.45) == pytest.approx(4082.08, abs=1e-9)
    assert row_body.alternation_ns(1000.0, 1500.0) == pytest.approx(2500.0, abs=1e-9)


def test_two_softmax_ctas_alternate_at_the_memory_pipe():
    """kernels/softmax.tile, M = N = 16384, BLOCK_M = 1, 16 warps, 63 registers (issue-15 run6:
    measured 274.2 us): 512 x 64 (63 rounded up to 8) = 32,768 registers, two CTAs a SM. Its one
    load (X) comes before both reduces, so the two alternate.
      service (a CTA at the memory pipe): X and Y 2 x 32,768 = 65,536 B of DRAM at the SM's
        share 4,238.4 / 132 = 32.1091 B/ns: 2,041.04 ns (loads and stores each 1,020.52, over
        their 393.22 ns at the SM's L2 share 83.333)
      think, the rest of its chain: latency 700
        + vector: cast 16,384 bf16 / 506.88 = 32.323, max, sub, sum, mul, cast f32 5 x 16,384
          / 253.44 = 323.232: 355.556 ns
        + special: exp 16,384 / 31.68 = 517.172 + recip 1 / 31.68 = 0.032: 517.204 ns
        + reductions, each t = min(512, 16,384 / 4) = 512 threads: 5 shuffle steps x (15 +
          2.0202) = 85.101 + 16 warps 4 x 15 + 4 x 17.0202 = 128.081: 213.182; two 426.364 ns
        + element chain, n = 16,384 / 512 = 32 elements a thread: phase 0 (cast, max) 32 x 8 =
          256 cycles = 129.293 ns over its issue 32.323 + 64.646 = 96.970: 32.323; phase 1 (sub,
          exp, sum) 32 x 33 = 1,056 cycles = 533.333 ns under its issue 64.646 + 517.172 +
          64.646 = 646.465: 0; 32.323 ns
        = 700 + 355.556 + 517.204 + 426.364 + 32.323 = 2,031.45 ns
      alternation: max(2 x 2,041.04 = 4,082.08, 2,041.04 + 2,031.45 = 4,072.49) = 4,082.08 ns,
      the throughput 4,082.08 as well: the batch is 4.08 us. The queue of two customers it
      replaces: Q(1) = 2,041.04 / 4,072.49 = 0.50118, R(2) = 2,041.04 x 1.50118 = 3,063.97,
      cycle 3,063.97 + 2,031.45 = 5,095.42 ns (5.10 us, 25% over the DRAM time)."""
    detail = {t.name: t for t in _softmax_two_a_sm().terms}["overlap"].detail
    assert "2 CTAs resident per SM" in detail
    assert ("2 CTAs alternating at the memory pipe (each CTA's DRAM reads go out in one round at its start: "
            "one's transfer runs under the other's compute), max(2 x 2.04 us, 2.04 us + 2.03 us) = 4.08 us) "
            "= 4.08 us") in detail
    waves = {t.name: t for t in _softmax_two_a_sm().terms}["waves"].detail
    assert "61 full waves overlapping x 4.08 us" in waves


def test_spilled_softmax_keeps_the_queue():
    """The same softmax with 8 words a thread spilled: its chain reloads spilled values after
    the reductions (row_spill), reads that do not come first, so the two CTAs queue:
    the line names the queue, not the alternation."""
    detail = {t.name: t for t in _softmax_two_a_sm(spills=8).terms}["overlap"].detail
    assert "queue of 2 CTAs" in detail
    assert "alternating" not in detail


def test_rmsnorm_weight_row_after_the_sum_keeps_the_queue():
    """kernels/rmsnorm.tile loads W after the row sum (as the measured Triton kernel does), a
    read in the chain after its reduction: at M = N = 16384, one row, 16 warps, 62 registers
    (two CTAs a SM) the CTAs do not alternate (row_codegen: with W after the sum 132.1 us at 6144 x
    16384, W first 102.2, no W 100.8); the binary, a two-round one, is priced by its compiled pair
    cycle (row_body.PAIR_CYCLES, docs/analysis.md 8 (ai)), 1.2757 x 2 x 2,041.04 = 5,207.51 ns."""
    from pathlib import Path
    from tfx.lang import parse_file
    src = Path(__file__).resolve().parent.parent / "kernels" / "rmsnorm.tile"
    a = analyze(parse_file(src), None, load_profile("h200_sxm"),
                {"M": 16384, "N": 16384, "BLOCK_M": 1, "WARPS": 16},
                resources={"threads": 512, "regs": 62, "spills": 0, "smem": 64})
    detail = {t.name: t for t in a.terms}["overlap"].detail
    assert "2 CTAs of the compiled two-round binary" in detail and "= 5.21 us" in detail
    assert "alternating" not in detail


def test_reads_first():
    """A body whose global reads all lie in phase 0 (before its first reduce) reads first;
    one with a read in phase 1 (after it) does not; a store (no global reads) anywhere is fine."""
    from tfx.analysis.performance import Demand
    load, store = Demand(), Demand()
    load.global_loads = 1
    assert row_body.reads_first([(load, 1), (store, 1)], [0, 1])
    assert not row_body.reads_first([(load, 1), (load, 1)], [0, 1])


def test_shuffle_issue_of_eight_rows_a_thread():
    """softmax's row max over a [8, 4096] tile (32,768 elements) loaded as bf16 (2 bytes), 16
    warps (512 threads). Triton's layout: 16 / 2 = 8 elements side by side, and 32,768 / 512 =
    64 >= 8, so v = 8; t = min(512, 4096 / 8) = 512 threads along each row; each thread holds
    8 x 512 / 512 = 8 of the 8 rows; log2(min(512, 32)) = 5 butterfly steps each: 16 warps x 8
    x 5 = 640 shfl.sync, each 32 / 32 = 1 cycle of the SM's unit: 640 / 1.98 GHz = 323.232 ns
    (the compiled kernel: 2 reductions x 8 x 5 = 80 of its 88 SHFL a thread)."""
    assert row_body.shuffle_issue_ns(32768, 4096, 2, 512, _machine()) == pytest.approx(323.232, abs=1e-3)


def test_shuffle_issue_of_two_rows_and_of_a_small_tile():
    """[2, 16384] bf16 on 16 warps: v = 8, t = min(512, 2048) = 512, each thread holds 2 x 512 /
    512 = 2 rows: 16 x 2 x 5 = 160 cycles = 80.808 ns (2 x 2 x 5 = 20 of the compiled 28 SHFL).
    [1, 1024] on 16 warps: 1,024 / 512 = 2 elements a thread (v = min(8, 2) = 2, Triton's
    sizePerThread [1, 2]), t = min(512, 512) = 512, one row: 16 x 1 x 5 = 80 cycles = 40.404 ns.
    [16, 2048] on 16 warps: v = 8, t = min(512, 256) = 256 (warpsPerCTA [2, 8]), each thread
    holds 16 x 256 / 512 = 8 rows: 16 x 8 x 5 = 640 cycles = 323.232 ns."""
    m = _machine()
    assert row_body.shuffle_issue_ns(32768, 16384, 2, 512, m) == pytest.approx(80.808, abs=1e-3)
    assert row_body.shuffle_issue_ns(1024, 1024, 2, 512, m) == pytest.approx(40.404, abs=1e-3)
    assert row_body.shuffle_issue_ns(32768, 2048, 2, 512, m) == pytest.approx(323.232, abs=1e-3)


def test_no_shuffle_issue_without_the_fact():
    """A profile without pipeline.shuffle_results_per_cycle prices no shuffle issue (the sip
    accelerator)."""
    from tfx.analysis.machine import Machine
    assert row_body.shuffle_issue_ns(32768, 4096, 2, 512, Machine(load_profile("sip"), "pe")) == 0


def test_softmax_eight_rows_a_cta_wait_their_shuffles():
    """kernels/softmax.tile, M = 8192, N = 4096, BLOCK_M = 8, WARPS = 16 at 104 registers (512 x
    104 = 53,248: one CTA an SM; run10 measures 58.9 us). Each reduce's chain: 5 x (15 +
    2.0202) = 85.10 + 4 x 15 + log2(16) x 17.0202 = 68.08: 213.18 ns; its shuffles (the test
    above) 323.23 ns: the reduce takes the longer, 2 x 323.232 = 646.46 ns (was 2 x 213.18 =
    426.36)."""
    from pathlib import Path
    from tfx.lang import parse_file
    src = Path(__file__).resolve().parent.parent / "kernels" / "softmax.tile"
    a = analyze(parse_file(src), None, load_profile("h200_sxm"),
                {"M": 8192, "N": 4096, "BLOCK_M": 8, "WARPS": 16},
                resources={"threads": 512, "regs": 104, "spills": 0, "smem": 512})
    overlap = {t.name: t for t in a.terms}["overlap"].detail
    assert "1 CTA resident per SM" in overlap
    assert "reduce 646.46 ns" in overlap


def test_compiled_rounds_of_the_row_binaries():
    """row_body.LOAD_ROUNDS (calibration/h200/measured/row_sass_counts/load_rounds.csv): rmsnorm
    (8, 16) at N = 4096 issues 7 of its 8 X vectors, then the 8th after the first butterfly into
    the 4th's registers: 2 rounds; (4, 16) there loads its 4 in one; softmax (8, 1) at 1024
    loads 4, 24 and 4 vectors in three rounds; a kernel the table does not name, or N = 5120
    (not a power of two the campaigns draw), 0: not known. In a sweep each position takes its
    own: BLOCK_M 8, 4 and 3 at 16 warps: 2, 1 and 0."""
    import numpy as np
    assert row_body.compiled_rounds("rmsnorm", {"N": 4096, "BLOCK_M": 8, "WARPS": 16}, "sm_90") == 2
    assert row_body.compiled_rounds("rmsnorm", {"N": 4096, "BLOCK_M": 4, "WARPS": 16}, "sm_90") == 1
    assert row_body.compiled_rounds("softmax", {"N": 1024, "BLOCK_M": 8, "WARPS": 1}, "sm_90") == 3
    assert row_body.compiled_rounds("rowscale", {"N": 4096, "BLOCK_M": 8, "WARPS": 16}, "sm_90") == 0
    assert row_body.compiled_rounds("rmsnorm", {"N": 5120, "BLOCK_M": 8, "WARPS": 16}, "sm_90") == 0
    assert row_body.compiled_rounds("rmsnorm", {"N": 4096}, "sm_90") == 0
    got = row_body.compiled_rounds("rmsnorm", {"N": np.array([4096, 4096, 4096]), "BLOCK_M": np.array([8, 4, 3]),
                                               "WARPS": np.array([16, 16, 16])}, "sm_90")
    assert list(got) == [2, 1, 0]


def test_one_round_reads_where_the_binary_is_known():
    """Known one-round binary: alternates whatever the IR's read order (rmsnorm's weight row, read
    after the sum, hits L2); known two-round: does not, though every read comes first (softmax);
    unknown (0): the IR's reads_first decides."""
    import numpy as np
    assert row_body.one_round_reads(1, False) is True
    assert row_body.one_round_reads(2, True) is False
    assert row_body.one_round_reads(0, True) is True and row_body.one_round_reads(0, False) is False
    assert list(row_body.one_round_reads(np.array([1, 2, 0]), False)) == [True, False, False]


def test_later_rounds_wait_one_latency_each_for_a_lone_cta():
    """(rounds - 1) x latency at one CTA a SM: 2 rounds at 700 ns 700 ns, 3 rounds 1,400 ns, an
    unknown binary (0 rounds) 0; at two CTAs a SM the other's transfer runs under the wait: 0."""
    assert row_body.later_rounds_ns(2, 700.0, 1) == 700.0
    assert row_body.later_rounds_ns(0, 700.0, 1) == 0
    assert row_body.later_rounds_ns(3, 700.0, 1) == 1400.0
    assert row_body.later_rounds_ns(2, 700.0, 2) == 0


def _rmsnorm_2048(regs):
    from pathlib import Path
    from tfx.lang import parse_file
    src = Path(__file__).resolve().parent.parent / "kernels" / "rmsnorm.tile"
    return analyze(parse_file(src), None, load_profile("h200_sxm"),
                   {"M": 65536, "N": 2048, "BLOCK_M": 8, "WARPS": 8},
                   resources={"threads": 256, "regs": regs, "spills": 0, "smem": 256})


def test_a_two_round_rmsnorm_waits_its_second_round_alone_only():
    """kernels/rmsnorm.tile (8, 8) at N = 2048 (issue-15 run12's 65536 x 2048), a two-round binary
    (row_body.LOAD_ROUNDS). At its compiled 105 registers 256 x 105 = 26,880 of 65,536: two CTAs a
    SM, each's wait under the other's transfer: no later round in the chain. At 255 registers
    (256 x 255 = 65,280: one CTA a SM) the chain holds one more DRAM latency, 700.00 ns, and the
    batch is that chain."""
    two = {t.name: t for t in _rmsnorm_2048(105).terms}["overlap"].detail
    assert "2 CTAs resident per SM" in two and "later load rounds" not in two
    one = {t.name: t for t in _rmsnorm_2048(255).terms}["overlap"].detail
    assert "1 CTA resident per SM" in one and "later load rounds 700.00 ns" in one


def test_a_one_round_rmsnorm_pair_alternates():
    """kernels/rmsnorm.tile (4, 16) at 45056 x 4096 (issue-15 run26; measured 179.3 us), 60
    registers: 512 x 60 = 30,720, two CTAs a SM. Its binary loads its 4 X vectors a thread in one
    round (row_body.LOAD_ROUNDS does not list it) and its weight row, read after the sum, hits L2:
    the pair alternates although a read follows the reduction. service: X and Y, 2 x 4 x 4,096 x
    2 = 65,536 B at 32.109 B/ns = 2,041.04 ns; think: latency 700 + vector 363.67 (16,384
    elements: cast 32.32 + sq and sum 129.29 + mul, mul, cast 193.94 + cast w 8.08 + the scalar
    ops 0.04) + special 0.13 + reduce 213.18 (test above, 16 warps) + element chain 32.32 (32
    elements a thread x 12 cycles = 193.94 ns over phase 0's 161.62) = 1,309.30 ns; max(2 x
    2,041.04 = 4,082.08, 2,041.04 + 1,309.30 = 3,350.34) = 4,082.08 ns a batch (the queue of two
    gave more: the model priced this row 202.2 us, now 181.2)."""
    from pathlib import Path
    from tfx.lang import parse_file
    src = Path(__file__).resolve().parent.parent / "kernels" / "rmsnorm.tile"
    a = analyze(parse_file(src), None, load_profile("h200_sxm"), {"M": 45056, "N": 4096, "BLOCK_M": 4, "WARPS": 16},
                resources={"threads": 512, "regs": 60, "spills": 0, "smem": 256})
    overlap = {t.name: t for t in a.terms}["overlap"].detail
    assert "2 CTAs resident per SM" in overlap
    assert ("2 CTAs alternating at the memory pipe (each CTA's DRAM reads go out in one round at its start: "
            "one's transfer runs under the other's compute), max(2 x 2.04 us, 2.04 us + 1.31 us) = 4.08 us") in overlap


def test_compiled_pair_cycle_of_the_two_round_binaries():
    """row_body.PAIR_CYCLES (calibration/h200/measured/row_pair_sim/pair_cycles.csv): rmsnorm (1, 16)
    at N = 16384 cycles two CTAs in 5,207.5 ns at the H200's share, over 2 D = 2 x 65,536 B / 32.109
    B/ns = 4,082.08 ns: 5,207.5 / 4,082.08 = 1.2757; (1, 4) 4,656.1 / 4,082.08 = 1.1406. A one-round
    binary ((4, 16) at 4096), another kernel or device, or an N the table does not hold: 0 (arrays
    elementwise)."""
    import numpy as np
    h200 = 4238.4 / 132          # 32.109 B/ns a SM
    assert row_body.compiled_pair_cycle("rmsnorm", {"N": 16384, "BLOCK_M": 1, "WARPS": 16}, "sm_90", h200) == 1.2757
    assert row_body.compiled_pair_cycle("rmsnorm", {"N": 16384, "BLOCK_M": 1, "WARPS": 4}, "sm_90", h200) == 1.1406
    assert row_body.compiled_pair_cycle("rmsnorm", {"N": 4096, "BLOCK_M": 4, "WARPS": 16}, "sm_90", h200) == 0
    assert row_body.compiled_pair_cycle("rowscale", {"N": 16384, "BLOCK_M": 1, "WARPS": 16}, "sm_90", h200) == 0
    assert row_body.compiled_pair_cycle("rmsnorm", {"N": 16384, "BLOCK_M": 1, "WARPS": 16}, "sm_100", h200) == 0
    assert row_body.compiled_pair_cycle("rmsnorm", {"N": 16384}, "sm_90", h200) == 0
    got = row_body.compiled_pair_cycle("rmsnorm", {"N": np.array([16384, 16384, 4096]), "BLOCK_M": np.array([1, 1, 4]),
                                                   "WARPS": np.array([8, 16, 16])}, "sm_90", h200)
    assert list(got) == [1.2012, 1.2757, 0]


def test_the_pair_cycle_at_a_smaller_dram_share():
    """calibration/h200/measured/row_pair_sim/pair_cycles_h100.csv: the same simulation at the H100
    SXM5's share, 3,350 GB/s x 0.883 / 132 = 22.409 B/ns: rmsnorm (8, 16) at N = 2048 cycles in
    6,531.0 ns over 2 D = 2 x (2 x 8 x 2048 x 2 B) / 22.409 B/ns = 5,849.4 ns: 1.1166 (at the H200's
    share 1.2032: the second round's exposed latency is a smaller part of a longer D). Between the
    two shares linear: at 27.259 B/ns, halfway, 1.1166 + 0.5 x (1.2032 - 1.1166) = 1.1599; past
    either end held at it (a B200-like 60 B/ns: 1.2032)."""
    env = {"N": 2048, "BLOCK_M": 8, "WARPS": 16}
    assert row_body.compiled_pair_cycle("rmsnorm", env, "sm_90", 3350 * 0.883 / 132) == pytest.approx(1.1166, abs=1e-5)
    assert row_body.compiled_pair_cycle("rmsnorm", env, "sm_90", 27.259) == pytest.approx(1.1599, abs=1e-9)
    assert row_body.compiled_pair_cycle("rmsnorm", env, "sm_90", 60.0) == 1.2032
    assert row_body.compiled_pair_cycle("rmsnorm", env, "sm_90", 10.0) == 1.1166


def test_an_h100_prices_the_two_round_pair_at_its_own_share():
    """rmsnorm 1605632 x 2048 at BLOCK_M 8 on 16 warps, 63 registers (2 CTAs a SM), on h100_sxm: the
    SM's share is 3,350 GB/s x 0.8932 (the H100's measured copy) / 132 = 22.6683 B/ns, between the
    pair cycle's two simulated shares 22.4095 (1.1166) and 32.1091 (1.2032): 1.1166 + (22.6683 -
    22.4095) / (32.1091 - 22.4095) x 0.0866 = 1.1166 + 0.02668 x 0.0866 = 1.11891; the overlap term's
    pair is 1.11891 x 2 x D, D = one CTA's X and Y bytes, 2 x 8 x 2048 x 2 B = 65,536 B / 22.6683 B/ns
    = 2,891.1 ns = 2.89 us (calibration/h100/measured/issue15/run61 measured this configuration at
    4.32 ms, the shape's fastest)."""
    from pathlib import Path
    from tfx.lang import parse_file
    src = Path(__file__).resolve().parent.parent / "kernels" / "rmsnorm.tile"
    a = analyze(parse_file(src), None, load_profile("h100_sxm"), {"M": 1605632, "N": 2048, "BLOCK_M": 8, "WARPS": 16},
                resources={"threads": 512, "regs": 63, "spills": 0, "smem": 0})
    overlap = {t.name: t for t in a.terms}["overlap"].detail
    assert "1.11892 x 2 x 2.89 us" in overlap


def _rmsnorm_16384(warps, regs):
    from pathlib import Path
    from tfx.lang import parse_file
    src = Path(__file__).resolve().parent.parent / "kernels" / "rmsnorm.tile"
    a = analyze(parse_file(src), None, load_profile("h200_sxm"),
                {"M": 15360, "N": 16384, "BLOCK_M": 1, "WARPS": warps},
                resources={"threads": 32 * warps, "regs": regs, "spills": 0, "smem": 256})
    return {t.name: t for t in a.terms}["overlap"].detail


def test_a_two_round_rmsnorm_pair_cycles_in_its_compiled_order():
    """kernels/rmsnorm.tile at issue-15 run45's 15360 x 16384, BLOCK_M 1: two-round binaries
    (row_body.LOAD_ROUNDS). (1, 16) at its compiled 62 registers: 512 x 64 (the allocation's 8 x 256
    per warp) = 32,768 of 65,536, two CTAs a SM; service = X and Y, 2 x 16,384 x 2 = 65,536 B at
    32.109 B/ns = 2,041.04 ns; the pair's cycle PAIR_CYCLES 1.2757 x 2 x 2,041.04 = 5,207.51 ns
    ("5.21 us"; the queue of two gave 4.61 us; the rows imply 1.330 x 4,082.08 = 5.43 us). (1, 4) at
    251 registers: 128 x 256 = 32,768, two a SM: 1.1406 x 4,082.08 = 4,656.02 ns ("4.66 us"; queue
    4.98, rows 1.096 x 4,082.08 = 4.47). The order of the two is the measured one."""
    w16 = _rmsnorm_16384(16, 62)
    assert "2 CTAs resident per SM" in w16
    assert "1.2757 x 2 x 2.04 us = 5.21 us" in w16
    w4 = _rmsnorm_16384(4, 251)
    assert "2 CTAs resident per SM" in w4
    assert "1.1406 x 2 x 2.04 us = 4.66 us" in w4


def test_the_pair_cycle_is_for_two_ctas_only():
    """The same (1, 16) binary's table value holds for two CTAs a SM: at 40 registers (512 x 40 =
    20,480: three a SM) the queue of three prices it, at 128 (512 x 128 = 65,536: one a SM) its
    chain."""
    three = _rmsnorm_16384(16, 40)
    assert "3 CTAs resident per SM" in three and "queue of 3 CTAs" in three and "PAIR_CYCLES" not in three
    one = _rmsnorm_16384(16, 128)
    assert "1 CTA resident per SM" in one and "PAIR_CYCLES" not in one
