"""The serial trip of a k-loop whose 8-bit operand is transposed in registers (docs/analysis.md,
section 8, "transposed-operand trip").

Triton on sm_90 feeds a warpgroup mma (wgmma) fp8 operands from shared memory K-major only;
an operand stored the other way (gemm_fp8_kn's B[K, N]) is loaded to registers and stored
back to shared memory a byte at a time (tfx.analysis.mma_layout.register_transposes). The
SASS of that k-loop (calibration/h200/measured/fp8_mma: fp8_kn_128x32x128_w4_s2.sass.txt,
fp8_kn_128x64x64_w4_s4.sass.txt) runs each trip as one chain, in this order:

1. ``DEPBAR.LE SB0, STAGES-2`` and ``BAR.SYNC``: the other operand's (A's) cp.async for this
   trip has landed;
2. ``LDG.E.128`` of the transposed operand's tile, issued only now (its load is not
   pipelined), and the warps wait for it: a round trip through L2/DRAM inside the trip;
3. ``PRMT`` and one ``STS.U8`` per byte (bank conflicts: ``register_transposes``);
4. ``MEMBAR.ALL.CTA``, ``FENCE.VIEW.ASYNC.S`` and ``BAR.SYNC`` (the bytes made visible to the
   wgmma's async proxy);
5. the wgmma, waited at once (``WARPGROUP.DEPBAR.LE gsb0, 0x0``), ``BAR.SYNC``;
6. A's cp.async for trip i + STAGES - 1, issued last.

At 2 stages A's copy for the next trip is issued in step 6 and waited in step 1 of that trip
(``DEPBAR.LE SB0, 0x0``): its round trip is in the chain as well, before B's. From 3 stages
on, A's copies are STAGES - 1 trips ahead and the fence does not wait for them
(calibration/h200/measured/fence_wait: ``fence.proxy.async.shared::cta`` takes 37-56 cycles
with 16 KB of cp.async in flight, which land only at the later ``cp.async.wait_group``).

So one CTA's trip is, in series: the round trips of the transposed operand's load (and, at
2 stages or fewer, of the other loads; each the loaded round trip of one tile,
tfx.analysis.load_trip.loaded_round_trip_ns: issue chain, L2 or DRAM latency, its bytes
through the SM's port), the byte stores and the waited mma. The resident CTAs overlap their
chains (one waits while another stores) but share the SM's shared-memory pipe (the stores,
the copies' writes, the mma's reads) and its tensor cores: a closed queue of r customers over
those two stations and the round trips' delay, solved by mean value analysis
(tfx.analysis.closed_queue; ``round_ns``). The loaded case of fence_wait shows the sharing: 4
blocks per SM storing 4 KB each while their 16 KB copies land take 1389 cycles a trip, against
4 x (256 + 128) = 1536 cycles of the SM's shared-memory pipe (one wavefront a cycle).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from tfx.analysis import closed_queue, mma_layout
from tfx.analysis.numbers import is_array
from tfx.hw.units import format_time_ns


class TransposedTrip(NamedTuple):
    """One CTA's serial trip of a k-loop with a register-transposed operand."""

    round_trips: tuple     # (name, ns, in series: 1/0 or per configuration) of each global load
    stores_ns: Any         # the transposed operand's byte stores (bank conflicts included)
    mma_ns: Any            # the mma, waited before the next trip
    chain_ns: Any          # the sum of what is in series: one CTA's trip


def _mma(loop):
    return next((c for c in loop.mma_ops() if getattr(c, "per_exec_shape", None) is not None), None)


def warpgroup_share(loop, inst, warps):
    """Whether the loop's transposed mma runs as a warpgroup mma (arrays elementwise): the
    serial trip is the warpgroup path's (a warp mma reads the operand as stored, with byte
    loads from shared memory, and keeps its copies pipelined: fp8_kn_64x32x128_w2_s2, and
    tfx.analysis.mma_layout.byte_gathers)."""
    c = _mma(loop)
    if c is None:
        return False
    ts = mma_layout.register_transposes(c, inst, getattr(c, "mma_bits", 16), warps)
    if not ts:
        return False
    return ts[0].applies if is_array(ts[0].applies) else bool(ts[0].applies)


