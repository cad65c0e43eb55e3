"""What a GPU tile loop waits for on its mmas (docs/analysis.md, section 8).

Hopper has two tensor-core paths (tfx.analysis.mma_layout lays them out and pads them): the
asynchronous warpgroup mma (``wgmma.mma_async``: 4 warps issue a 64-row instruction and go on
while it runs) and the warp-level synchronous ``mma.sync``. What the time model takes from
that here:

* the prefetch (``prefetch_wait``): Triton's software pipeliner issues the copies of trip
  i+S-1 after the compute the trip's warps wait for: every mma.sync, every warpgroup mma
  Triton cannot make "properly async" (``properly_async``) and the vector and
  special-function work (tfx.analysis.performance, ``_loop_time``);
* serial chains (``resident_chains``): a trip whose own ops read its mma's result
  (attention's QK^T -> softmax -> PV) runs that chain, and co-resident CTAs run theirs in
  turn.

Everything here is arithmetic over ints or numpy arrays (explore's vectorized sweeps).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from tfx.analysis import mma_layout
from tfx.analysis.numbers import is_array

VIEWS = ("reshape", "transpose", "broadcast", "return")   # as tfx.analysis.performance: no work


def warpgroup_mma(node, warps, m):
    """1 where the mma runs as a warpgroup mma (tfx.analysis.mma_layout's plan: Triton's
    supportMMA(op, 3), warps a multiple of 4 and rows a multiple of 64), else 0; arrays
    elementwise."""
    if m.kind != "gpu" or m.inst[0] < 64:
        return 0
    plan = mma_layout.plan(node.per_exec_shape, m.inst, warps, getattr(node, "mma_bits", 16),
                           getattr(node, "mma_chained", False))
    ok = plan.path == "warpgroup"
    if is_array(ok):
        import numpy as np
        return np.asarray(ok, dtype=np.int64)
    return int(bool(ok))


def _body_ops(loop):
    return [c for c in loop.walk() if c.kind == "op" and c.op is not None]


def _reads(c):
    from tfx.ir.nodes import ValueRef
    return [o.name for o in c.op.operands if isinstance(o, ValueRef)]


def used_in_trip(loop, node):
    """True when an op after mma ``node`` in the loop body reads its result (through views)
    in the same trip: anything but carrying it to the next trip."""
    ops = _body_ops(loop)
    aliases = {node.op.result}
    for c in ops[ops.index(node) + 1:]:
        if not set(_reads(c)) & aliases:
            continue
        if c.op.opcode in VIEWS:
            if c.op.result:
                aliases.add(c.op.result)
            continue
        return True
    return False


def _read_before_a_wait(loop, node, waits):
    """True when an op before mma ``node`` reads the previous trip's result of it, other than
    as an mma's accumulator, before any of ``waits`` (mmas followed by a wait for all)."""
    ops = _body_ops(loop)
    name = node.op.result
    for c in ops[:ops.index(node)]:
        if c in waits:
            return False
        reads = _reads(c)
        if name in reads and not (c.op.opcode in ("mma", "dot") and reads.index(name) == 2):
            return True
    return False


def properly_async(node, loop, m, warps):
    """1 where Triton lets this mma of ``loop`` run while the trip goes on, else 0 (arrays
    elementwise): a warpgroup mma whose result no op of the trip reads (it is only carried
    to the next trip: a GEMM's accumulator, attention's PV output, which the next trip
    rescales after its own QK^T wait: rule 3b). Triton's dotCanBeProperlyAsync
    (triton/lib/Dialect/TritonGPU/Transforms/Pipeliner/WGMMAPipeline.cpp), rule 2: a dot whose
    result an op of the loop uses unconditionally gets ``warp_group_dot_wait {pendings=0}``
    right after it, so its warps wait for it (attention's QK^T, whose scores the softmax
    reads); mma.sync is synchronous by itself."""
    shape = getattr(node, "per_exec_shape", None)
    if shape is None or not node.op.result or used_in_trip(loop, node):
        return 0
    mmas = [c for c in _body_ops(loop) if c.op.opcode in ("mma", "dot")]
    waits = [c for c in mmas if c is not node and getattr(c, "per_exec_shape", None) is not None
             and c.op.result and used_in_trip(loop, c)]
    if _read_before_a_wait(loop, node, waits):
        return 0
    return warpgroup_mma(node, warps, m)


