"""The dependent chain of one trip of a serial loop at measured instruction latencies
(docs/analysis.md, section 8).

A trip that reads its own mma result (attention's and decode's QK^T -> softmax -> PV,
tfx.analysis.mma_path.trip_waits_for_mma) cannot start an op before the ops it reads have
finished. Where one CTA has little work a trip (a decode CTA: 4-16 query rows), that chain of
latencies, not the engines' throughput, sets how long the trip's warps take: each op costs
the longer of its one-CTA throughput time and its dependent latency, and the trip the
longest path through the trip's dataflow (``critical_path_ns``). The latencies are the H200's
own, measured by dependent chains timed with clock64 (profile table ``instruction_latency``,
calibration/h200/measured/latency/instr_latency.csv):

* a warp mma (mma.sync m16n8k16) walks K in ``ceil(K / 16)`` steps, each reading the previous
  one's accumulator: ``ceil(K / 16) x mma_sync`` (its independent N tiles pipeline under that
  latency: four of them take 24.95 cycles a step against 24.13 for one). A warpgroup mma's
  latency is not measured: it costs its throughput only.
* a row reduction over the mma accumulator layout (``warps_n`` warps over the row, 8 columns
  per n-tile, 2 values of a row per thread and tile, the 4 lanes of a quad sharing a row):
  ``per_thread - 1`` dependent FP32 steps, 2 butterfly shuffles (``shfl_sync + fma`` each)
  and, where the row spans warps, the partials through shared memory twice (store, barrier,
  load: ``2 x (bar_sync + smem_load)``) with ``log2(warps_n)`` more steps.
* exp2: ``ex2``; any other elementwise op (mul, sub, max, select, cast): ``fma``.
* an mma whose A operand the trip computed while the scores were split over warps along N
  (``warps_n > 1``): every warp needs the whole row of P, so it goes through shared memory
  first (``bar_sync + smem_load``).

Everything is int/float or numpy arithmetic (explore's vectorized sweeps).
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

from tfx.analysis import mma_layout, mma_path
from tfx.analysis.numbers import cdiv, ceil_log2, emax, if_else, is_array, where
from tfx.hw.units import format_plain

VIEWS = mma_path.VIEWS
NO_WORK = ("load", "store", "zeros", "fill", "iota")
QUAD_SHUFFLES = 2          # the 4 lanes of a quad hold one row of an mma accumulator: log2(4)
N_TILE = 8                 # columns of one mma n-tile (m16n8 / wgmma n multiple of 8)
VALUES_PER_TILE_ROW = 2    # values of one row a thread holds per n-tile


class Latencies(NamedTuple):
    """The profile's ``instruction_latency`` facts, in cycles."""

    mma_sync: Any
    shfl_sync: Any
    bar_sync: Any
    ex2: Any
    fma: Any
    smem_load: Any


def facts(m) -> Latencies | None:
    """The profile's measured latencies, or None where it states them not (the term is off)."""
    vals = [m.profile.get(f"instruction_latency.{k}", None) for k in Latencies._fields]
    if any(v is None for v in vals):
        return None
    return Latencies(*vals)



def reduce_cycles(extent, warps_n, lat: Latencies):
    """Dependent cycles of one row reduction of ``extent`` columns laid out as an mma
    accumulator over ``warps_n`` warps along the row (see the module docstring)."""
    per_thread = VALUES_PER_TILE_ROW * cdiv(extent, N_TILE * warps_n)
    local = emax(per_thread - 1, 0) * lat.fma
    shuffles = QUAD_SHUFFLES * (lat.shfl_sync + lat.fma)
    cross = 2 * (lat.bar_sync + lat.smem_load) + ceil_log2(warps_n) * lat.fma
    cross = if_else(warps_n > 1, cross, 0)
    return local + shuffles + cross


def wgmma_wait_cycles(m):
    """``instruction_latency.wgmma_wait``: cycles a trip waits for its warpgroup mma past the
    mma's own tensor time, or None where the profile states it not (such a loop keeps its
    throughput chain)."""
    return m.profile.get("instruction_latency.wgmma_wait", None)


