"""The discrete-event core: integer nanoseconds, a heap of (time, kind, seq, arg) entries.

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
(``tfx.sim.program.compile_stream``) into flat per-command and per-task lists of ints: the
dispatch cost, the candidate dependencies as command indices, the task
durations, engines and descriptors. The event loop then only checks which of
those candidates are still in flight (``c_end < 0``), with no name lookups and
no per-task objects; a position's commands and tasks are ``p * NC + i`` and
``p * NT + r`` in preallocated lists.

Two exact shortcuts (``SHORTCUTS``; the results are the same event for event):

* units that share nothing and start together (``--full`` with per-unit DRAM, sip)
  run the same schedule: :func:`_run_independent` simulates each distinct load once
  and replicates its events;
* a periodic steady state is jumped over (``tfx.sim.fast_forward.PeriodicFastForward``): once the whole state,
  written relative to now, repeats one period later and the program repeats as well,
  the next periods repeat that one exactly, so the run jumps ahead whole periods,
  repeating their events, counters and writes.
"""


from __future__ import annotations

import gc
import heapq
from itertools import count

from tfx.sim.fast_forward import NEVER, PeriodicFastForward
from tfx.sim.lower import COPY, DISPATCH, LINK, SMEM, SPECIAL, TENSOR, VECTOR
from tfx.sim.program import N_ENG, STALLS, S_BUFFER, S_DISPATCH, Program

# The heap's entries are (time, kind, seq, arg), in that order, packed into one int:
#     ((time * 4 + kind) << SEQ_BITS | seq) << ARG_BITS | arg     (fields added: no overlap)
# so the heap compares plain ints (one comparison, not a tuple's two or three: the heap's
# sift was a tenth of the run with tuples). seq is unique, so arg never decides the
# order; it counts pushes of one kind (entries of one time and kind come out in push
# order, as with one counter for all kinds, and a kind's counter yields kind and seq
# already shifted in place). arg (a task id, engine key or position) is below
# 2 ** ARG_BITS: the per-task lists would not fit in memory otherwise; SEQ_BITS holds
# more pushes than a run can make. (30 and 90: whole digits of CPython's ints, so
# taking the fields apart is cheap.)
END, DISPATCH_TRY, ENGINE_TRY = 0, 1, 2
ARG_BITS = 30
SEQ_BITS = 58
KIND_SHIFT = SEQ_BITS + ARG_BITS
TIME_SHIFT = KIND_SHIFT + 2
ARG_MASK = (1 << ARG_BITS) - 1
KIND_MASK = 3 << KIND_SHIFT
ENGINE_TRY_BIT = ENGINE_TRY << KIND_SHIFT       # (the kinds: 0, 1 and 2)


def kind_counter(kind: int):
    """The next (kind, seq) field of a heap entry of ``kind``: seq 1, 2, ... in place."""
    return count((kind << SEQ_BITS | 1) << ARG_BITS, 1 << ARG_BITS).__next__


NEVER_ENDS = 1 << 62      # the end of a task not started yet, to compare with known ends

# Exact shortcuts (results are the same event for event; off: every event is simulated):
# independent identical units are simulated once, periodic steady states jumped over.
SHORTCUTS = True


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


