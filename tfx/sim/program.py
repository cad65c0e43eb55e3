"""The compiled command stream of one position (see docs/simulator.md).

Every position of a batch runs the same command stream, and which earlier command a
command depends on (by value name, ring slot or composite dataflow) follows from the
stream order alone. So the stream is compiled once (:func:`compile_stream`) into flat
per-command and per-task lists of ints: the dispatch cost, the candidate dependencies
as command indices, the task durations, engines and descriptors. The event loop
(``tfx.sim.event_loop``) then only checks which of those candidates are still in
flight, with no name lookups and no per-task objects.
"""

from __future__ import annotations

from tfx.sim.lower import COPY, ENGINE_NAMES

# Why a dispatcher waited for a dependency (the stall reasons, in this order everywhere).
STALLS = ("data", "buffer", "dispatch", "hazard")
S_DATA, S_BUFFER, S_DISPATCH, S_HAZARD = range(4)
N_ENG = len(ENGINE_NAMES)


def _split(total: int, n: int) -> list:
    base, extra = divmod(total, n)
    return [base + 1 if i < extra else base for i in range(n)]


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
