"""Where a spilling k-loop's local memory lives: the L1 the shared-memory carve-out leaves
(tfx.analysis.performance.local_memory, local.max_carveout_above; docs/analysis.md, "The
carve-out, session 14").

Facts (hw_profiles/h100_sxm.toml, inherited by h200_sxm): local.l1_capacity 256 KiB = 262,144 B;
occupancy.smem_per_sm 233,472 B (228 KB); local.max_carveout_above 49,152 B (Triton 3.6.0's
loader sets CU_FUNC_CACHE_PREFER_SHARED above it); local.l1_bandwidth_per_cycle 32 B/cycle x
1.98 GHz = 63.36 B/ns per SM; local.l2_bandwidth 7360 GB/s / 132 SMs = 55.7576 B/ns per SM.
Every expected number is derived in its docstring."""

from __future__ import annotations

from pathlib import Path

from tfx.analysis.analyze import analyze
from tfx.hw import load_profile
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent
H200 = load_profile("h200_sxm")
GEMM = parse_file(ROOT / "kernels" / "gemm.tile")


def _terms(bk, stages, spills, smem):
    """issue15's bf16 64x256 tile on 2 warps at M = 64, N = K = 4096 (run6's shape): 1 x 16 = 16
    CTAs on 132 SMs, one an SM; 255 registers, the compiled spills and shared memory."""
    p = dict(M=64, N=4096, K=4096, BM=64, BN=256, BK=bk, WARPS=2, STAGES=stages, GROUP_M=1)
    a = analyze(GEMM, None, H200, p, resources=dict(regs=255, spills=spills, smem=smem), check=False)
    return {t.name: t.detail for t in a.terms}


def test_under_48_kb_the_frame_is_served_from_the_l1_shared_memory_leaves():
    """BK = 32, 3 stages: 40,960 B of shared memory (<= 49,152: the driver sizes the carve-out,
    the shared memory the resident CTA uses). The frame: 108 words x 4 B x 64 threads = 27,648 B
    = 27.65 KB on the SM (one CTA); L1 left: 262,144 - 40,960 = 221,184 B = 221.18 KB: it fits,
    served at the L1 rate 63.36 GB/s. The trip's count (spill_traffic.kloop_trip): accumulator
    64 x 128 / 32 = 256 words, one k-step's operands (64 + 128) x 16 x 2 / 32 / 4 = 48, 256 + 48
    - 255 = 49 accumulator words touched at each of 32 / 16 = 2 k-steps, 108 - 49 = 59 once:
    2 x 4 x 64 x (49 x 2 + 59) = 512 x 157 = 80,384 B = 80.38 KB a trip, from L1 at 63.36 GB/s
    (it was L2's 55.76 before the carve-out rule: a k-loop's spill was always priced from L2).
    The breakdown's round is the full batch's, 4 CTAs (255 registers: ceil(255 x 32 / 256) x
    256 = 8,192 a warp, 2 warps of a sub-partition's 16,384, 8 warps an SM = 4 CTAs of 2; 4 x
    (40,960 + 1,024) = 167,936 B fits 233,472): 4 x 80,384 / 63.36 = 321,536 / 63.36 = 5,074.7
    ns = 5.07 us."""
    t = _terms(32, 3, 108, 40_960)
    assert "working set 27.65 KB per SM (1 CTA x 64 threads) vs the 221.18 KB of L1 that shared memory leaves" in t["spill"]
    assert "served from L1 at 63.36 GB/s per SM" in t["spill"]
    assert "= 80.38 KB a trip from L1 at 63.36 GB/s per SM" in t["spill trip"]
    assert "4 CTAs' local traffic 5.07 us" in t["spill trip"]


def test_over_48_kb_the_largest_carve_out_leaves_28_kb_of_l1():
    """BK = 64, 3 stages: 81,920 B of shared memory (> 49,152): the largest carve-out, whatever
    the one CTA an SM uses: L1 left 262,144 - 233,472 = 28,672 B = 28.67 KB (it was 262,144 -
    81,920 = 180,224 B before, where this frame fitted). The frame: 448 words x 4 B x 64 threads
    = 114,688 B = 114.69 KB > 28,672: from L2 at 7360 / 132 = 55.76 GB/s. The trip: 49
    accumulator words at each of 64 / 16 = 4 k-steps, 448 - 49 = 399 once: 2 x 4 x 64 x (49 x 4
    + 399) = 512 x 595 = 304,640 B = 304.6 KB; the full batch is 2 CTAs (82,944 B with the 1 KB
    reserved: 233,472 / 82,944 = 2.8 -> 2): 2 x 304,640 / 55.7576 = 10,927.4 ns = 10.93 us."""
    t = _terms(64, 3, 448, 81_920)
    assert ("working set 114.69 KB per SM (1 CTA x 64 threads) vs the 28.67 KB of L1 the largest "
            "shared-memory carve-out leaves (over 49.15 KB of shared memory a CTA, its loader asks for it)") in t["spill"]
    assert "served from L2 at 55.76 GB/s per SM" in t["spill"]
    assert "= 304.6 KB a trip from L2 at 55.76 GB/s per SM" in t["spill trip"]
    assert "2 CTAs' local traffic 10.93 us" in t["spill trip"]


def test_the_rule_follows_the_stated_threshold():
    """With the threshold raised past the kernel's shared memory (local.max_carveout_above x2 =
    98,304 B > 81,920) the L1 left is the shared memory the resident CTA uses, as before the
    rule: 262,144 - 81,920 = 180,224 B = 180.22 KB, and the 114,688-B frame fits it (from L1 at
    63.36 GB/s): the rule reads the stated fact, not a number of its own."""
    prof = H200.with_knobs({"local.max_carveout_above": "x2"})
    p = dict(M=64, N=4096, K=4096, BM=64, BN=256, BK=64, WARPS=2, STAGES=3, GROUP_M=1)
    a = analyze(GEMM, None, prof, p, resources=dict(regs=255, spills=448, smem=81_920), check=False)
    spill = {t.name: t.detail for t in a.terms}["spill"]
    assert "vs the 180.22 KB of L1 that shared memory leaves: served from L1 at 63.36 GB/s per SM" in spill