def critical_path_ns(loop, m, warps, op_ns: Callable[[Any], Any]):
    """(ns, steps): the longest dependent path through one trip of ``loop`` (each op the
    longer of ``op_ns(c)``, one CTA's compute ns of op c a trip, and its latency), and for
    scalars the path's steps as (label, ns of its latency, ns it costs); (0, ()) where the
    profile has no ``instruction_latency`` facts or the loop does not wait for its own mma.
    The path the trip's warps wait for before they go on (Triton issues the next prefetch
    after it, tfx.analysis.mma_path.prefetch_wait), where a properly async warpgroup mma
    (``mma_path.properly_async``, attention's PV) runs on while they go on and costs 0, is
    ``walk(...).waited_ns``."""
    walked = _walk(loop, m, warps, op_ns)
    return walked.ns, walked.steps


def exposed_ns(loop, m, warps, op_ns: Callable[[Any], Any]):
    """ns of the trip's critical path that is latency, not work: the sum over its steps of
    (cost - throughput), where an op's latency outlasts its own work (a reduction's shuffle
    chain, the wait for a warpgroup mma's result). No engine is busy for it, so another
    resident CTA's work can fill it (tfx.analysis.chain_overlap: the chain's delay); 0 where
    the path is not known (arrays elementwise)."""
    return _walk(loop, m, warps, op_ns).exposed


class TripPath(NamedTuple):
    """One walk of a trip's dataflow (``walk``)."""

    ns: Any             # the dependent path's ns (``critical_path_ns``)
    steps: tuple        # its steps, for scalars: (label, ns of its latency, ns it costs)
    exposed: Any        # its latency no engine serves (``exposed_ns``)
    waited_ns: Any      # the path the warps wait for: a properly async mma costs its share that is not


NO_PATH = TripPath(0, (), 0, 0)


def walk(loop, m, warps, op_ns: Callable[[Any], Any]) -> TripPath:
    """``critical_path_ns`` (both paths) and ``exposed_ns`` of one walk of the trip, each op's
    ``op_ns`` asked once (tfx.analysis.performance reads all three of the same trip)."""
    return _walk(loop, m, warps, op_ns)


