"""The register estimate (tfx.analysis.register_estimate; docs/analysis.md section 6): each
configuration's registers derived by hand from the terms, and the surfaces that read it."""

import math

import numpy as np
import pytest

from tfx.analysis.analyze import analyze
from tfx.analysis.register_estimate import describe
from tfx.bundled import bundled_dir
from tfx.hw import load_profile
from tfx.lang import parse_file


@pytest.fixture(scope="module")
def h200():
    return load_profile("h200_sxm")


def _analyze(kernel, profile, **params):
    return analyze(parse_file(bundled_dir("kernels") / f"{kernel}.tile"), None, profile, params)


def test_gemm_default_on_the_warpgroup_mma(h200):
    """gemm.tile's defaults, 128x128x64 on 4 warps, 3 stages, bf16: 4 warps and 128 rows (a
    multiple of 64) take the warpgroup mma, which reads A and B from shared memory (no
    fragments). The f32 accumulator 128 x 128 x 4 B / 128 threads = 512 B = 128 registers. A
    trip copies A 128 x 64 x 2 B = 16,384 B and B 64 x 128 x 2 B = 16,384 B: 16,384 / (16 B x
    128 threads) = 8 copies each, 16 copies x 2 registers = 32. A pipelined (3 stages) one-tile
    k-loop whose mma reads both operands from shared memory: the measured k-loop base 24. 128 +
    32 + 0 + 24 = 184 (the campaigns' compiled count of this tile is 218-230; the IR's tiles + 32
    gave 160)."""
    a = _analyze("gemm", h200)
    e = a.registers
    assert (e.tiles, e.addresses, e.fragments, e.base, e.from_mma) == (128, 32, 0, 24, True)
    assert e.total == 184
    assert a.resources.regs_per_thread == 184
    # a warp takes ceil(184 x 32 / 256) x 256 = 5,888 of its sub-partition's 16,384: 2 warps a
    # sub-partition, 8 an SM = 2 CTAs of 4 warps (98,304 B of shared memory also allows 2)
    assert a.occupancy.blocks_per_sm == 2


def test_gemm_small_m_on_the_warp_mma(h200):
    """16x128x64 on 4 warps: 16 rows are not a multiple of 64, so mma.sync (m16n8k16). Triton's
    warpsPerTileV2 puts the 4 warps on N (1 repetition of 16 rows against 16 of 8 columns): each
    warp 16 x 32. Accumulator 16 x 128 x 4 B / 128 = 64 B = 16 registers. Copies: A 16 x 64 x 2
    = 2,048 B / 2,048 = 1, B 64 x 128 x 2 = 16,384 B / 2,048 = 8: 9 x 2 = 18. Fragments of one
    16-deep slice: A 16 rows x 16 x 2 B + B 16 x 32 columns x 2 B = 512 + 1,024 = 1,536 B a warp,
    twice (the slice in use and the prefetched one) / (32 lanes x 4 B) = 24. 3 stages: the
    k-loop base 24. 16 + 18 + 24 + 24 = 82 (compiled: 80)."""
    e = _analyze("gemm", h200, BM=16, BN=128, BK=64, WARPS=4).registers
    assert (e.tiles, e.addresses, e.fragments, e.base, e.from_mma) == (16, 18, 24, 24, True)
    assert e.total == 82
    # the text names the 9 copies whose addresses are the 18; the JSON gives them too
    assert "18 for 9 copies' 64-bit addresses a trip" in describe(e)
    assert (e.to_json()["copies"], e.to_json()["copy_addresses"]) == (9, 18)


def test_attention_counts_the_mma_tiles_not_the_softmax_intermediates(h200):
    """flash_prefill D = 64, 64x64 on 4 warps, 2 stages: both dots take the warpgroup mma, every
    warp on M. Per thread (128 threads): the scores S 64 x 64 x 4 B / 128 = 128 B = 32
    registers, the accumulator O 64 x 64 x 4 B / 128 = 32, P fed from registers to PV 64 x 64 x
    2 B / 128 = 64 B = 16: 80. PV reads P from registers, so not the GEMM k-loop's measured
    base: 32. The loop reduces (its online softmax) at 2 stages: each copy's address is made where
    it issues, none carried: 80 + 0 + 32 = 112 (compiled 111-112 at 2-4 stages; the IR's live
    tiles, which hold s_scaled, s_shifted and the causal mask's iota tiles each whole, gave 193).
    At 1 stage the K and V copies, 64 x 64 x 2 B = 8,192 B / 2,048 = 4 each, count 8 x 2 = 16 for
    the values they load into registers: 128 (compiled 122)."""
    e = _analyze("flash_prefill", h200, D=64, BLOCK_M=64, BLOCK_N=64, WARPS=4, STAGES=2).registers
    assert (e.tiles, e.addresses, e.fragments, e.base, e.from_mma) == (80, 0, 0, 32, True)
    assert e.total == 112
    e = _analyze("flash_prefill", h200, D=64, BLOCK_M=64, BLOCK_N=64, WARPS=4, STAGES=1).registers
    assert (e.addresses, e.total) == (16, 128)


