"""``SimResult``: what one simulation found; JSON, Chrome trace, text summary, timeline."""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

from tfx.sim.program import STALLS as STALL_REASONS
from tfx.sim.lower import COPY, ENGINE_NAMES

# The simulated schedule is bound by its busiest engine only where that engine works through at least
# half of the waves' makespan; below it the waits on dependencies are the larger part (SimResult.bound_by)
LATENCY_BOUND_EFFICIENCY = 0.5
# Where the analysis names latency, the simulation names an engine instead only where that engine is busy
# through nearly all of its waves, as a pipelined launch's bottleneck is past its fill and drain (the shipped
# engine-bound kernels run theirs 80-99% busy, all but softmax past 90%: copy, decode, the GEMMs)
ENGINE_BOUND_EFFICIENCY = 0.9


class Timeline:
    """The simulated events, sorted by start: tuples ``(start, end, engine, label, tile, unit)``.

    ``engine`` indexes ``engines``; ``label`` indexes ``labels``. Times are integer ns
    from the start of the kernel (launch overhead included).
    """

    def __init__(self, events: list, engines: list, labels: list):
        self.events = events
        self.engines = engines
        self.labels = labels
        self._starts = None           # built on the first events_in (a timeline may never be queried)
        self._maxdur = 0

    def __len__(self) -> int:
        return len(self.events)

    def events_in(self, t0: int, t1: int, unit: int | None = 0) -> list:
        """Events overlapping [t0, t1) (on ``unit``; None for every unit), by start."""
        if self._starts is None:
            self._starts = [e[0] for e in self.events]
            self._maxdur = max((e[1] - e[0] for e in self.events), default=0)
        lo = bisect.bisect_left(self._starts, t0 - self._maxdur)
        hi = bisect.bisect_left(self._starts, t1)
        return [e for e in self.events[lo:hi]
                if e[1] > t0 or (e[1] == e[0] and e[0] >= t0)
                if unit is None or e[5] == unit]

    def as_array(self):
        """The events as a numpy structured array (start, end, engine, label, tile, unit)."""
        import numpy as np
        dt = np.dtype([("start", "i8"), ("end", "i8"), ("engine", "i2"), ("label", "i4"),
                       ("tile", "i8"), ("unit", "i4")])
        return np.array(self.events, dtype=dt)

    def units(self) -> list:
        return sorted({e[5] for e in self.events})


@dataclass
class BatchSim:
    name: str
    count: int                 # times this batch repeats (full waves)
    makespan_ns: int           # one batch, extrapolated if --tiles capped it
    simulated_ns: int          # what the event core ran
    start_ns: int              # where its (first) events lie on the kernel's timeline
    scale: float
    work: list                 # demand ns per engine, one batch (simulated part)
    occupied: list
    stalls: dict
    stall_ops: list            # stalls per op label: [label * 4 + reason], reasons in STALLS order
    commands: int
    descriptors: int
    channel_busy: int
    tasks: int
    exact: bool = False        # work and commands are the uncapped stream's, not scaled
    units: int = 1             # units these numbers cover (--full: every unit of the device)

    def k(self, attr: str) -> float:
        """Factor from the simulated (capped) part to the whole batch for ``attr``."""
        return 1.0 if self.exact and attr in ("work", "commands") else self.scale


@dataclass
class LaunchSim:
    scope: str
    positions: int
    units: int
    resident: int
    full_waves: int
    tail_positions: int
    launch_ns: int
    makespan_ns: int = 0
    batches: list = field(default_factory=list)
    dma_channels: int = 0
    hold: bool = False

    def add_batch(self, name, b, count, span, start, scale, exact=None, positions=1, units=1,
                  copy_share=1) -> None:
        """``units``: units the batch's numbers cover (their totals are divided by it);
        ``copy_share``: factor from the copy engine's task times to a unit's share of a shared
        DRAM server (--full on a GPU: units)."""
        work, commands = list(b.work), b.commands
        if exact is not None:   # capped run: the whole stream's work and commands, counted
            work = [w * positions for w in exact[0]]
            commands = exact[1] * positions
        occupied = list(b.occupied)
        work[COPY] *= copy_share
        occupied[COPY] *= copy_share
        self.batches.append(BatchSim(name=name, count=count, makespan_ns=span, simulated_ns=b.makespan,
                                     start_ns=start, scale=scale, work=work,
                                     occupied=occupied, stalls=dict(b.stalls), stall_ops=list(b.stall_ops),
                                     commands=commands, descriptors=b.descriptors,
                                     channel_busy=b.channel_busy, tasks=b.tasks,
                                     exact=exact is not None, units=units))


