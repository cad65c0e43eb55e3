"""How the serial chains of co-resident CTAs share one SM (docs/analysis.md, section 8).

A trip that reads its own mma result (attention's QK^T -> softmax -> PV,
tfx.analysis.mma_path.trip_waits_for_mma) is a chain: its warps wait for the tensor cores,
then run the softmax on the FP32 and special-function pipes, then issue the next mma. With r
CTAs on an SM the warp schedulers pick among the ready warps in no fixed order, so one CTA's
softmax overlaps another's mma when their phases happen to differ, and queues behind it when
they collide. That is a closed queueing network: r customers (the CTAs) cycling through

* the tensor station (``tensor``): one CTA's mma time a trip (tfx.analysis.mma_path.group_ns:
  operand-bound SS groups, the RS group cost, a warp mma's fragments through shared memory),
  and no less than the trip's time on the SM's shared-memory port, which the mmas' operands
  and the trip's copies share;
* the SIMT station (``simt``): one CTA's vector + special-function time a trip plus the
  trip's bookkeeping (pipeline.iteration_overhead), times ``replication`` where the mma's
  layout holds each row in several warpgroups;
* a delay (``delay``): the latency on the trip's dependent path that no engine serves (a
  reduction's shuffle chain, the wait for a warpgroup mma's result:
  tfx.analysis.trip_latency.exposed_ns), which other CTAs' work can fill.

The round, the time in which each of the r CTAs completes one trip, is the network's cycle
time by exact mean value analysis (Reiser and Lavenberg, "Mean-Value Analysis of Closed
Multichain Queuing Networks", JACM 27(2), 1980; Lazowska et al., "Quantitative System
Performance", 1984, ch. 6): with Q_s(0) = 0, for n = 1..r

    R_s(n) = D_s x (1 + Q_s(n-1))          for the stations s = tensor, simt
    cycle(n) = R_tensor(n) + R_simt(n) + delay
    Q_s(n) = n x R_s(n) / cycle(n)

One CTA runs its chain alone (cycle(1) = tensor + simt + delay); many saturate the busier
station (cycle(r) -> r x max(tensor, simt)). Measured on the H200
(calibration/h200/measured/chain/two_phase.csv: a 64x64x64 warpgroup mma, 76.6 ns, then
one exp2 pass over its 64 x 64 scores, 203.6 ns): 290.5, 453.2, 655.3 and 850.2 ns a round
at r = 1..4 against 280, 449, 632 and 825 from the formula (tests/test_chain_overlap.py);
in turn would be 2, 3 and 4 x 290.5 = 581, 872 and 1162, fully overlapped r x 203.6 = 407,
611 and 814. FlashAttention-3 (Shah et al. 2024, section 3.1) forces the overlap with named
barriers between two warpgroups ("pingpong") to approach the full-overlap bound;
FlashAttention-2 and Triton kernels, which schedule nothing, get the random-order overlap.

The warpgroups of one CTA are one customer: the pipelined loop's CTA barrier after each wait
for the copies (bar.sync in the trip's SASS,
calibration/h200/measured/chain/sass_loop_d128_64x32_w4_s3.txt) starts them together every
trip, so the CTAs, not the warpgroups, drift against each other. Inside the CTA its g
warpgroups start the trip's chain together and share the stations: the second one's mma runs
while the first one's softmax does, so the CTA's chain is shorter than its stations' sum by
``(g - 1) / g x min(tensor, simt)`` (two equal halves: ``tensor/2 + simt/2 + max/2``), taken
off the delay. Measured (attn_trip.csv): a 128 x 32 tile at D = 128 takes 672 ns a trip on 8
warps and 732 on 4 at one CTA a SM, 1137 and 1171 ns a round at two (the formula: 685 and
842, 1072 and 1157); 64 rows on 8 warps (two warpgroups holding the same rows,
``replication``) take 1.39 x the 4-warp trip at 64 x 128 (the Triton prefill rows), not 2 x.

A warp alone on its sub-partition (one 4-warp CTA on the SM) runs its exp2s beside its own
issue: a MUFU holds the special-function unit for 8 cycles (16 results a cycle a SM on 4
sub-partitions) but takes one issue slot, and ptxas spaces the MUFUs among the FP32
instructions that do not read them (chain/sass_loop_d128_64x32_w4_s3.txt: 7 FMULs of the
rescale between consecutive MUFU.EX2). So after the work every exp2 waits for (the row max and
the ops before it: before_exp2_ops) its SIMT work takes the longer of its issue and the unit's
time (lone_simt_ns), not their sum. Measured alone (calibration/h200/measured/attn_trip_s14,
attn_clock_s15, attn_clock_d128_s16 alone1): the 4-warp chains at D = 64 and 128, 10-19% high
with the sum, are within -0.9..+3.4% (their rounds +3..+11%: the dependent path,
tfx.analysis.trip_latency, sets them now). Two or more warps a sub-partition keep the sum: the
rounds measured there sit on it (attn_trip_ncu_s15) and the max prices them 5-20% fast
(docs/analysis.md, section 8).

Everything is int/float or numpy arithmetic (explore's vectorized sweeps); ``resident`` may be
an array, up to the SM's CTA limit.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

from tfx.analysis import closed_queue, mma_layout, mma_path, pipeline_depth, wgmma_serial
from tfx.analysis.numbers import emax, emin, if_else, is_array, ratio
from tfx.hw.units import format_counted
from tfx.hw.units import format_plain


class Stations(NamedTuple):
    """One CTA's demands a trip on the SM's shared stations (ns)."""

    tensor: Any                   # tensor cores (mma_path.group_ns summed over the trip's mmas)
    simt: Any                     # FP32 + special-function pipes and the trip's overhead
    delay: Any                    # latency on the dependent path that no station serves, less ``overlap``
    replication: Any = 1          # copies of each accumulator row the SIMT work runs on
    mma: Any = 0                  # the trip's mmas alone (before the shared-memory port floor)
    groups: Any = 1               # warpgroups of one CTA running the chain side by side
    overlap: Any = 0              # what they overlap of it, taken off ``delay`` (stations())
    serialized: Any = 0           # serialized wgmma waits added to ``delay`` (tfx.analysis.wgmma_serial)
    lone: Any = False             # one warp a sub-partition: ``simt`` from lone_simt_ns
    servers: Any = 1              # servers a station: a CTA of W < 4 warps holds W of the 4 sub-partitions
    held: Any = 4                 # the sub-partitions one CTA's warps issue from (subpartition_servers)


def cycle_ns(tensor, simt, delay, resident, servers=1):
    """ns of one round of ``resident`` CTAs whose trips each take ``tensor`` and ``simt`` ns on
    two shared stations and ``delay`` ns of latency: exact mean value analysis of the closed
    network (module docstring, tfx.analysis.closed_queue). Arrays elementwise; ``resident`` >= 1.
    ``servers`` (subpartition_servers): each station as that many servers, a CTA alone at one
    served at 1 / servers of its rate (closed_queue.cycle_ns_servers)."""
    if is_array(servers):
        import numpy as np
        one_server = bool((np.asarray(servers) == 1).all())
    else:
        one_server = servers == 1
    if one_server:
        return closed_queue.cycle_ns(resident, (tensor, simt), delay)
    return closed_queue.cycle_ns_servers(resident, (tensor, simt), (servers, servers), delay)


def subpartition_servers(m, warps):
    """Servers each station of the chain has: the SM's sub-partitions over those one CTA's warps
    hold, ``subpartitions / min(warps, subpartitions)`` (1 where the profile states none; arrays
    elementwise). A warp issues on its own sub-partition, its mma.sync on that sub-partition's
    tensor core and its FP32 and MUFU work on that sub-partition's pipes ([WP] H100 SM: four
    processing blocks, each with its own warp scheduler, tensor core and SFUs), so a CTA of 2
    warps alone in its mma or softmax phase runs at 2 / 4 of the rate tfx's station demands
    state (the CTA's work at the whole SM's rate), while two such CTAs in the same phase hold the
    four sub-partitions between them and the station serves at its full rate: mu(j) = min(j, 2) /
    (2 D). At 4 warps or more a CTA holds every sub-partition: one server, as before."""
    held = subpartitions_held(m, warps)
    return 1 if held is None else ratio(m.warp_mma.subpartitions, held)


def subpartitions_held(m, warps):
    """The SM's sub-partitions one CTA's warps issue from, ``min(warps, subpartitions)``; None
    where the profile states no sub-partitions (arrays elementwise)."""
    if m.warp_mma is None:
        return None
    return emin(emax(warps, 1), m.warp_mma.subpartitions)


def scores_mma(loop):
    """The mma whose result the trip reads (attention's QK^T), or None."""
    return next((c for c in loop.mma_ops() if getattr(c, "per_exec_shape", None) is not None
                 and mma_path.used_in_trip(loop, c)), None)


def replication(loop, m, warps):
    """How many warpgroups hold each row of the scores' accumulator (arrays elementwise): a
    warpgroup mma lays 64 rows on each warpgroup, so a 64-row tile on 8 warps (two
    warpgroups, every warp on M for a chained dot: Triton's warpsPerTileV3) is computed, and
    its elementwise softmax run, by both (mma_layout pads M to 128); 1 elsewhere. The
    warp-mma path pads rows inside a warp's 16-row fragment and is left at 1."""
    node = scores_mma(loop)
    if node is None or m.kind != "gpu":
        return 1
    p = mma_layout.plan(node.per_exec_shape, m.inst, warps, getattr(node, "mma_bits", 16),
                        getattr(node, "mma_chained", False))
    rows = node.per_exec_shape[0]
    group = mma_path.warpgroup_mma(node, warps, m)
    copies = p.m / rows
    if is_array(group, copies):
        import numpy as np
        return np.where(np.asarray(group) > 0, copies, 1)
    return copies if group else 1


def accumulator_ops(loop, m, warps) -> list:
    """(op, copies) for each op of the trip that computes another mma's accumulator (through
    views: attention's ``acc * alpha`` before PV) where that mma's layout holds each row in
    ``copies`` warpgroups, other than the scores' ``replication``: such an op runs in the
    accumulator's layout, not the scores'. On the warpgroup mma only a dot that feeds another
    puts every warp on M (tfx.analysis.mma_layout.feeds_dot), so a 64-row tile on 8 warps
    computes its scores twice (both warpgroups hold all 64 rows) but lays PV's 64 x D
    accumulator over the two warpgroups side by side (warps 4 x 2: the ttgir's #mma1 of
    bench/h200/compile_attn_sass.py f,128,64,32,8,3, 32 fp32 values a thread): its rescale
    runs once. Empty where every layout replicates alike (arrays: per configuration)."""
    scores = scores_mma(loop)
    if scores is None or m.kind != "gpu":
        return []
    from tfx.ir.nodes import ValueRef
    ops = loop.body_ops()
    made = {c.op.result: c for c in ops if c.op.result}
    rep = replication(loop, m, warps)
    out = []
    for c in loop.mma_ops():
        if c is scores or getattr(c, "per_exec_shape", None) is None or len(c.op.operands) < 3:
            continue
        acc = c.op.operands[2]
        src = made.get(acc.name) if isinstance(acc, ValueRef) else None
        while src is not None and src.op.opcode in mma_path.VIEWS:
            first = src.op.operands[0] if src.op.operands else None
            src = made.get(first.name) if isinstance(first, ValueRef) else None
        if src is None or src.op.opcode in ("mma", "dot", "load"):
            continue
        p = mma_layout.plan(c.per_exec_shape, m.inst, warps, getattr(c, "mma_bits", 16),
                            getattr(c, "mma_chained", False))
        group = mma_path.warpgroup_mma(c, warps, m)
        copies = p.m / c.per_exec_shape[0]
        if is_array(group, copies):
            import numpy as np
            copies = np.where(np.asarray(group) > 0, copies, 1)
        elif not group:
            copies = 1
        differs = copies != rep
        if not (differs.any() if is_array(differs) else differs):
            continue
        out.append((src, copies))
    return out


def lone_warp(m, warps, resident):
    """Whether each sub-partition of the SM holds at most one warp of the ``resident`` CTAs of
    ``warps`` (a 4-warp CTA alone on its SM); False where the profile states no sub-partitions
    (arrays elementwise)."""
    if m.warp_mma is None:
        return False
    return mma_layout.busiest_subpartition_warps(warps, resident, m.warp_mma.subpartitions) <= 1


def lone_simt_ns(m, vector, special, before=0):
    """ns of one warp's vector + special-function work a trip where it is alone on its
    sub-partition: the special-function unit takes each MUFU for 32 / (its lanes) cycles
    while the warp issues its next instructions, so after the ``before`` ns of FP32 work every
    exp2 waits for (before_exp2_ops: the scaling and the row max) the rest takes the longer of
    the issue (the other FP32 instructions, ``vector - before``, and one issue slot a MUFU:
    ``special`` x the special rate over the FP32 lane rate) and the SFU's time (``special``),
    not their sum (module docstring; arrays elementwise)."""
    slot = m.rate("special", "f32") / (m.rate("vector", "f32") / 2)
    return before + emax(vector - before + special * slot, special)


def before_exp2_ops(loop) -> list:
    """The trip's ops every exp2 waits for: each reduction an exp2 reads through its operands
    (attention's row max, which the scores' shift and the rescale factor both read) and the
    ops before it back to the mmas and loads (the scores' scaling, a causal mask). A row's
    exp2s start only when its max is known, so their work cannot run beside the SFU."""
    ops = loop.body_ops()
    made = {c.op.result: c for c in ops if c.op.result}

    def parents(c):
        return [made[name] for name in c.reads() if name in made]

    def above(starts, stop=()):
        seen = {id(c): c for c in starts}
        stack = list(starts)
        while stack:
            for p in parents(stack.pop()):
                if id(p) not in seen and p.op.opcode not in stop:
                    seen[id(p)] = p
                    stack.append(p)
        return seen
    feeds = above([c for c in ops if c.op.opcode == "exp2"])
    reductions = [c for c in feeds.values() if c.op.opcode == "reduce"]
    before = above(reductions, stop=("mma", "dot", "load"))
    return [c for c in ops if id(c) in before]


def stations(loop, m, warps, one: dict, tensor_ns: Callable[[Any], Any], delay, smem_ns=None,
             simt_ns=None, resident=1) -> Stations:
    """The trip's station demands for one CTA: ``one`` is its engine ns a trip (tensor,
    vector, special, smem), ``tensor_ns(c)`` and ``smem_ns(c)`` one CTA's tensor and
    shared-memory port ns of mma c a trip, ``simt_ns(c)`` its vector + special-function ns of
    op c a trip, ``delay`` the trip's exposed latency (tfx.analysis.trip_latency.exposed_ns),
    ``resident`` the CTAs on the SM (a lone warp on its sub-partition: lone_simt_ns)."""
    tensor = 0
    for c in loop.mma_ops():
        if c.per_exec:
            tensor = tensor + mma_path.group_ns(c, loop, m, warps, tensor_ns(c), smem_ns(c) if smem_ns else None)
    # the mmas' operands and the trip's copies share the SM's shared-memory port: a CTA's
    # tensor phase is no shorter than the trip's port time (tfx.analysis.performance's smem engine)
    mma = emax(tensor, one["tensor"])
    tensor = emax(mma, one["smem"])
    copies = replication(loop, m, warps)
    lone = lone_warp(m, warps, resident)
    before = sum(simt_ns(c) for c in before_exp2_ops(loop)) if simt_ns is not None else 0
    softmax = if_else(lone, lone_simt_ns(m, one["vector"], one["special"], before), one["vector"] + one["special"])
    simt = softmax * copies + m.iteration_ns
    if simt_ns is not None:
        # an op in another mma's accumulator layout runs on that layout's copies of each row
        for c, acc_copies in accumulator_ops(loop, m, warps):
            simt = simt + simt_ns(c) * (acc_copies - copies)
    groups = mma_path.warpgroups(loop, m, warps)
    overlap = (groups - 1) / groups * emin(tensor, simt)
    # where ptxas serializes the trip's wgmmas (their registers exceed a thread's), each
    # instruction's wait is latency too, less what the other row slabs' softmax hides
    # (tfx.analysis.wgmma_serial)
    serial = wgmma_serial.added_ns(loop, m, warps, simt - m.iteration_ns)
    held = subpartitions_held(m, warps)
    return Stations(tensor, simt, delay - overlap + serial, copies, mma, groups, overlap, serial, lone,
                    subpartition_servers(m, warps), 1 if held is None else held)


def prefetch_overlap_ns(waited, waited_mma, groups):
    """ns by which the compute a trip's prefetch leaves after (``waited``: the mmas it waits for,
    ``waited_mma``, plus its vector and special-function work; tfx.analysis.mma_path.prefetch_wait)
    is shorter than that sum where ``groups`` warpgroups of the CTA run the chain side by side
    (arrays elementwise): ``(groups - 1) / groups x min(waited_mma, waited - waited_mma)``, the
    same overlap ``stations`` takes off the chain, on the waited part only (PV, left running,
    is not in it).

    Why: Triton issues the next copies after a CTA barrier behind PV's issue (the 2-stage SASS,
    calibration/h200/measured/attn_sass_s13: "PV's HGMMA left running, a CTA barrier, then the
    next trip's K and V LDGSTS last"), so they leave when the later warpgroup is past its
    compute, and the second warpgroup's QK^T runs under the first one's softmax: two equal
    halves end at ``mma/2 + softmax/2 + max(mma, softmax)/2``, not at the sum."""
    return (groups - 1) / groups * emin(waited_mma, waited - waited_mma)


def issue_ns(loop, m, warps, st: Stations, tensor_ns: Callable[[Any], Any]):
    """ns of a CTA's trip before its next copies leave: Triton's pipeliner issues them last in
    the trip (MatmulLoopPipeline.cpp: the prefetch cluster at the back; in the SASS after the
    PV mma's issue and the CTA barrier), so after the trip's mma work (``st.mma``, not the
    shared-memory port floor: the copies' own writes do not hold up their issue) except the
    mmas that run on asynchronously (mma_path.properly_async: attention's PV), its vector
    and special-function work and its exposed latency; the trip's bookkeeping
    (pipeline.iteration_overhead) is left out as in mma_path.prefetch_wait."""
    running = pipeline_depth.async_mma_ns(loop, m, warps, tensor_ns)
    return emax(st.mma - running, 0) + st.simt - m.iteration_ns + st.delay


def detail(line, st: Stations, resident, round_ns, fmt) -> str:
    """The breakdown's text for one loop: the stations, the delay and the round (scalars)."""
    r = int(resident)
    one = st.tensor + st.simt + st.delay
    copies = float(st.replication)
    groups = int(st.groups)
    latency = (f"exposed latency {fmt(st.delay)}" if groups == 1 else
               f"exposed latency {fmt(st.delay + st.overlap)} - {groups} warpgroups' overlap "
               f"({groups - 1}/{groups} x {fmt(min(st.tensor, st.simt))}) {fmt(st.overlap)}")
    simt = (f"simt {fmt(st.simt)}" if copies == 1 else
            f"simt {fmt(st.simt)} (vector + special x {format_plain(copies)}: each accumulator row on {format_plain(copies)} warpgroups)")
    if bool(st.lone):
        simt += " (one warp a sub-partition: the longer of its issue and its exp2s on the SFU, not their sum)"
    servers = float(st.servers)
    if servers == 1:
        queue = "R_s(n) = D_s (1 + Q_s(n-1))"
    else:
        c = format_plain(servers)
        queue = (f"each station {c} servers: a CTA's warps issue from {format_plain(st.held)} of the SM's "
                 f"{format_plain(st.held * servers)} sub-partitions, so one alone in a phase takes {c} x its demand "
                 f"and {c} share the station's whole rate, mu(j) = min(j, {c}) / ({c} D_s), "
                 f"R_s(n) = sum_j j / mu(j) p_s(j-1 | n-1)")
    return (f"loop at line {line}: a trip waits for its own mma (QK^T -> softmax -> PV); one CTA's chain = "
            f"tensor {fmt(st.tensor)} + {simt} + {latency} = {fmt(one)}; "
            f"{format_counted(r, 'CTA')} per SM overlap their chains in random order (closed queue, mean value analysis: "
            f"{queue}, cycle = R_tensor + R_simt + delay): {fmt(round_ns)} a round "
            f"vs {r} x {fmt(one)} = {fmt(r * one)} in turn and {fmt(r * max(st.tensor, st.simt))} "
            f"on the busier station")