class _RunState:
    """What the event loop's handlers share: the program flattened into per-command and
    per-task tuples, and the state of the units' engines, the positions, their commands
    and tasks, as lists. Every name is bound once by each handler (a closure cell, as fast
    as a local), and the lists are only ever mutated in place."""

    def __init__(self, lw, pg: Program, units, slots, positions, record, shared_dram, off):
        b = Batch()
        rec = b.events.append if record else None
        heap: list = []
        push = heapq.heappush
        pop = heapq.heappop
        replace = heapq.heapreplace
        nxt_end, nxt_dispatch, nxt_engine = (kind_counter(END), kind_counter(DISPATCH_TRY),
                                             kind_counter(ENGINE_TRY))

        n_ch = lw.channels
        hold = lw.hold
        lat = lw.latency
        rt = lw.completion                     # command completion -> command processor (ns)

        NC, NT = pg.commands, pg.tasks
        c_t0, c_nt = pg.c_t0, pg.c_nt
        # per command: (cost, tasks, composite, first task, ring, engine(s), label, tile, dep commands)
        # a dependency listed twice (an op reading one value twice) is one: the loop checks,
        # waits for and charges a command's dependencies in order, so a repeat decides nothing
        c_sdeps = [tuple(dict.fromkeys(d)) for d in pg.c_deps]
        cmd = list(zip(pg.c_cost, c_nt, pg.c_comp, c_t0, pg.c_ring, pg.c_eng, pg.c_label, pg.c_tile,
                       [tuple(dict.fromkeys(j for j, _ in d)) for d in c_sdeps]))
        c_sslot = pg.c_slot
        # a ring slot read by one single-task command (every pipelined load of a GEMM):
        # (that command, its task as the load's slot dependencies), looked up, not built
        c_slot1 = [(sl[0], (c_t0[sl[0]],)) if len(sl) == 1 and c_nt[sl[0]] == 1 else None
                   for sl in c_sslot]
        # the same dependencies with the last task of each (the dispatcher's wake choice)
        c_wdeps = [tuple((j, why, c_t0[j] + c_nt[j] - 1) for j, why in d) for d in c_sdeps]
        pg_eng, pg_comp = pg.c_eng, pg.c_comp
        c_ncomp = [sum(1 for r in range(t0, t0 + n) if pg.r_eng[r] != COPY and pg.r_eng[r] != LINK)
                   for t0, n in zip(c_t0, c_nt)]
        r_sdeps, r_cmd, r_eng, r_slot = pg.r_deps, pg.r_cmd, pg.r_eng, pg.r_slot
        # every command one task (no composite): task ids are command ids
        one_task_each = r_cmd == list(range(NC))
        # (sum(descs): a channel-less copy's descriptors queue back to back on its DRAM server)
        r_spec = [(ns, sm, descs, len(descs), label, tile, sum(descs)) for ns, sm, descs, label, tile
                  in zip(pg.r_ns, pg.r_smem, pg.r_descs, pg.r_label, pg.r_tile)]

        # per-unit engine state, flattened: key = unit * N_ENG + engine
        queues = [[] for _ in range(units * N_ENG)]
        heads = [0] * (units * N_ENG)
        busy = [0] * (units * N_ENG)
        eng_waiting = [False] * (units * N_ENG)
        # the head task waits for a task that has not finished (registered in its t_wait):
        # nothing but that task's END can start it, so a try before then changes nothing
        eng_blocked = [False] * (units * N_ENG)
        eng_idle = [0] * (units * N_ENG)       # when the engine last became free (for stall accounting)
        chans = [[0] * n_ch for _ in range(units)] if n_ch else None
        dram = [0] * (1 if shared_dram else units)
        # a copy engine's (unit, DRAM server, channels), by engine key
        copy_at = [(key // N_ENG, 0 if shared_dram else key // N_ENG, chans[key // N_ENG] if n_ch else None)
                   for key in range(units * N_ENG)]
        tcm = [0] * units
        link_in = [0] * units                  # inbound link free time per unit (recv)
        upend = [0] * units                    # compute tasks queued on the unit and not started
        work = b.work
        occ = b.occupied
        st = [0, 0, 0, 0]                      # stalls, indexed like STALLS
        stl = [0] * (4 * len(lw.labels))       # the same per op label: stl[label * 4 + reason]
        cnt = [0, 0, 0]                        # descriptors, channel-busy ns, dispatches

        # tasks of started positions (global id p * NT + r)
        # (allocated for every position at once: each one starts before the batch ends)
        n_t, n_c = positions * NT, positions * NC
        t_floor = [0] * n_t
        t_done = [False] * n_t
        t_wait = [None] * n_t                  # engine keys waiting for the task (None: none)
        t_end = [-1] * n_t                     # (-1: not started)
        t_deps = [None] * n_t                  # relative task ids it waits for (ring slot / dataflow)
        t_slot = [False] * n_t
        # commands of started positions (global id p * NC + i)
        c_left = [0] * n_c
        c_end = [-1] * n_c                     # (-1: in flight or not dispatched)
        c_wait = [0] * n_c                     # times the position waits for the command

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
        # every name above is shared state: the handlers and the loop read them from here
        vars(self).update((k, v) for k, v in locals().items() if k != "self")


def _position_starter(s: _RunState):
    """The handler that starts the next position on a unit's free slot."""
    heap, nxt_dispatch, p_deps, p_done_at = s.heap, s.nxt_dispatch, s.p_deps, s.p_done_at
    p_exhausted, p_free, p_left, p_next, p_slot = s.p_exhausted, s.p_free, s.p_left, s.p_next, s.p_slot
    p_try, p_unit, positions, push, started = s.p_try, s.p_unit, s.positions, s.push, s.started

    def start_position(unit: int, now: int) -> None:
        if started[0] >= positions:
            return
        p = started[0]
        started[0] = p + 1
        p_unit.append(unit)
        p_next.append(0)
        p_free.append(now)
        p_deps.append(None)
        p_slot.append(None)
        p_left.append(0)
        p_exhausted.append(False)
        p_done_at.append(None)
        p_try.append(now)
        push(heap, (now << TIME_SHIFT) + nxt_dispatch() + p)

    return start_position


def _buffer_stall_recorder(s: _RunState):
    """The handler that charges a ring-slot wait to the buffer stalls."""
    NT, eng_idle, r_spec, st, stl, t_end = s.NT, s.eng_idle, s.r_spec, s.st, s.stl, s.t_end

    def note_buffer_stall(key: int, tid: int, tb: int, deps, fl: int) -> None:
        """Task ``tid`` waited for its ring slot: from when it could have started (its floor,
        or when its engine went idle) to when the slot's last reader finished is a buffer
        stall, charged to its op too. Only loads into a busy slot come here."""
        dep_ready = 0
        for d in deps:            # (a loop: most slots have one or two readers)
            x = t_end[tb + d]
            if x > dep_ready:
                dep_ready = x
        ei = eng_idle[key]
        since = fl if fl > ei else ei
        if dep_ready > since:
            st[S_BUFFER] += dep_ready - since
            stl[r_spec[tid % NT][4] * 4 + S_BUFFER] += dep_ready - since

    return note_buffer_stall


def _compute_starter(s: _RunState):
    """The handler that starts a compute engine's head task."""
    NT, busy, eng_idle, heads, heap, occ = s.NT, s.busy, s.eng_idle, s.heads, s.heap, s.occ
    nxt_end = s.nxt_end
    off, push, r_spec, rec, t_end, tcm, upend = s.off, s.push, s.r_spec, s.rec, s.t_end, s.tcm, s.upend

    def start_compute(key: int, h: int, tid: int, now: int) -> None:
        """Start ``tid``, the head (index ``h``) of compute engine ``key``: the checks passed."""
        ns, sm, descs, nd, label, tile, dsum = r_spec[tid % NT]
        unit = key // N_ENG
        upend[unit] -= 1
        e = key - unit * N_ENG
        end = now + ns
        if sm:
            s0 = tcm[unit]
            if now > s0:
                s0 = now
            s0 += sm
            tcm[unit] = s0
            if s0 > end:
                end = s0
        busy[key] = end
        occ[e] += end - now
        heads[key] = h + 1
        t_end[tid] = end
        eng_idle[key] = end
        if rec is not None:
            rec((now + off, end + off, e, label, tile, unit))
        push(heap, (end << TIME_SHIFT) + nxt_end() + tid)

    return start_compute


def _compute_engine(s: _RunState, note_buffer_stall):
    """The handler of the tensor, vector and special engines."""
    NT, busy, eng_waiting, heads, heap = s.NT, s.busy, s.eng_waiting, s.heads, s.heap
    nxt_end, nxt_engine = s.nxt_end, s.nxt_engine
    push, queues, t_deps, t_done, t_floor = s.push, s.queues, s.t_deps, s.t_done, s.t_floor
    eng_blocked = s.eng_blocked
    t_slot, t_wait = s.t_slot, s.t_wait
    eng_idle, occ, off, r_spec, rec, t_end, tcm, upend = (s.eng_idle, s.occ, s.off, s.r_spec, s.rec,
                                                          s.t_end, s.tcm, s.upend)

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
                push(heap, (bk << TIME_SHIFT) + nxt_engine() + key)
            return
        tid = q[h]
        fl = t_floor[tid]
        if fl > now:
            if not eng_waiting[key]:
                eng_waiting[key] = True
                push(heap, (fl << TIME_SHIFT) + nxt_engine() + key)
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
                    eng_blocked[key] = True
                    return
            if t_slot[tid]:
                note_buffer_stall(key, tid, tb, deps, fl)
        # start_compute(key, h, tid, now), inlined (the tensor engine's tasks start here)
        ns, sm, descs, nd, label, tile, dsum = r_spec[r]
        unit = key // N_ENG
        upend[unit] -= 1
        e = key - unit * N_ENG
        end = now + ns
        if sm:
            s0 = tcm[unit]
            if now > s0:
                s0 = now
            s0 += sm
            tcm[unit] = s0
            if s0 > end:
                end = s0
        busy[key] = end
        occ[e] += end - now
        heads[key] = h + 1
        t_end[tid] = end
        eng_idle[key] = end
        if rec is not None:
            rec((now + off, end + off, e, label, tile, unit))
        push(heap, (end << TIME_SHIFT) + nxt_end() + tid)

    return try_compute


def _copy_engine(s: _RunState):
    """The handler of the copy engine (DMA descriptors over channels, the DRAM share)."""
    NT, busy, cnt, dram, eng_idle = s.NT, s.busy, s.cnt, s.dram, s.eng_idle
    eng_waiting, heads, heap, hold, lat = s.eng_waiting, s.heads, s.heap, s.hold, s.lat
    nxt_end, nxt_engine, occ, off, push = s.nxt_end, s.nxt_engine, s.occ, s.off, s.push
    queues, r_spec, rec = s.queues, s.r_spec, s.rec
    replace, t_deps, t_done, t_end = s.replace, s.t_deps, s.t_done, s.t_end
    t_floor, t_slot, t_wait, tcm = s.t_floor, s.t_slot, s.t_wait, s.tcm
    eng_blocked, st, stl, copy_at = s.eng_blocked, s.st, s.stl, s.copy_at

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
                    push(heap, (bk << TIME_SHIFT) + nxt_engine() + key)
                return
            tid = q[h]
            fl = t_floor[tid]
            if fl > now:
                if not eng_waiting[key]:
                    eng_waiting[key] = True
                    push(heap, (fl << TIME_SHIFT) + nxt_engine() + key)
                return
            r = tid % NT
            deps = t_deps[tid]
            if deps is not None:
                tb = tid - r
                dep_ready = 0           # (the latest end of the deps, for a ring slot's stall)
                for d in deps:
                    x = tb + d
                    if not t_done[x]:
                        w = t_wait[x]
                        if w is None:
                            t_wait[x] = [key]
                        elif key not in w:
                            w.append(key)
                        eng_blocked[key] = True
                        return
                    x = t_end[x]
                    if x > dep_ready:
                        dep_ready = x
                ns, sm, descs, nd, label, tile, dsum = r_spec[r]
                if t_slot[tid]:
                    # note_buffer_stall, inlined (most loads of a pipelined loop come here)
                    ei = eng_idle[key]
                    since = fl if fl > ei else ei
                    if dep_ready > since:
                        since = dep_ready - since
                        st[S_BUFFER] += since
                        stl[label * 4 + S_BUFFER] += since
            else:
                ns, sm, descs, nd, label, tile, dsum = r_spec[r]
            # start the transfer
            if unit < 0:
                unit, srv, ch = copy_at[key]
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
            elif nd:
                # (the first descriptor waits for the server, the rest follow it: durations >= 0)
                dfree = (dfree if dfree > cs else cs) + dsum
                end = dfree + lat
            else:
                # an on-chip copy (no descriptor: tfx.sim.lower): no DRAM server, no memory latency; its port
                # time (sm, below) is its duration
                end = now
            dram[srv] = dfree
            occ[COPY] += end - now
            busy[key] = cs
            if sm:
                s0 = tcm[unit]
                if now > s0:
                    s0 = now
                s0 += sm
                tcm[unit] = s0
                if s0 > end:
                    end = s0
            h += 1
            heads[key] = h
            t_end[tid] = end
            eng_idle[key] = cs
            if rec is not None:
                rec((now + off, end + off, COPY, label, tile, unit))
            push(heap, (end << TIME_SHIFT) + nxt_end() + tid)

    return try_copy


def _link_engine(s: _RunState):
    """The handler of the link engine (send / recv / allreduce transfers)."""
    NT, busy, eng_idle, eng_waiting, heads = s.NT, s.busy, s.eng_idle, s.eng_waiting, s.heads
    heap, link_in, off, push = s.heap, s.link_in, s.off, s.push
    nxt_end, nxt_engine = s.nxt_end, s.nxt_engine
    queues, r_spec, rec, t_deps, t_done, t_end = s.queues, s.r_spec, s.rec, s.t_deps, s.t_done, s.t_end
    t_floor, t_wait, tcm = s.t_floor, s.t_wait, s.tcm
    eng_blocked = s.eng_blocked

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
                    push(heap, (at << TIME_SHIFT) + nxt_engine() + key)
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
                        eng_blocked[key] = True
                        heads[key] = h
                        return
            ns, sm, descs, nd, label, tile, dsum = spec
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
            if sm:
                s0 = tcm[unit]
                if now > s0:
                    s0 = now
                s0 += sm
                tcm[unit] = s0
                if s0 > end:
                    end = s0
            h += 1
            t_end[tid] = end
            if rec is not None:
                rec((now + off, end + off, LINK, label, tile, unit))
            push(heap, (end << TIME_SHIFT) + nxt_end() + tid)
        heads[key] = h

    return try_link


def _dispatcher(s: _RunState, start_position, tries):
    """The handler of a position's in-order dispatcher."""
    NC, NT, busy, c_end, c_left, c_ncomp = s.NC, s.NT, s.busy, s.c_end, s.c_left, s.c_ncomp
    c_nt, c_sdeps, c_sslot, c_t0, c_wait, cmd = s.c_nt, s.c_sdeps, s.c_sslot, s.c_t0, s.c_wait, s.cmd
    cnt, eng_waiting, heap, occ, off = s.cnt, s.eng_waiting, s.heap, s.occ, s.off
    nxt_dispatch, nxt_engine = s.nxt_dispatch, s.nxt_engine
    p_deps, p_done_at, p_exhausted, p_free = s.p_deps, s.p_done_at, s.p_exhausted, s.p_free
    p_left, p_next, p_slot, p_try, p_unit = s.p_left, s.p_next, s.p_slot, s.p_try, s.p_unit
    push, queues, r_eng, r_sdeps, r_slot, rec = s.push, s.queues, s.r_eng, s.r_sdeps, s.r_slot, s.rec
    rt, st, stl, t_deps, t_floor, t_slot = s.rt, s.st, s.stl, s.t_deps, s.t_floor, s.t_slot
    upend, work, eng_blocked, t_end, c_wdeps = s.upend, s.work, s.eng_blocked, s.t_end, s.c_wdeps
    c_slot1, heads, t_done, t_wait = s.c_slot1, s.heads, s.t_done, s.t_wait

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
        deps = p_deps[p]            # (only the first command looked at can be waiting)
        while True:
            if pf > now:
                p_free[p] = pf
                p_next[p] = i
                p_left[p] = left
                if p_try[p] != pf:
                    p_try[p] = pf
                    push(heap, (pf << TIME_SHIFT) + nxt_dispatch() + p)
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
            if deps is None:
                # first look at command i: the ring slot's readers still in flight, then
                # its dependencies (a command not blocked now waits for nothing)
                # (kept in `slot` while the command dispatches now; in p_slot if it waits)
                slot = None
                if ring:
                    one = c_slot1[i]
                    if one is None:
                        slot = []
                        for j in c_sslot[i]:
                            if c_end[cbase + j] < 0:
                                r0 = c_t0[j]
                                n0 = c_nt[j]
                                if n0 == 1:
                                    slot.append(r0)
                                else:
                                    slot.extend(range(r0, r0 + n0))
                        slot = slot or None
                    elif c_end[cbase + one[0]] < 0:
                        slot = one[1]
                for j in sdj:
                    if c_end[cbase + j] < 0:
                        # blocked: wait for the dependencies in flight now
                        # (a loop, not a comprehension: the list has a few entries).
                        # The dispatcher is woken by the END of the one it waits on and
                        # looks again (dispatching at the END of the last to finish, whichever
                        # it waits on): it waits on the one likely to finish last, so that
                        # it is woken once: a started task's end is known, an unstarted
                        # one's is later (ties: the later operand)
                        pd = []
                        wake, latest = -1, -1
                        for (j2, why, last) in c_wdeps[i]:
                            c2 = cbase + j2
                            if c_end[c2] < 0:
                                pd.append((c2, why))
                                e2 = t_end[tbase + last]
                                if e2 < 0:
                                    e2 = NEVER_ENDS
                                if e2 >= latest:
                                    wake, latest = c2, e2
                        p_deps[p] = pd
                        c_wait[wake] += 1
                        p_slot[p] = slot
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
                        p_slot[p] = slot
                        p_free[p] = pf
                        p_next[p] = i
                        p_left[p] = left
                        if p_try[p] != seen:
                            p_try[p] = seen
                            push(heap, (seen << TIME_SHIFT) + nxt_dispatch() + p)
                        return
            else:
                # still blocked? else the last to finish (the first of equal ends), which
                # the wait is accounted to
                last, lt = None, -1
                for (d, why) in deps:
                    x = c_end[d]
                    if x < 0:
                        c_wait[d] += 1
                        p_free[p] = pf
                        p_next[p] = i
                        p_left[p] = left
                        return
                    if x > lt:
                        lt = x
                        last = why
                if rt:
                    seen = lt + rt
                    if seen > now:
                        p_free[p] = pf
                        p_next[p] = i
                        p_left[p] = left
                        if p_try[p] != seen:
                            p_try[p] = seen
                            push(heap, (seen << TIME_SHIFT) + nxt_dispatch() + p)
                        return
                # dispatch now: account the wait to the last dependency to finish
                waited = now - pf
                if waited > 0:
                    st[last] += waited
                    stl[label * 4 + last] += waited
                p_deps[p] = deps = None
                slot = p_slot[p]
                p_slot[p] = None
            c = cbase + i
            i += 1
            left += 1
            pf = now + cost
            c_left[c] = n
            if not comp:
                tid = tbase + t0
                t_floor[tid] = pf
                if slot:
                    t_deps[tid] = slot
                    t_slot[tid] = True
                key = ubase + eng
                bk = busy[key]
                q = queues[key]
                q.append(tid)
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
                        push(heap, ((pf if pf > bk else bk) << TIME_SHIFT) + nxt_engine() + key)
                elif bk <= now:
                    if not eng_blocked[key]:
                        if slot and eng == COPY and heads[key] == len(q) - 1:
                            # try_copy's first steps, inlined: a load at the head of an idle
                            # copy engine whose slot's reader is still running waits for it
                            # (the common case of a pipelined loop: the slot's MMA runs)
                            x = tbase + slot[0]
                            if not t_done[x]:
                                w = t_wait[x]
                                if w is None:
                                    t_wait[x] = [key]
                                elif key not in w:
                                    w.append(key)
                                eng_blocked[key] = True
                                continue
                        tries[key](key, now)
                elif not eng_waiting[key]:
                    eng_waiting[key] = True
                    push(heap, (bk << TIME_SHIFT) + nxt_engine() + key)
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
                    if not eng_blocked[key]:
                        tries[key](key, now)
                elif not eng_waiting[key]:
                    eng_waiting[key] = True
                    bk = busy[key]
                    push(heap, ((floor if floor > bk else bk) << TIME_SHIFT) + nxt_engine() + key)

    return dispatch


def _run(lw, pg: Program, units, slots, positions, record, shared_dram, off) -> Batch:
    s = _RunState(lw, pg, units, slots, positions, record, shared_dram, off)
    start_position = _position_starter(s)
    note_buffer_stall = _buffer_stall_recorder(s)
    start_compute = _compute_starter(s)
    try_compute = _compute_engine(s, note_buffer_stall)
    try_copy = _copy_engine(s)
    try_link = _link_engine(s)
    tries = [try_compute] * N_ENG
    tries[COPY] = try_copy
    tries[LINK] = try_link
    tries = tries * units                  # by engine key
    dispatch = _dispatcher(s, start_position, tries)
    NC, NT, b, busy, c_end, c_left, c_nt = s.NC, s.NT, s.b, s.busy, s.c_end, s.c_left, s.c_nt
    c_sdeps, c_sslot, c_t0, c_wait, chans, cmd = s.c_sdeps, s.c_sslot, s.c_t0, s.c_wait, s.chans, s.cmd
    cnt, dram, eng_idle, eng_waiting, heads = s.cnt, s.dram, s.eng_idle, s.eng_waiting, s.heads
    heap, link_in, occ, p_deps, p_done_at = s.heap, s.link_in, s.occ, s.p_deps, s.p_done_at
    nxt_engine = s.nxt_engine
    p_exhausted, p_free, p_left, p_next, p_slot = s.p_exhausted, s.p_free, s.p_left, s.p_next, s.p_slot
    p_try, p_unit, pop, push, queues, r_cmd = s.p_try, s.p_unit, s.pop, s.push, s.queues, s.r_cmd
    r_eng, r_sdeps, r_slot, r_spec, rt, st = s.r_eng, s.r_sdeps, s.r_slot, s.r_spec, s.rt, s.st
    started, stl, t_deps, t_done, t_end = s.started, s.stl, s.t_deps, s.t_done, s.t_end
    t_floor, t_slot, t_wait, tcm, upend, work = s.t_floor, s.t_slot, s.t_wait, s.tcm, s.upend, s.work
    eng_blocked, one_task_each = s.eng_blocked, s.one_task_each

    # the compute engines the program uses, in retry order (an engine no task runs on never
    # has a queued task: gemm has no special-function work, so its END retries two, not three)
    on = set(r_eng) | {e for e, comp in zip(s.pg_eng, s.pg_comp) if not comp}
    used = [e for e in (TENSOR, VECTOR, SPECIAL) if e in on]
    compute_keys = [tuple(u * N_ENG + e for e in used) for u in range(units)]
    for u in range(units):
        for _ in range(slots):
            start_position(u, 0)
    # steady-state fast-forward, checked after the reference position's ENDs
    ck_t: list = []
    ck_r: list = []
    ck_due = [0]
    ff = PeriodicFastForward(dict(
        NC=NC, NT=NT, rt=rt, N_ENG=N_ENG, cmd=cmd, c_sdeps=c_sdeps, c_sslot=c_sslot, c_t0=c_t0, c_nt=c_nt,
        r_spec=r_spec, r_eng=r_eng, r_slot=r_slot, r_cmd=r_cmd, r_sdeps=r_sdeps, heap=heap,
        TIME_SHIFT=TIME_SHIFT, KIND_SHIFT=KIND_SHIFT, ARG_MASK=ARG_MASK,
        one_task_each=one_task_each, queues=queues,
        heads=heads, busy=busy, eng_waiting=eng_waiting, eng_blocked=eng_blocked, eng_idle=eng_idle, chans=chans, dram=dram, tcm=tcm, link_in=link_in,
        work=work, occ=occ, st=st, stl=stl, cnt=cnt, t_floor=t_floor, t_done=t_done, t_wait=t_wait, t_end=t_end,
        t_deps=t_deps, t_slot=t_slot, c_left=c_left, c_end=c_end, c_wait=c_wait, p_next=p_next,
        p_free=p_free, p_deps=p_deps, p_slot=p_slot, p_left=p_left, p_exhausted=p_exhausted,
        p_done_at=p_done_at, p_try=p_try, p_unit=p_unit, started=started,
        events=b.events if record else None, ck_t=ck_t, ck_r=ck_r, ck_due=ck_due))
    ckp = started[0] - 1 if SHORTCUTS else -1
    makespan = 0
    while heap:
        e = pop(heap)
        now = e >> TIME_SHIFT
        arg = e & ARG_MASK
        if not e & KIND_MASK:                   # END
            t_done[arg] = True
            w = t_wait[arg]
            if w is not None:
                t_wait[arg] = None
                for key in w:
                    eng_blocked[key] = False
                    tries[key](key, now)
            p = arg // NT
            if one_task_each:
                c = arg             # (and its command's only task: c_left, read only here, is left)
            else:
                c = p * NC + r_cmd[arg - p * NT]
                left = c_left[c] - 1
                c_left[c] = left
            if one_task_each or left == 0:
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
            # (the heap hands out times in order, and a jump moves every later one past
            # makespan + jump: the latest END so far is this one)
            makespan = now
            # retry the compute engines of the task's unit (a compute engine is busy until
            # its task's END; the copy engine retries itself)
            # (try_compute inlined up to the start: an idle engine's head that must wait is
            # the common case on a busy unit)
            u = p_unit[p]
            if upend[u]:
                for k in compute_keys[u]:
                    # (an engine waiting for its ENGINE_TRY or blocked on a task is retried
                    # by that: the common case, so looked at first)
                    if eng_waiting[k] or eng_blocked[k]:
                        continue
                    h = heads[k]
                    q = queues[k]
                    if h < len(q):
                        bk = busy[k]
                        if bk > now:
                            eng_waiting[k] = True
                            push(heap, (bk << TIME_SHIFT) + nxt_engine() + k)
                            continue
                        tid = q[h]
                        fl = t_floor[tid]
                        if fl > now:
                            eng_waiting[k] = True
                            push(heap, (fl << TIME_SHIFT) + nxt_engine() + k)
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
                                    eng_blocked[k] = True
                                    break
                            else:
                                if t_slot[tid]:
                                    note_buffer_stall(k, tid, tb, deps, fl)
                                start_compute(k, h, tid, now)
                        else:
                            start_compute(k, h, tid, now)
            if p == ckp and ck_due[0] < NEVER:     # (NEVER: given up on this position)
                ck_t.append(now)
                ck_r.append(arg)
                if len(ck_t) >= ck_due[0]:
                    makespan += ff.check(now, p)
        elif e & ENGINE_TRY_BIT:
            eng_waiting[arg] = False
            tries[arg](arg, now)
        else:                                   # DISPATCH_TRY
            if p_try[arg] == now:
                p_try[arg] = -1
            dispatch(arg, now)
    for p in range(len(p_unit)):
        if p_done_at[p] is not None and p_done_at[p] > makespan:
            makespan = p_done_at[p]
    # a task's own work (its engine's and the on-chip port's ns, a copy's descriptors, the
    # link's occupancy) is the same every time it runs: counted per task from which ran
    # (a started task has an end; the fast-forward marks the tasks it jumps over so), not
    # added task by task in the loop
    for r in range(NT):
        ran = t_end[r::NT]
        k = len(ran) - ran.count(-1)
        if k:
            ns, sm, _, nd, _, _, _ = r_spec[r]
            e = r_eng[r]
            work[e] += ns * k
            work[SMEM] += sm * k
            if e == COPY:
                cnt[0] += nd * k
            elif e == LINK:
                occ[LINK] += ns * k
    b.makespan = makespan
    b.stalls = dict(zip(STALLS, st))
    b.stall_ops = stl
    b.commands = sum(p_next)
    b.tasks = len(t_end) - t_end.count(-1)
    b.descriptors, b.channel_busy, b.dispatches = cnt
    return b
