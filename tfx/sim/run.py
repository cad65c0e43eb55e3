"""``simulate(analysis)``: lower each launch and run the event core; extrapolate waves."""

from __future__ import annotations

import math
import time

from tfx.analysis.numbers import cdiv, is_array
from tfx.analysis.performance import unit_mesh
from tfx.errors import TfxError, argument_error
from tfx.hw.units import format_count
from tfx.sim.event_loop import run as run_batch
from tfx.sim.program import compile_stream
from tfx.sim.lower import COPY, ENGINE_NAMES, N_ENGINES, Lowering, ceil_ns, split_captures
from tfx.sim.result import LaunchSim, SimResult, Timeline


def _wave_miss(analysis):
    """The L2 miss ratio per load op (first touches in a wave) each launch was priced with,
    by launch: the analysis' own (``LaunchTime.reuse``, the GROUP_M = 1 drift's re-fetch
    included), so that the simulation and the prediction read one set of ratios."""
    return {lt.scope: lt.reuse for lt in analysis.launches if getattr(lt, "reuse", None) is not None}


# Work items (commands, and the ops composites stream) one simulate may process unless
# --max-events says otherwise: bench/sim_speed.py-style runs process about 30,000 items/s
# on one core (gemm, K = 2^20: 196,620 items in 6.9 s), so this is about 15 s.
DEFAULT_MAX_EVENTS = 500_000


def check_event_budget(analysis, full: bool, tiles: int | None, max_events: int | None) -> int:
    """The estimated work items of this simulation; TfxError (one line: the estimate and the
    ways out) when above ``max_events`` (default DEFAULT_MAX_EVENTS)."""
    budget = DEFAULT_MAX_EVENTS if max_events is None else int(max_events)
    estimate = estimated_events(analysis, full, tiles)
    if estimate <= budget:
        return estimate
    ways = []
    if full:
        ways.append("drop --full (representative mode simulates one unit)")
    if tiles is None or tiles > 8:
        ways.append("--tiles 8 (simulate 8 trips of every loop, extrapolate the rest)")
    ways.append(f"--max-events {estimate} to run it anyway")
    raise TfxError(f"simulating would process about {format_count(estimate)} events, above the budget of "
                   f"{format_count(budget)}; " + ", or ".join(ways))