@dataclass
class SimResult:
    analysis: Any
    mode: str
    launches: list
    makespan_ns: int
    timeline: Timeline
    tiles: int | None
    wall_s: float
    n_events: int

    # ------------------------------------------------------------ totals (one unit)
    def _sum(self, attr, i=None):
        """Over the whole kernel, per unit: the representative unit's, or with --full the
        device's totals over its units."""
        tot = 0
        for ls in self.launches:
            for b in ls.batches:
                v = getattr(b, attr)
                v = v[i] if i is not None else v
                tot += v * b.count * b.k(attr) / b.units
        return tot

    @property
    def engines(self) -> dict:
        """Per engine: busy ns (its work at the analysis' rates) and utilization of the makespan."""
        out = {}
        span = self.makespan_ns or 1
        for i, name in enumerate(ENGINE_NAMES):
            busy = int(round(self._sum("work", i)))
            occ = int(round(self._sum("occupied", i)))
            out[name] = {"busy_ns": busy, "occupied_ns": occ, "utilization": busy / span}
        return out

    @property
    def stalls(self) -> dict:
        return {r: int(round(sum(b.stalls[r] * b.count * b.scale / b.units for ls in self.launches
                                 for b in ls.batches))) for r in STALL_REASONS}

    def stalls_by_op(self, top: int | None = None) -> list:
        """``[(op, reason, ns)]``, largest first: which op waited how long for what (per unit,
        like ``stalls``; a command at the dispatcher, a load for its buffer, an engine idle
        while a command was dispatched)."""
        labels = self.timeline.labels
        tot: dict = {}                # (op text, reason) -> ns; each batch has its own label ids
        for ls in self.launches:
            for b in ls.batches:
                k = b.count * b.scale / b.units
                for i, v in enumerate(b.stall_ops):
                    if v:
                        key = (labels[i // 4], STALL_REASONS[i % 4])
                        tot[key] = tot.get(key, 0) + v * k
        rows = sorted(((op, why, int(round(v))) for (op, why), v in tot.items() if int(round(v))),
                      key=lambda x: (-x[2], x[0], x[1]))
        return rows[:top] if top is not None else rows

    @property
    def commands(self) -> int:
        return int(round(self._sum("commands")))

    @property
    def dispatch_ns(self) -> int:
        return self.engines["dispatch"]["busy_ns"]

    @property
    def bottleneck_engine(self) -> str:
        e = self.engines
        return max(e, key=lambda k: e[k]["busy_ns"])

    @property
    def bound_by(self) -> str:
        """The busiest engine by the roofline's names (``tfx.analysis.roofline``): the copy
        engine is the DRAM/L2 transfer the analysis names (its ``performance.bound_by`` when
        that is a memory level, else dram), a spill is DRAM traffic, any other engine
        (tensor, vector, special, smem, dispatch) is its own name; ``latency`` where the analysis
        says its bound engine, this one, carries a chain past its own work (the prediction's
        ``performance.bound_by`` is latency: an attention trip's QK^T -> softmax -> PV on the
        tensor engine), so that the two name one bound; ``latency`` too where the busiest engine
        idles through most of the waves (``pipeline_efficiency`` under ``LATENCY_BOUND_EFFICIENCY``):
        the schedule then waits more on its dependencies (the hazard and data stalls) than that
        engine works, which is the analysis' latency (a round longer than its engines' work;
        docs/analysis.md section 7), not the engine's rate (gemm_w4a16: smem 41.6% busy); and where
        the analysis names latency and the busiest engine is not near saturation
        (``ENGINE_BOUND_EFFICIENCY``: gemm_w8a16's smem 50.2% busy), the two models agree on a chain."""
        engine = self.bottleneck_engine
        m = self.analysis.metrics
        latency = m.get("performance.bound_by") == "latency"
        if latency and engine == m.get("performance.bound_engine"):
            return "latency"
        if self.launches:
            eff = self.pipeline_efficiency
            if eff < LATENCY_BOUND_EFFICIENCY or (latency and eff < ENGINE_BOUND_EFFICIENCY):
                return "latency"
        if engine == "copy":
            named = m.get("performance.bound_by")
            return named if named in ("dram", "l2", "latency") else "dram"
        return {"spill": "dram"}.get(engine, engine)

    @property
    def pipeline_efficiency(self) -> float:
        """Busy of each batch's bottleneck engine over the batch's makespan (launch
        overhead excluded), weighted over all batches: 1.0 is a bottleneck never idle."""
        num = den = 0.0
        for ls in self.launches:
            for b in ls.batches:
                num += max(b.work) * b.count * b.k("work") / b.units
                den += b.makespan_ns * b.count
        return num / den if den else 0.0

    @property
    def events(self) -> list:
        return self.timeline.events

    def comparison(self) -> dict:
        """The analysis' times beside the simulation's, and the gap to the prediction with
        the stall kinds behind it (``gap_stalls``: every kind with stall time, its share;
        empty when the simulation equals the prediction). The analysis' numbers are its
        headline (Analysis.headline_metrics: ``performance.predicted_ns`` and ``.bound_by``,
        ``roofline.ideal_ns`` and ``.bound_by``, ``occupancy.blocks_per_sm`` and ``.limiter``,
        ``memory.peak.<level>``) under ``tfx analyze --json``'s metric names, so one key reads
        the same fact in either output (session 14: the times were ``predicted_ns`` and
        ``roofline_ideal_ns``, and CTAs per SM and peak memory were missing; docs/simulator.md)."""
        m = self.analysis.metrics
        pred = _plain(m.get("performance.predicted_ns"))
        ideal = _plain(m.get("roofline.ideal_ns"))
        gap = self.makespan_ns - pred if pred else None
        return {
            **self.analysis.headline_metrics(),
            "sim_over_predicted": self.makespan_ns / pred if pred else None,
            "sim_over_roofline": self.makespan_ns / ideal if ideal else None,
            "gap_ns": gap,
            "gap_stalls": [{"kind": k, "ns": ns, "share": share} for k, ns, share in stall_shares(self.stalls)]
                          if gap else [],
        }

    # ------------------------------------------------------------ output
    def to_json(self, events: bool = True) -> dict:
        a = self.analysis
        out = {
            "tool": "tfx", "command": "simulate", "kernel": a.kernel.name, "file": a.module.filename,
            "profile": a.profile.name, "knobs": dict(a.knobs), "codegen": a.codegen,
            "parameters": {k: _plain(v) for k, v in a.params.items()},
            "mode": self.mode,
            "mode_detail": ("every unit simulated, DRAM bandwidth shared" if self.mode == "full" else
                            "one representative unit with its share of bandwidth; waves extrapolated "
                            "from the analysis' launches"),
            "time_unit": "ns",
            "tiles_cap": self.tiles,
            "makespan_ns": self.makespan_ns,
            "engines": self.engines,
            "bottleneck_engine": self.bottleneck_engine,
            "bound_by": self.bound_by,
            "pipeline_efficiency": self.pipeline_efficiency,
            "stalls": self.stalls,
            "stalls_by_op": [{"op": op, "reason": why, "ns": ns} for op, why, ns in self.stalls_by_op(20)],
            "commands": self.commands,
            "dispatch_ns": self.dispatch_ns,
            "analysis": self.comparison(),
            "launches": [{
                "scope": ls.scope, "positions": ls.positions, "units": ls.units,
                "resident": ls.resident, "full_waves": ls.full_waves,
                "tail_positions": ls.tail_positions, "launch_ns": ls.launch_ns,
                "makespan_ns": ls.makespan_ns, "dma_channels": ls.dma_channels or None,
                "dma_hold_channel_for_round_trip": int(ls.hold),
                "batches": [{"name": b.name, "count": b.count, "makespan_ns": b.makespan_ns,
                             "simulated_ns": b.simulated_ns, "commands": b.commands,
                             "dma_descriptors": b.descriptors, "tasks": b.tasks,
                             "pipeline_efficiency": (max(b.work) * b.k("work") / b.units / b.makespan_ns
                                                     if b.makespan_ns else 0.0)}
                            for b in ls.batches],
            } for ls in self.launches],
            "engine_names": list(ENGINE_NAMES),
            "event_count": self.n_events,
        }
        if events:
            labels = self.timeline.labels
            out["events"] = [{"engine": ENGINE_NAMES[e], "start": s, "end": t, "op": labels[l],
                              "tile": tile, "unit": u}
                             for (s, t, e, l, tile, u) in self.timeline.events]
        return out

    def events_json_lines(self) -> list[str]:
        """Each event as one compact JSON object, the objects of ``to_json()["events"]`` in
        order, formatted directly (no dict per event): see ``events_json_chunks``."""
        return [line for chunk in self.events_json_chunks() for line in chunk]

    def events_json_chunks(self, step: int = 8192):
        """``events_json_lines()`` in lists of ``step`` lines, each formatted when asked for:
        ``tfx simulate --json`` writes a chunk and drops it before formatting the next, so
        the 199,680 lines of ``--full`` on gemm 4096^3 never live all at once (their
        memory is reused chunk after chunk instead of being paged in and freed at the end).
        The engine and op names are JSON-encoded once (an op label may hold quotes) and a
        tile or unit number is looked up as text (they are small and repeat)."""
        import json
        engine_head = ['{"engine":' + json.dumps(n, ensure_ascii=False) + ',"start":' for n in ENGINE_NAMES]
        op_head = [',"op":' + json.dumps(label, ensure_ascii=False) + ',"tile":' for label in self.timeline.labels]
        events = self.timeline.events
        num = {i: str(i) for i in range(4096)}
        for i in range(0, len(events), step):
            part = events[i:i + step]
            try:
                yield [f'{engine_head[e]}{s},"end":{t}{op_head[lb]}{num[tile]},"unit":{num[u]}}}'
                       for (s, t, e, lb, tile, u) in part]
            except KeyError:              # a tile or unit number past the table
                yield [f'{engine_head[e]}{s},"end":{t}{op_head[lb]}{tile},"unit":{u}}}'
                       for (s, t, e, lb, tile, u) in part]

    def chrome_trace(self) -> dict:
        """Chrome Trace Event JSON (ui.perfetto.dev, chrome://tracing): pid = unit, tid = engine."""
        labels = self.timeline.labels
        evs = []
        for u in self.timeline.units() or [0]:
            evs.append({"ph": "M", "name": "process_name", "pid": u, "tid": 0,
                        "args": {"name": f"unit {u} ({self.mode})"}})
            for i, name in enumerate(ENGINE_NAMES):
                evs.append({"ph": "M", "name": "thread_name", "pid": u, "tid": i, "args": {"name": name}})
                evs.append({"ph": "M", "name": "thread_sort_index", "pid": u, "tid": i,
                            "args": {"sort_index": i}})
        for (s, t, e, l, tile, u) in self.timeline.events:
            evs.append({"ph": "X", "name": labels[l], "cat": ENGINE_NAMES[e], "pid": u, "tid": e,
                        "ts": s / 1000.0, "dur": (t - s) / 1000.0, "args": {"tile": tile}})
        return {"traceEvents": evs, "displayTimeUnit": "ns",
                "otherData": {"kernel": self.analysis.kernel.name, "profile": self.analysis.profile.name,
                              "mode": self.mode, "makespan_ns": self.makespan_ns}}

    def write_trace(self, path: str) -> None:
        """The Chrome trace, written atomically; an unwritable path is a one-line TfxError."""
        from tfx.files import write_json_atomic
        write_json_atomic(path, self.chrome_trace(), what="the trace", indent=None)


def stall_shares(stalls: dict) -> list[tuple[str, int, float]]:
    """``[(kind, ns, share)]``: every stall kind with stall time, largest first (ties in
    ``STALLS`` order), with its share of all the stall time. Stall time is summed over a
    unit's engines and positions, so it is not the gap itself: the shares say which kinds
    of waiting the simulator saw where the closed form assumes average overlap."""
    total = sum(v for v in stalls.values() if v > 0)
    rows = [(kind, ns, ns / total) for kind, ns in stalls.items() if ns > 0]
    rows.sort(key=lambda row: -row[1])
    return rows


def _plain(v):
    from tfx.analysis.numbers import to_plain
    return to_plain(v)
