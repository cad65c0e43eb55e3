"""A GEMM k-loop's next copy waits behind the issue of the trip's warpgroup mma (docs/analysis.md,
section 8, "copy behind the mma").

Triton's pipelined k-loop on the warpgroup mma (the SASS of kernels/persistent_gemm.tile's
Triton kernel at 256x128x128, 8 warps, 2 stages: calibration/h200/measured/tensor_clock/README.md)
runs, each trip: wait for its stage's copies (DEPBAR), a CTA barrier, the trip's HGMMA
instructions, WARPGROUP.DEPBAR.LE gsb0 1 (the previous trip's mma done), a second barrier,
then the cp.async copies of trip i+S-1 (LDGSTS). Read as asynchronous, those copies would fly
while the trip's mma runs and a 2-stage trip would take the longer of the mma and the copies'
round trip. Measured, it takes nearly their **sum** (the first reading of this term; the stamps
below place the copies' leave inside the mma): the k-loop of kernels/gemm.tile with every
byte from L2, one CTA per SM on 78 and 132 SMs (bench/h200/measure_tensor_clock.py,
calibration/h200/measured/tensor_clock/kloop_big.csv):

    tile (BMxBNxBK, warps)  bytes   L2 round trip   mma     sum     measured (78 / 132 SMs)
    256x128x128, 8          98,304  1,086           1,181   2,267   2,100 / 2,312
    128x128x128, 8          65,536    831             591   1,422   1,385 / 1,503
    256x128x64, 8           49,152    704             591   1,295   1,146 / 1,153
    256x64x128, 8           81,920    959             591   1,550   1,608 / 1,667
    128x128x64, 8           32,768    577             295     872     841 /   874
    128x256x32, 8           24,576    513             295     808     732 /   773
    128x64x32, 4            12,288    417              74     491     486 /   505

(ns; the model's leave (below) + round trip: 2,161, 1,316, 1,189, 1,554, 808, 686, 590; the L2 round trip
is tfx.analysis.load_trip.round_trip_ns: 122.2 ns of chain + the
profile's 200 ns L2 latency + the bytes at the SM's 128.7 B/ns port; the mma at the rate the
warpgroup mma runs at alone with every SM busy, measured in the same run: 4,095 flop/cycle at
a 1.73-1.74 GHz SM clock on 132 SMs, ``pipeline.wgmma_clock_fraction`` = 1.735 / 1.98 = 0.876 of
the profile's clock). The warps issue the next copies only once the trip's mma instructions
have gone, so a copy's issue-to-use chain is the mma and then its L2 round trip. With S
stages S-1 copies are in flight (Little's law, as tfx.analysis.performance prices the
prefetch): a trip takes at least (mma + L2 round trip) / (S - 1). At 3 or more stages this
rarely binds (the 128x128x128 tile on 4 warps: (591 + 831) / 2 = 711 ns against the copies'
own bound); at 2 stages it is the trip.

Where the copies leave (calibration/h100/measured/copy_issue_stamps, bench/h200/copy_issue_stamps.py:
clock stamps placed in the campaigns' compiled trip, 8192^3 and 4096^3 on an H100, the H200's SM). Not
after the whole mma: after the warps have *issued* the trip's HGMMAs and passed the second barrier. A
warp keeps at most ``pipeline.wgmma_outstanding`` = 3 HGMMAs issued and not complete, so with k
instructions a warpgroup a trip its last issue waits for its (k - 3)-th to finish: the warpgroups'
instructions interleave on the tensor cores, so that is (k - 3) / k of the trip's mma. Each HGMMA
also holds its sub-partition's issue ``pipeline.wgmma_issue_cycles`` (every warpgroup's warp on it in
turn: g x k x that, the floor of few wide instructions), and the trip pays
``pipeline.wgmma_trip_issue_overhead`` before and after (its barriers, the arrive, the descriptors).
So the copies leave max(mma x max(k - 3, 0) / k, g x k x issue) + overhead into the trip:

    tile, 8 warps, 2 stages   k  stamped leave (cycles)  this   the mma (the old leave)
    128x256x64                4   398                     456   1,024
    256x128x64                8   825                     840   1,024
    128x256x128               8   1,642                   1,480  2,048
    256x128x128              16   1,976                   1,864  2,048
    128x128x64                4   428                     400    512
    128x256x32                2   273                     300    512

(the stamps' issue and barrier phases, cycles of the SM's own clock; the old leave is the mma's 4,096
flop a cycle). 128x256's four wide instructions leave most of its mma queued, where 256x128's eight
narrow ones wait for five: the 2-stage asymmetry the campaigns show (128x256 15-30% under the sum,
256x128 within -6..+8%, docs/analysis.md). The copies' round trip from there is the model's
(load_trip.round_trip_ns), so a 2-stage trip is the leave plus the round trip.

The mma time is the loop's tensor time (tensor efficiency included) over the profile's tensor
efficiency for its dtype times ``wgmma_clock_fraction``: the efficiency (cuBLAS' sustained
rate) is a whole-kernel ceiling, the mma a copy waits behind runs at the tensor cores' own
rate. The DRAM round trip (tfx.analysis.load_trip.loaded_round_trip_ns) stays its own bound:
the trip waits the longer of the two. Only GEMM k-loops (load_trip.applies: an mma, none
chained) whose mma is properly asynchronous (a chained or waited mma already holds the copy:
tfx.analysis.mma_path.prefetch_wait); the profile without the fact: no term. Scalars and
numpy arrays alike.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

from tfx.analysis import load_trip, mma_layout, mma_path
from tfx.analysis.numbers import cdiv, emax, ratio
from tfx.hw.units import formula_bytes, formula_rate
from tfx.hw.units import format_plain

ISSUE_FACTS = ("pipeline.wgmma_outstanding", "pipeline.wgmma_issue_cycles", "pipeline.wgmma_trip_issue_overhead")


def clock_fraction(m) -> float | None:
    """``pipeline.wgmma_clock_fraction`` (the SM clock under warpgroup mmas on every SM over the
    profile's clock), or None where the profile states none (GPU only)."""
    if m.kind != "gpu":
        return None
    return m.profile.get("pipeline.wgmma_clock_fraction", None)


def mma_ns(loop, m, warps, tensor_ns: Callable[[Any], Any], efficiency: Callable[[Any], Any]) -> Any:
    """ns one CTA's properly asynchronous warpgroup mmas of a trip take on the tensor cores at
    their own rate: sum of tensor_ns(c) x efficiency(c) / ``wgmma_clock_fraction`` (0 where the
    profile states no fraction). ``tensor_ns(c)``: the mma's tensor ns a trip at the model's
    sustained rate; ``efficiency(c)``: that rate's efficiency for c's dtype."""
    fraction = clock_fraction(m)
    if not fraction:
        return 0
    total = 0
    for c in loop.mma_ops():
        total = total + _own_ns(c, loop, m, warps, tensor_ns, efficiency, fraction)
    return total


def _own_ns(c, loop, m, warps, tensor_ns, efficiency, fraction) -> Any:
    """ns mma ``c`` of a trip takes at the tensor cores' own rate where it is properly asynchronous
    (0 where not): tensor_ns(c) x efficiency(c) / ``fraction``."""
    return mma_path.properly_async(c, loop, m, warps) * tensor_ns(c) * efficiency(c) / fraction


def issue_facts(m) -> tuple | None:
    """(outstanding HGMMAs a warp, issue cycles an HGMMA, a trip's issue overhead cycles), or None
    where the profile states them not (then the copies leave after the whole mma)."""
    if m.kind != "gpu":
        return None
    vals = tuple(m.profile.get(k, None) for k in ISSUE_FACTS)
    return None if any(v is None for v in vals) else vals


class Issue(NamedTuple):
    """One mma op's trip as its warps issue it: ``k`` HGMMAs a warpgroup, ``groups`` warpgroups."""
    k: Any
    groups: Any


def issue_shape(node, m, warps) -> Issue:
    """The HGMMAs each warpgroup of the CTA issues a trip for mma ``node`` (tfx.analysis.mma_layout:
    the plan's warps over M and N, four warps to a warpgroup along M, the m64nNk instruction's N):
    (rows a warpgroup / 64) x (its columns / N) x (K / the instruction's K)."""
    shape = node.per_exec_shape
    p = mma_layout.plan(shape, m.inst, warps, getattr(node, "mma_bits", 16), getattr(node, "mma_chained", False))
    rows = ratio(p.m, emax(ratio(p.warps_m, 4), 1))
    cols = ratio(p.n, emax(p.warps_n, 1))
    inst_n = mma_layout.instruction_n(shape, warps, m.inst[1])
    k = cdiv(rows, 64) * cdiv(cols, inst_n) * cdiv(p.k, p.depth)
    return Issue(k, emax(warps // 4, 1))


def issue_clock(m) -> float:
    """GHz the issue cycles run at: the profile's clock under warpgroup mmas (x ``wgmma_clock_fraction``)."""
    return m.clock_ghz * clock_fraction(m)


def _leave_parts(mma, shape: Issue, facts: tuple, clock) -> tuple:
    """(the mma still queued when the last HGMMA issues, mma x max(k - outstanding, 0) / k; the issue
    floor, groups x k x the issue cycles) of one op's trip: ``leave_ns`` takes the larger, and the
    breakdown shows both. Arrays elementwise."""
    outstanding, issue, _ = facts
    queued = mma * emax(shape.k - outstanding, 0) / emax(shape.k, 1)
    return queued, shape.groups * shape.k * issue / clock


class OpLeave(NamedTuple):
    """One properly asynchronous warpgroup mma of a trip as the copies' leave prices it: its
    ``line``, its ``mma`` ns at the tensor cores' own rate, its issue ``shape``, the mma still
    ``queued`` when its last HGMMA issues and its issue ``floor`` (``_leave_parts``)."""
    line: Any
    mma: Any
    shape: Issue
    queued: Any
    floor: Any


def op_leaves(loop, m, warps, tensor_ns: Callable[[Any], Any], efficiency: Callable[[Any], Any]) -> list:
    """Each warpgroup mma of a trip of ``loop`` as ``leave_ns`` sums it (``OpLeave``), in program
    order; [] where the profile states no issue facts or no wgmma clock fraction."""
    facts = issue_facts(m)
    fraction = clock_fraction(m)
    if facts is None or not fraction:
        return []
    clock = issue_clock(m)
    out = []
    for c in loop.mma_ops():
        own = _own_ns(c, loop, m, warps, tensor_ns, efficiency, fraction)
        shape = issue_shape(c, m, warps)
        queued, floor = _leave_parts(own, shape, facts, clock)
        out.append(OpLeave(c.line, own, shape, queued, floor))
    return out


def leave_ns(loop, m, warps, tensor_ns: Callable[[Any], Any], efficiency: Callable[[Any], Any]) -> Any:
    """ns into a trip at which the next copies leave: per properly asynchronous warpgroup mma, the
    larger of its mma x max(k - outstanding, 0) / k (the last HGMMA's issue waits for the queue)
    and groups x k x the issue cycles, plus the trip's issue overhead; the whole mma (``mma_ns``)
    where the profile states no issue facts. 0 where no such mma."""
    ops = op_leaves(loop, m, warps, tensor_ns, efficiency)
    return leave_of(ops, m, 0 if ops else mma_ns(loop, m, warps, tensor_ns, efficiency))


def leave_of(ops: list, m, whole) -> Any:
    """The leave of a trip's ``op_leaves``: the sum of each mma's larger part plus the trip's issue
    overhead, 0 where none of its mmas runs; ``whole`` (the trip's ``mma_ns``) where ``ops`` is
    empty (the profile without issue facts)."""
    if not ops:
        return whole
    total = 0
    mma = 0
    for op in ops:
        total = total + (op.mma > 0) * emax(op.queued, op.floor)
        mma = mma + op.mma
    return (mma > 0) * (total + issue_facts(m)[2] / issue_clock(m))


def chain_ns(leave, loaded_bytes, m, f: load_trip.LoadTrip) -> Any:
    """One copy's issue-to-use chain: its leave into the trip (``leave_ns``), then the copies' L2
    round trip (load_trip.round_trip_ns at the profile's L2 latency, the bytes at the SM's port);
    0 where there is no such mma. Arrays elementwise."""
    trip = load_trip.round_trip_ns(m.l2_latency, loaded_bytes, 0, f)
    return (leave > 0) * (leave + trip)


def detail(line, stages, mma, ops: list, loaded_bytes, m, f: load_trip.LoadTrip, fmt) -> str:
    """The breakdown's line (scalars). ``mma``: ``mma_ns``; ``ops``: the trip's ``op_leaves`` ([]: the
    whole mma, the profile without issue facts), whose sum (``leave_of``, as ``leave_ns`` takes it)
    the line shows with each mma's parts, so the words hold the number whatever the loop's count of
    mmas."""
    leave = float(leave_of(ops, m, mma))
    trip = load_trip.round_trip_ns(m.l2_latency, loaded_bytes, 0, f)
    s1 = max(int(stages) - 1, 1)
    per = (leave + trip) / s1
    facts = issue_facts(m)
    rt = (f"then make their L2 round trip {fmt(f.overhead_ns)} of chain + {fmt(m.l2_latency)} + "
          f"{formula_bytes(loaded_bytes)} / {formula_rate(f.port_bytes_per_ns)} = {fmt(trip)}: "
          f"({fmt(leave)} + {fmt(trip)}) / ({int(stages)} - 1) = {fmt(per)} a trip at least")
    ops = [op for op in ops if float(op.mma) > 0]
    if facts is None or not ops:
        return (f"line {line}: the next copies leave after the trip's warpgroup mma, {fmt(mma)} at the tensor "
                f"cores' own rate (clock x {format_plain(clock_fraction(m))}), {rt}")
    outstanding, issue, overhead = facts
    clock = issue_clock(m)

    def one(op, own_line):
        k, g = int(op.shape.k), int(op.shape.groups)
        waits = max(k - int(outstanding), 0)
        where = f"line {op.line}'s " if own_line else "the trip's "
        return (f"{where}{format_plain(k)} HGMMAs a warpgroup (a warp keeps {format_plain(outstanding)} outstanding: "
                f"its last waits for {format_plain(waits)} of the {format_plain(k)} to finish, max({fmt(float(op.mma))} "
                f"of mma at the tensor cores' own rate x {format_plain(waits)} / {format_plain(k)} = "
                f"{fmt(float(op.queued))}, {format_plain(g)} x {format_plain(k)} x {format_plain(issue)} cycles of issue = "
                f"{fmt(float(op.floor))})")

    if len(ops) == 1:
        issued = one(ops[0], False)
    else:
        parts = [one(op, True) + f" = {fmt(max(float(op.queued), float(op.floor)))}" for op in ops]
        issued = (f"the trip's {format_plain(len(ops))} warpgroup mmas, one after another: " + "; ".join(parts)
                  + ", summed")
    return (f"line {line}: the next copies leave once the warps have issued {issued} "
            f"+ {format_plain(overhead)} cycles of the trip's barriers and arrive at {format_plain(round(clock, 3))} GHz "
            f"= {fmt(leave)} (calibration/h100/measured/copy_issue_stamps), {rt}")
