"""What a GPU tile loop waits for on its mmas (docs/analysis.md, section 8).

Hopper has two tensor-core paths (tfx.analysis.mma_layout lays them out and pads them): the
asynchronous warpgroup mma (``wgmma.mma_async``: 4 warps issue a 64-row instruction and go on
while it runs) and the warp-level synchronous ``mma.sync``. What the time model takes from
that here:

* the prefetch (``prefetch_wait``): Triton's software pipeliner issues the copies of trip
  i+S-1 after the compute the trip's warps wait for: every mma.sync, every warpgroup mma
  Triton cannot make "properly async" (``properly_async``) and the vector and
  special-function work (tfx.analysis.performance, ``_loop_time``);
* serial chains (``trip_waits_for_mma``): a trip whose own ops read its mma's result
  (attention's QK^T -> softmax -> PV) runs that chain; how co-resident CTAs' chains overlap
  is tfx.analysis.chain_overlap's;
* what a warpgroup mma holds the tensor cores for (``group_ns``): its operands through
  shared memory (SS) or its register-fed group cost (RS).

Everything here is arithmetic over ints or numpy arrays (explore's vectorized sweeps).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from tfx.analysis import mma_layout
from tfx.analysis.numbers import emax, is_array
from tfx.hw.units import format_counted, format_counted_verb

VIEWS = ("reshape", "transpose", "broadcast", "return")   # as tfx.analysis.performance: no work
WARPGROUP_ROWS = 64        # rows of one warpgroup mma instruction (wgmma m64nNk)


def warpgroup_mma(node, warps, m):
    """1 where the mma runs as a warpgroup mma (tfx.analysis.mma_layout's plan: Triton's
    supportMMA(op, 3), warps a multiple of 4 and rows a multiple of 64), else 0; arrays
    elementwise."""
    if m.kind != "gpu" or m.inst[0] < 64:
        return 0
    return on_warpgroup(mma_layout.plan(node.per_exec_shape, m.inst, warps, getattr(node, "mma_bits", 16),
                                        getattr(node, "mma_chained", False)), m)


def on_warpgroup(plan, m):
    """1 where mma_layout's ``plan`` is the warpgroup mma on machine ``m``, else 0 (arrays
    elementwise): ``warpgroup_mma`` for a caller that already holds the plan."""
    if m.kind != "gpu" or m.inst[0] < 64:
        return 0
    ok = plan.path == "warpgroup"
    if is_array(ok):
        import numpy as np
        return np.asarray(ok, dtype=np.int64)
    return int(bool(ok))


def _body_ops(loop):
    return loop.body_ops()


def _kept(name, loop, node, work):
    """``work(loop, node)``, worked out once a loop and kept on the node (``_memo_<name>``, which
    a pickle of the node leaves out): what reads the loop's ops only, not the machine."""
    memo = node.__dict__.setdefault(f"_memo_{name}", {})
    if loop.id not in memo:
        memo[loop.id] = work(loop, node)
    return memo[loop.id]


def used_in_trip(loop, node):
    """True when an op after mma ``node`` in the loop body reads its result (through views)
    in the same trip: anything but carrying it to the next trip. Kept on the node a loop."""
    return _kept("used_in_trip", loop, node, _used_in_trip)


def _used_in_trip(loop, node):
    ops = _body_ops(loop)
    aliases = {node.op.result}
    for c in ops[ops.index(node) + 1:]:
        if not set(c.reads()) & aliases:
            continue
        if c.op.opcode in VIEWS:
            if c.op.result:
                aliases.add(c.op.result)
            continue
        return True
    return False


def shaped_mmas(loop) -> list:
    """The loop's mma ops with a per-execution shape, in walk order."""
    return [c for c in _body_ops(loop) if c.op.opcode in ("mma", "dot") and getattr(c, "per_exec_shape", None) is not None]


def scores(loop):
    """The trip's scores mma: the first shaped mma whose result the trip itself reads
    (``used_in_trip``); None where there is none."""
    return next((c for c in shaped_mmas(loop) if used_in_trip(loop, c)), None)


