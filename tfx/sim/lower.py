"""Lowering: the analysis' scope tree -> per-position command streams for the simulator.

Every op node becomes a static ``OpInfo`` (engine, integer ns on that engine,
ns on the unit's on-chip memory port, DMA descriptors, the value names it reads
and writes). Durations come from the analysis' own per-unit rates
(``tfx.analysis.performance.Machine`` and ``op_demand``) so the simulation and
the closed-form model agree on the steady state.

``stream(unit_node, ...)`` yields the commands of one position in issue order:

* a loop trip expands its body; a loop with ``stages S >= 2`` is software
  pipelined: its hoistable loads (window operands only) of trip ``k + S - 1``
  are issued before the rest of trip ``k`` (a prologue issues trips 0..S-2),
  each into the next of the S buffers of the loop's ring; every other load has
  one buffer, which its next execution overwrites;
* a ``composite { }`` block is ONE command, loops inside it included, whose inner
  ops the engine's scheduler streams in ``n`` sub-tiles (n = rows of its largest
  inner tile / tensor instruction height), pipelining a loop's trips (its loads
  fill max(stages, 2) buffers);
* every other op is one command; view ops (reshape, transpose, broadcast) are
  free aliases, as in the analysis.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

from tfx.analysis.dma import contiguous_runs
from tfx.analysis.machine import Machine
from tfx.analysis.performance import LaunchMiss, engine_ns, op_demand
from tfx.ir.nodes import ValueRef, Window

# Engine indices (events store the index; ENGINE_NAMES[i] is its name).
DISPATCH, COPY, TENSOR, SMEM, VECTOR, SPECIAL, LINK = range(7)
ENGINE_NAMES = ("dispatch", "copy", "tensor", "smem", "vector", "special", "link")
N_ENGINES = len(ENGINE_NAMES)
VIEWS = ("reshape", "transpose", "broadcast", "return")


def ceil_ns(x) -> int:
    """Integer ns, rounded up (a task never runs faster than the analysis' rate)."""
    if isinstance(x, int):
        return x
    if isinstance(x, Fraction):
        return math.ceil(x)
    x = float(x)
    r = round(x)
    return int(r) if abs(x - r) < 1e-6 else math.ceil(x)


def split_captures(loop) -> tuple[list, list]:
    """(moving captures, body) of a loop node. A capture ``%v -> level`` moves the value
    once per execution of the loop, not per trip (docs/language.md, "Moving captures"; the
    analysis counts it at the loop's enclosing execution count): the streams issue it once,
    before the first trip, and only the body repeats."""
    moves = [c for c in loop.children if c.kind == "capture" and c.per_exec]
    body = [c for c in loop.children if c.kind != "capture"]
    return moves, body


@dataclass
class OpInfo:
    """Static facts of one op (or moving capture) node; shared by all its executions."""

    idx: int                  # label index
    label: str
    engine: int
    ns: int                   # ns on the engine (copy: DRAM/L2 transfer time over the unit's share)
    smem: int                 # ns on the on-chip memory port
    reads: tuple              # names (values and tensors) it reads
    writes: tuple             # names it writes
    view: bool = False        # free alias, no command
    descs: tuple = ()         # copy: ns of each DMA descriptor (contiguous runs; none for an on-chip copy);
                              # link: (latency ns, 1 for the inbound direction (recv) else 0)
    is_load: bool = False     # reads global memory: completion waits out the memory latency
    rows: int = 1             # rows of its result tile (composite streaming granularity)
    dispatched: bool = True   # counts a command (single-op dispatch) outside composites
    work: dict = field(default_factory=dict)   # engine -> demand ns (for utilization)

    @property
    def spec(self) -> tuple:
        sp = self.__dict__.get("_spec")
        if sp is None:
            sp = self.__dict__["_spec"] = (self.ns, self.smem, self.descs, self.idx)
        return sp


class Lowering:
    """Per-launch static op table for one profile and one representative share of bandwidth."""

    def __init__(self, analysis, unit_node, active_units: int, miss: dict | None = None,
                 warps=4, labels: list | None = None, shared_by: int | None = None):
        """``active_units``: the units pulling at once, whose share of the device's bandwidth
        each transfer takes. ``shared_by``: instead, the transfers cross one DRAM server that
        this many units share (``--full`` on a GPU): a transfer takes its bytes at those
        units' combined rate, the device's bandwidth (or, where few units pull, their
        combined per-SM ceilings: tfx.analysis.memory_parallelism.sm_dram_share)."""
        self.a = analysis
        self.profile = analysis.profile
        self.m = Machine(self.profile, unit_node.level, positions=unit_node.execs)
        self.shared_by = int(shared_by) if shared_by else None
        self.active = self.shared_by or max(int(active_units), 1)
        self.miss = LaunchMiss.of(miss or {})
        self.warps = warps
        self.env = analysis.params
        self.labels: list[str] = labels if labels is not None else []
        self.infos: dict[str, OpInfo] = {}
        info = analysis.module.info
        self.result_types = {}
        for k in info.values():
            self.result_types.update(getattr(k, "result_types", {}) or {})
        self.tensors = {}
        for k in analysis.module.kernels:
            for t in k.tensors:
                self.tensors.setdefault(t.name, t)
        p = self.profile
        self.clock_ghz = self.m.clock_ghz
        self.dispatch_single = ceil_ns(self.m.dispatch_single / self.clock_ghz) if self.m.dispatch_single else 0
        self.dispatch_composite = (ceil_ns(self.m.dispatch_composite / self.clock_ghz)
                                   if self.m.dispatch_composite else self.dispatch_single)
        ch = p.get("dma.channels", None)
        self.channels = int(ch) if ch else 0          # 0: no channel limit (GPU TMA / cp.async)
        self.hold = bool(int(p.get("dma.hold_channel_for_round_trip", 0) or 0))
        # A command processor (tiled accelerators: dispatch.single_op stated) issues in order;
        # a DMA waits there for its buffer. GPUs: warps issue, a load waits in the copy queue.
        self.command_processor = self.m.dispatch_single is not None
        cl = p.get("dispatch.completion_latency", None) if self.command_processor else None
        self.completion = ceil_ns(cl / self.clock_ghz) if cl else 0
        self.latency = ceil_ns(self.m.dram_latency or 0)
        self.inst_m = self.m.inst[0] or 1
        # Names inside called kernels, in the caller's terms (see _link_calls).
        self.call_names: dict = {}       # node id -> (callee tensor -> caller name, local prefix)
        self.return_names: dict = {}     # return node id -> the caller's result name
        self._link_calls(unit_node, ({}, ""))

    # ------------------------------------------------------------ names across calls
    @staticmethod
    def _renamed(name: str, scope: tuple) -> str:
        args, prefix = scope
        return args.get(name, name if name.startswith("@") or not prefix else prefix + name)

    def _link_calls(self, node, scope: tuple) -> None:
        """Name every value and tensor inside a called kernel as the dependency tracking of
        the caller sees it: a callee tensor is the argument passed for it (``call K(%x, ...)``:
        K's first tensor ``@A`` is the caller's ``%x``; a window ``T[...]``: the caller's
        ``@T``), so the callee's reads wait for the caller's writer; the callee's own values
        get the call's id as a prefix, so they never alias a caller value of the same name.
        Nested calls compose (the argument names are already in the outer caller's terms)."""
        for c in node.children:
            if scope[0] or scope[1]:
                self.call_names[c.id] = scope
            inner = scope
            if c.kind == "call" and c.op is not None:
                callee = self.a.module.kernel(c.op.callee)
                args = {}
                for t, o in zip(callee.tensors, c.op.operands):
                    name = o.name if isinstance(o, ValueRef) else "@" + o.tensor if isinstance(o, Window) else None
                    if name is not None:
                        args["@" + t.name] = self._renamed(name, scope)
                inner = (args, f"{c.id}::")
                for r in c.children:
                    if getattr(r, "returns_to", None):
                        self.return_names[r.id] = self._renamed(r.returns_to, scope)
            self._link_calls(c, inner)

    def _in_caller_terms(self, node, names: tuple) -> tuple:
        scope = self.call_names.get(node.id)
        return names if scope is None else tuple(self._renamed(n, scope) for n in names)

    # ------------------------------------------------------------ static op facts
    def label_id(self, text: str) -> int:
        self.labels.append(text)
        return len(self.labels) - 1

    def info(self, node) -> OpInfo:
        got = self.infos.get(node.id)
        if got is not None:
            return got
        op = node.op
        code = op.opcode if op is not None else "capture"
        if op is not None and code in VIEWS:
            src = self._in_caller_terms(node, tuple(o.name for o in op.operands if isinstance(o, ValueRef)))
            # `return %v` writes the calling op's result (an alias, like the views)
            dst = (self._in_caller_terms(node, (op.result,)) if op.result else
                   tuple(n for n in (self.return_names.get(node.id),) if n))
            inf = OpInfo(self.label_id(node.label), node.label, VECTOR, 0, 0, src,
                         dst, view=True, dispatched=False)
            self.infos[node.id] = inf
            return inf
        d = op_demand(node, None, self.m, self.miss, self.warps)
        e = engine_ns(d, self.m, 1, self.active)
        if self.shared_by:
            # one unit's share at `active` units, times `active`: the whole server's rate
            e["copy"] = e["copy"] / self.shared_by
        reads, writes = self._names(node)
        smem = ceil_ns(e["smem"])
        work = {}
        if code in ("send", "recv", "allreduce"):
            # over the interconnect between positions (the DMA reads or writes memory
            # alongside); lands one link latency after the transfer
            engine = LINK
            ns = ceil_ns(max(e["link"], e["copy"]))
        elif code in ("load", "copy", "store", "capture"):
            engine = COPY
            ns = ceil_ns(e["copy"])
        elif e["tensor"]:
            engine, ns = TENSOR, ceil_ns(e["tensor"])
        elif e["special"] and not e["vector"]:
            engine, ns = SPECIAL, ceil_ns(e["special"])
        else:
            engine, ns = VECTOR, ceil_ns(e["vector"] + e["special"])
        work[ENGINE_NAMES[engine]] = ns
        if smem:
            work["smem"] = smem
        is_load = engine == COPY and bool(d.global_loads)
        # a copy between on-chip levels (shared memory to registers: ld.shared; a PE's scratchpad to its registers)
        # moves no global byte: no DMA descriptor, so it neither queues at the DRAM server nor waits out the
        # memory latency, only its on-chip port time (``smem``)
        on_chip = engine == COPY and not (d.global_loads or d.l2 or d.dram)
        descs = (() if on_chip else self._descriptors(node, ns) if engine == COPY else
                 (ceil_ns(d.link_latency), int(code == "recv")) if engine == LINK else ())
        inf = OpInfo(self.label_id(node.label), node.label, engine, ns, smem, reads, writes,
                     descs=descs, is_load=is_load, rows=self._rows(op), work=work,
                     dispatched=op is not None and self.m.dispatch_single is not None)
        self.infos[node.id] = inf
        return inf

    def _names(self, node):
        op = node.op
        if op is None:  # moving capture: reads and writes the captured value's name
            name = self._in_caller_terms(node, (node.label.split()[1],))
            return name, name
        reads, writes = [], []
        for o in op.operands:
            if isinstance(o, ValueRef):
                reads.append(o.name)
            elif isinstance(o, Window):
                reads.append("@" + o.tensor)
                for ax in o.axes:
                    if ax.kind == "gather" and ax.index:
                        reads.append(ax.index)
        if op.target is not None:
            writes.append("@" + op.target.tensor)
        if op.result:
            writes.append(op.result)
        return self._in_caller_terms(node, tuple(reads)), self._in_caller_terms(node, tuple(writes))

    def _rows(self, op) -> int:
        if op is None:
            return 1
        ty = self.result_types.get(id(op))
        if ty is None or not ty.shape:
            return 1
        try:
            return max(int(ty.shape[0].evaluate(self.env)), 1)
        except Exception:  # index-dependent shape: no streaming granularity from it
            return 1

    def _descriptors(self, node, ns: int) -> tuple:
        """DMA descriptors of a copy: one per contiguous run of the global window, as
        transfer ns each (summing to the op's copy ns). GPUs (no ``dma.channels``): one
        bulk transfer per op (TMA / cp.async group)."""
        if ns <= 0:
            return (0,)
        if not self.channels:
            return (ns,)
        op = node.op
        win = None
        if op is not None:
            win = next((o for o in op.operands if isinstance(o, Window)), None) or op.target
        runs = self._runs(win) if win is not None else 1
        runs = max(1, min(runs, 1 << 16))
        base, extra = divmod(ns, runs)
        return tuple(base + 1 if i < extra else base for i in range(runs))

    def _runs(self, win: Window) -> int:
        """Contiguous runs of a window (``tfx.analysis.dma.contiguous_runs``)."""
        t = self.tensors.get(win.tensor)
        if t is None:
            return 1
        try:
            dims = [int(d.evaluate(self.env)) for d in t.type.shape]
        except Exception:
            return 1
        return int(contiguous_runs(win, dims, self.env))

    # ------------------------------------------------------------ command streams
    def stream(self, node, tiles_cap: int | None = None):
        """Commands of one position of ``node`` in issue order.

        Yields ``("op", OpInfo, tile, ring)`` (ring: None, or ``(key, S, hoisted)`` for a
        load: it fills one of the S buffers of its ring) and
        ``("composite", label_id, [OpInfo...], n_subtiles, tile, segments)``.
        """
        yield from self._block(node.children, 0, tiles_cap)

    @staticmethod
    def _is_load(node) -> bool:
        """A load/copy into an on-chip buffer (a value): it overwrites that buffer."""
        op = node.op
        return op is not None and op.opcode in ("load", "copy") and bool(op.result)

    def _block(self, children, tile, cap):
        for c in children:
            k = c.kind
            if k in ("op", "capture"):
                if c.per_exec or c.op is not None:
                    # one buffer: the next execution of this load overwrites it
                    yield ("op", self.info(c), tile, (c.id, 1, False) if self._is_load(c) else None)
            elif k == "loop":
                yield from self._loop(c, cap)
            elif k == "composite":
                yield self._composite(c, tile, cap)
            else:  # nested mesh (warps/threads), call: their ops run in this unit, in order
                yield from self._block(c.children, tile, cap)

    def _composite(self, c, tile, cap):
        """ONE command: every op inside (loops expanded trip by trip) streamed by the
        engine's scheduler; see ``program._composite_tasks``."""
        segs: list = []
        self._segments(c.children, cap, None, None, segs)
        inner = []
        seen = set()
        for _, seg, _ in segs:
            for info, _ in seg:
                if id(info) not in seen:
                    seen.add(id(info))
                    inner.append(info)
        rows = max((i.rows for i in inner if not i.view), default=1)
        n = max(1, min(64, -(-rows // self.inst_m)))
        lid = self.infos.get(c.id)
        if lid is None:
            lid = OpInfo(self.label_id(c.label), c.label, DISPATCH, 0, 0, (), ())
            self.infos[c.id] = lid
        return ("composite", lid.idx, inner, n, tile, segs)

    def _segments(self, children, cap, ring, trip, out):
        """Straight runs of a composite's ops, ``(trip, [(OpInfo, buffer ring)], loop)``, in
        execution order; a loop inside contributes one run per trip (``loop``: its id, None
        outside loops) and its loads fill a ring of max(stages, 2) buffers (the scheduler
        pipelines the trips)."""
        cur: list = []
        for x in children:
            k = x.kind
            if k in ("op", "capture"):
                if x.per_exec or x.op is not None:
                    buf = None
                    if self._is_load(x):
                        buf = ring if ring is not None else (x.id, 1)
                    cur.append((self.info(x), buf))
                continue
            if cur:
                out.append((trip, cur, ring[0] if ring is not None else None))
                cur = []
            if k == "loop":
                r = (x.id, max(int(x.stages or 1), 2))
                moves, body = split_captures(x)
                if moves:   # once per execution of the loop, before its first trip
                    out.append((trip, [(self.info(c), None) for c in moves],
                                ring[0] if ring is not None else None))
                for t in range(self.loop_trips(x, cap)):
                    self._segments(body, cap, r, t, out)
            else:  # a nested composite, mesh or call: inline
                self._segments(x.children, cap, ring, trip, out)
        if cur:
            out.append((trip, cur, ring[0] if ring is not None else None))

    def loop_trips(self, loop, cap=None) -> int:
        t = loop.trips
        try:
            trips = math.ceil(Fraction(t)) if not isinstance(t, float) else math.ceil(t - 1e-9)
        except (TypeError, ValueError):
            trips = math.ceil(float(t))
        trips = max(int(trips), 0)
        if cap is not None:
            trips = min(trips, cap)
        return trips

    def _loop(self, loop, cap):
        trips = self.loop_trips(loop, cap)
        stages = int(loop.stages or 1)
        moves, body = split_captures(loop)
        for c in moves:   # once per execution of the loop, before its first trip
            yield ("op", self.info(c), 0, None)
        if stages < 2:
            for k in range(trips):
                yield from self._block(body, k, cap)
            return
        hoist = [c for c in body if c.kind == "op" and c.op is not None
                 and c.op.opcode in ("load", "copy") and c.per_exec
                 and all(isinstance(o, Window) and all(ax.kind != "gather" for ax in o.axes)
                         for o in c.op.operands)]
        if not hoist:
            for k in range(trips):
                yield from self._block(body, k, cap)
            return
        hoisted = set(id(c) for c in hoist)
        rest = [c for c in body if id(c) not in hoisted]
        infos = [self.info(c) for c in hoist]
        key = loop.id
        for k in range(min(stages - 1, trips)):
            for inf in infos:
                yield ("op", inf, k, (key, stages, True))
        for k in range(trips):
            if k + stages - 1 < trips:
                for inf in infos:
                    yield ("op", inf, k + stages - 1, (key, stages, True))
            yield from self._block(rest, k, cap)
