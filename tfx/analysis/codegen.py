"""How a kernel is compiled: the code generator whose instruction schedule the analysis prices.

A ``.tile`` kernel states what a CTA moves and computes; the instructions that do it are the
code generator's. Most of the analysis is the hardware's (bytes at a level's rate, flops at the
tensor cores' rate, latencies, occupancy) and holds for any code that moves those bytes and
does those flops. A few terms price instructions only one code generator emits:

* **per-thread copies** (``tfx.analysis.load_trip``): Triton (3.6.0, sm_90) copies a tile
  into shared memory with every thread of the CTA, ``cp.async`` of 4-16 bytes a thread
  (LDGSTS), or at 1 stage with ``ld.global`` into registers and a shared-memory store. Those
  instructions hold the SM's load path for their own time: narrow copies
  (``pipeline.narrow_copy_cycles``), 16-byte copies of rows of 64 bytes or less
  (``pipeline.short_row_copy_cycles``) and unpipelined loads (``pipeline.sync_load_cycles``,
  ``sync_narrow_load_cycles``), all measured on Triton kernels; at 1 stage ptxas issues those
  loads in dependent rounds (``tfx.analysis.load_rounds``, compiled per tile). On the warp mma the same warps
  issue the mma and then those copies, in series (``tfx.analysis.warp_trip``); under TMA a
  producer warp copies for the mma warps, so that trip is not priced either.
* **serialized fp8 wgmma** (``tfx.analysis.mma_layout.serialized_wgmma``): Triton's fp8 dot of
  two K-major operands at N = 256 on 8 warps, which ptxas serializes (C7515: non-wgmma
  instructions define accumulator registers inside the pipeline stage).
* **S - 1 tile buffers on the warp mma** (``tfx.analysis.smem_buffers``): Triton's software
  pipeliner allocates a pipelined loop's loads S - 1 shared-memory buffers (a load S - 1 trips
  ahead of its use), and one more only where a wgmma reads them; the IR's ``stages S`` holds S.

The CUTLASS 3 sm_90 mainloops (``KernelTmaWarpSpecialized*``, the GEMMs cuBLAS, cuBLASLt and
the serving engines ship on Hopper: TensorRT-LLM, vLLM's ``cutlass_scaled_mm``) are scheduled
by hand: a producer warp copies each tile with one TMA instruction
(``cp.async.bulk.tensor``: no per-thread copy instruction, whatever the row length), and the
consumer warpgroups keep their wgmma accumulators fenced (``warpgroup_fence_operand``) and wait
``warpgroup_wait<K_PIPE_MMAS>`` instructions behind, so no accumulator is redefined inside the
pipeline stage and ptxas has nothing to serialize (CUTLASS ``collective/sm90_mma_tma_gmma_ss_
warpspecialized.hpp``). Under ``cutlass`` those two groups of terms do not apply; every other
term (the bytes through the SM's load port, the trip's chain, the tensor rate, the waves)
stays, because it prices the hardware.

``triton`` is the default: the shipped kernels' measurements (calibration/h200) are Triton
kernels. The model level (``tfx.model.kernels``) prices the GEMMs of a serving engine or of
PyTorch (cuBLAS) as ``cutlass``.
"""

from __future__ import annotations

from typing import NamedTuple

from tfx.errors import TfxError, argument_error


class Codegen(NamedTuple):
    """A code generator by the instruction patterns of it the analysis prices."""

    name: str
    description: str
    per_thread_copies: bool        # tiles copied by every thread (cp.async / ld.global), each instruction priced
    serializes_fp8_wgmma: bool     # ptxas serializes its fp8 K-major N = 256 8-warp dot (C7515)
    warp_mma_stage_buffers_less_one: bool   # a pipelined warp-mma loop's loads hold S - 1 buffers, not S


TRITON = Codegen("triton", "Triton 3.6.0: every thread copies its part of a tile (cp.async), ptxas schedules "
                 "the wgmma", True, True, True)
CUTLASS = Codegen("cutlass", "hand-scheduled as CUTLASS 3 / cuBLAS / TensorRT-LLM kernels: one TMA instruction "
                  "copies a tile, wgmma pipelined by hand", False, False, False)
CODEGENS = {c.name: c for c in (TRITON, CUTLASS)}
DEFAULT = TRITON.name


def lookup(name: str | Codegen | None) -> Codegen:
    """The code generator called ``name`` (None: the default); a clear refusal otherwise."""
    if isinstance(name, Codegen):
        return name
    if name is None:
        return TRITON
    cg = CODEGENS.get(name)
    if cg is None:
        raise TfxError(f"unknown code generator {name!r}; known: {', '.join(CODEGENS)}")
    return cg


def refusal(name: str | Codegen | None, profile) -> str | None:
    """Why ``name`` cannot be the code generator of a kernel on ``profile`` (None when it can).

    The code generators differ only in GPU instructions (per-thread cp.async vs TMA copies,
    ptxas-scheduled vs hand-pipelined wgmma): a tiled accelerator (sip) runs its kernels as its
    own tool chain lowers them, so a named code generator other than the default would change
    nothing, yet every surface would claim the kernel compiled as it."""
    cg = lookup(name)
    if cg.name == DEFAULT or profile.kind == "gpu":
        return None
    return (f"a code generator other than {DEFAULT} prices GPU instructions (TMA copies, wgmma) "
            f"and {profile.name} is a {profile.kind} profile")


def check_profile(name: str | Codegen | None, profile, where: str = "--codegen") -> None:
    """The one refusal of a code generator on a profile it cannot compile for: every surface
    (tfx analyze, explore, diff, simulate, validate, the explorer) raises or shows this line."""
    why = refusal(name, profile)
    if why is not None:
        raise argument_error(where, why, found=lookup(name).name)


def priced_name(name: str | Codegen | None, profile) -> str | None:
    """The code generator a result on ``profile`` names: ``triton`` or ``cutlass`` on a GPU,
    None on a tiled profile (its kernels are its own tool chain's: neither applies)."""
    return lookup(name).name if profile.kind == "gpu" else None


def describe(cg: Codegen) -> str:
    """The breakdown's line for a code generator other than the default: what it leaves out."""
    left_out = []
    if not cg.per_thread_copies:
        left_out.append("per-thread copy instructions (narrow copies, short rows, unpipelined loads: "
                        "TMA copies a tile with one instruction)")
        left_out.append("the warp-mma trip's copies behind the mma warps' mma.sync (a TMA producer "
                        "warp copies for them)")
    if not cg.serializes_fp8_wgmma:
        left_out.append("ptxas's serialized fp8 wgmma (C7515)")
    if not cg.warp_mma_stage_buffers_less_one:
        left_out.append("the S - 1 shared-memory buffers of a pipelined warp-mma loop (S are allocated)")
    return (f"{cg.name} ({cg.description}): Triton's " + "; ".join(left_out) + " do not apply"
            if left_out else f"{cg.name} ({cg.description})")