def _read_before_a_wait(loop, node, waits):
    """True when an op before mma ``node`` reads the previous trip's result of it, other than
    as an mma's accumulator, before any of ``waits`` (mmas followed by a wait for all)."""
    ops = _body_ops(loop)
    name = node.op.result
    for c in ops[:ops.index(node)]:
        if c in waits:
            return False
        reads = c.reads()
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
    if not _async_in_trip(loop, node):
        return 0
    # a serialized wgmma (its trip's mma registers exceed a thread's) is waited at once
    # (tfx.analysis.wgmma_serial)
    from tfx.analysis import wgmma_serial
    return warpgroup_mma(node, warps, m) * (1 - wgmma_serial.serialized(loop, m, warps))


def _async_in_trip(loop, node):
    """True where the trip's ops let mma ``node`` run on (``properly_async``'s rules 2 and 3b,
    which read the loop's ops only, not the machine or the warps); kept on the node a loop."""
    return _kept("async_in_trip", loop, node, _ops_let_it_run_on)


def _ops_let_it_run_on(loop, node):
    shape = getattr(node, "per_exec_shape", None)
    if shape is None or not node.op.result or used_in_trip(loop, node):
        return False
    mmas = [c for c in _body_ops(loop) if c.op.opcode in ("mma", "dot")]
    waits = [c for c in mmas if c is not node and getattr(c, "per_exec_shape", None) is not None
             and c.op.result and used_in_trip(loop, c)]
    return not _read_before_a_wait(loop, node, waits)


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
    mmas = list(loop.mma_ops())
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


def mark_operands(region) -> None:
    """Sets the fact ``mma_from_smem`` on each mma op of ``region`` (a loop's trip, or a mesh
    body) that an inner region has not marked yet: (A, B), each True where the operand comes
    straight from shared memory (loaded, then through views only) and False where an op of the
    trip before the mma computes it (a cast or a multiply of dequantised weights, a copy to
    registers, attention's P), so the compiler feeds it from registers. Computed once, as the
    scope tree is built (tfx.analysis.counting, innermost region first); read through
    ``a_in_registers`` (wgmma's SS or RS form) and ``fed_from_smem`` (the fragment chain's and
    the load rounds' compiled tables: tfx.analysis.fragment_chain, tfx.analysis.load_rounds)."""
    from tfx.ir.nodes import ValueRef
    computed: set = set()
    loaded: set = set()         # loaded in this trip (through views): the trip's own copies
    in_loop = getattr(region, "kind", None) == "loop"
    for c in _body_ops(region):
        if c.op.opcode in ("mma", "dot") and getattr(c, "mma_from_smem", None) is None:
            c.mma_from_smem = tuple(not (isinstance(o, ValueRef) and o.name in computed)
                                    for o in c.op.operands[:2])
            # which operands the loop's trip itself copies in (a GEMM k-loop's A and B tiles):
            # tfx.analysis.mma_layout.warp_mma counts their copies' ALU work beside the mma
            c.mma_trip_loaded = tuple(in_loop and isinstance(o, ValueRef) and o.name in loaded
                                      for o in c.op.operands[:2])
        if not c.op.result:
            continue
        reads = c.reads()
        if c.op.opcode in VIEWS:
            if reads and reads[0] in computed:
                computed.add(c.op.result)
            if reads and reads[0] in loaded:
                loaded.add(c.op.result)
        elif c.op.opcode != "load":
            computed.add(c.op.result)
        else:
            loaded.add(c.op.result)


def trip_loaded(node) -> tuple:
    """(A, B) of mma ``node``: True where its loop's trip loads that operand itself (``mark_operands``);
    (False, False) outside a loop or unmarked."""
    return getattr(node, "mma_trip_loaded", None) or (False, False)


