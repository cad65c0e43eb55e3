"""The tail of a grid whose CTAs run different trip counts (docs/analysis.md, section 8).

A causal attention CTA of query block ``pm`` runs about ``pm x BLOCK_M / BLOCK_N`` key blocks:
its work grows with its coordinate. The waves model (full waves of CTAs of the mean trip
count, then the tail wave) holds when the CTAs start and end in step. CTAs of unequal lengths
do not: the GPU's block scheduler starts the next CTA in launch order on whichever slot frees
first (list scheduling, Graham, "Bounds for certain multiprocessing anomalies", Bell System
Technical Journal 45, 1966), so after the first wave the slots are at random phases of their
CTAs, and the launch ends when the last CTA launched ends. FlashAttention-2's grid (and the
tile's mesh ``cta[B * H, cdiv(S, BLOCK_M)] as (bh, pm)``) launches the query blocks of a head
in ascending order, the longest last: their tail runs with most of the machine idle
(FlashAttention-3's scheduler launches the longest tiles first for this reason).

Closed form (a fluid approximation of list scheduling). P = units x resident slots, each CTA i
takes ``d_i`` ns at the resident rate (its loops' trips x their round, tfx.analysis.performance),
W = sum d_i. Until the queue of CTAs empties every slot is busy; at a random time a slot is
part-way through its CTA, with ``E[d^2] / (2 E[d])`` ns of it left on average (the residual
life of a renewal process, the inspection paradox: Kleinrock, "Queueing Systems" vol. 1, 1975,
section 5.2). The last CTA starts when the work before it has been done less what the slots
still hold, and runs ``d_last`` more:

    makespan = W / P + d_last - E[d^2] / (2 E[d])

A launch of one wave or less starts every CTA together: the longest ends it.

The last CTAs run at the resident rate to the end. That holds for serial chains (a trip that
waits for its own mma, tfx.analysis.mma_path.trip_waits_for_mma: attention), which run at their
own SM's pace: the CTAs that end early free nothing they wait for but their own SM's share. A
CTA bound by the machine's shared bandwidth speeds up as the others end (a persistent GEMM's
one extra tile, ``loop t = sm to TILES step CTAS``), which the formula does not follow: such
loops keep the waves of the mean CTA.

Equal CTAs are not at random phases (a wave starts together): the waves model keeps them. The
trips of each loop are taken as linear in the one mesh coordinate they depend on, from their
counts at its first and last values (the floors of ``pm x BLOCK_M / BLOCK_N`` add a variance
under one trip's); the coordinate's ``n`` values are equally frequent, so
``Var(d) = (sum_L round_L x slope_L)^2 x (n^2 - 1) / 12`` and ``E[d^2] = E[d]^2 + Var(d)``.
Against an event simulation of list scheduling with the attention trip's measured rounds
(calibration/h200/measured/chain/attn_trip.csv: 128 x 32 on 8 warps 672 ns a trip alone, 1137
ns at two CTAs a SM), causal B1 H16 S16384 D128 at 128 x 32 x 2 CTAs: simulated 2.631 ms,
formula 2.662, the mean-length waves 2.346; measured 2.638 ms
(calibration/h200/measured/issue15).

Everything is int/float or numpy arithmetic (explore's vectorized sweeps).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from tfx.analysis import mma_path
from tfx.analysis.numbers import emax, is_array, ratio, where
from tfx.hw.units import format_plain, format_significant


class LoopSpread(NamedTuple):
    """How one loop's trips vary over the mesh coordinate ``var`` (n values)."""

    loop_id: str
    line: int | None
    var: str
    count: Any                    # the coordinate's values (n)
    first: Any                    # trips at its first value
    last: Any                     # trips at its last value (the last CTA launched)
    mean: Any                     # mean trips over the positions (the counted trips)


class Tail(NamedTuple):
    """The parts of the formula (ns; arrays elementwise)."""

    work_ns: Any                  # W / P: positions / slots x the mean CTA
    mean_ns: Any                  # E[d]: the mean CTA at the resident rate
    last_ns: Any                  # d_last: the last CTA launched
    var_ns2: Any                  # Var(d)
    residual_ns: Any              # E[d^2] / (2 E[d])
    makespan_ns: Any              # W / P + d_last - residual
    spreads: tuple = ()