def test_decode_pads_the_group_to_the_warp_mma(h200):
    """gqa_decode's defaults: GROUP = 64 / 8 = 8 query rows, D = 128, BLOCK_N = 64, 4 warps.
    8 rows take mma.sync, padded to its 16; both chained dots put the 4 warps on N. S 16 x 64 x
    4 B / 128 = 32 B = 8 registers, O 16 x 128 x 4 B / 128 = 16, P 16 x 64 x 2 B / 128 = 4: 28.
    Fragments: QK^T reads q (16 rows) and K^T (64 / 4 = 16 columns a warp) from shared memory:
    (16 + 16) x 16 x 2 B = 1,024 B; PV reads V (128 / 4 = 32 columns): 32 x 16 x 2 = 1,024 B;
    the larger, twice, / 128 = 16. q and P are register operands: base 32. At the default 3
    stages the loop (it reduces) makes each copy's address where it issues: 28 + 0 + 16 + 32 = 76
    (compiled 72 at 2-3 stages). At 1 stage K and V, 64 x 128 x 2 B = 16,384 B / 2,048 = 8
    copies each, count 16 x 2 = 32: 108 (compiled 104). The masked tail loop (1 trip, 1 stage)
    is the same compiled loop: the main loop's stages decide, per configuration of a sweep."""
    e = _analyze("gqa_decode", h200).registers
    assert (e.tiles, e.addresses, e.fragments, e.base) == (28, 0, 16, 32)
    assert e.total == 76
    assert _analyze("gqa_decode", h200, STAGES=1).registers.total == 108
    # a sweep of STAGES alone (the other parameters ints) prices each configuration as the scalar
    # analysis does (it raised a TypeError: numpy's sqrt of an object array of Fractions)
    a = analyze(parse_file(bundled_dir("kernels") / "gqa_decode.tile"), None, h200, {"STAGES": np.array([1, 2, 3])},
                check=False)
    assert list(np.asarray(a.registers.total)) == [108, 76, 76]
    assert list(np.asarray(a.metrics["performance.predicted_ns"], dtype=float)) == [
        float(_analyze("gqa_decode", h200, STAGES=s).metrics["performance.predicted_ns"]) for s in (1, 2, 3)]
    # explore's sweep decides per configuration (its register column)
    from tfx.explore import explore
    r = explore(parse_file(bundled_dir("kernels") / "gqa_decode.tile"), None, h200,
                sweeps={"STAGES": [1, 2, 3]}, keep_columns=True, top=3)
    assert {c["params"]["STAGES"]: c["regs_per_thread"] for c in r.top} == {1: 108, 2: 76, 3: 76}


def test_a_row_body_holds_its_row_and_its_weight(h200):
    """rmsnorm has no mma and no loop: a row body, whose elementwise chains Triton computes
    element by element. Held whole (memory.row_held_bytes) at its defaults (M = N = 8,192,
    BLOCK_M = 4, 8 warps = 256 threads): the f32 row x_f32, 4 x 8,192 x 4 B = 131,072 B (used
    again after its reduction: y = x * inv * w), the weight row W loaded whole, 8,192 x 2 B =
    16,384 B, and the reduction's result, 4 x 4 B = 16 B: 147,472 B / 256 = 576.0625 B =
    144.015625 registers; x_sq (read only by the reduction) and the chains after it are not
    tiles. + the row base 16 (calibration/h200/measured/row_registers): ceil(144.02) + 16 = 161
    (the campaigns compile 4 x 8,192 on 8 warps to 182; section 5's live tiles + 32, which hold
    x_f32 and x_sq whole, gave 289 and a spill). No copy addresses (no loop), no fragments."""
    from fractions import Fraction
    a = _analyze("rmsnorm", h200)
    e = a.registers
    assert (e.addresses, e.fragments, e.from_mma, e.from_rows, e.base) == (0, 0, False, True, 16)
    assert e.tiles == Fraction(147_472, 4 * 256)
    assert e.total == 161
    assert a.resources.regs_per_thread == 161
    assert a.metrics["occupancy.spilled_registers"] == 0
    # softmax's defaults (M = N = 4,096, BLOCK_M = 2, 4 warps = 128 threads): the exponentials
    # e, 2 x 4,096 x 4 B = 32,768 B (x_f32 gives its storage to them element by element), and
    # the two reductions' results, 8 B: 32,776 / 128 = 256.0625 B = 64.015625 registers; 65 + 16
    # = 81 (compiled: 84)
    e = _analyze("softmax", h200).registers
    assert (e.tiles, e.total) == (Fraction(32_776, 4 * 128), 81)