def simulate(analysis, full: bool = False, tiles: int | None = None, events: bool = True,
             max_events: int | None = None) -> SimResult:
    """Simulate ``analysis`` (an ``Analysis`` of one kernel, scalar parameters).

    ``full``: every unit of the device (shared DRAM bandwidth); default: one
    representative unit with its share of bandwidth, waves extrapolated from the
    analysis' launches. ``tiles``: simulate at most that many trips of every loop
    and extrapolate the rest linearly from the simulated steady state.
    ``events=False`` keeps only counts (faster, less memory). ``max_events``: the budget
    of work items, estimated before anything runs (``check_event_budget``).
    """
    if any(is_array(v) for v in analysis.params.values()):
        raise TfxError("simulate needs scalar parameters (one configuration), not a sweep")
    profile = analysis.profile
    if tiles is not None and tiles < 1:
        raise argument_error("--tiles", "expected a positive number of trips", found=str(tiles))
    check_event_budget(analysis, full, tiles, max_events)
    miss_all = _wave_miss(analysis)
    threads = None
    if analysis.resources is not None and hasattr(analysis.resources, "threads"):
        threads = analysis.resources.threads
    warps = (threads / 32) if threads else 4
    meshes = [c for c in analysis.root.children if c.kind == "mesh"]
    launches = []
    offset = 0
    all_events = []
    labels: list = []
    t_wall = time.perf_counter()
    n_events = 0
    for mesh, lt in zip(meshes, analysis.launches):
        unit_node = unit_mesh(mesh, profile)
        miss = dict(miss_all.get(mesh.id, {}))
        positions = int(lt.positions)
        units = int(lt.units)
        resident = int(lt.resident)
        slots = units * resident
        full_waves = positions // slots
        tail = positions - full_waves * slots
        launch_ns = ceil_ns(profile.get("launch.overhead", 0.0) or 0)
        ls = LaunchSim(scope=mesh.id, positions=positions, units=units, resident=resident,
                       full_waves=full_waves, tail_positions=tail, launch_ns=launch_ns)
        t0 = offset + launch_ns
        if full:
            probe = Lowering(analysis, unit_node, units, miss, warps)
            shared = probe.m.dram_per_unit is None
            lw = Lowering(analysis, unit_node, units, miss, warps, labels=labels,
                          shared_by=units if shared else None)
            b = run_batch(lw, _program(lw, unit_node, tiles), units=units, slots=resident,
                        positions=positions, record=events, shared_dram=shared, offset=t0)
            scale, span, exact = _extrapolated(lw, unit_node, tiles, b, lambda cap: run_batch(
                lw, _program(lw, unit_node, cap), units=units, slots=resident,
                positions=positions, record=False, shared_dram=shared).makespan,
                positions / units, units if shared else 1)
            # one shared DRAM server at the device's bandwidth: a transfer took bytes / device
            # bandwidth, and a unit's share of that server (the representative mode's copy
            # work) is units times as long
            ls.add_batch("all units", b, 1, span, t0, scale, exact, positions, units=units,
                         copy_share=units if shared else 1)
            if all_events:
                all_events.extend(b.events)
            else:
                all_events = b.events     # (the batch's own list: not copied)
            n_events += b.tasks + b.dispatches
            ls.makespan_ns = span
        else:
            batches = []
            if full_waves:
                batches.append(("full wave", resident, units, full_waves))
            if tail:
                r_tail = int(cdiv(tail, units))
                batches.append(("tail wave", max(r_tail, 1), max(min(tail, units), 1), 1))
            t = t0
            for name, r, active, count in batches:
                lw = Lowering(analysis, unit_node, active, miss, warps, labels=labels)
                b = run_batch(lw, _program(lw, unit_node, tiles), units=1, slots=r,
                            positions=r, record=events, offset=t)
                scale, span, exact = _extrapolated(lw, unit_node, tiles, b, lambda cap, lw=lw, r=r: run_batch(
                    lw, _program(lw, unit_node, cap), units=1, slots=r, positions=r,
                    record=False).makespan, r)
                ls.add_batch(name, b, count, span, t, scale, exact, r)
                all_events.extend(b.events)
                n_events += b.tasks + b.dispatches
                t += span * count
            ls.makespan_ns = t - t0
        ls.dma_channels = lw.channels
        ls.hold = lw.hold
        launches.append(ls)
        offset = t0 + ls.makespan_ns
    wall = time.perf_counter() - t_wall
    if events:
        all_events.sort()
    timeline = Timeline(all_events, list(ENGINE_NAMES), labels)
    return SimResult(analysis=analysis, mode="full" if full else "representative",
                     launches=launches, makespan_ns=offset, timeline=timeline, tiles=tiles,
                     wall_s=wall, n_events=n_events)


def _program(lw, unit_node, cap):
    """One position's command stream of ``unit_node``, compiled for the event core."""
    return compile_stream(lw, lw.stream(unit_node, cap))


def busy_floor_ns(work_per_position, positions_per_unit: float, copy_share: float = 1) -> int:
    """The shortest makespan a unit's whole stream allows: each engine serves its commands
    one at a time, so a batch lasts at least its busiest engine's work (``copy_share`` as in
    LaunchSim.add_batch). Extrapolated makespans are floored here, so a reported
    efficiency (busy / makespan) never exceeds 100%."""
    busiest = max(w * positions_per_unit * (copy_share if i == COPY else 1)
                  for i, w in enumerate(work_per_position))
    return int(math.ceil(busiest))


