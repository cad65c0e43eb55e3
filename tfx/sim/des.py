"""The discrete-event core: integer nanoseconds, a heap of (time, kind, seq, arg) tuples.

Model of one unit (SM / PE), see docs/simulator.md:

* each resident position (CTA / PE program) has an in-order **dispatcher**: a
  command is dispatched when the dispatcher is free and no in-flight command
  it depends on is unfinished (read-after-write on value names, write-after-write,
  and, for loads into a staged loop's ring, the readers of the slot's previous
  tile); dispatching costs ``dispatch.single_op`` or ``dispatch.composite`` cycles
  (0 on GPUs: warp issue);
* each **engine** (copy, tensor, vector, special) runs its queue in order; a task
  starts when it is at the head, the engine is free and its inner producers (in a
  composite's dataflow) have finished;
* the **copy** engine splits a transfer into DMA descriptors on ``dma.channels``
  channels (unlimited on GPUs); each descriptor's bytes cross the unit's DRAM
  share (a first-come server, ns = bytes / share) and land ``latency`` later; a
  channel is held until landing (``dma.hold_channel_for_round_trip = 1``) or only
  for the transfer (0);
* the on-chip memory port (``smem``: shared memory / TCM) is a first-come server
  every task reserves for its on-chip bytes; a task ends no earlier than that.

Server reservations are made when tasks start, and tasks start in time order
(the heap), so first-come is by simulated time.

Speed. Every position of a batch runs the same command stream, and which earlier
command a command depends on (by value name, ring slot or composite dataflow)
follows from the stream order alone. So the stream is compiled once
(:func:`compile_stream`) into flat per-command and per-task lists of ints: the
dispatch cost, the candidate dependencies as command indices, the task
durations, engines and descriptors. The event loop then only checks which of
those candidates are still in flight (``c_end < 0``), with no name lookups and
no per-task objects; a position's commands and tasks are ``p * NC + i`` and
``p * NT + r`` in preallocated lists.

Two exact shortcuts (``SHORTCUTS``; the results are the same event for event):

* units that share nothing and start together (``--full`` with per-unit DRAM, sip)
  run the same schedule: :func:`_run_independent` simulates each distinct load once
  and replicates its events;
* a periodic steady state is jumped over (:class:`_Periodic`): once the whole state,
  written relative to now, repeats one period later and the program repeats as well,
  the next periods repeat that one exactly, so the run jumps ahead whole periods,
  repeating their events, counters and writes.
"""

from __future__ import annotations

import gc
import heapq
from itertools import count
from time import perf_counter

from tfx.sim.lower import COPY, DISPATCH, ENGINE_NAMES, LINK, SMEM, SPECIAL, TENSOR, VECTOR

END, DISPATCH_TRY, ENGINE_TRY = 0, 1, 2
STALLS = ("data", "buffer", "dispatch", "hazard")
S_DATA, S_BUFFER, S_DISPATCH, S_HAZARD = range(4)
N_ENG = len(ENGINE_NAMES)


def _split(total: int, n: int) -> list:
    base, extra = divmod(total, n)
    return [base + 1 if i < extra else base for i in range(n)]


class Batch:
    """Result of simulating positions on units: times, work, stalls, events."""

    def __init__(self):
        self.makespan = 0
        self.work = [0] * N_ENG           # demand ns per engine (dispatch: dispatch ns)
        self.occupied = [0] * N_ENG       # engine occupied ns (start..end of its tasks)
        self.stalls = dict.fromkeys(STALLS, 0)
        self.stall_ops = []               # stalls per op label: [label * 4 + reason] (STALLS order)
        self.commands = 0
        self.descriptors = 0
        self.channel_busy = 0             # summed ns channels were held
        self.events = []                  # (start, end, engine, label, tile, unit)
        self.tasks = 0
        self.dispatches = 0               # dispatch intervals (recorded as dispatch events)


class Program:
    """One position's command stream, compiled: parallel lists by command index ``i``
    (``c_*``) and by task index ``r`` (``r_*``); a command's tasks are
    ``c_t0[i] .. c_t0[i] + c_nt[i] - 1``."""

    __slots__ = ("c_comp", "c_cost", "c_label", "c_tile", "c_deps", "c_ring", "c_slot", "c_t0",
                 "c_nt", "c_eng", "r_eng", "r_ns", "r_smem", "r_descs", "r_label", "r_tile",
                 "r_deps", "r_cmd", "r_slot")

    def __init__(self):
        for s in self.__slots__:
            setattr(self, s, [])

    @property
    def commands(self) -> int:
        return len(self.c_cost)

    @property
    def tasks(self) -> int:
        return len(self.r_eng)


def compile_stream(lw, stream) -> Program:
    """Compile one position's command stream (``Lowering.stream``) into a :class:`Program`.

    Replays the dispatcher's bookkeeping in stream order: the last writer of every
    name (views alias their source's writer; a hoisted ring load is also the writer of
    ``(name, tile)``), the readers of every load's buffer (through views too), and each
    composite's inner dataflow. Dependencies are stored as candidates (every writer,
    every reader of the buffer a load overwrites); the event loop keeps those still in
    flight when the command reaches the dispatcher, as a dispatcher looking at its
    scoreboard would.

    Buffers: a load with ``ring = (key, S, hoisted)`` writes one of the ``S`` buffers of
    its ring ``(key, op)``, the one its ``S``-th previous execution filled; it waits (in
    the copy queue, like a semaphore) until every command that read that previous
    contents has finished. ``S = stages`` for a pipelined loop's hoisted loads, 1 for
    every other load (one buffer, overwritten by the next execution).
    """
    pg = Program()
    c_comp, c_cost, c_label, c_tile = pg.c_comp, pg.c_cost, pg.c_label, pg.c_tile
    c_deps, c_ring, c_slot, c_t0, c_nt, c_eng = pg.c_deps, pg.c_ring, pg.c_slot, pg.c_t0, pg.c_nt, pg.c_eng
    r_eng, r_ns, r_smem, r_descs = pg.r_eng, pg.r_ns, pg.r_smem, pg.r_descs
    r_label, r_tile, r_deps, r_cmd, r_slot = pg.r_label, pg.r_tile, pg.r_deps, pg.r_cmd, pg.r_slot
    disp_single, disp_comp = lw.dispatch_single, lw.dispatch_composite
    cp = lw.command_processor
    writer: dict = {}             # name or (name, tile) -> command index
    readers: dict = {}            # load command index -> [commands that read its buffer]
    hist: dict = {}               # (ring key, op) -> [its load commands, in order]
    ring: dict = {}               # name -> stages for hoisted ring values (looked up by tile)
    c_load: list = []
    c_buf: list = []              # command is a buffered load

    def resolve(n, tile):
        w = writer.get((n, tile)) if n in ring else None
        return writer.get(n) if w is None else w

    def add_reader(i, names, tile):
        seen = ()
        for n in names:
            w = resolve(n, tile)
            if w is not None and c_buf[w] and w not in seen:
                readers.setdefault(w, []).append(i)
                seen += (w,)

    for cmd in stream:
        kind = cmd[0]
        if kind == "op" and cmd[1].view:
            info = cmd[1]
            # a free alias: the result is ready when its source is (and lives in its buffer)
            src = info.reads[0] if info.reads else None
            if src is not None:
                w = resolve(src, cmd[2])
                if w is not None:
                    for out in info.writes:
                        writer[out] = w
            continue
        i = len(c_cost)
        deps = []
        t0 = len(r_eng)
        if kind == "op":
            info, tile, rg = cmd[1], cmd[2], cmd[3]
            for n in info.reads:
                w = resolve(n, tile)
                if w is not None:
                    deps.append((w, S_DATA if c_load[w] else S_HAZARD))
            slot = ()
            if rg is not None:
                # its buffer: the readers of what the ring's S-th previous load put there
                h = hist.setdefault((rg[0], info.idx), [])
                if len(h) >= rg[1]:
                    slot = tuple(readers.pop(h[-rg[1]], ()))
                h.append(i)
                if cp:
                    # an in-order command processor issues the DMA only once its buffer
                    # is free, and holds every later command meanwhile
                    deps.extend((r, S_BUFFER) for r in slot)
                    slot = ()
            else:
                for n in info.writes:
                    w = writer.get(n)
                    if w is not None:
                        deps.append((w, S_HAZARD))
            c_comp.append(False)
            c_cost.append(disp_single if info.dispatched else 0)
            c_label.append(info.idx)
            c_tile.append(tile)
            c_ring.append(rg is not None and not cp)
            c_slot.append(slot)
            c_load.append(info.is_load)
            c_buf.append(rg is not None)
            c_eng.append(info.engine)
            r_eng.append(info.engine)
            r_ns.append(info.ns)
            r_smem.append(info.smem)
            r_descs.append(info.descs)
            r_label.append(info.idx)
            r_tile.append(tile)
            r_deps.append(None)
            r_cmd.append(i)
            r_slot.append(False)
            add_reader(i, info.reads, tile)
            if rg is not None and rg[2]:
                for n in info.writes:
                    ring[n] = rg[1]
                    writer[(n, tile)] = i
                    writer[n] = i
            else:
                for n in info.writes:
                    writer[n] = i
                    if n in ring:
                        del ring[n]
        else:
            _, lid, inner, nsub, tile, segs = cmd
            names = []
            seen = set()
            for info in inner:
                for n in info.reads + info.writes:
                    if n not in seen:
                        seen.add(n)
                        names.append(n)
            for n in names:
                w = writer.get(n)
                if w is not None:
                    deps.append((w, S_DATA if c_load[w] else S_HAZARD))
            keys = _composite_tasks(pg, i, segs, nsub, tile)
            c_comp.append(True)
            c_cost.append(disp_comp)
            c_label.append(lid)
            c_tile.append(tile)
            c_ring.append(False)
            c_slot.append(())
            c_load.append(any(x.is_load for x in inner))
            c_buf.append(False)
            c_eng.append(keys)
            add_reader(i, names, tile)
            for info in inner:
                for n in info.writes:
                    writer[n] = i
                    ring.pop(n, None)
        c_deps.append(tuple(deps))
        c_t0.append(t0)
        c_nt.append(len(r_eng) - t0)
    return pg


