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
"""

from __future__ import annotations

import heapq

from tfx.sim.lower import COPY, DISPATCH, ENGINE_NAMES, SMEM, OpInfo

END, DISPATCH_TRY, ENGINE_TRY = 0, 1, 2
STALLS = ("data", "buffer", "dispatch", "hazard")
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
        self.commands = 0
        self.descriptors = 0
        self.channel_busy = 0             # summed ns channels were held
        self.events = []                  # (start, end, engine, label, tile, unit)
        self.tasks = 0
        self.dispatches = 0               # dispatch intervals (recorded as dispatch events)


def run(lw, stream_factory, units: int, slots: int, positions: int, record: bool = True,
        shared_dram: bool = False) -> Batch:
    """Simulate ``positions`` positions on ``units`` units with ``slots`` resident each.

    ``stream_factory()`` returns a fresh command iterator for one position.
    Positions start in order on the first free slot (block scheduler).
    """
    b = Batch()
    ev = b.events
    rec = ev.append if record else None
    heap: list = []
    push = heapq.heappush
    pop = heapq.heappop
    seq = 0

    n_ch = lw.channels
    hold = lw.hold
    lat = lw.latency
    disp_single = lw.dispatch_single
    disp_comp = lw.dispatch_composite

    # per-unit engine state, flattened: key = unit * N_ENG + engine
    queues = [[] for _ in range(units * N_ENG)]
    heads = [0] * (units * N_ENG)
    busy = [0] * (units * N_ENG)
    eng_waiting = [False] * (units * N_ENG)
    eng_idle = [0] * (units * N_ENG)       # when the engine last became free (for stall accounting)
    chans = [[0] * n_ch for _ in range(units)] if n_ch else None
    dram = [0] * (1 if shared_dram else units)
    tcm = [0] * units
    work = b.work
    occ = b.occupied

    # tasks (parallel lists)
    t_spec: list = []             # (ns, smem, descs, label) per task
    t_tile: list = []
    t_cmd: list = []
    t_deps: list = []
    t_floor: list = []
    t_done: list = []
    t_waiters: list = []
    # commands
    c_left: list = []
    c_end: list = []
    c_load: list = []
    c_pos: list = []
    c_waiters: list = []
    c_tasks: list = []
    t_slot: list = []
    t_end: list = []

    # positions
    p_stream: list = []
    p_unit: list = []
    p_pending: list = []          # the peeked command (or None)
    p_free: list = []             # dispatcher free since
    p_deps: list = []             # hazard deps of the pending command (cmd ids) or None
    p_writer: list = []           # name -> cmd id
    p_readers: list = []          # (name, tile) -> [cmd ids] for ring values
    p_ring: list = []             # name -> stages for ring values
    p_left: list = []             # outstanding commands
    p_exhausted: list = []
    p_done_at: list = []
    p_slot: list = []             # pending ring-slot task deps of the pending command
    p_try: list = []              # time of the scheduled DISPATCH_TRY (or -1)
    queue_next = [0]              # next position to start
    free_slots = [[] for _ in range(units)]

    def start_position(unit: int, now: int) -> None:
        nonlocal seq
        if queue_next[0] >= positions:
            return
        queue_next[0] += 1
        p = len(p_stream)
        p_stream.append(stream_factory())
        p_unit.append(unit)
        p_pending.append(None)
        p_free.append(now)
        p_deps.append(None)
        p_writer.append({})
        p_readers.append({})
        p_ring.append({})
        p_left.append(0)
        p_exhausted.append(False)
        p_done_at.append(None)
        p_try.append(now)
        p_slot.append(None)
        seq += 1
        push(heap, (now, DISPATCH_TRY, seq, p))

    def position_finished(p: int, now: int) -> None:
        p_done_at[p] = now
        start_position(p_unit[p], now)

    def try_engine(key: int, now: int) -> None:
        nonlocal seq
        q = queues[key]
        h = heads[key]
        while h < len(q):
            if busy[key] > now:
                if not eng_waiting[key]:
                    eng_waiting[key] = True
                    seq += 1
                    push(heap, (busy[key], ENGINE_TRY, seq, key))
                return
            tid = q[h]
            fl = t_floor[tid]
            if fl > now:
                if not eng_waiting[key]:
                    eng_waiting[key] = True
                    seq += 1
                    push(heap, (fl, ENGINE_TRY, seq, key))
                return
            deps = t_deps[tid]
            if deps:
                blocked = False
                for d in deps:
                    if not t_done[d]:
                        t_waiters[d].append(key)
                        blocked = True
                        break
                if blocked:
                    return
            # start the task
            if t_slot[tid]:
                dep_ready = max(t_end[d] for d in deps)
                free_at = fl if fl > eng_idle[key] else eng_idle[key]
                if dep_ready > free_at:
                    b.stalls["buffer"] += dep_ready - free_at
            unit, e = divmod(key, N_ENG)
            ns, sm, descs, label = t_spec[tid]
            if e == COPY:
                cs = now
                end = now
                srv = 0 if shared_dram else unit
                dfree = dram[srv]
                if n_ch:
                    ch = chans[unit]
                    for x in descs:
                        i = ch.index(min(ch))
                        c0 = ch[i]
                        if c0 > cs:
                            cs = c0
                        ts = dfree if dfree > cs else cs
                        dfree = ts + x
                        land = dfree + lat
                        ch[i] = land if hold else dfree
                        b.channel_busy += ch[i] - cs
                        if land > end:
                            end = land
                    b.descriptors += len(descs)
                else:
                    for x in descs:
                        ts = dfree if dfree > cs else cs
                        dfree = ts + x
                    end = dfree + lat
                    b.descriptors += len(descs)
                dram[srv] = dfree
                work[COPY] += ns
                occ[COPY] += end - now
                busy[key] = cs
            else:
                end = now + ns
                work[e] += ns
            if sm:
                s0 = tcm[unit] if tcm[unit] > now else now
                tcm[unit] = s0 + sm
                work[SMEM] += sm
                if s0 + sm > end:
                    end = s0 + sm
            if e != COPY:
                busy[key] = end
                occ[e] += end - now
            h += 1
            heads[key] = h
            t_end[tid] = end
            eng_idle[key] = busy[key]
            if rec is not None:
                rec((now, end, e, label, t_tile[tid], unit))
            b.tasks += 1
            seq += 1
            push(heap, (end, END, seq, tid))
            if e != COPY:
                return  # the END event retries this engine
        return

    def finish_task(tid: int, now: int) -> None:
        t_done[tid] = True
        w = t_waiters[tid]
        if w:
            t_waiters[tid] = []
            for key in w:
                try_engine(key, now)
        c = t_cmd[tid]
        c_left[c] -= 1
        if c_left[c] == 0:
            c_end[c] = now
            p = c_pos[c]
            p_left[p] -= 1
            cw = c_waiters[c]
            if cw:
                c_waiters[c] = []
                for pp in cw:
                    dispatch(pp, now)
            if p_left[p] == 0 and p_exhausted[p] and p_done_at[p] is None:
                position_finished(p, now)

    def new_task(c, info: OpInfo, ns, smem, descs, tile, floor, deps, spec=None) -> int:
        tid = len(t_spec)
        t_spec.append(spec if spec is not None else (ns, smem, descs, info.idx))
        t_tile.append(tile)
        t_cmd.append(c)
        t_deps.append(deps)
        t_floor.append(floor)
        t_done.append(False)
        t_waiters.append([])
        t_slot.append(False)
        t_end.append(-1)
        return tid

    def dispatch(p: int, now: int) -> None:
        """Dispatch as many commands of position p as possible at time ``now``."""
        nonlocal seq
        stream = p_stream[p]
        writer = p_writer[p]
        readers = p_readers[p]
        ring = p_ring[p]
        unit = p_unit[p]
        base = unit * N_ENG
        while True:
            if p_free[p] > now:
                if p_try[p] != p_free[p]:
                    p_try[p] = p_free[p]
                    seq += 1
                    push(heap, (p_free[p], DISPATCH_TRY, seq, p))
                return
            cmd = p_pending[p]
            if cmd is None:
                cmd = next(stream, None)
                if cmd is None:
                    p_exhausted[p] = True
                    if p_left[p] == 0 and p_done_at[p] is None:
                        position_finished(p, now)
                    return
                if cmd[0] == "op" and cmd[1].view:
                    info = cmd[1]
                    # a free alias: the result is ready when its source is
                    src = info.reads[0] if info.reads else None
                    if src is not None:
                        w = writer.get((src, cmd[2])) if src in ring else writer.get(src)
                        if w is None and src in ring:
                            w = writer.get(src)
                        for out in info.writes:
                            if w is not None:
                                writer[out] = w
                    continue
                p_pending[p] = cmd
                p_deps[p] = None
            deps = p_deps[p]
            if deps is None:
                deps = []
                kind = cmd[0]
                if kind == "op":
                    info, tile, rg = cmd[1], cmd[2], cmd[3]
                    names_r, names_w = info.reads, info.writes
                    for n in names_r:
                        w = writer.get((n, tile)) if n in ring else None
                        if w is None:
                            w = writer.get(n)
                        if w is not None and c_end[w] < 0:
                            deps.append((w, "data" if c_load[w] else "hazard"))
                    if rg is not None:
                        # ring slot: the readers of this value's tile (tile - stages); the
                        # command is dispatched and waits in its engine's queue (a semaphore)
                        slot = []
                        for n in names_w:
                            old = readers.pop((n, tile - rg[1]), None)
                            if old:
                                for r in old:
                                    if c_end[r] < 0:
                                        slot.extend(c_tasks[r])
                        p_slot[p] = slot or None
                    else:
                        for n in names_w:
                            w = writer.get(n)
                            if w is not None and c_end[w] < 0:
                                deps.append((w, "hazard"))
                else:
                    inner = cmd[2]
                    seen = set()
                    for info in inner:
                        for n in info.reads + info.writes:
                            if n in seen:
                                continue
                            seen.add(n)
                            w = writer.get(n)
                            if w is not None and c_end[w] < 0:
                                deps.append((w, "data" if c_load[w] else "hazard"))
                p_deps[p] = deps
            # blocked?
            for (d, why) in deps:
                if c_end[d] < 0:
                    c_waiters[d].append(p)
                    return
            # dispatch now: account the wait
            if deps:
                waited = now - p_free[p]
                if waited > 0:
                    last, lt = None, -1
                    for x in deps:
                        if c_end[x[0]] > lt:
                            lt = c_end[x[0]]
                            last = x[1]
                    b.stalls[last] += waited
            kind = cmd[0]
            c = len(c_left)
            c_pos.append(p)
            c_end.append(-1)
            c_waiters.append([])
            p_left[p] += 1
            b.commands += 1
            if kind == "op":
                info, tile, rg = cmd[1], cmd[2], cmd[3]
                cost = disp_single if info.dispatched else 0
                floor = now + cost
                c_load.append(info.is_load)
                c_left.append(1)
                slot = p_slot[p] if rg is not None else None
                tid = new_task(c, info, 0, 0, (), tile, floor, slot, info.spec)
                if slot:
                    t_slot[tid] = True
                    p_slot[p] = None
                c_tasks.append((tid,))
                key = base + info.engine
                if cost:
                    idle_from = busy[key] if busy[key] > now else now
                    if floor > idle_from:
                        b.stalls["dispatch"] += floor - idle_from
                queues[key].append(tid)
                for n in info.reads:
                    if n in ring:
                        readers.setdefault((n, tile), []).append(c)
                if rg is not None:
                    for n in info.writes:
                        ring[n] = rg[1]
                        writer[(n, tile)] = c
                        writer[n] = c
                else:
                    for n in info.writes:
                        writer[n] = c
                        if n in ring:
                            del ring[n]
                touched = (key,)
            else:
                _, lid, inner, nsub, tile = cmd
                cost = disp_comp
                floor = now + cost
                c_load.append(any(i.is_load for i in inner))
                local: dict = {}
                all_tids: list = []
                tids_by_key: dict = {}
                count = 0
                subs = [(_split(i.ns, nsub), _split(i.smem, nsub)) for i in inner]
                for s in range(nsub):
                    for j, info in enumerate(inner):
                        if info.view:
                            src = info.reads[0] if info.reads else None
                            if src is not None and src in local:
                                for out in info.writes:
                                    local[out] = local[src]
                            continue
                        ddeps = [local[n] for n in info.reads if n in local]
                        ns_s, sm_s = subs[j][0][s], subs[j][1][s]
                        if info.engine == COPY:
                            k = max(1, len(info.descs) // nsub)
                            descs = tuple(_split(ns_s, k)) if ns_s else (0,)
                        else:
                            descs = ()
                        tid = new_task(c, info, ns_s, sm_s, descs, tile, floor, ddeps or None)
                        all_tids.append(tid)
                        for out in info.writes:
                            local[out] = tid
                        key = base + info.engine
                        queues[key].append(tid)
                        tids_by_key[key] = True
                        count += 1
                c_left.append(count)
                c_tasks.append(tuple(all_tids))
                if count == 0:
                    c_end[c] = floor
                    p_left[p] -= 1
                for info in inner:
                    for n in info.writes:
                        writer[n] = c
                        ring.pop(n, None)
                touched = tuple(tids_by_key)
                if cost:
                    idle = min((busy[k] for k in touched), default=now)
                    idle_from = idle if idle > now else now
                    if floor > idle_from:
                        b.stalls["dispatch"] += floor - idle_from
            if cost:
                b.dispatches += 1
                work[DISPATCH] += cost
                occ[DISPATCH] += cost
                if rec is not None:
                    rec((now, floor, DISPATCH, cmd[1].idx if kind == "op" else cmd[1], tile, unit))
            p_pending[p] = None
            p_deps[p] = None
            p_free[p] = floor
            for key in touched:
                if floor <= now and busy[key] <= now:
                    try_engine(key, now)
                elif not eng_waiting[key]:
                    eng_waiting[key] = True
                    seq += 1
                    push(heap, (floor if floor > busy[key] else busy[key], ENGINE_TRY, seq, key))

    for u in range(units):
        for _ in range(slots):
            start_position(u, 0)
    now = 0
    while heap:
        now, kind, _, arg = pop(heap)
        if kind == END:
            finish_task(arg, now)
            if now > b.makespan:
                b.makespan = now
            key = (p_unit[c_pos[t_cmd[arg]]]) * N_ENG
            # retry the engine the task ran on (compute engines are busy until END)
            # engine index is recoverable from the queue; cheap: try all non-copy engines idle
            for e in (2, 3, 4, 5):
                k2 = key + e
                if heads[k2] < len(queues[k2]) and not eng_waiting[k2]:
                    try_engine(k2, now)
        elif kind == DISPATCH_TRY:
            if p_try[arg] == now:
                p_try[arg] = -1
            dispatch(arg, now)
        else:
            eng_waiting[arg] = False
            try_engine(arg, now)
    for p in range(len(p_stream)):
        if p_done_at[p] is not None and p_done_at[p] > b.makespan:
            b.makespan = p_done_at[p]
    return b