def _from_smem(node) -> tuple:
    """``mma_from_smem`` of mma ``node`` (``mark_operands``); (False, False) where unmarked."""
    return getattr(node, "mma_from_smem", None) or (False, False)


def a_in_registers(node) -> bool:
    """True when mma ``node``'s A operand is computed in the trip (through views), so the
    compiler feeds it from registers (wgmma's RS form: attention's P in PV); an operand that
    was loaded (to shared memory) is read from shared memory (the SS form: Q in QK^T)."""
    return not _from_smem(node)[0]


def b_in_registers(node) -> bool:
    """True when mma ``node``'s B operand is computed in the trip (a register cast: the weight-only
    GEMMs), which a warpgroup mma cannot read from registers: the code generator stores it to shared
    memory first (tfx.analysis.converting_trip); False where B was loaded or ``node`` is unmarked."""
    marks = getattr(node, "mma_from_smem", None)
    return marks is not None and not marks[1]


def fed_from_smem(node) -> bool:
    """True when both operands of mma ``node`` come straight from shared memory
    (``mark_operands``): the dots of the fragment chain's and the load rounds' compiled tables
    (Triton GEMM k-loops); a dot fed by a register cast (gemm_w8a16, gemm_w4a16) compiles to
    another k-loop, in neither census."""
    return all(_from_smem(node))


def group_ns(node, loop, m, warps, tensor_ns, smem_ns=None):
    """ns one CTA's mma ``node`` holds the tensor cores a trip (arrays elementwise), where the
    profile states the warpgroup-mma facts: ``tensor_ns`` (its flops at the tensor rate) or,
    for a warpgroup mma reading A from shared memory (SS), the longer of that and its
    operands through the SM's shared-memory port; a warpgroup mma reading A from registers
    (RS) adds ``instruction_latency.wgmma_rs_group`` cycles once a trip.

    Why: an SS warpgroup mma reads A (64 x 16 x 2 B = 2 KiB) and B (N x 16 x 2 B) from shared
    memory for every m64nNk16 instruction; at N = 32 that is 3 KiB, 24 cycles at 128 B/cycle
    against 16 cycles of tensor work, so the instruction waits for its operands (measured,
    calibration/h200/measured/chain/mma_rate.csv: m64n32 at 0.60 of the 4096 flop/cycle peak,
    N >= 64 at 0.79-0.85). An RS group's A fragments come from the issuing warps' registers
    (measured, mma_waited.csv: N = 128 groups of 2, 4 and 8 k-steps at 103.1, 185.5 and
    336.2 ns a CTA: 38.9 ns a step plus 25.4 ns = 50 cycles a group).

    The port's 128 B a cycle are cycles of the SM clock the mma runs at, not the profile's
    1.98 GHz: the operand-bound instructions were measured at 229.1-232.4 B/ns a SM (median
    229.5; calibration/h200/measured/chain_s12/mma_rate.csv, m64n16k16 at 2,922-2,974 flop/ns
    = 2,560 B per 32,768 flop, m64n32k16 at 4,851-4,951 = 3,072 B per 65,536; the older
    measured/chain/mma_rate.csv m64n32 rows 4,864-4,918), which is 128 B a cycle at 1.793 GHz:
    the SM clock the profile measured with every SM running mmas that leave the tensor pipe
    partly idle (``warp_mma.clock_fraction`` = 0.907: 1.795 GHz), so the operands come at
    ``smem x clock_fraction`` (253.44 x 0.907 = 229.87 B/ns)."""
    rs = m.profile.get("instruction_latency.wgmma_rs_group", None)
    shape = getattr(node, "per_exec_shape", None)
    if rs is None or shape is None or m.kind != "gpu":
        return tensor_ns
    group = warpgroup_mma(node, warps, m)
    a_reg = a_in_registers(node)
    smem_bw = m.onchip_bw.get("smem")
    # ... at the SM clock under the mmas (warp_mma.clock_fraction; 1 where the profile has none)
    wm = mma_layout.warp_mma_facts(m.profile)
    if smem_bw and wm is not None:
        smem_bw = smem_bw * wm.clock_fraction
    # its operands as counted (tfx.analysis.counting, Counter.shared_operand_reads): each
    # warpgroup's instructions read its 64-row slab of A (none where A is computed in
    # registers, at rmem) and its columns of B
    operands = node.per_exec.get(("traffic", mma_layout.SHARED_LEVEL, "read"), 0) / smem_bw if smem_bw else 0
    ss = emax(tensor_ns, operands) + (rs / m.clock_ghz if a_reg else 0)
    # a warp mma's fragments come through the port by the warps' own loads (ldmatrix)
    warp = emax(tensor_ns, smem_ns) if smem_ns is not None else tensor_ns
    if is_array(group, ss, warp):
        import numpy as np
        return np.where(np.asarray(group) > 0, ss, warp)
    return ss if group else warp


