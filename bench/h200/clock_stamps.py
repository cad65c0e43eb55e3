"""What the per-CTA stamping scripts share (measure_row_phases.py, measure_row_chain_r.py, measure_exp_chain.py,
row_schedule_sass.py, measure_gemm_clock.py, measure_tensor_clock.py, measure_cta_cost.py, measure_row_cta.py,
mlp_kernel.py): Triton helpers that read the SM's clock, the global timer or the SM's id once a value is ready, a
CTA's slots in a stamp buffer, the most CTAs alive at once on an SM, and the compiled kernel's SASS opcode counts.
Imports triton only (no torch): the CPU compiles read it too."""
import re

import triton
import triton.language as tl

SLOTS = 8        # int64 stamps a CTA in the buffer: the scripts' slot layouts fit in 8


@triton.jit
def clock64(dep):
    """%clock64 once per element of ``dep``: reading ``dep`` makes it wait for the value (scalar-sized
    asm: the tile's registers are not touched)."""
    return tl.inline_asm_elementwise("mov.u64 $0, %clock64;", "=l,r", [dep], dtype=tl.int64,
                                     is_pure=False, pack=1)


@triton.jit
def globaltimer(dep):
    """%globaltimer (ns) once per element of ``dep``, once its value is ready."""
    return tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l,r", [dep], dtype=tl.int64,
                                     is_pure=False, pack=1)


@triton.jit
def smid(dep):
    """%smid once per element of ``dep``."""
    return tl.inline_asm_elementwise("mov.u32 $0, %smid;", "=r,r", [dep], dtype=tl.int32,
                                     is_pure=False, pack=1)


@triton.jit
def put_slot(T, pm, slot, v, BLOCK_M: tl.constexpr):
    """One element of the [BLOCK_M] vector ``v`` into CTA ``pm``'s ``slot`` (8 slots a CTA)."""
    r = tl.arange(0, BLOCK_M)
    tl.store(T + pm * 8 + slot + r * 0, v.to(tl.int64), mask=r == 0)


def most_at_once(starts, ends) -> int:
    """The most CTAs alive at once on one SM, from their start and end stamps (its own clock): a CTA that
    ends at the stamp another starts at is counted gone first (a slot handed over)."""
    events = sorted([(x, 1) for x in starts] + [(x, -1) for x in ends], key=lambda e: (e[0], e[1]))
    alive = most = 0
    for _, step in events:
        alive += step
        most = max(most, alive)
    return most


def sass_opcodes(kernel) -> dict:
    """Opcode -> count in a compiled Triton kernel's SASS (Triton's own nvdisasm on its cubin,
    measure_spill_sass.nvdisasm); {} where no disassembler runs."""
    from measure_spill_sass import cubin_file, nvdisasm
    try:
        with cubin_file(kernel.asm["cubin"]) as path:
            text = nvdisasm(path)
    except Exception:
        return {}
    counts: dict = {}
    for op in re.findall(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", text):
        counts[op] = counts.get(op, 0) + 1
    return counts