def test_the_cap_one_cta_leaves_a_thread(h200):
    """ptxas keeps a thread under the registers one CTA of its size leaves it (Triton declares
    .maxntid): occupancy.thread_register_cap. A warp's registers are allocated in units of 256,
    and the per-CTA check holds whole groups of 4 warps: 512 threads = 16 warps, 65,536 / 16 =
    4,096 a warp = 128 a thread; 1,024 threads: 65,536 / 32 = 2,048 = 64; 384 = 12 warps:
    65,536 / 12 = 5,461 -> 5,376 (21 units of 256) = 168; 256 threads: 8,192 a warp = 256, above
    the ISA's 255: 255. rmsnorm at N = 4,096, BLOCK_M = 16 on 16 warps holds 16 x 4,096 x 4 B +
    4,096 x 2 B + 16 x 4 B = 270,400 B / 512 = 132.03 registers + 16 = 149 > 128: the compiled
    code gets 128 and spills (the campaigns: 128 registers, 52-80 spilled words), where the 255
    of the ISA alone left it 149 and spill-free (and the old 255 an infeasible CTA)."""
    import numpy as np
    from tfx.analysis.occupancy import OccupancyLimits, thread_register_cap
    limits = OccupancyLimits.from_profile(h200)
    assert [thread_register_cap(limits, t) for t in (512, 1024, 384, 256, 32)] == [128, 64, 168, 255, 255]
    assert list(thread_register_cap(limits, np.array([128, 512, 1024]))) == [255, 128, 64]
    a = _analyze("rmsnorm", h200, N=4096, BLOCK_M=16, WARPS=16)
    assert (a.registers.total, a.resources.regs_per_thread) == (149, 128)
    assert a.occupancy.blocks_per_sm == 1 and a.metrics["occupancy.spilled_registers"] > 0


def test_the_report_says_where_the_registers_came_from(h200):
    """analyze's text names each term of the gemm default's 184 (derived above)."""
    from tfx.present.analysis_report import summary
    text = summary(_analyze("gemm", h200))
    assert ("registers a thread, estimated: 128 for the mmas' accumulators and register operands + 32 for "
            "16 copies' 64-bit addresses a trip + 24 base = 184") in text


def test_compiled_registers_replace_the_estimate(h200):
    """With a compiled count the occupancy takes it; the estimate is still computed and not shown."""
    from tfx.present.analysis_report import summary
    a = analyze(parse_file(bundled_dir("kernels") / "gemm.tile"), None, h200, {}, resources={"regs": 230})
    assert a.resources.regs_per_thread == 230
    assert a.registers.total == 184
    assert "registers a thread, estimated" not in summary(a)


def test_a_sweep_prices_the_same_estimate(h200):
    """explore's vectorized sweep reads the same terms per configuration: WARPS 4 and 8 of the
    gemm default. At 8 warps (256 threads, warps 4 x 2 on the warpgroup mma): 128 x 128 x 4 B /
    256 = 64 registers of accumulator, 8 + 8 copies of 16,384 B / (16 B x 256) = 4 each: 8 x 2 =
    16; 64 + 16 + 24 = 104. At 4 warps 184 (above)."""
    a = analyze(parse_file(bundled_dir("kernels") / "gemm.tile"), None, h200, {"WARPS": np.array([4, 8])},
                check=False)
    assert list(np.asarray(a.registers.total)) == [184, 104]