def prefetch_wait(loop, m, warps, tensor_ns, other_ns):
    """ns of one position's compute that a trip's prefetch is issued after (arrays elementwise).

    Triton's software pipeliner puts the async copies of trip i+S-1 in a cluster last in the
    loop body (MatmulLoopPipeline.cpp: "Create a cluster for the prefetches",
    schedule.clusters.newAtBack()), after the trip's compute in program order. Warps issue
    in order, so the prefetch leaves once they are past the compute they wait for: the mmas
    that are not properly async (``properly_async``) with the vector and special-function
    work (``other_ns``). A loop whose every mma is properly async (a GEMM's k-loop on
    warpgroup mmas) issues it while the mmas run: 0. A loop with no mma waits for its vector
    work. ``tensor_ns(node)``: one position's tensor ns per trip of that mma."""
    mmas = [c for c in loop.walk() if c.kind == "op" and c.op is not None and c.op.opcode in ("mma", "dot")]
    if not mmas:
        return other_ns
    every_async = 1
    waited = 0
    for c in mmas:
        a = properly_async(c, loop, m, warps)
        every_async = every_async * a
        waited = waited + (1 - a) * tensor_ns(c)
    return (1 - every_async) * (waited + other_ns)


def trip_waits_for_mma(loop):
    """True when an op of a trip reads an mma result of that same trip (through views), so the
    trip's warps wait for that mma before going on: attention's QK^T -> softmax -> PV chain.
    A GEMM k-loop, whose mma result is only carried to the next trip, does not."""
    for c in _body_ops(loop):
        if c.op.opcode in ("mma", "dot") and c.op.result and used_in_trip(loop, c):
            return True
    return False


def resident_chains(chain, resident):
    """ns of one round of ``resident`` co-resident CTAs whose trips each run ``chain`` (one
    CTA's tensor + vector + special-function time and its trip overhead), when each trip
    waits for its own mma (``trip_waits_for_mma``): the chains run one after another.

    Why not overlapped: a CTA's warps wait for QK^T (Triton's ``warp_group_dot_wait
    {pendings=0}``), run the softmax on the FP32 and special-function pipes, then issue PV;
    one CTA's softmax could hide behind another's mma only if the warp schedulers issued
    them in that order, and nothing makes them. FlashAttention-3 (Shah et al. 2024, section
    3.1, "pingpong scheduling") has to force that order with named barriers between two
    warpgroups to get the overlap; FlashAttention-2 kernels (Dao 2023) and Triton's, which
    do no such scheduling, run them in turn. The issue 15 tune rows agree: their time per
    CTA-trip over (tensor + vector + special) is 0.85-1.3 at 1 to 5 CTAs per SM
    (docs/analysis.md section 8 works an example)."""
    return chain * resident


class LoopNote(NamedTuple):
    """One pipelined GPU loop's figures for the predicted-time breakdown (one full wave)."""

    line: Any                     # the loop's source line
    trips: Any
    resident: Any                 # CTAs per SM
    tensor: Any                   # one CTA's ns per trip on each engine
    vector: Any
    special: Any
    overhead: Any                 # the trip's own bookkeeping (pipeline.iteration_overhead)
    serial: bool                  # a trip waits for its own mma: the resident chains run in turn
    engines: Any                  # the busiest engine's ns per round (all resident CTAs)
    in_flight: Any                # one trip's loads: latency + transfer
    waited: Any                   # the compute the prefetch is issued after
    stages: Any
    chain_ns: Any                 # what the chains in turn add to the loop (ns, all trips)
    prefetch_ns: Any              # what the late prefetch adds on top (ns, all trips)
    path_ns: Any = 0              # one trip's dependent path at instruction latencies (tfx.analysis.trip_latency)
    path_steps: Any = ()          # its steps: (label, latency ns, cost ns)
    throughput: Any = 0           # one CTA's tensor + vector + special + overhead a trip