def _composite_tasks(pg: Program, i: int, segs, nsub: int, tile) -> tuple:
    """The tasks of composite command ``i``: the engine's scheduler streams each segment
    (a straight run of ops: one loop trip's body, or the ops between loops) op by op,
    each op in ``nsub`` sub-tiles queued in order on its engine; sub-tile s of an op
    waits for sub-tile s of its producers in the segment (so a consumer runs while its
    producer streams the next sub-tiles) and for the whole producer of a value from an
    earlier segment (a carried value chains from the previous trip's last sub-tile, in
    the engine: no command round trip). A load inside a
    loop fills one of the ring's S buffers (``segs`` gives (key, S)); it waits for every
    task that read the buffer's previous contents, so with S >= 2 the DMA of trip j+1
    overlaps the compute of trip j.

    The trips of a loop are software pipelined one trip deep, as the scheduler of a
    streaming engine does (FlashAttention-style): an op that depends on no carried value
    (a load, ``q . K^T``, the row max of its scores) is "early", and each engine's queue
    holds early(0), early(1), late(0), early(2), late(1), ...: the tensor engine computes
    trip j+1's ``q . K^T`` while the vector unit runs trip j's softmax. Returns the engines
    touched, in first-use order.
    """
    r_eng, r_ns, r_smem, r_descs = pg.r_eng, pg.r_ns, pg.r_smem, pg.r_descs
    r_label, r_tile, r_deps, r_cmd, r_slot = pg.r_label, pg.r_tile, pg.r_deps, pg.r_cmd, pg.r_slot
    keys: dict = {}
    last: dict = {}               # name -> task of its last writer (earlier segments)
    lbuf: dict = {}               # name -> buffer (inner load execution) its value lives in
    breaders: list = []           # buffer -> tasks that read it
    hist: dict = {}               # (ring key, op) -> [buffers, in order]
    r0 = len(r_eng)
    t_seg_of: list = []           # per task of this composite: its segment
    t_late: list = []             # per task: depends on a carried value (late) or not (early)
    seg_run: list = []            # per segment: (loop, trip) or None outside loops
    for sj, (seg_tile, seg, seg_loop) in enumerate(segs):
        seg_run.append((seg_loop, seg_tile) if seg_loop is not None and seg_tile is not None else None)
        t_seg = tile if seg_tile is None else seg_tile
        subs = [(_split(x.ns, nsub), _split(x.smem, nsub)) for x, _ in seg]
        fills = {}                # op position -> (buffer it fills, tasks it waits for)
        for j, (info, buf) in enumerate(seg):
            if buf is not None and not info.view:
                b = len(breaders)
                breaders.append([])
                h = hist.setdefault((buf[0], info.idx), [])
                prev = h[-buf[1]] if len(h) >= buf[1] else None
                h.append(b)
                fills[j] = (b, tuple(dict.fromkeys(breaders[prev])) if prev is not None else ())
        cur_t = [{} for _ in range(nsub)]     # per sub-tile: name -> its writer in this segment
        cur_b = [{} for _ in range(nsub)]
        for j, (info, buf) in enumerate(seg):
            fill = fills.get(j)
            for s in range(nsub):
                ct, cb = cur_t[s], cur_b[s]
                if info.view:
                    src = info.reads[0] if info.reads else None
                    if src is not None:
                        t = ct[src] if src in ct else last.get(src)
                        bb = cb[src] if src in cb else lbuf.get(src)
                        for out in info.writes:
                            if t is not None:
                                ct[out] = t
                            cb[out] = bb
                    continue
                ddeps = []
                rbufs = []
                late = False
                for n in info.reads:
                    t = ct[n] if n in ct else last.get(n)
                    if t is not None:
                        ddeps.append(t)
                        if t >= r0:
                            # a carried value (an earlier trip of this loop) or a late one
                            q = t - r0
                            if t_late[q] or (t_seg_of[q] != sj and seg_run[sj] is not None
                                             and seg_run[t_seg_of[q]] is not None
                                             and seg_run[t_seg_of[q]][0] == seg_run[sj][0]):
                                late = True
                    bb = cb[n] if n in cb else lbuf.get(n)
                    if bb is not None:
                        rbufs.append(bb)
                if fill is not None:
                    ddeps.extend(fill[1])
                ns_s, sm_s = subs[j][0][s], subs[j][1][s]
                if info.engine == COPY:
                    k = max(1, len(info.descs) // nsub)
                    descs = tuple(_split(ns_s, k)) if ns_s else (0,)
                else:
                    descs = ()
                r = len(r_eng)
                r_eng.append(info.engine)
                r_ns.append(ns_s)
                r_smem.append(sm_s)
                r_descs.append(descs)
                r_label.append(info.idx)
                r_tile.append(t_seg)
                r_deps.append(tuple(dict.fromkeys(ddeps)) if ddeps else None)
                r_cmd.append(i)
                r_slot.append(bool(fill and fill[1]))
                t_seg_of.append(sj)
                t_late.append(late)
                for bb in dict.fromkeys(rbufs):
                    breaders[bb].append(r)
                for out in info.writes:
                    ct[out] = r
                    cb[out] = fill[0] if fill is not None else None
                keys[info.engine] = True
        last.update(cur_t[-1])
        lbuf.update(cur_b[-1])
    _pipeline_trips(pg, r0, t_seg_of, t_late, seg_run)
    return tuple(keys)


def _pipeline_trips(pg: Program, r0: int, t_seg_of: list, t_late: list, seg_run: list) -> None:
    """Reorder a composite's tasks (``r0`` on) one trip deep: within each run of
    consecutive trips 0, 1, 2, ... of one loop, trip j+1's early tasks go before trip j's
    late ones (see ``_composite_tasks``). Engines run their queues in task order, so this
    is the scheduler's issue order; dependencies are renumbered. Kept only when every
    task still comes after its dependencies (otherwise the plain order stays)."""
    n = len(t_seg_of)
    if n == 0 or not any(t_late):
        return
    by_seg: dict = {}
    for q in range(n):
        by_seg.setdefault(t_seg_of[q], []).append(q)
    order: list = []
    sj, nseg = 0, len(seg_run)
    while sj < nseg:
        run = [sj]
        while (sj + 1 < nseg and seg_run[sj] is not None and seg_run[sj + 1] is not None
               and seg_run[sj + 1][0] == seg_run[sj][0] and seg_run[sj + 1][1] == seg_run[sj][1] + 1):
            sj += 1
            run.append(sj)
        sj += 1
        pending: list = []            # late tasks of the previous trip
        for s in run:
            tasks = by_seg.get(s, ())
            order.extend(q for q in tasks if not t_late[q])
            order.extend(pending)
            pending = [q for q in tasks if t_late[q]]
        order.extend(pending)
    if order == list(range(n)):
        return
    new_of = [0] * n
    for pos, q in enumerate(order):
        new_of[q] = pos
    r_deps = pg.r_deps
    for pos, q in enumerate(order):
        deps = r_deps[r0 + q]
        if deps is not None:
            for d in deps:
                if d >= r0 and new_of[d - r0] >= pos:
                    return            # not a topological order: keep the plain one
    for name in ("r_eng", "r_ns", "r_smem", "r_descs", "r_label", "r_tile", "r_deps", "r_cmd", "r_slot"):
        col = getattr(pg, name)
        col[r0:] = [col[r0 + q] for q in order]
    for r in range(r0, r0 + n):
        deps = r_deps[r]
        if deps is not None:
            r_deps[r] = tuple(r0 + new_of[d - r0] if d >= r0 else d for d in deps)


# Exact shortcuts (results are the same event for event; off: every event is simulated):
# independent identical units are simulated once, periodic steady states jumped over.
SHORTCUTS = True
_NEVER = 1 << 60
_VERIFY_JUMPS = False     # recompute the state after each fast-forward jump and compare (slow)
_DEBUG = False     # recompute the state after each fast-forward jump and compare (slow)


class _Periodic:
    """Exact fast-forward of a periodic steady state (see docs/simulator.md, "Speed").

    The loop calls :meth:`check` after an END of the reference position ``ck`` (the most
    recently started one still running). Two checkpoints A and B, both right after such
    an END, are one period apart when the whole simulation state at B is the state at A
    shifted: times by dT = T_B - T_A, every position's commands by dc_p and tasks by
    dt_p. :meth:`canon` writes the state relative to the checkpoint (times - T, command
    and task ids relative to the position's next command and lowest unfinished task;
    the heap in order, without sequence numbers), keeping only what can still decide
    something: a time that every later comparison sees as "past" is clamped (an engine
    or server free before T is free at T; a command finished at or before
    T - completion latency is done and old), everything else is exact. The program
    must repeat as well (:meth:`_static`: each command and task the next m periods
    touch is like the one dc_p / dt_p before it, loop tile + dtile, its dependencies
    shifted too). Then the next m periods repeat A -> B exactly, and :meth:`_apply`
    jumps to the state m periods after B: B's live state moved m periods up, the
    commands and tasks finished meanwhile marked so, A -> B's counters and recorded
    events repeated m times. Anything that does not match exactly is simulated event
    by event, as before; ``_VERIFY_JUMPS`` recomputes the state after each jump and
    asserts it reads exactly as B's.

    Limits: engine queues longer than QLIM and positions with more than WLIM tasks in
    flight (a composite streaming a whole loop) are not compared (no jump); a state that
    drifts (a saturated shared DRAM queue slowly reordering) never repeats, and the
    search then stays under a few % of the run.
    """

    DMAX = 96       # longest period looked for, in reference ENDs
    QLIM = 64       # longest engine queue compared
    WLIM = 512      # most tasks of in-flight commands compared, per position
    MAX_FAILS = 6   # failed candidates before giving up on the reference position
    H = 4           # states written down per candidate (periods up to H lags)

    def __init__(self, s: dict):
        self.__dict__.update(s)
        self.static: dict = {}
        self.jumps: list = []
        self.t_start = perf_counter()
        self.spent = 0.0            # seconds spent writing states down
        self.lo_c: dict = {}
        self.lo_t: dict = {}
        self.first_active = 0
        self.reset()

    def reset(self) -> None:
        self.hist = None            # tracking a candidate period: state -> snapshot, every `lag`
        self.lag = 0
        self.fails = 0
        self.g: list = []           # gaps between the reference ENDs (time, task)
        self.gn = 0
        # check about every 128 events: the reference position has about 1 END in `active`
        active = sum(1 for x in self.p_done_at if x is None)
        self.K = max(2, 128 // max(active, 1))
        self.ck_due[0] = self.K

    # ------------------------------------------------------------ detection
    def check(self, now: int, ref: int) -> int:
        """Called when the reference position's END count reaches ``ck_due``; returns the
        jump in ns (0: none).

        Cheap first: the gaps between the reference position's ENDs must repeat with some
        lag d. Then the state is written down every d ENDs (at most H times) until it
        equals one written before: the period (a multiple of d)."""
        n = len(self.ck_t)
        if self.hist is None:
            if self.fails >= self.MAX_FAILS:
                self.ck_due[0] = _NEVER
                return 0
            k0 = self.p_unit[ref] * self.N_ENG
            if any(len(self.queues[k]) - self.heads[k] > self.QLIM for k in range(k0, k0 + self.N_ENG)):
                return self._fail(n, "long queue")      # (the state is too large to compare)
            lag = self._detect(n)
            if not lag:
                self.ck_due[0] = n + self.K
                return 0
            # keep the cost of writing states down (which may find nothing: a state that
            # drifts, never repeating exactly) under a few % of the run
            if self.spent > 0.03 * (perf_counter() - self.t_start) + 0.002:
                self.ck_due[0] = n + 8 * self.K
                return 0
            self.hist = {}
            self.lag = lag
        t = perf_counter()
        jump = self._track(now, n)
        # (a jump pays for the search)
        self.spent = 0.0 if jump else self.spent + perf_counter() - t
        return jump

    def _track(self, now: int, n: int) -> int:
        snap = self._snapshot(now)
        if snap is None:
            return self._fail(n, "too large")
        a = self.hist.get(snap["canon"])
        if a is not None:
            return self._jump(a, snap, now, n)
        if len(self.hist) >= self.H:
            return self._fail(n, "no period")
        self.hist[snap["canon"]] = snap
        if _DEBUG:
            print("  snapshot", now, "lag", self.lag, "n", n)
        self.ck_due[0] = n + self.lag
        return 0

    def _detect(self, n: int) -> int:
        """Smallest lag d (reference ENDs) over which the recent gaps between them (time,
        task) repeat, at least max(d, 8) of them: a candidate period."""
        t, r, g = self.ck_t, self.ck_r, self.g
        i = self.gn
        if i > n or i < 1:
            g.clear()
            i = 1
        g.extend([(t[j] - t[j - 1], r[j] - r[j - 1]) for j in range(i, n)])
        self.gn = n
        if len(g) > 4 * self.DMAX:
            del g[:len(g) - 3 * self.DMAX]
        last = g[-1] if g else None
        for d in range(1, self.DMAX + 1):
            L = d if d > 8 else 8
            if L + d > len(g):
                break
            if g[-1 - d] == last and g[-L:] == g[-L - d:-d]:
                return d
        return 0

    def _fail(self, n: int, why: str = "") -> int:
        if _DEBUG:
            print("  fail", self.ck_t[-1] if self.ck_t else None, n, why)
        self.hist = None
        self.fails += 1
        self.ck_due[0] = n + self.K
        return 0

    # ------------------------------------------------------------ state
    def _refs(self, T: int):
        """Active positions and their (lowest live command, lowest unfinished task, next command)."""
        NC, NT, rt = self.NC, self.NT, self.rt
        t_done, c_end, p_next, p_done_at = self.t_done, self.c_end, self.p_next, self.p_done_at
        old = T - rt
        refs = {}
        p0 = self.first_active
        while p0 < self.started[0] and p_done_at[p0] is not None:
            p0 += 1
        self.first_active = p0
        lo_t, lo_c = self.lo_t, self.lo_c
        for p in range(p0, self.started[0]):
            if p_done_at[p] is not None:
                continue
            tb = p * NT
            try:
                lt = t_done.index(False, tb + lo_t.get(p, 0), tb + NT) - tb
            except ValueError:
                lt = NT
            lo_t[p] = lt
            cb = p * NC
            pn = p_next[p]
            lc = lo_c.get(p, 0)
            # the commands below the lowest unfinished task's are finished: old if the latest is
            b = self.r_cmd[lt] if lt < NT else pn
            if b > pn:
                b = pn
            if b > lc and max(c_end[cb + lc:cb + b]) <= old:
                lc = b
            while lc < pn:
                ce = c_end[cb + lc]
                if ce < 0 or ce > old:
                    break
                lc += 1
            lo_c[p] = lc
            refs[p] = (lc, lt, pn)
        return refs

    def canon(self, T: int, refs: dict):
        """The state relative to T (see the class doc), or None when too large to compare."""
        NC, NT = self.NC, self.NT
        t_done, t_end, t_wait, t_deps, t_slot, t_floor = (self.t_done, self.t_end, self.t_wait,
                                                          self.t_deps, self.t_slot, self.t_floor)
        c_end, c_wait, c_t0, c_nt = self.c_end, self.c_wait, self.c_t0, self.c_nt
        old = T - self.rt
        lim = self.WLIM
        queues, heads = self.queues, self.heads
        for key in range(len(queues)):
            if len(queues[key]) - heads[key] > self.QLIM:
                return None

        def task(p, r):
            x = p * NT + r
            te = t_end[x]
            w = t_wait[x]
            return (r - refs[p][1], t_done[x], te - T if te >= 0 else None,
                    tuple(w) if w is not None else None)

        try:
            heap_c = [(t - T, k, (a // NT, a % NT - refs[a // NT][1]) if k == 0 else a)
                      for (t, k, _, a) in sorted(self.heap)]
        except KeyError:            # an END of a finished position: cannot be
            return None
        keys_c = []
        busy, eng_idle, eng_waiting = self.busy, self.eng_idle, self.eng_waiting
        for key in range(len(busy)):
            q = queues[key]
            h = heads[key]
            ei = eng_idle[key]
            if h == len(q):
                keys_c.append((max(busy[key], T) - T, eng_waiting[key], max(ei, T) - T))
                continue
            lo = min(ei, T)
            m = T
            qc = []
            for x in q[h:]:
                p = x // NT
                if p not in refs:
                    return None
                r = x - p * NT
                fl = t_floor[x]
                if fl < m:
                    m = fl
                d = t_deps[x]
                if d is not None:
                    d = tuple(task(p, y) for y in d)
                qc.append((p, r - refs[p][1], max(fl, lo) - T, d, t_slot[x]))
            keys_c.append((max(busy[key], T) - T, eng_waiting[key], max(ei, m) - T, tuple(qc)))
        chans = None
        if self.chans:
            chans = tuple([tuple(sorted([max(c, T) - T for c in ch])) for ch in self.chans])
        units_c = (tuple([max(v, T) - T for v in self.dram]), tuple([max(v, T) - T for v in self.tcm]),
                   tuple([max(v, T) - T for v in self.link_in]), chans)
        pos_c = []
        p_free, p_left, p_exhausted, p_try, p_deps, p_slot = (self.p_free, self.p_left, self.p_exhausted,
                                                               self.p_try, self.p_deps, self.p_slot)
        for p, (lc, lt, pn) in refs.items():
            cb = p * NC
            tb = p * NT
            win = []
            size = 0
            for j, ce in enumerate(c_end[cb + lc:cb + pn], lc):
                if ce < 0:
                    # in flight: its tasks (finished ones' ends may be read by a ring slot)
                    t0, n = c_t0[j], c_nt[j]
                    if n == 1:
                        x = tb + t0
                        te = t_end[x]
                        w = t_wait[x]
                        win.append((c_wait[cb + j], t_done[x], te - T if te >= 0 else None,
                                    tuple(w) if w is not None else None))
                        continue
                    size += n
                    if size > lim:
                        return None
                    win.append((c_wait[cb + j], tuple(task(p, r) for r in range(t0, t0 + n))))
                elif ce <= old:
                    win.append(None)        # finished and old: only "done" matters
                else:
                    win.append(ce - T)
            dp = p_deps[p]
            if dp is not None:
                dp = tuple((d - cb - pn, why, c_end[d] - T if c_end[d] >= 0 else None) for d, why in dp)
            sl = p_slot[p]
            if sl is not None:
                sl = tuple(task(p, r) for r in sl)
            pt = p_try[p]
            pos_c.append((p, p_free[p] - T, p_left[p], p_exhausted[p], pt - T if pt >= T else None,
                          dp, sl, tuple(win)))
        return (self.started[0], tuple(heap_c), tuple(keys_c), units_c, tuple(pos_c))

    def _snapshot(self, T: int):
        refs = self._refs(T)
        c = self.canon(T, refs)
        if c is None:
            return None
        return dict(T=T, canon=c, pos=refs, eng_idle=list(self.eng_idle),
                    counters=(list(self.work), list(self.occ), list(self.st), list(self.cnt), list(self.stl)),
                    nev=len(self.events) if self.events is not None else 0)

    # ------------------------------------------------------------ period B
    def _jump(self, a: dict, b: dict, T: int, n: int) -> int:
        """The state at T (snapshot b) is the one at a["T"], shifted: jump as far as the
        program repeats."""
        refs = b["pos"]
        dT = T - a["T"]
        shifts = {}
        dtile = None
        cmd, c_t0, c_nt = self.cmd, self.c_t0, self.c_nt
        for p, (lc, lt, pn) in refs.items():
            lcA, ltA, pnA = a["pos"][p][:3]
            dc, dt = pn - pnA, lt - ltA
            if dc <= 0 or dt <= 0 or pnA >= self.NC or pn >= self.NC:
                return self._fail(n)
            d = cmd[pn][7] - cmd[pnA][7]
            if dtile is None:
                dtile = d
            elif d != dtile:
                return self._fail(n)
            shifts[p] = (dc, dt)
        m = None
        for p, (lc, lt, pn) in refs.items():
            dc, dt = shifts[p]
            lcA, ltA, pnA = a["pos"][p][:3]
            nb_c, ush, nb_t = self._static(dc, dt, dtile)
            x = nb_c[lcA]             # first command from lcA on unlike the one dc later ...
            for y, u in ush:          # ... or sharing a dependency that is not old at A
                if y >= x:
                    break
                if y >= lcA and u >= lcA:
                    x = y
                    break
            mc = (x - 1 - pn) // dc + 1
            ed = c_t0[pn - 1] + c_nt[pn - 1]
            r = nb_t[ltA]
            mt = (r - ed) // dt + 1
            mp = min(mc, mt)
            if m is None or mp < m:
                m = mp
                if _DEBUG:
                    print("   limit", p, "mc", mc, "mt", mt, "lcA", lcA, "pn", pn, "x", x, "ltA", ltA, "ed", ed,
                          "r", r, dc, dt)
        if m is None or m < 1:
            return self._fail(n, f"horizon {m}")
        self._apply(a, T, dT, m, shifts, dtile)
        self.hist = None
        self.fails = 0
        self.jumps.append((T, m, dT))
        if _VERIFY_JUMPS:     # the jumped state must read exactly as B's did (tests, debugging)
            T2 = T + m * dT
            c2 = self.canon(T2, self._refs(T2))
            assert c2 == b["canon"], "fast-forward: the state after the jump differs from B's"
        self.ck_t.clear()
        self.ck_r.clear()
        self.ck_due[0] = self.K
        return m * dT

    def _static(self, dc: int, dt: int, dtile: int):
        """Where the program repeats with this shift: per index, the first command (task) at
        or after it that differs from the one dc (dt) later (a loop tile + dtile), and the
        commands whose dependency is the same command in both (unshifted), with the largest
        such dependency, ascending."""
        key = (dc, dt, dtile)
        got = self.static.get(key)
        if got is not None:
            return got
        NC, NT = self.NC, self.NT
        cmd, c_sdeps, c_sslot = self.cmd, self.c_sdeps, self.c_sslot
        ok_c = [False] * NC
        um = [-1] * NC
        for x in range(NC - dc):
            y = x + dc
            a, b = cmd[x], cmd[y]
            if (a[0] != b[0] or a[1] != b[1] or a[2] != b[2] or a[4] != b[4] or a[5] != b[5]
                    or a[6] != b[6] or b[3] != a[3] + dt or b[7] != a[7] + dtile):
                continue
            da, db = c_sdeps[x], c_sdeps[y]
            sa, sb = c_sslot[x], c_sslot[y]
            if len(da) != len(db) or len(sa) != len(sb):
                continue
            u = -1
            good = True
            for (ja, wa), (jb, wb) in zip(da, db):
                if wa != wb:
                    good = False
                    break
                if jb == ja + dc:
                    continue
                if jb == ja:
                    u = max(u, ja)
                    continue
                good = False
                break
            if good:
                for ja, jb in zip(sa, sb):
                    if jb == ja + dc:
                        continue
                    if jb == ja:
                        u = max(u, ja)
                        continue
                    good = False
                    break
            if good:
                ok_c[x] = True
                um[x] = u
        ok_t = [False] * NT
        r_spec, r_eng, r_slot, r_cmd, r_sdeps = self.r_spec, self.r_eng, self.r_slot, self.r_cmd, self.r_sdeps
        for r in range(NT - dt):
            s = r + dt
            a, b = r_spec[r], r_spec[s]
            if (r_eng[r] != r_eng[s] or r_slot[r] != r_slot[s] or r_cmd[s] != r_cmd[r] + dc
                    or a[:5] != b[:5] or b[5] != a[5] + dtile):
                continue
            da, db = r_sdeps[r], r_sdeps[s]
            if da is None or db is None:
                if da is not db:
                    continue
            elif len(da) != len(db) or any(y != x + dt for x, y in zip(da, db)):
                continue
            ok_t[r] = True
        # first unlike entry at or after each index; the commands sharing a dependency
        nb_c = [NC] * (NC + 1)
        for x in range(NC - 1, -1, -1):
            nb_c[x] = nb_c[x + 1] if ok_c[x] else x
        nb_t = [NT] * (NT + 1)
        for r in range(NT - 1, -1, -1):
            nb_t[r] = nb_t[r + 1] if ok_t[r] else r
        ush = [(x, u) for x, u in enumerate(um) if u >= 0]
        got = self.static[key] = (nb_c, ush, nb_t)
        return got

    def _apply(self, a: dict, T: int, dT: int, m: int, shifts: dict, dtile: int) -> None:
        """Jump m periods ahead of B (time T): the state at T + m dT is B's, shifted.

        Per position, with lc / lt the lowest live command / unfinished task (B: lcB, ltB;
        A: one period lower): commands and tasks below lcB + m dc / ltB + m dt are finished
        and old after the jump (marked so: an old end time; the end times still read, by
        queued tasks, blocked dispatchers and commands in flight, are set exactly); the live
        window above is B's, moved m periods up, and so are the queues from their heads;
        engines, servers and the heap shift by m dT; counters and recorded events repeat
        A -> B's m times.
        """
        NC, NT = self.NC, self.NT
        c_t0, c_nt = self.c_t0, self.c_nt
        r_sdeps = self.r_sdeps
        c_left, c_end, c_wait = self.c_left, self.c_end, self.c_wait
        t_floor, t_done, t_wait, t_end, t_deps, t_slot = (self.t_floor, self.t_done, self.t_wait,
                                                          self.t_end, self.t_deps, self.t_slot)
        queues, heads, eng_idle = self.queues, self.heads, self.eng_idle
        D = m * dT
        # queued tasks' floors: exact above their engine's clamp (see canon), else left as they are
        fclamp = {}
        for key in range(len(queues)):
            q = queues[key]
            lo = min(eng_idle[key], T)
            for x in q[heads[key]:]:
                fclamp[x] = lo
        # queued tasks' finished dependencies (end times read by a ring slot), moved with the jump
        deps_end = []
        for key in range(len(queues)):
            q = queues[key]
            for x in q[heads[key]:]:
                d = t_deps[x]
                if d is not None:
                    p = x // NT
                    tb = p * NT
                    md = m * shifts[p][1]
                    for y in d:
                        if t_done[tb + y]:
                            deps_end.append((tb + y + md, t_end[tb + y] + D))
        # the blocked dispatchers' dependencies and ring slots: their ends are read too
        cmds_end = []
        for p, (dc, dt) in shifts.items():
            dp = self.p_deps[p]
            if dp is not None:
                cmds_end.extend((d + m * dc, c_end[d] + D) for d, _ in dp if c_end[d] >= 0)
            tb = p * NT
            sl = self.p_slot[p]
            if sl is not None:
                deps_end.extend((tb + r + m * dt, t_end[tb + r] + D) for r in sl if t_done[tb + r])
            cb = p * NC
            for j in range(self.lo_c[p], self.p_next[p]):
                if c_end[cb + j] < 0 and c_nt[j] > 1:       # in flight: its finished tasks
                    deps_end.extend((tb + r + m * dt, t_end[tb + r] + D)
                                    for r in range(c_t0[j], c_t0[j] + c_nt[j]) if t_done[tb + r])
        for p, (dc, dt) in shifts.items():
            lcA, ltA = a["pos"][p][:2]
            lcB, ltB, pnB = self.lo_c[p], self.lo_t[p], self.p_next[p]
            cb, tb = p * NC, p * NT
            mc, mt = m * dc, m * dt
            edB = c_t0[pnB - 1] + c_nt[pnB - 1]
            # commands: the live window [lcB, pnB) moves up m periods ...
            for arr, timed in ((c_left, False), (c_end, True), (c_wait, False)):
                v = arr[cb + lcB:cb + pnB]
                if timed:
                    v = [x + D if x >= 0 else x for x in v]
                arr[cb + lcB + mc:cb + pnB + mc] = v
            # ... over commands finished and old: [lcB, lcB + m dc) (only "done" is read
            # again from a finished, old command: any end <= T - rt does)
            c_end[cb + lcB:cb + lcB + mc] = [min(c_end[cb + lcA:cb + lcB])] * mc
            c_left[cb + lcB:cb + lcB + mc] = [0] * mc
            c_wait[cb + lcB:cb + lcB + mc] = [0] * mc
            # tasks: the live window [ltB, edB) moves up m periods ...
            w_floor = t_floor[tb + ltB:tb + edB]
            w_wait = t_wait[tb + ltB:tb + edB]
            w_deps = t_deps[tb + ltB:tb + edB]
            w_end = t_end[tb + ltB:tb + edB]
            w_done = t_done[tb + ltB:tb + edB]
            w_slot = t_slot[tb + ltB:tb + edB]
            base = tb + ltB + mt
            t_floor[base:base + len(w_floor)] = [
                f + D if f > fclamp.get(tb + ltB + i, T) else f for i, f in enumerate(w_floor)]
            t_wait[base:base + len(w_wait)] = [list(w) if w is not None else None for w in w_wait]
            t_deps[base:base + len(w_deps)] = [
                None if d is None else r_sdeps[ltB + i + mt] if d is r_sdeps[ltB + i] else [z + mt for z in d]
                for i, d in enumerate(w_deps)]
            t_end[base:base + len(w_end)] = [x + D if x >= 0 else x for x in w_end]
            t_done[base:base + len(w_done)] = w_done
            t_slot[base:base + len(w_slot)] = w_slot
            # ... over tasks finished: [ltB, ltB + m dt) (a finished task's end is read only
            # by what depends on it: set exactly below; the others need only read as started)
            t_end[tb + ltB:tb + ltB + mt] = [min(t_end[tb + ltA:tb + ltB])] * mt
            t_done[tb + ltB:tb + ltB + mt] = [True] * mt
            self.p_next[p] = pnB + mc
            self.p_free[p] += D
            if self.p_try[p] >= T:
                self.p_try[p] += D
            dp = self.p_deps[p]
            if dp is not None:
                self.p_deps[p] = [(d + mc, why) for d, why in dp]
            sl = self.p_slot[p]
            if sl is not None:
                self.p_slot[p] = [r + mt for r in sl]
            self.lo_c[p] = lcB + mc
            self.lo_t[p] = ltB + mt
        for x, v in deps_end:
            t_end[x] = v
        for x, v in cmds_end:
            c_end[x] = v
        # queues: what is queued at B, m periods up (what ran meanwhile is never read again:
        # a queue is read from its head on)
        for key, eia in enumerate(a["eng_idle"]):
            q = queues[key]
            h = heads[key]
            q[:] = [x + m * shifts[x // NT][1] for x in q[h:]]
            heads[key] = 0
            if eng_idle[key] != eia:
                eng_idle[key] += D
        busy = self.busy
        for key in range(len(busy)):
            v = busy[key]
            busy[key] = (v if v > T else T) + D
        for lst in (self.dram, self.tcm, self.link_in):
            for i, v in enumerate(lst):
                lst[i] = (v if v > T else T) + D
        if self.chans:
            for ch in self.chans:
                for i, v in enumerate(ch):
                    ch[i] = (v if v > T else T) + D
        heap = self.heap
        for i, (t, k, s, x) in enumerate(heap):
            heap[i] = (t + D, k, s, x + m * shifts[x // NT][1] if k == 0 else x)
        wa, oa, sa, ca, sla = a["counters"]
        for lst, la in ((self.work, wa), (self.occ, oa), (self.st, sa), (self.cnt, ca), (self.stl, sla)):
            for i in range(len(lst)):
                lst[i] += m * (lst[i] - la[i])
        ev = self.events
        if ev is not None:
            seg = ev[a["nev"]:]
            for k in range(1, m + 1):
                kt, kl = k * dT, k * dtile
                ev.extend([(s + kt, e + kt, g, lb, tl + kl, u) for (s, e, g, lb, tl, u) in seg])


def run(lw, program: Program, units: int, slots: int, positions: int, record: bool = True,
        shared_dram: bool = False, offset: int = 0) -> Batch:
    """Simulate ``positions`` positions of ``program`` on ``units`` units with ``slots`` resident each.

    Positions start in order on the first free slot (block scheduler). Recorded
    events are shifted by ``offset`` ns (where the batch starts on the kernel's timeline).
    """
    gc_was = gc.isenabled()
    gc.disable()      # the loop allocates only acyclic tuples; collections would rescan them
    try:
        if SHORTCUTS and units > 1 and not shared_dram and positions <= units * slots:
            return _run_independent(lw, program, units, slots, positions, record, offset)
        return _run(lw, program, units, slots, positions, record, shared_dram, offset)
    finally:
        if gc_was:
            gc.enable()


def _run_independent(lw, pg: Program, units, slots, positions, record, off) -> Batch:
    """Units that share nothing (each its own DRAM server, channels and on-chip port) and
    start together: every position starts at 0 (unit u takes positions u * slots ..), so
    the units holding the same number of positions run the same schedule, event for event.

    Exact: a unit's events are ordered by (time, kind, push order) and every push comes from
    one of its own events, so the other units' events never reorder them. Each distinct
    load (``slots`` positions, and the partial unit, if any) is simulated once on one unit;
    its events are replicated onto every unit with that load and its totals multiplied.
    """
    loads: dict = {}                      # positions on the unit -> its units
    for u in range(units):
        k = min(slots, max(0, positions - u * slots))
        if k:
            loads.setdefault(k, []).append(u)
    b = Batch()
    for k, us in loads.items():
        one = _run(lw, pg, 1, k, k, record, False, off)
        n = len(us)
        if one.makespan > b.makespan:
            b.makespan = one.makespan
        for e in range(N_ENG):
            b.work[e] += one.work[e] * n
            b.occupied[e] += one.occupied[e] * n
        for r in STALLS:
            b.stalls[r] += one.stalls[r] * n
        if len(b.stall_ops) < len(one.stall_ops):
            b.stall_ops += [0] * (len(one.stall_ops) - len(b.stall_ops))
        for i, v in enumerate(one.stall_ops):
            if v:
                b.stall_ops[i] += v * n
        b.commands += one.commands * n
        b.descriptors += one.descriptors * n
        b.channel_busy += one.channel_busy * n
        b.tasks += one.tasks * n
        b.dispatches += one.dispatches * n
        if record:
            one.events.sort()             # then the copies come out sorted: unit is the last key
            b.events += [(s, t, g, lb, tl, u) for (s, t, g, lb, tl, _) in one.events for u in us]
    return b


def _run(lw, pg: Program, units, slots, positions, record, shared_dram, off) -> Batch:
    b = Batch()
    rec = b.events.append if record else None
    heap: list = []
    push = heapq.heappush
    pop = heapq.heappop
    replace = heapq.heapreplace
    nxt = count(1).__next__

    n_ch = lw.channels
    hold = lw.hold
    lat = lw.latency
    rt = lw.completion                     # command completion -> command processor (ns)

    NC, NT = pg.commands, pg.tasks
    c_t0, c_nt = pg.c_t0, pg.c_nt
    # per command: (cost, tasks, composite, first task, ring, engine(s), label, tile, dep commands)
    cmd = list(zip(pg.c_cost, c_nt, pg.c_comp, c_t0, pg.c_ring, pg.c_eng, pg.c_label, pg.c_tile,
                   [tuple(j for j, _ in d) for d in pg.c_deps]))
    c_sdeps, c_sslot = pg.c_deps, pg.c_slot
    c_ncomp = [sum(1 for r in range(t0, t0 + n) if pg.r_eng[r] != COPY and pg.r_eng[r] != LINK)
               for t0, n in zip(c_t0, c_nt)]
    r_sdeps, r_cmd, r_eng, r_slot = pg.r_deps, pg.r_cmd, pg.r_eng, pg.r_slot
    r_spec = [(ns, sm, descs, len(descs), label, tile) for ns, sm, descs, label, tile
              in zip(pg.r_ns, pg.r_smem, pg.r_descs, pg.r_label, pg.r_tile)]

    # per-unit engine state, flattened: key = unit * N_ENG + engine
    queues = [[] for _ in range(units * N_ENG)]
    heads = [0] * (units * N_ENG)
    busy = [0] * (units * N_ENG)
    eng_waiting = [False] * (units * N_ENG)
    eng_idle = [0] * (units * N_ENG)       # when the engine last became free (for stall accounting)
    chans = [[0] * n_ch for _ in range(units)] if n_ch else None
    dram = [0] * (1 if shared_dram else units)
    tcm = [0] * units
    link_in = [0] * units                  # inbound link free time per unit (recv)
    upend = [0] * units                    # compute tasks queued on the unit and not started
    work = b.work
    occ = b.occupied
    st = [0, 0, 0, 0]                      # stalls, indexed like STALLS
    stl = [0] * (4 * len(lw.labels))       # the same per op label: stl[label * 4 + reason]
    cnt = [0, 0, 0]                        # descriptors, channel-busy ns, dispatches

    # tasks of started positions (global id p * NT + r)
    t_floor: list = []
    t_done: list = []
    t_wait: list = []                      # engine keys waiting for the task (None: none)
    t_end: list = []
    t_deps: list = []                      # relative task ids it waits for (ring slot / dataflow)
    t_slot: list = []
    z_t, f_t, n_t, m_t = [0] * NT, [False] * NT, [None] * NT, [-1] * NT
    # commands of started positions (global id p * NC + i)
    c_left: list = []
    c_end: list = []
    c_wait: list = []                      # times the position waits for the command
    z_c, m_c = [0] * NC, [-1] * NC

    # positions
    p_unit: list = []
    p_next: list = []             # index of its next command
    p_free: list = []             # dispatcher free since
    p_deps: list = []             # in-flight deps of the next command [(cmd id, reason)] or None
    p_slot: list = []             # ring-slot task deps of the next command (relative ids) or None
    p_left: list = []             # outstanding commands
    p_exhausted: list = []
    p_done_at: list = []
    p_try: list = []              # time of the scheduled DISPATCH_TRY (or -1)
    started = [0]

    def start_position(unit: int, now: int) -> None:
        if started[0] >= positions:
            return
        p = started[0]
        started[0] = p + 1
        t_floor.extend(z_t)
        t_done.extend(f_t)
        t_wait.extend(n_t)
        t_end.extend(m_t)
        t_deps.extend(n_t)
        t_slot.extend(f_t)
        c_left.extend(z_c)
        c_end.extend(m_c)
        c_wait.extend(z_c)
        p_unit.append(unit)
        p_next.append(0)
        p_free.append(now)
        p_deps.append(None)
        p_slot.append(None)
        p_left.append(0)
        p_exhausted.append(False)
        p_done_at.append(None)
        p_try.append(now)
        push(heap, (now, DISPATCH_TRY, nxt(), p))

    def note_buffer_stall(key: int, tid: int, tb: int, deps, fl: int) -> None:
        """Task ``tid`` waited for its ring slot: from when it could have started (its floor,
        or when its engine went idle) to when the slot's last reader finished is a buffer
        stall, charged to its op too. Only loads into a busy slot come here."""
        dep_ready = max([t_end[tb + d] for d in deps])
        ei = eng_idle[key]
        since = fl if fl > ei else ei
        if dep_ready > since:
            st[S_BUFFER] += dep_ready - since
            stl[r_spec[tid % NT][4] * 4 + S_BUFFER] += dep_ready - since

    def try_copy(key: int, now: int) -> None:
        """Start the copy engine's queued transfers that can start at ``now``."""
        q = queues[key]
        h = heads[key]
        nq = len(q)
        if h >= nq:
            return
        unit = -1
        while h < nq:
            bk = busy[key]
            if bk > now:
                if not eng_waiting[key]:
                    eng_waiting[key] = True
                    push(heap, (bk, ENGINE_TRY, nxt(), key))
                return
            tid = q[h]
            fl = t_floor[tid]
            if fl > now:
                if not eng_waiting[key]:
                    eng_waiting[key] = True
                    push(heap, (fl, ENGINE_TRY, nxt(), key))
                return
            r = tid % NT
            deps = t_deps[tid]
            if deps is not None:
                tb = tid - r
                for d in deps:
                    if not t_done[tb + d]:
                        w = t_wait[tb + d]
                        if w is None:
                            t_wait[tb + d] = [key]
                        elif key not in w:
                            w.append(key)
                        return
                if t_slot[tid]:
                    note_buffer_stall(key, tid, tb, deps, fl)
            # start the transfer
            if unit < 0:
                unit = key // N_ENG
                srv = 0 if shared_dram else unit
                ch = chans[unit] if n_ch else None
            ns, sm, descs, nd, label, tile = r_spec[r]
            cs = now
            dfree = dram[srv]
            if ch is not None:
                end = now
                held = 0
                # the channels are alike: only the multiset of their free times matters,
                # kept as a heap (the descriptor takes the earliest free one)
                for x in descs:
                    c0 = ch[0]
                    if c0 > cs:
                        cs = c0
                    dfree = (dfree if dfree > cs else cs) + x
                    land = dfree + lat
                    if hold:
                        replace(ch, land)
                        held += land - cs
                    else:
                        replace(ch, dfree)
                        held += dfree - cs
                    if land > end:
                        end = land
                cnt[1] += held
            else:
                for x in descs:
                    dfree = (dfree if dfree > cs else cs) + x
                end = dfree + lat
            cnt[0] += nd
            dram[srv] = dfree
            work[COPY] += ns
            occ[COPY] += end - now
            busy[key] = cs
            if sm:
                s0 = tcm[unit]
                if now > s0:
                    s0 = now
                s0 += sm
                tcm[unit] = s0
                work[SMEM] += sm
                if s0 > end:
                    end = s0
            h += 1
            heads[key] = h
            t_end[tid] = end
            eng_idle[key] = cs
            if rec is not None:
                rec((now + off, end + off, COPY, label, tile, unit))
            push(heap, (end, END, nxt(), tid))

    def try_compute(key: int, now: int) -> None:
        """Start the head task of a compute engine if it can start at ``now`` (its END retries)."""
        h = heads[key]
        q = queues[key]
        if h >= len(q):
            return
        bk = busy[key]
        if bk > now:
            if not eng_waiting[key]:
                eng_waiting[key] = True
                push(heap, (bk, ENGINE_TRY, nxt(), key))
            return
        tid = q[h]
        fl = t_floor[tid]
        if fl > now:
            if not eng_waiting[key]:
                eng_waiting[key] = True
                push(heap, (fl, ENGINE_TRY, nxt(), key))
            return
        r = tid % NT
        deps = t_deps[tid]
        if deps is not None:
            tb = tid - r
            for d in deps:
                if not t_done[tb + d]:
                    w = t_wait[tb + d]
                    if w is None:
                        t_wait[tb + d] = [key]
                    elif key not in w:
                        w.append(key)
                    return
            if t_slot[tid]:
                note_buffer_stall(key, tid, tb, deps, fl)
        start_compute(key, h, tid, now)

    def start_compute(key: int, h: int, tid: int, now: int) -> None:
        """Start ``tid``, the head (index ``h``) of compute engine ``key``: the checks passed."""
        ns, sm, descs, nd, label, tile = r_spec[tid % NT]
        unit = key // N_ENG
        upend[unit] -= 1
        e = key - unit * N_ENG
        end = now + ns
        work[e] += ns
        if sm:
            s0 = tcm[unit]
            if now > s0:
                s0 = now
            s0 += sm
            tcm[unit] = s0
            work[SMEM] += sm
            if s0 > end:
                end = s0
        busy[key] = end
        occ[e] += end - now
        heads[key] = h + 1
        t_end[tid] = end
        eng_idle[key] = end
        if rec is not None:
            rec((now + off, end + off, e, label, tile, unit))
        push(heap, (end, END, nxt(), tid))

    def try_link(key: int, now: int) -> None:
        """Start the link engine's queued transfers: each holds the unit's link for its
        transfer and lands one link latency later (the link pipelines: the next transfer
        starts when this one has left; a recv takes the inbound direction, ``link_in``).
        Its retry is its own ENGINE_TRY, like the copy's."""
        q = queues[key]
        h = heads[key]
        nq = len(q)
        while h < nq:
            tid = q[h]
            r = tid % NT
            spec = r_spec[r]
            fl = t_floor[tid]
            bk = busy[key] if not spec[2][1] else fl     # a recv does not wait for the sends
            at = bk if bk > fl else fl
            if at > now:
                heads[key] = h
                if not eng_waiting[key]:
                    eng_waiting[key] = True
                    push(heap, (at, ENGINE_TRY, nxt(), key))
                return
            deps = t_deps[tid]
            if deps is not None:
                tb = tid - r
                for d in deps:
                    if not t_done[tb + d]:
                        w = t_wait[tb + d]
                        if w is None:
                            t_wait[tb + d] = [key]
                        elif key not in w:
                            w.append(key)
                        heads[key] = h
                        return
            ns, sm, descs, nd, label, tile = spec
            unit = key // N_ENG
            if descs[1]:
                # a recv: the inbound direction (full duplex) carries it; sends go on meanwhile
                s0 = link_in[unit]
                sent = (now if now > s0 else s0) + ns
                link_in[unit] = sent
            else:
                sent = now + ns
                busy[key] = sent
                eng_idle[key] = sent
            end = sent + descs[0]
            work[LINK] += ns
            occ[LINK] += ns
            if sm:
                s0 = tcm[unit]
                if now > s0:
                    s0 = now
                s0 += sm
                tcm[unit] = s0
                work[SMEM] += sm
                if s0 > end:
                    end = s0
            h += 1
            t_end[tid] = end
            if rec is not None:
                rec((now + off, end + off, LINK, label, tile, unit))
            push(heap, (end, END, nxt(), tid))
        heads[key] = h

    tries = [try_compute] * N_ENG
    tries[COPY] = try_copy
    tries[LINK] = try_link
    tries = tries * units                  # by engine key

    def dispatch(p: int, now: int) -> None:
        """Dispatch as many commands of position p as possible at time ``now``.

        The position's dispatcher state (next command, free time, outstanding count) is
        kept in locals and written back on return: nothing called from here reads it.
        """
        cbase = p * NC
        tbase = p * NT
        unit = p_unit[p]
        ubase = unit * N_ENG
        pf = p_free[p]
        i = p_next[p]
        left = p_left[p]
        while True:
            if pf > now:
                p_free[p] = pf
                p_next[p] = i
                p_left[p] = left
                if p_try[p] != pf:
                    p_try[p] = pf
                    push(heap, (pf, DISPATCH_TRY, nxt(), p))
                return
            if i >= NC:
                p_free[p] = pf
                p_next[p] = i
                p_left[p] = left
                p_exhausted[p] = True
                if left == 0 and p_done_at[p] is None:
                    p_done_at[p] = now
                    start_position(unit, now)
                return
            cost, n, comp, t0, ring, eng, label, tile, sdj = cmd[i]
            deps = p_deps[p]
            if deps is None:
                # first look at command i: the ring slot's readers still in flight, then
                # its dependencies (a command not blocked now waits for nothing)
                if ring:
                    slot = []
                    for j in c_sslot[i]:
                        if c_end[cbase + j] < 0:
                            r0 = c_t0[j]
                            slot.extend(range(r0, r0 + c_nt[j]))
                    p_slot[p] = slot or None
                for j in sdj:
                    if c_end[cbase + j] < 0:
                        # blocked: wait for the dependencies in flight now
                        p_deps[p] = [(cbase + j2, why) for (j2, why) in c_sdeps[i] if c_end[cbase + j2] < 0]
                        c_wait[cbase + j] += 1
                        p_free[p] = pf
                        p_next[p] = i
                        p_left[p] = left
                        return
                if rt and sdj:
                    # finished, but the command processor sees it only rt later
                    seen = max([c_end[cbase + j] for j in sdj]) + rt
                    if seen > now:
                        p_deps[p] = [(cbase + j2, why) for (j2, why) in c_sdeps[i]
                                     if c_end[cbase + j2] + rt > now]
                        p_free[p] = pf
                        p_next[p] = i
                        p_left[p] = left
                        if p_try[p] != seen:
                            p_try[p] = seen
                            push(heap, (seen, DISPATCH_TRY, nxt(), p))
                        return
            else:
                for (d, why) in deps:
                    if c_end[d] < 0:
                        c_wait[d] += 1
                        p_free[p] = pf
                        p_next[p] = i
                        p_left[p] = left
                        return
                if rt:
                    seen = max([c_end[d] for d, _ in deps]) + rt
                    if seen > now:
                        p_free[p] = pf
                        p_next[p] = i
                        p_left[p] = left
                        if p_try[p] != seen:
                            p_try[p] = seen
                            push(heap, (seen, DISPATCH_TRY, nxt(), p))
                        return
                # dispatch now: account the wait to the last dependency to finish
                waited = now - pf
                if waited > 0:
                    last, lt = None, -1
                    for (d, why) in deps:
                        if c_end[d] > lt:
                            lt = c_end[d]
                            last = why
                    st[last] += waited
                    stl[label * 4 + last] += waited
                p_deps[p] = None
            c = cbase + i
            i += 1
            left += 1
            pf = now + cost
            c_left[c] = n
            if not comp:
                tid = tbase + t0
                t_floor[tid] = pf
                if ring:
                    slot = p_slot[p]
                    if slot:
                        t_deps[tid] = slot
                        t_slot[tid] = True
                        p_slot[p] = None
                key = ubase + eng
                bk = busy[key]
                queues[key].append(tid)
                if eng != COPY and eng != LINK:
                    upend[unit] += 1
                if cost:
                    idle_from = bk if bk > now else now
                    if pf > idle_from:
                        idled = pf - idle_from
                        st[S_DISPATCH] += idled
                        stl[label * 4 + S_DISPATCH] += idled
                    cnt[2] += 1
                    work[DISPATCH] += cost
                    occ[DISPATCH] += cost
                    if rec is not None:
                        rec((now + off, pf + off, DISPATCH, label, tile, unit))
                    if not eng_waiting[key]:
                        eng_waiting[key] = True
                        push(heap, (pf if pf > bk else bk, ENGINE_TRY, nxt(), key))
                elif bk <= now:
                    tries[key](key, now)
                elif not eng_waiting[key]:
                    eng_waiting[key] = True
                    push(heap, (bk, ENGINE_TRY, nxt(), key))
                continue
            floor = pf
            for r in range(t0, t0 + n):
                tid = tbase + r
                t_floor[tid] = floor
                t_deps[tid] = r_sdeps[r]
                if r_slot[r]:
                    t_slot[tid] = True
                queues[ubase + r_eng[r]].append(tid)
            upend[unit] += c_ncomp[c - cbase]
            if n == 0:
                c_end[c] = floor
                left -= 1
            touched = [ubase + e for e in eng]
            if cost:
                idle = min([busy[k] for k in touched], default=now)
                idle_from = idle if idle > now else now
                if floor > idle_from:
                    idled = floor - idle_from
                    st[S_DISPATCH] += idled
                    stl[label * 4 + S_DISPATCH] += idled
                cnt[2] += 1
                work[DISPATCH] += cost
                occ[DISPATCH] += cost
                if rec is not None:
                    rec((now + off, floor + off, DISPATCH, label, tile, unit))
            for key in touched:
                if floor <= now and busy[key] <= now:
                    tries[key](key, now)
                elif not eng_waiting[key]:
                    eng_waiting[key] = True
                    bk = busy[key]
                    push(heap, (floor if floor > bk else bk, ENGINE_TRY, nxt(), key))

    compute_keys = [(u * N_ENG + TENSOR, u * N_ENG + VECTOR, u * N_ENG + SPECIAL) for u in range(units)]
    for u in range(units):
        for _ in range(slots):
            start_position(u, 0)
    # steady-state fast-forward, checked after the reference position's ENDs
    ck_t: list = []
    ck_r: list = []
    ck_due = [0]
    ff = _Periodic(dict(
        NC=NC, NT=NT, rt=rt, N_ENG=N_ENG, cmd=cmd, c_sdeps=c_sdeps, c_sslot=c_sslot, c_t0=c_t0, c_nt=c_nt,
        r_spec=r_spec, r_eng=r_eng, r_slot=r_slot, r_cmd=r_cmd, r_sdeps=r_sdeps, heap=heap, queues=queues,
        heads=heads, busy=busy, eng_waiting=eng_waiting, eng_idle=eng_idle, chans=chans, dram=dram, tcm=tcm, link_in=link_in,
        work=work, occ=occ, st=st, stl=stl, cnt=cnt, t_floor=t_floor, t_done=t_done, t_wait=t_wait, t_end=t_end,
        t_deps=t_deps, t_slot=t_slot, c_left=c_left, c_end=c_end, c_wait=c_wait, p_next=p_next,
        p_free=p_free, p_deps=p_deps, p_slot=p_slot, p_left=p_left, p_exhausted=p_exhausted,
        p_done_at=p_done_at, p_try=p_try, p_unit=p_unit, started=started,
        events=b.events if record else None, ck_t=ck_t, ck_r=ck_r, ck_due=ck_due))
    ckp = started[0] - 1 if SHORTCUTS else -1
    makespan = 0
    while heap:
        now, kind, _, arg = pop(heap)
        if kind == END:
            t_done[arg] = True
            w = t_wait[arg]
            if w is not None:
                t_wait[arg] = None
                for key in w:
                    tries[key](key, now)
            p = arg // NT
            c = p * NC + r_cmd[arg - p * NT]
            left = c_left[c] - 1
            c_left[c] = left
            if left == 0:
                c_end[c] = now
                left = p_left[p] - 1
                p_left[p] = left
                cw = c_wait[c]
                if cw:
                    c_wait[c] = 0
                    dispatch(p, now)
                    while cw > 1:
                        dispatch(p, now)
                        cw -= 1
                    left = p_left[p]
                if left == 0 and p_exhausted[p] and p_done_at[p] is None:
                    p_done_at[p] = now
                    start_position(p_unit[p], now)
                    if p == ckp and SHORTCUTS:
                        # the reference position is done: the most recent one still running
                        ckp = started[0] - 1
                        while ckp >= 0 and p_done_at[ckp] is not None:
                            ckp -= 1
                        ck_t.clear()
                        ck_r.clear()
                        ff.reset()
            if now > makespan:
                makespan = now
            # retry the compute engines of the task's unit (a compute engine is busy until
            # its task's END; the copy engine retries itself)
            # (try_compute inlined up to the start: an idle engine's head that must wait is
            # the common case on a busy unit)
            u = p_unit[p]
            if upend[u]:
                for k in compute_keys[u]:
                    h = heads[k]
                    q = queues[k]
                    if h < len(q) and not eng_waiting[k]:
                        bk = busy[k]
                        if bk > now:
                            eng_waiting[k] = True
                            push(heap, (bk, ENGINE_TRY, nxt(), k))
                            continue
                        tid = q[h]
                        fl = t_floor[tid]
                        if fl > now:
                            eng_waiting[k] = True
                            push(heap, (fl, ENGINE_TRY, nxt(), k))
                            continue
                        deps = t_deps[tid]
                        if deps is not None:
                            tb = tid - tid % NT
                            for d in deps:
                                if not t_done[tb + d]:
                                    w = t_wait[tb + d]
                                    if w is None:
                                        t_wait[tb + d] = [k]
                                    elif k not in w:
                                        w.append(k)
                                    break
                            else:
                                if t_slot[tid]:
                                    note_buffer_stall(k, tid, tb, deps, fl)
                                start_compute(k, h, tid, now)
                        else:
                            start_compute(k, h, tid, now)
            if p == ckp and ck_due[0] < _NEVER:     # (_NEVER: given up on this position)
                ck_t.append(now)
                ck_r.append(arg)
                if len(ck_t) >= ck_due[0]:
                    makespan += ff.check(now, p)
        elif kind == DISPATCH_TRY:
            if p_try[arg] == now:
                p_try[arg] = -1
            dispatch(arg, now)
        else:
            eng_waiting[arg] = False
            tries[arg](arg, now)
    for p in range(len(p_unit)):
        if p_done_at[p] is not None and p_done_at[p] > makespan:
            makespan = p_done_at[p]
    b.makespan = makespan
    b.stalls = dict(zip(STALLS, st))
    b.stall_ops = stl
    b.commands = sum(p_next)
    b.tasks = len(t_end) - t_end.count(-1)
    b.descriptors, b.channel_busy, b.dispatches = cnt
    return b