def test_the_measured_kloop_base_only_where_it_was_measured(h200):
    """The base of 24 (calibration/h200/measured/kloop_registers: 30 compiled pipelined one-tile
    GEMM k-loops, the median of their registers that are none of accumulator, fragment or copy
    address) applies to a k-loop of 2 stages or more, directly in the launch, whose mmas read
    both operands from shared memory. The gemm default at 1 stage (the loads' data in flight is
    not measured) keeps 32: 128 + 32 + 32 = 192; persistent_gemm's k-loop sits inside the tile
    walk: 32 (its defaults 128x256x64 on 8 warps: 128 x 256 x 4 B / 256 = 128 of accumulator,
    A 128 x 64 x 2 B and B 64 x 256 x 2 B = 16,384 + 32,768 B / (16 B x 256) = 4 + 8 copies x 2
    = 24; 128 + 24 + 32 = 184). The gemm default priced as CUTLASS compiles it (a TMA mainloop,
    not the Triton loop measured) keeps 32: 192. gemm_fp8_kn's defaults (the same tile, its
    8-bit B stored [K, N], not K-major: Triton transposes it in registers) keep 32: 128 of
    accumulator + (8,192 + 8,192 B) / (16 B x 128) = 8 copies x 2 = 16 + 32 = 176, where
    gemm_fp8 (B [N, K]) is 128 + 16 + 24 = 168. A sweep over STAGES 1..3 gives the base per
    configuration: 32, 24, 24."""
    e = _analyze("gemm", h200, STAGES=1).registers
    assert (e.base, e.total) == (32, 192)
    e = analyze(parse_file(bundled_dir("kernels") / "gemm.tile"), None, h200, {}, codegen="cutlass").registers
    assert (e.base, e.total) == (32, 192)
    assert (_analyze("gemm_fp8_kn", h200).registers.total, _analyze("gemm_fp8", h200).registers.total) == (176, 168)
    e = _analyze("persistent_gemm", h200).registers
    assert (e.tiles, e.addresses, e.base, e.total) == (128, 24, 32, 184)
    a = analyze(parse_file(bundled_dir("kernels") / "gemm.tile"), None, h200, {"STAGES": np.array([1, 2, 3])},
                check=False)
    assert list(np.asarray(a.registers.base)) == [32, 24, 24]
    assert list(np.asarray(a.registers.total)) == [192, 184, 184]


def test_spilled_registers_from_the_estimate_or_the_compiler(h200):
    """occupancy.spilled_registers, the 4-byte words a thread keeps in local memory (what
    tfx validate --estimate reads to split spilling rows).
    * softmax at N = 4,096, BLOCK_M = 16 on 16 warps (cap 128): held 16 x 4,096 x 4 B + one
      reduction's 16 x 4 B = 262,208 B / 512 = 512.125 B = 128.03 registers; 129 + 16 = 145 >
      128, so its chains' intermediates are tiles too: section 5's live tiles peak at the cast,
      x (bf16) and x_f32 together, 16 x 4,096 x 6 B = 393,216 B / 512 = 768 B = 192 registers;
      192 + 16 - 128 = 80 words over the cap, fewer than the cap: only the excess spills, 80
      words (the campaigns: 62-82).
    * rmsnorm at N = 16,384 (4 rows on 8 warps, cap 255): held 4 x 16,384 x 4 + 16,384 x 2 +
      16 = 294,928 B / 256 = 288.02 registers + 16 = 305, 50 over the cap, fewer than the cap:
      the excess of the live tiles spills, x_f32 and x_sq, 2 x 262,144 + 16 = 524,304 B / 256 =
      2,048.06 B = 512.02 registers, 513 + 16 - 255 = 274 words (the campaigns keep 255 and
      spill 8-98 at 256 values a thread on 1-8 warps: the live excess is an upper side).
    * softmax at N = 16,384, BLOCK_M 2 on 2 warps (cap 255): held 2 x 16,384 x 4 B + 8 B =
      131,080 B / 64 = 2,048.125 B = 512.03 registers; 513 + 16 = 529, 274 over the cap, which
      reaches the cap: ptxas streams the row through local memory, the whole live frame, x (bf16)
      and x_f32 at the cast, 2 x 16,384 x 6 B = 196,608 B / 64 = 3,072 B = 768 words (the
      campaigns: 32 registers and 1,054-1,078 spilled words at 512 values on 2 warps).
    * gemm 256x256 on 4 warps holds an accumulator of 256 x 256 x 4 B / 128 threads = 2,048 B
      = 512 registers, which alone does not fit: all 2,048 B of its tiles round-trip, 512 words;
    * a compiled count replaces the estimate."""
    a = _analyze("softmax", h200, N=4096, BLOCK_M=16, WARPS=16)
    assert a.registers.total == 145 and a.metrics["occupancy.spilled_registers"] == 80
    assert a.precision["occupancy.spilled_registers"] == "estimate"
    assert _analyze("rmsnorm", h200, N=16384).metrics["occupancy.spilled_registers"] == 274
    assert ("255 available; 1,096 B/thread of the row's tiles round-trip through local memory"
            in " ".join(_analyze("rmsnorm", h200, N=16384).warnings))        # 274 words x 4 B
    a = _analyze("softmax", h200, N=16384, BLOCK_M=2, WARPS=2)
    assert (a.registers.total, a.metrics["occupancy.spilled_registers"]) == (529, 768)
    assert ("the row's held tiles are 274 registers over the cap: all 3,072 B/thread of its tiles go through "
            "local memory") in " ".join(a.warnings)
    assert _analyze("gemm", h200, BM=256, BN=256).metrics["occupancy.spilled_registers"] == 512
    a = analyze(parse_file(bundled_dir("kernels") / "gemm.tile"), None, h200, {}, resources={"spills": 7})
    assert (a.metrics["occupancy.spilled_registers"], a.precision["occupancy.spilled_registers"]) == (7, "exact")