def _extrapolated(lw, unit_node, tiles, b, rerun, positions_per_unit=1, copy_share=1):
    """(work scale, makespan, exact) of a batch simulated with every loop capped at ``tiles`` trips.

    Linear in the bottleneck work W: a second run at half the cap gives the slope,
    T(full) = T(cap) + (W_full - W_cap) * (T(cap) - T(cap/2)) / (W_cap - W_cap/2).
    ``exact``: (work per engine, commands) of one position's uncapped stream, or None when
    nothing was capped (a composite around a loop stays one command however many trips).
    """
    if tiles is None:
        return 1.0, b.makespan, None
    per_full = [0] * N_ENGINES
    cmds_full = _closed_totals(lw, unit_node.children, None, per_full)[0]  # never walks the stream
    full = max(per_full)
    w_cap = max(_totals(lw, unit_node, tiles)[0])
    if not w_cap or full == w_cap:
        return 1.0, b.makespan, None
    exact = (per_full, cmds_full)
    half = max(tiles // 2, 1)
    w_half = max(_totals(lw, unit_node, half)[0])
    scale = full / w_cap
    floor = busy_floor_ns(per_full, positions_per_unit, copy_share)
    if w_half >= w_cap:
        return scale, max(_extrapolate(b.makespan, scale), floor), exact
    t_half = rerun(half)
    slope = (b.makespan - t_half) / (w_cap - w_half)
    # the slope of the short runs can undershoot (their pipeline fill is a larger share):
    # never below the busiest engine's uncapped work
    return scale, max(int(math.ceil(b.makespan + (full - w_cap) * max(slope, 0))), floor), exact


def _totals(lw, unit_node, cap):
    """(demand ns per engine, commands) of one position's stream with loops capped at ``cap``."""
    per = [0] * N_ENGINES
    cmds = 0
    for cmd in lw.stream(unit_node, cap):
        if cmd[0] == "op":
            info = cmd[1]
            if info.view:
                continue
            cmds += 1
            per[info.engine] += info.ns
            per[3] += info.smem
            if info.dispatched:
                per[0] += lw.dispatch_single
        else:
            cmds += 1
            per[0] += lw.dispatch_composite
            for _, seg, _ in cmd[5]:
                for info, _ in seg:
                    per[info.engine] += info.ns
                    per[3] += info.smem
    return per, cmds


def _closed_totals(lw, children, cap, per, in_composite: bool = False) -> tuple[int, int]:
    """``_totals`` in closed form: adds one position's demand per engine into ``per`` and
    returns (commands, work items: the commands and the ops composites stream), multiplying
    a loop body by its trips instead of walking them, so a 2^40-trip loop costs one step."""
    cmds = items = 0
    for c in children:
        k = c.kind
        if k in ("op", "capture"):
            if not (c.per_exec or c.op is not None):
                continue
            info = lw.info(c)
            if in_composite:
                per[info.engine] += info.ns
                per[3] += info.smem
                items += 1
            elif not info.view:
                cmds += 1
                items += 1
                per[info.engine] += info.ns
                per[3] += info.smem
                if info.dispatched:
                    per[0] += lw.dispatch_single
        elif k == "loop":
            trips = lw.loop_trips(c, cap)
            moves, children = split_captures(c)
            n_cmds, n_items = _closed_totals(lw, moves, cap, per, in_composite)  # once
            cmds += n_cmds
            items += n_items
            body = [0] * N_ENGINES
            n_cmds, n_items = _closed_totals(lw, children, cap, body, in_composite)
            for e in range(N_ENGINES):
                per[e] += trips * body[e]
            cmds += trips * n_cmds
            items += trips * n_items
        elif k == "composite" and not in_composite:
            per[0] += lw.dispatch_composite
            _, n_items = _closed_totals(lw, c.children, cap, per, True)
            cmds += 1
            items += 1 + n_items
        else:  # nested mesh, call (or a composite inside one): inline
            n_cmds, n_items = _closed_totals(lw, c.children, cap, per, in_composite)
            cmds += n_cmds
            items += n_items
    return cmds, items


def estimated_events(analysis, full: bool = False, tiles: int | None = None) -> int:
    """About how many work items (commands, and the ops composites stream) ``simulate`` would
    process, from the scope tree in closed form: positions simulated x items per position."""
    miss_all = _wave_miss(analysis)
    threads = getattr(analysis.resources, "threads", None) if analysis.resources is not None else None
    warps = (threads / 32) if threads else 4
    meshes = [c for c in analysis.root.children if c.kind == "mesh"]
    total = 0
    for mesh, lt in zip(meshes, analysis.launches):
        unit_node = unit_mesh(mesh, analysis.profile)
        lw = Lowering(analysis, unit_node, 1, dict(miss_all.get(mesh.id, {})), warps)
        per_position = _closed_totals(lw, unit_node.children, tiles, [0] * N_ENGINES)[1]
        positions, units, resident = int(lt.positions), int(lt.units), int(lt.resident)
        if full:
            simulated = positions
        else:  # simulate()'s batches: a full wave (resident positions) and a tail wave
            full_waves, tail = divmod(positions, units * resident)
            simulated = (resident if full_waves else 0) + (max(int(cdiv(tail, units)), 1) if tail else 0)
        total += per_position * simulated * (2 if tiles is not None else 1)  # --tiles reruns at half
    return total


def _extrapolate(span, scale):
    return span if scale == 1.0 else int(math.ceil(span * scale))