def _walk(loop, m, warps, op_ns) -> TripPath:
    """One trip of ``loop``: its path, the path's exposed latency, and the path its warps wait
    for (each op's cost the same, a properly async mma's times its share that is not async),
    propagated side by side."""
    lat = facts(m)
    if lat is None or m.kind != "gpu" or not mma_path.trip_waits_for_mma(loop):
        return NO_PATH
    ghz = m.clock_ghz
    wg_wait = wgmma_wait_cycles(m)
    ops = loop.body_ops()
    scores = mma_path.scores(loop)
    if scores is None:
        return NO_PATH
    plan = mma_layout.plan(scores.per_exec_shape, m.inst, warps, getattr(scores, "mma_bits", 16),
                           getattr(scores, "mma_chained", False))
    warps_n = plan.warps_n
    scalar = not is_array(warps_n, warps)
    produced = set()
    ready: dict[str, Any] = {}
    hidden: dict[str, Any] = {}   # exposed latency along the path that ends at each value
    path: dict[str, tuple] = {}
    ready_waited: dict[str, Any] = {}   # ... and when each value is ready on the waited path
    end, end_path, end_exposed, end_waited = 0, (), 0, 0
    for c in ops:
        reads = [r for r in c.reads() if r in ready]
        start, start_path, start_exposed, start_waited = 0, (), 0, 0
        for r in reads:
            if scalar and not is_array(ready[r]):
                if ready[r] > start:
                    start, start_path, start_exposed = ready[r], path[r], hidden[r]
            else:
                later = ready[r] > start
                start_exposed = where(later, hidden[r], start_exposed)
                start = emax(start, ready[r])
            start_waited = emax(start_waited, ready_waited[r])
        code = c.op.opcode
        work = op_ns(c)
        if code in VIEWS or code in NO_WORK:
            cycles, label = 0, None
        elif code in ("mma", "dot"):
            shape = c.per_exec_shape
            p = mma_layout.plan(shape, m.inst, warps, getattr(c, "mma_bits", 16), getattr(c, "mma_chained", False))
            group = mma_path.warpgroup_mma(c, warps, m)
            warp_path = 1 - group
            steps = cdiv(p.k, p.depth)
            # mma_sync was timed in clock64 cycles while the SM ran at its sustained-mma clock
            # (warp_mma.clock_fraction of clock.core): in core-clock cycles it is longer
            wm = mma_layout.warp_mma_facts(m.profile)
            frac = wm.clock_fraction if wm is not None else 1
            cycles = warp_path * steps * lat.mma_sync / frac
            at_clock = f" / {format_plain(frac)} (the mma clock)" if frac != 1 else ""
            label = (f"mma line {c.line}: {steps} k-steps x {lat.mma_sync}{at_clock}" if is_array(warp_path) or warp_path
                     else f"mma line {c.line}: warpgroup mma, its throughput")
            if wg_wait is not None:
                # a warpgroup mma: its tensor time (operand-bound, RS group cost) plus the wait
                # for its result (mma_path.group_ns, instruction_latency.wgmma_wait); ``op_ns``
                # is one warpgroup's share where the CTA has several (mma_path.warpgroups)
                groups = mma_path.warpgroups(loop, m, warps)
                work = mma_path.group_ns(c, loop, m, warps, work * groups) / groups
                cycles = cycles + group * (work * ghz + wg_wait)
                if not is_array(group) and group:
                    label = f"mma line {c.line}: warpgroup mma + its wait {wg_wait}"
            a = c.reads()[0] if c.reads() else None
            if a in produced:
                relayout = lat.bar_sync + lat.smem_load
                relayout = if_else(warps_n > 1, relayout, 0)
                cycles = cycles + warp_path * relayout
                if scalar and warps_n > 1:
                    label += f" + P through shared memory {lat.bar_sync} + {lat.smem_load}"
        elif code == "reduce":
            red = getattr(c, "per_exec_reduce", None)
            extent = red[1] if red is not None else plan.n
            cycles = reduce_cycles(extent, warps_n, lat)
            label = f"reduce {c.op.reduce_kind} line {c.line} over {extent} columns"
        elif code == "exp2":
            cycles, label = lat.ex2, f"exp2 line {c.line}"
        elif code == "exp":
            cycles, label = lat.fma + lat.ex2, f"exp line {c.line}"
        else:
            cycles, label = lat.fma, f"{code} line {c.line}"
        latency_ns = cycles / ghz
        cost = emax(work, latency_ns) if label is not None else 0
        # the warps go on past a properly async mma (attention's PV): it costs the waited path
        # only its share that is not async
        cost_waited = cost * (1 - mma_path.properly_async(c, loop, m, warps)) if code in ("mma", "dot") else cost
        exposed = emax(cost - work, 0) if label is not None else 0
        finish = start + cost
        finish_waited = start_waited + cost_waited
        end_waited = emax(end_waited, finish_waited)
        if c.op.result:
            ready[c.op.result] = finish
            ready_waited[c.op.result] = finish_waited
            hidden[c.op.result] = start_exposed + exposed
            if code not in VIEWS:
                produced.add(c.op.result)
            if scalar and not is_array(finish):
                path[c.op.result] = start_path + ((label, latency_ns, cost),) if label else start_path
        if scalar and not is_array(finish):
            if finish > end:
                end = finish
                end_path = path.get(c.op.result, start_path) if c.op.result else start_path
                end_exposed = start_exposed + exposed
        else:
            end_exposed = where(finish > end, start_exposed + exposed, end_exposed)
            end = emax(end, finish)
    # Where the scores' mma is a warpgroup mma whose wait the profile does not state, the
    # path's longest step is not known: a path without it would be no path; that loop keeps
    # its throughput chain.
    measured = 1 - mma_path.warpgroup_mma(scores, warps, m) if wg_wait is None else 1
    if is_array(measured):
        return TripPath(end * measured, (), end_exposed * measured, end_waited * measured)
    return TripPath(end, end_path if scalar else (), end_exposed, end_waited) if measured else NO_PATH


def detail(line, steps, total_ns, throughput_ns, fmt):
    """The breakdown's text: the path's steps (latency, cost) and what the trip takes."""
    parts = " + ".join(f"{label} ({fmt(cost)})" for label, _, cost in steps)
    return (f"loop at line {line}: one trip's dependent path at the measured instruction latencies "
            f"(cycles, instruction_latency.*; each step the longer of its latency and its throughput): "
            f"{parts} = {fmt(total_ns)}; a CTA's trip = max(throughput sum {fmt(throughput_ns)}, "
            f"path {fmt(total_ns)})")
