"""The shared-memory tile buffers a pipelined loop allocates, as its code generator compiles it.

The IR's ``stages S`` says a loop keeps S - 1 trips' loads in flight ahead of the one it
computes on (tfx.analysis.pipeline_depth); tfx's liveness (tfx.analysis.memory.peak_live) holds
S copies of each tile a trip loads. Triton 3.6.0's software pipeliner allocates fewer: each
load gets ``useStage - defStage`` = S - 1 buffers, and one more only where its use is a dot on
the warpgroup mma, whose asynchronous wgmma may still read the oldest buffer while the newest is
written ("For MMAv3, we need an extra buffer as this is assumed in the wgmma pipelining
post-processing": lib/Dialect/TritonGPU/Transforms/Pipeliner, the loop's allocations take the
largest count any load needs). So a loop whose mmas all take the warp mma (mma.sync: 2 warps, or
BLOCK_M not a multiple of 64, on sm_90; every mma of a GPU without the warpgroup instruction,
as the A100's) holds S - 1 tiles of each load; any wgmma keeps S.

Measured, not fitted: the compiled shared memory of the H200 campaigns' Triton GEMMs
(bench/pipeline_buffers.py, calibration/h200/measured/issue15): 660 warp-mma configurations at
2-5 stages allocate exactly S - 1 tiles of (BM + BN) x BK, 419 warpgroup ones exactly S; the
TTGIR of Triton's flash forward (bench/h200/compile_attn_sass.py) allocates K and V 1 x 64 x 128
at 2 stages on 2 warps and 2 x 64 x 128 on 4. Code generators that allocate S (CUTLASS's
multistage and TMA mainloops: ``Stages`` buffers each) and loops without an mma (whose loads
Triton pipelines by other rules, not measured here) keep the IR's count.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from tfx.analysis import mma_layout
from tfx.analysis.numbers import if_else, is_array, to_plain
from tfx.analysis.register_estimate import direct_mmas, mma_paths
from tfx.hw.units import format_counted


class LoopBuffers(NamedTuple):
    """One mma loop's tile buffers: ``stages`` the IR states, ``buffers`` the code generator
    allocates each tile a trip loads (arrays elementwise for a sweep); ``staged`` the mma's
    operands it passes one at a time through one buffer where ``staged_when`` holds (one_at_a_time)."""

    region_id: int
    line: int | None
    stages: Any
    buffers: Any
    staged: tuple = ()
    staged_when: Any = False

    def to_json(self) -> dict:
        out = {"line": self.line, "stages": to_plain(self.stages), "buffers": to_plain(self.buffers)}
        if self.staged:
            out["operands_one_at_a_time"] = to_plain(self.staged_when)
        return out


def pipeline_buffers(root, env, profile, threads, codegen) -> list:
    """A LoopBuffers for each pipelined loop (``stages`` S) with an mma of its own, where the code
    generator's allocation is known (Triton's on a GPU); empty elsewhere. ``env``: the bound
    parameters (S may be an array of a sweep: the count is then one too)."""
    if profile.kind != "gpu" or threads is None or not codegen.warp_mma_stage_buffers_less_one:
        return []
    inst = mma_layout.instruction_shape(profile)
    warps = mma_layout.warps_of(threads)
    out = []
    facts = mma_layout.warp_mma_facts(profile)
    promotes = facts is not None and facts.promotes_fp8
    for node in root.walk():
        region = node.region
        if node.kind != "loop" or region is None:
            continue
        paths = mma_paths(node, inst, warps)
        if not paths:
            continue
        # Triton's loop allocates the largest count any of its loads needs: one wgmma keeps S
        any_warpgroup = False
        for path in paths:
            any_warpgroup = any_warpgroup | mma_layout.on_path(path, "warpgroup")
        stages = region.stages.evaluate(env) if getattr(region, "stages", None) is not None else 1
        staged, when = one_at_a_time(node, promotes, any_warpgroup, stages)
        out.append(LoopBuffers(id(region), node.line, stages,
                               if_else(any_warpgroup | (stages < 2), stages, stages - 1), staged, when))
    return out


def one_at_a_time(node, promotes_fp8, any_warpgroup, stages) -> tuple:
    """(operand names, condition): a loop of one stage whose one mma takes fp8 operands on the warp
    mma, where the GPU's Triton promotes them to f16 (warp_mma.promotes_fp8, sm_90), stages them
    in turn: Triton's mixed-mode rewrite (AccelerateMatmul.cpp, decomposeMixedModeDotOp) gives
    each operand its own local_alloc, local_load and fp_to_fp in sequence, so A's buffer is dead
    before B's is written and the shared-memory allocator (its liveness) puts both in one, the
    larger. Its TTGIR (Triton 3.6.0, sm_90, compiled on the CPU): fp8 32 x 64 x 128 on 2 warps at
    one stage allocates 32 x 128 then 128 x 64 and uses 8,192 B, bf16's the same tile 24,576 (both
    live); the campaigns' one-stage fp8 warp-mma rows compile max(A, B) in all 459. ((), False)
    elsewhere: pipelined loops keep their buffers (the pipeliner allocates each load's)."""
    if not promotes_fp8:
        return (), False
    mmas = direct_mmas(node)
    if len(mmas) != 1 or getattr(mmas[0], "mma_bits", 16) != 8:
        return (), False
    names = tuple(getattr(o, "name", None) for o in mmas[0].op.operands[:2])
    if None in names:
        return (), False
    return names, if_else(any_warpgroup, False, stages < 2)


def by_region(loops) -> dict:
    """{id(loop region): buffers}, what tfx.analysis.memory.peak_live takes in place of S."""
    return {lb.region_id: lb.buffers for lb in loops}


def staged_by_region(loops) -> dict:
    """{id(loop region): (operand names, condition)}, peak_live's ``staged``."""
    return {lb.region_id: (lb.staged, lb.staged_when) for lb in loops if lb.staged}


def describe(loops) -> str | None:
    """The line that says why the shared memory estimate holds fewer tiles than the stages
    (scalar analyses; None where every loop holds S)."""
    fewer = [lb for lb in loops if not is_array(lb.buffers) and int(lb.buffers) != int(lb.stages)]
    staged = [lb for lb in loops if lb.staged and not is_array(lb.staged_when) and bool(lb.staged_when)]
    parts = []
    if fewer:
        where = "; ".join(f"the loop at line {lb.line} holds {format_counted(int(lb.buffers), 'buffer')} "
                          f"of each tile it loads, not its {int(lb.stages)} stages" for lb in fewer)
        parts.append(f"{where} (its mmas take the warp mma: Triton's pipeliner keeps a load stages - 1 trips "
                     f"ahead in as many buffers, and one more only for a warpgroup mma)")
    for lb in staged:
        parts.append(f"the loop at line {lb.line} passes its fp8 operands {', '.join(lb.staged)} "
                     f"through one buffer in turn, the larger (one stage on the warp mma: Triton stages each "
                     f"operand it promotes to f16 alone)")
    return "shared memory, estimated: " + "; ".join(parts) if parts else None