def breakdown_terms(note: LoopNote, full_waves, fmt):
    """(name, ns, detail) of this loop's serial-chain and prefetch-wait terms, those that add
    time; ``fmt`` formats ns."""
    if isinstance(note, WaitNote):
        return wait_terms(note, full_waves, fmt)
    out = []
    one = note.tensor + note.vector + note.special + note.overhead
    if note.path_steps:
        from tfx.analysis import trip_latency
        out.append(("dependent path", 0, trip_latency.detail(note.line, note.path_steps, note.path_ns,
                                                             note.throughput, fmt)
                    + f"; the {note.resident} resident CTAs' paths overlap: a round is at least "
                      f"{fmt(note.path_ns + note.overhead)} with the overhead (its effect is in the waves, "
                      f"the serial chain and prefetch wait terms)"))
    if note.serial and note.chain_ns > 0:
        out.append(("serial chain", full_waves * note.chain_ns,
                    f"loop at line {note.line}: a trip waits for its own mma (QK^T -> softmax -> PV); one CTA's "
                    f"chain = tensor {fmt(note.tensor)} + vector {fmt(note.vector)} + special {fmt(note.special)} "
                    f"+ overhead {fmt(note.overhead)} = {fmt(one)}; {note.resident} CTAs per SM run theirs in turn: "
                    f"{note.resident} x {fmt(one)} = {fmt(note.resident * one)} a trip vs the busiest engine's "
                    f"{fmt(note.engines)}; adds {fmt(note.chain_ns)} over {float(note.trips):g} trips a wave "
                    f"(included in the waves above)"))
    if note.waited and note.prefetch_ns > 0:
        out.append(("prefetch wait", full_waves * note.prefetch_ns,
                    f"loop at line {note.line}: Triton issues trip i+{note.stages}-1's loads after the compute its "
                    f"warps wait for ({fmt(note.waited)}): (compute {fmt(note.waited)} + latency and transfer "
                    f"{fmt(note.in_flight)}) / ({note.stages} - 1) = "
                    f"{fmt((note.waited + note.in_flight) / max(note.stages - 1, 1))} a trip; adds "
                    f"{fmt(note.prefetch_ns)} a wave (included in the waves above)"))
    return out


def unpipelined_wait(stages, latency_ns, transfer_ns):
    """ns a round of an unpipelined serial-chain loop (``stages`` < 2) waits for its loads:
    one load latency plus one CTA's transfer of the trip's bytes; 0 where the loop is
    pipelined (arrays elementwise).

    Triton's software pipeliner leaves a loop whose num_stages is 1 as written (nothing is
    prefetched: triton/lib/Dialect/TritonGPU/Transforms/Pipeliner/SoftwarePipeliner.cpp
    pipelines only loops with 2 or more stages), so every trip loads its K and V tiles and
    its warps wait for them before QK^T. The resident CTAs share the SM's pipes, so their
    chains progress together and end together (``resident_chains``: r chains a round); then
    each issues its next loads at the same point of its trip and they are in flight
    together: one latency and one CTA's transfer a round, hidden behind no chain. (Were the
    CTAs staggered, one CTA's wait would hide under the others' chains; the issue 15 tune
    rows at 2 to 4 CTAs per SM, 25-40% slower at STAGES = 1 than at 3, say they are not.)"""
    wait = latency_ns + transfer_ns
    if is_array(stages, wait):
        import numpy as np
        return np.where(np.asarray(stages) < 2, wait, 0.0)
    return wait if stages < 2 else 0


class WaitNote(NamedTuple):
    """An unpipelined serial-chain loop's load wait, for the predicted-time breakdown."""

    line: Any
    trips: Any
    resident: Any
    chain: Any                    # one CTA's chain a trip (tensor + vector + special + overhead)
    latency: Any                  # the load latency (L2 hit / DRAM miss mix)
    transfer: Any                 # one CTA's trip bytes through the SM's share of bandwidth
    wait_ns: Any                  # what the waits add to the loop (ns, all trips of a wave)


def wait_terms(note: WaitNote, full_waves, fmt):
    """(name, ns, detail) of an unpipelined loop's load wait, where it adds time."""
    if not note.wait_ns > 0:
        return []
    wait = note.latency + note.transfer
    return [("load wait", full_waves * note.wait_ns,
             f"loop at line {note.line}: STAGES = 1, Triton prefetches nothing: each round the "
             f"{note.resident} resident CTAs wait for their loads together, latency {fmt(note.latency)} + "
             f"transfer {fmt(note.transfer)} = {fmt(wait)}, then run their chains ({note.resident} x "
             f"{fmt(note.chain)} = {fmt(note.resident * note.chain)}): {fmt(note.resident * note.chain + wait)} "
             f"a trip; adds {fmt(note.wait_ns)} over {float(note.trips):g} trips a wave "
             f"(included in the waves above)")]