def _trips_at(lp, env, var, value, step):
    span = lp.stop.evaluate({**env, var: value}) - lp.start.evaluate({**env, var: value})
    if is_array(span, step):
        import numpy as np
        return np.maximum(-((-np.asarray(span)) // step), 0)
    return max(-((-span) // step), 0)


def spreads(unit_node, env) -> tuple[LoopSpread, ...] | None:
    """The loops of one CTA's body (outside any loop) whose trip count varies with one
    coordinate of the CTA's mesh, all the same one; () where none varies, None where they
    vary in a way the formula does not hold (over two coordinates, with an outer loop's
    variable, a runtime count, or a loop that is not a serial chain: module docstring)."""
    mesh = unit_node.region
    coords = tuple(getattr(mesh, "coords", ()) or ())
    if not coords:
        return ()
    extents = dict(zip(coords, (e.evaluate(env) for e in mesh.extents)))
    out = []

    def visit(node):
        for c in node.children:
            if c.kind == "loop":
                lp = c.region
                if lp is None or lp.trip.kind == "runtime":
                    continue
                names = lp.stop.free_names() | lp.start.free_names()
                varying = names & set(coords)
                if not varying:
                    continue
                if len(varying) > 1 or names - set(coords) - set(env):
                    out.append(None)
                    continue
                if any(x.kind == "loop" for x in c.walk() if x is not c) or not mma_path.trip_waits_for_mma(c):
                    # not one serial chain (an outer loop of a persistent kernel, a k-loop):
                    # its CTAs may speed up as others end (module docstring)
                    out.append(None)
                    continue
                (var,) = varying
                step = lp.step.evaluate(env)
                n = extents[var]
                out.append(LoopSpread(c.id, c.line, var, n, _trips_at(lp, env, var, 0, step),
                                      _trips_at(lp, env, var, n - 1, step), c.trips))
            elif c.kind not in ("op", "capture", "mesh"):
                visit(c)

    visit(unit_node)
    if any(s is None for s in out) or len({s.var for s in out}) > 1:
        return None
    return tuple(out)


def _round_ns(ns, mean_trips):
    """One trip's round at the resident rate: the loop's ns in one CTA over its mean trips (0
    where no position runs it)."""
    if is_array(ns, mean_trips):
        return where(mean_trips > 0, ns / emax(mean_trips, 1e-300), 0)
    return ratio(ns, mean_trips) if mean_trips else 0


def tail(loop_spreads, loop_ns: dict, mean_ns, positions, slots) -> Tail | None:
    """The list-scheduling makespan of the launch's waves (module docstring): ``loop_ns`` is
    each loop's ns in one CTA at the resident rate (its trips x its round), ``mean_ns`` the
    mean CTA's (the waves model's batch), ``positions`` CTAs on ``slots``. None where no loop's
    trips vary."""
    if not loop_spreads:
        return None
    slope = 0
    end = 0
    for s in loop_spreads:
        round_ns = _round_ns(loop_ns.get(s.loop_id, 0), s.mean)
        n = s.count
        if is_array(n, s.last, s.first):
            step = where(n > 1, (s.last - s.first) / emax(n - 1, 1), 0)
        else:
            step = ratio(s.last - s.first, n - 1) if n > 1 else 0
        slope = slope + round_ns * step
        end = end + round_ns * (s.last - s.mean)
    n = loop_spreads[0].count
    var = slope * slope * (n * n - 1) / 12
    last = mean_ns + end
    if is_array(mean_ns, var):
        residual = where(mean_ns > 0, (mean_ns * mean_ns + var) / (2 * emax(mean_ns, 1e-300)), 0)
    else:
        residual = (mean_ns * mean_ns + var) / (2 * mean_ns) if mean_ns else 0   # no CTA does any work
    work = ratio(positions, slots) * mean_ns
    return Tail(work, mean_ns, last, var, residual, work + last - residual, tuple(loop_spreads))


def longest_ns(loop_spreads, loop_ns: dict, mean_ns):
    """ns of the longest CTA of a launch of one wave or less (module docstring): all start
    together, so the longest ends the launch: the mean CTA's ``mean_ns`` plus each loop's round
    times its trips over the mean at whichever end of the coordinate has more work (the trips
    are linear in it). ``mean_ns`` where no loop's trips vary."""
    if not loop_spreads:
        return mean_ns
    at_first = at_last = 0
    for s in loop_spreads:
        round_ns = _round_ns(loop_ns.get(s.loop_id, 0), s.mean)
        at_first = at_first + round_ns * (s.first - s.mean)
        at_last = at_last + round_ns * (s.last - s.mean)
    return mean_ns + emax(emax(at_first, at_last), 0)


def applies(t: Tail | None, positions, slots):
    """Where the formula replaces the waves: more CTAs than slots (after the first wave the
    slots drift apart) and CTAs of unequal lengths (arrays: elementwise truth)."""
    if t is None:
        return False
    uneven = t.var_ns2 > 0
    return (positions > slots) & uneven if is_array(positions, slots, uneven) else bool(positions > slots and uneven)


def detail(t: Tail, waves_ns, fmt) -> str:
    """The breakdown's text (scalars)."""
    return (f"CTAs of unequal lengths ({_loops(t)}) run in launch order on the slots that free first "
            f"(list scheduling): W/P {fmt(t.work_ns)} + the last CTA launched {fmt(t.last_ns)} - "
            f"the mean residual of the slots' CTAs E[d^2]/(2E[d]) = (mean {fmt(t.mean_ns)}^2 + "
            f"std dev {fmt(t.var_ns2 ** 0.5)}^2) / (2 x {fmt(t.mean_ns)}) = {fmt(t.residual_ns)}: "
            f"{fmt(t.makespan_ns)} vs {fmt(waves_ns)} in waves of the mean CTA")


def _loops(t: Tail) -> str:
    return ", ".join(f"line {s.line}: {format_plain(s.first)} -> {format_plain(s.last)} trips over {s.var} "
                     f"(mean {format_significant(s.mean, 4)})" for s in t.spreads)


def detail_one_wave(t: Tail, longest, mean_ns, fmt) -> str:
    """The breakdown's text for a launch of one wave or less (scalars)."""
    return (f"CTAs of unequal lengths ({_loops(t)}) start together in one wave: the longest ends the "
            f"launch, {fmt(longest)} against the mean CTA's {fmt(mean_ns)}")