def test_a_streamed_row_runs_in_the_spilled_codes_registers(h200):
    """A row body whose held tiles exceed the thread's cap by the cap again streams whole through
    local memory, and ptxas runs it in a few dozen registers, not at the cap
    (RegisterEstimate.allocated: STREAMED_ROW_REGISTERS = row_spill.RUN_REGISTERS = 32, the
    fewest the corpus's spilled row kernels allocate; of the campaigns' 715 such configurations
    365 compile to 32 and 314 to 40-64).
    * softmax N = 16,384, BLOCK_M 2 on 2 warps (64 threads, cap 255): 529 registers estimated
      (derived above), 529 - 255 = 274 >= 255: it streams, 32 allocated. Its occupancy is a
      32-register kernel's: a warp 32 x 32 = 1,024 registers, a CTA 2,048: 65,536 / 2,048 = 32
      CTAs, as the 2,048 threads (/ 64) and the 32-CTA limit allow (it read 1 CTA at 255 before).
    * The same on 8 warps (256 threads, cap 255): held 2 x 16,384 x 4 B + 8 B = 131,080 B / 256
      = 512.03 B = 128.01 registers, 129 + 16 = 145: it fits, 145 allocated; a warp 145 x 32 =
      4,640 -> 4,864 (19 units of 256), a CTA 8 x 4,864 = 38,912: 1 CTA. The sweep over WARPS 2
      and 8 allocates [32, 145] and prices [32, 1] CTAs.
    * rmsnorm at N = 16,384 (4 rows on 8 warps): 305, 50 over 255, fewer than the cap: 255
      allocated, the excess spilled.
    * softmax at N = 4,096, BLOCK_M 16 on 16 warps: 145 against the cap of 128 one CTA of 512
      threads leaves: 128 allocated. The report's estimate line says so (it was left out where
      the cap was under 255)."""
    from tfx.present.analysis_report import summary
    a = _analyze("softmax", h200, N=16384, BLOCK_M=2, WARPS=2)
    assert (a.registers.total, a.registers.cap, bool(a.registers.streams), a.registers.allocated) == (529, 255, True, 32)
    assert (a.resources.regs_per_thread, a.occupancy.blocks_per_sm) == (32, 32)
    assert "local memory; the row runs in 32 registers" in " ".join(a.warnings)
    j = a.registers.to_json()      # what --json writes under register_estimate
    assert (j["total"], j["cap"], j["allocated"], j["streams"]) == (529, 255, 32, True)
    assert ("+ 16 base = 529, twice the cap of 255 or more: the row streams through local memory and runs in 32 "
            "allocated") in summary(a)
    a = analyze(parse_file(bundled_dir("kernels") / "softmax.tile"), None, h200,
                {"N": 16384, "BLOCK_M": 2, "WARPS": np.array([2, 8])}, check=False)
    assert list(np.asarray(a.registers.allocated)) == [32, 145]
    assert list(np.asarray(a.metrics["occupancy.blocks_per_sm"])) == [32, 1]
    a = _analyze("rmsnorm", h200, N=16384)
    assert (a.registers.total, bool(a.registers.streams), a.resources.regs_per_thread) == (305, False, 255)
    a = _analyze("softmax", h200, N=4096, BLOCK_M=16, WARPS=16)
    assert a.resources.regs_per_thread == 128
    assert "+ 16 base = 145, 128 allocated (the cap; the rest spills)" in summary(a)


def test_explore_lists_the_registers_a_streamed_row_is_allocated(h200):
    """explore's regs column is the allocation analyze priced: softmax N = 16,384, BLOCK_M 2 on 2
    warps streams (above) and lists 32, where it listed the cap, 255."""
    from tfx.explore import explore
    r = explore(parse_file(bundled_dir("kernels") / "softmax.tile"), None, h200,
                sweeps={"BLOCK_M": [2], "WARPS": [2, 8]}, fixed={"N": 16384}, keep_columns=True, top=2)
    regs = {c["params"]["WARPS"]: c["regs_per_thread"] for c in r.top}
    assert regs == {2: 32, 8: 145}