def warpgroups(loop, m, warps):
    """Warpgroups of one CTA that run a serial trip's chain side by side (arrays elementwise):
    ``warps / 4`` where the trip's scores (the mma it reads, ``used_in_trip``) run on a
    warpgroup mma with every warp on M (each warpgroup its own rows, or the same rows where
    the layout replicates them: tfx.analysis.chain_overlap.replication), else 1."""
    node = scores(loop)
    if node is None or m.kind != "gpu":
        return 1
    group = warpgroup_mma(node, warps, m)
    n = emax(warps // 4, 1)
    if is_array(group, n):
        import numpy as np
        return np.where(np.asarray(group) > 0, n, 1)
    return n if group else 1


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
    stations: Any = None          # a serial trip's chain_overlap.Stations
    chain_round: Any = 0          # the resident CTAs' round of chains (chain_overlap.cycle_ns)
    depth: Any = (0, 0, 0, 0, 0, 0, None)   # a 2-stage serial trip's copies (tfx.analysis.pipeline_depth): round
                                      # trip, async mma, miss share, exposed delay, round with it, ns added
    drifted: Any = 0              # the launch's CTAs started after its first wave (pipeline_depth.drifted_share)
    loop: Any = None              # the loop, machine and warps, for terms derived from its ops (wgmma_serial)
    machine: Any = None
    warps: Any = None
    waited_overlap: Any = 0       # what a CTA's warpgroups overlap of ``waited`` (chain_overlap.prefetch_overlap_ns)


def _overlap_words(note: LoopNote, fmt) -> str:
    """The prefetch-wait clause's words for the warpgroups' overlap of the waited compute (scalars)."""
    if not note.waited_overlap or note.stations is None:
        return ""
    g = int(note.stations.groups)
    return f" = the sum less {g} warpgroups' overlap {g - 1}/{g} x min(waited mma, the rest) {fmt(note.waited_overlap)}"


def breakdown_terms(note: LoopNote, full_waves, fmt):
    """(name, ns, detail) of this loop's serial-chain and prefetch-wait terms, those that add
    time; ``fmt`` formats ns."""
    if isinstance(note, WaitNote):
        return wait_terms(note, full_waves, fmt)
    out = []
    if note.path_steps:
        from tfx.analysis import trip_latency
        out.append(("dependent path", 0, trip_latency.detail(note.line, note.path_steps, note.path_ns,
                                                             note.throughput, fmt)
                    + f"; the {note.resident} resident CTAs' paths overlap: a round is at least "
                      f"{fmt(note.path_ns + note.overhead)} with the overhead (its effect is in the waves, "
                      f"the serial chain and prefetch wait terms)"))
    if note.serial and note.chain_ns > 0 and note.stations is not None:
        from tfx.analysis import chain_overlap
        out.append(("serial chain", full_waves * note.chain_ns,
                    chain_overlap.detail(note.line, note.stations, note.resident, note.chain_round, fmt)
                    + f" vs the busiest engine's {fmt(note.engines)}; adds {fmt(note.chain_ns)} over "
                      f"{format_counted(note.trips, 'trip')} a wave (included in the waves above)"))
    if note.serial and note.stations is not None and note.loop is not None:
        from tfx.analysis import wgmma_serial
        if wgmma_serial.serialized(note.loop, note.machine, note.warps):
            out.append(("serialized wgmma", 0, wgmma_serial.detail(
                note.line, note.loop, note.machine, note.warps,
                note.stations.simt - note.overhead, fmt)))
    if note.serial and note.depth[5] > 0:
        from tfx.analysis import pipeline_depth
        trip, running, miss, exposed, round_ns, adds, split = note.depth
        out.append(("pipeline depth", full_waves * adds,
                    pipeline_depth.detail(note.line, trip, running, miss, exposed, note.resident, note.chain_round,
                                          round_ns, fmt, adds, note.trips, note.drifted, split)))
    if note.waited and note.prefetch_ns > 0:
        out.append(("prefetch wait", full_waves * note.prefetch_ns,
                    f"loop at line {note.line}: Triton issues trip i+{note.stages}-1's loads after the compute its "
                    f"warps wait for ({fmt(note.waited)}{_overlap_words(note, fmt)}): (compute {fmt(note.waited)} + latency and transfer "
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
    chains progress together and end together (tfx.analysis.chain_overlap: their round); then
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
    chain: Any                    # the resident CTAs' round of chains (tfx.analysis.chain_overlap)
    latency: Any                  # the load latency (L2 hit / DRAM miss mix)
    transfer: Any                 # one CTA's trip bytes through the SM's share of bandwidth
    wait_ns: Any                  # what the waits add to the loop (ns, all trips of a wave)
    drifted: Any = 0              # the launch's CTAs started after its first wave (pipeline_depth.drifted_share)
    wait: Any = None              # the round's whole wait (with the copies' issue and wait chain), if known
    one_cta: Any = None           # the one-CTA sum of every engine that no longer floors it (unpipelined_chain)
    text: Any = None              # a streaming trip's wait as tfx.analysis.decode_trip prices it (its own clause)


def wait_terms(note: WaitNote, full_waves, fmt):
    """(name, ns, detail) of an unpipelined loop's load wait, where it adds time."""
    if not note.wait_ns > 0:
        return []
    from tfx.analysis import pipeline_depth, unpipelined_chain
    if note.text is not None:
        # decode's unpipelined streaming trip: the chains in lock step, then its copy groups
        # (tfx.analysis.decode_trip.unpipelined_round_ns)
        return [("load wait", full_waves * note.wait_ns,
                 f"loop at line {note.line}: STAGES = 1, Triton prefetches nothing: each trip waits for its loads "
                 f"after its chain: {note.text}; adds {fmt(note.wait_ns)} over "
                 f"{format_counted(note.trips, 'trip')} a wave (included in the waves above)")]
    wait = note.latency + note.transfer
    issue = ""
    if note.wait is not None and note.wait > wait:
        issue = f" + the copies' issue and wait {fmt(note.wait - wait)}"
        wait = note.wait
    floor = unpipelined_chain.detail(note.one_cta, fmt) if note.one_cta is not None else ""
    one = note.resident == 1
    return [("load wait", full_waves * note.wait_ns,
             f"loop at line {note.line}: STAGES = 1, Triton prefetches nothing: each round the "
             + format_counted_verb(note.resident, "resident CTA", "wait")
             + (" for its loads" if one else " for their loads together")
             + f", latency {fmt(note.latency)} + "
             f"transfer {fmt(note.transfer)} ({pipeline_depth.drift_text(note.drifted)}){issue} = {fmt(wait)}, then "
             + (f"runs its chain ({fmt(note.chain)} a round)" if one else
                f"run their chains ({fmt(note.chain)} a round of the {note.resident})")
             + f": {fmt(note.chain + wait)} "
             f"a trip{floor}; adds {fmt(note.wait_ns)} over {format_counted(note.trips, 'trip')} a wave "
             f"(included in the waves above)")]