def transposed_results(loop, inst, warps) -> set:
    """Names of the values (load results) the loop's mma transposes in registers."""
    c = _mma(loop)
    if c is None:
        return set()
    names = [getattr(o, "name", None) for o in c.op.operands[:2]]
    out = set()
    for t in mma_layout.register_transposes(c, inst, getattr(c, "mma_bits", 16), warps):
        name = names[0 if t.operand == "A" else 1]
        if name is not None:
            out.add(name)
    return out


def loads(loop) -> list:
    """The global loads of one trip of ``loop`` (ops ``load`` of its body), in program order."""
    return list(loop.load_ops())


def trip(loop, inst, warps, stages, round_trip_ns, stores_ns, mma_ns) -> TransposedTrip:
    """The trip of ``loop``: ``round_trip_ns(op)`` of each load, in series where it is the
    transposed operand's or ``stages`` <= 2 (module docstring), then the byte stores and the
    mma of one CTA's trip. Loads are named by the tensor they read."""
    transposed = transposed_results(loop, inst, warps)
    named = []
    for c in loads(loop):
        window = next((o for o in c.op.operands if hasattr(o, "tensor")), None)
        if c.op.result in transposed:
            serial = 1
        elif is_array(stages):
            import numpy as np
            serial = (np.asarray(stages) <= 2).astype(float)
        else:
            serial = 1 if stages <= 2 else 0
        named.append((window.tensor if window is not None else f"line {c.line}", round_trip_ns(c), serial))
    return chain(named, stores_ns, mma_ns)


def chain(round_trips, stores_ns, mma_ns) -> TransposedTrip:
    """The trip: the round trips in series (``(name, ns, serial)``), then the byte stores, then
    the waited mma."""
    total = stores_ns + mma_ns
    for _, ns, serial in round_trips:
        total = total + (ns * serial if is_array(serial) else (ns if serial else 0))
    return TransposedTrip(tuple(round_trips), stores_ns, mma_ns, total)


def round_ns(t: TransposedTrip, r, smem_ns, tensor_ns):
    """ns of one round of r resident CTAs, each running the chain ``t``: stations the SM's
    shared-memory pipe (``smem_ns``: one CTA's shared-memory work a trip, the byte stores
    included) and its tensor cores (``tensor_ns``: one CTA's mma), delay the round trips in
    series (the chain less its stores and mma). r = 1 gives the chain plus the CTA's other
    shared-memory work; large r, r x the busier station."""
    delay = t.chain_ns - t.stores_ns - t.mma_ns
    return closed_queue.cycle_ns(r, (smem_ns, tensor_ns), delay)


def describe(t: TransposedTrip, r, round_ns_value) -> str:
    """One line for the breakdown (scalar trips): the chain and the round of r CTAs."""
    serial = [(n, ns) for n, ns, s in t.round_trips if not is_array(s) and s]
    ahead = [n for n, _, s in t.round_trips if not is_array(s) and not s]
    loads = " + ".join(f"{name} {format_time_ns(float(ns))}" for name, ns in serial)
    text = (f"an operand transposed in registers is loaded and waited inside the trip: round trips {loads} "
            f"+ byte stores {format_time_ns(float(t.stores_ns))} + waited mma {format_time_ns(float(t.mma_ns))} = "
            f"{format_time_ns(float(t.chain_ns))} per CTA")
    if ahead:
        text += f" ({', '.join(ahead)} copied stages ahead, not in the chain)"
    return (text + f"; {int(r)} resident CTAs overlap their chains and share the shared-memory pipe and tensor "
            f"cores (mean value analysis): a round takes at least {format_time_ns(float(round_ns_value))}")
