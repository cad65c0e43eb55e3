"""Exact fast-forward of a periodic steady state (docs/simulator.md, "Speed").

Once the whole state of the event loop, written relative to now, repeats one period
later and the program repeats as well, the next periods repeat that one exactly, so
the run jumps ahead whole periods, repeating their events, counters and writes. The
event loop (``tfx.sim.event_loop``) hands :class:`PeriodicFastForward` its state lists
and calls :meth:`PeriodicFastForward.check` after the reference position's ENDs.
"""

from __future__ import annotations

NEVER = 1 << 60           # a check count that is never reached: given up on this position
VERIFY_JUMPS = False      # recompute the state after each fast-forward jump and compare (slow)
DEBUG = False             # print the search: snapshots, failures, jumps


def _shifted_or_shared(ja, jb, dc: int, u: int):
    """Command indices of two commands dc apart, pairwise: each of jb is its ja shifted by dc
    or the same command (shared by both, unshifted). Returns u raised to the largest shared
    one, or None when some pair is neither."""
    for a, b in zip(ja, jb):
        if b == a + dc:
            continue
        if b == a:
            u = max(u, a)
            continue
        return None
    return u


class PeriodicFastForward:
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
    by event, as before; ``VERIFY_JUMPS`` recomputes the state after each jump and
    asserts it reads exactly as B's.

    Limits: engine queues longer than QLIM and positions with more than WLIM tasks in
    flight (a composite streaming a whole loop) are not compared (no jump); a state that
    drifts (a saturated shared DRAM queue slowly reordering) never repeats, and the
    search then stays under a few % of the run: counted in events, not seconds (see
    :meth:`check`), so how much a run skips, and its speed, do not depend on the load of
    the machine it runs on.
    """

    DMAX = 96       # longest period looked for, in reference ENDs
    QLIM = 64       # longest engine queue compared
    WLIM = 512      # most tasks of in-flight commands compared, per position
    MAX_FAILS = 6   # failed candidates before giving up on the reference position
    H = 4           # states written down per candidate (periods up to H lags)
    # The search's budget, in events: writing a state down costs about ITEM_COST events
    # per item it holds (heap entries, engines, queued tasks, live commands; measured on
    # CPython 3.11: 0.6-1.4 us an item, 4-6 us an event), and the states written down
    # since the last jump may cost at most SEARCH_SHARE of the events run so far plus
    # SEARCH_FLOOR (about one gemm state).
    ITEM_COST = 0.25
    SEARCH_SHARE = 0.03
    SEARCH_FLOOR = 400

    def __init__(self, s: dict):
        self.__dict__.update(s)
        self.static: dict = {}
        self.jumps: list = []
        self.events_run = 0         # events simulated so far (estimated: see reset)
        self.spent = 0.0            # events' worth of states written down since the last jump
        self.size = 0               # items of the last state written down (canon)
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
        self.active = max(active, 1)
        self.seen = 0               # reference ENDs counted into events_run
        self.K = max(2, 128 // self.active)
        self.ck_due[0] = self.K

    # ------------------------------------------------------------ detection
    def check(self, now: int, ref: int) -> int:
        """Called when the reference position's END count reaches ``ck_due``; returns the
        jump in ns (0: none).

        Cheap first: the gaps between the reference position's ENDs must repeat with some
        lag d. Then the state is written down every d ENDs (at most H times) until it
        equals one written before: the period (a multiple of d)."""
        n = len(self.ck_t)
        self.events_run += (n - self.seen) * self.active
        self.seen = n
        if self.hist is None:
            if self.fails >= self.MAX_FAILS:
                self.ck_due[0] = NEVER
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
            if self.spent > self.SEARCH_SHARE * self.events_run + self.SEARCH_FLOOR:
                self.ck_due[0] = n + 8 * self.K
                return 0
            self.hist = {}
            self.lag = lag
        self.size = 0
        jump = self._track(now, n)
        # (a jump pays for the search)
        self.spent = 0.0 if jump else self.spent + self.ITEM_COST * self.size
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
        if DEBUG:
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
        if DEBUG:
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
        """The state relative to T (see the class doc), or None when too large to compare.

        (Written for speed: it runs over every heap entry, engine and live command of
        the batch at each state written down; one expression per item where it can.)"""
        NC, NT = self.NC, self.NT
        t_done, t_end, t_wait, t_deps, t_slot, t_floor = (self.t_done, self.t_end, self.t_wait,
                                                          self.t_deps, self.t_slot, self.t_floor)
        c_end, c_wait, c_t0, c_nt = self.c_end, self.c_wait, self.c_t0, self.c_nt
        old = T - self.rt
        lim = self.WLIM
        qlim = self.QLIM
        queues, heads = self.queues, self.heads
        for q, h in zip(queues, heads):
            if len(q) - h > qlim:
                return None

        def task(p, r):
            x = p * NT + r
            te = t_end[x]
            w = t_wait[x]
            return (r - refs[p][1], t_done[x], te - T if te >= 0 else None,
                    tuple(w) if w is not None else None)

        # the heap in order, without sequence numbers: (time - T, kind, arg), an END's
        # task as (position, task relative to the position's lowest unfinished one)
        ts, ks, am = self.TIME_SHIFT, self.KIND_SHIFT, self.ARG_MASK
        try:
            heap_c = [((e >> ts) - T, 0, (a // NT, a % NT - refs[a // NT][1])) if k == 0
                      else ((e >> ts) - T, k, a)
                      for e in sorted(self.heap) for k in [(e >> ks) & 3] for a in [e & am]]
        except KeyError:            # an END of a finished position: cannot be
            return None
        keys_c = []
        queued = live = 0
        for key, (q, h, bk, ei, ew, eb) in enumerate(zip(queues, heads, self.busy, self.eng_idle,
                                                        self.eng_waiting, self.eng_blocked)):
            if h == len(q):
                keys_c.append((bk - T if bk > T else 0, ew, ei - T if ei > T else 0))
                continue
            lo = ei if ei < T else T
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
                qc.append((p, r - refs[p][1], (fl if fl > lo else lo) - T, d, t_slot[x]))
            keys_c.append((bk - T if bk > T else 0, ew, (ei if ei > m else m) - T, tuple(qc), eb))
            queued += len(qc)
        chans = None
        if self.chans:
            chans = tuple([tuple(sorted([c - T if c > T else 0 for c in ch])) for ch in self.chans])
        units_c = (tuple([v - T if v > T else 0 for v in self.dram]),
                   tuple([v - T if v > T else 0 for v in self.tcm]),
                   tuple([v - T if v > T else 0 for v in self.link_in]), chans)
        pos_c = []
        p_free, p_left, p_exhausted, p_try, p_deps, p_slot = (self.p_free, self.p_left, self.p_exhausted,
                                                               self.p_try, self.p_deps, self.p_slot)
        one_task_each = self.one_task_each
        for p, (lc, lt, pn) in refs.items():
            cb = p * NC
            tb = p * NT
            size = 0
            if one_task_each:
                # (command j's task is task j: the window's lists side by side, one item each)
                win = [(cw, dn, te - T if te >= 0 else None, tuple(w) if w is not None else None)
                       if ce < 0 else None if ce <= old else ce - T
                       for ce, cw, dn, te, w in zip(c_end[cb + lc:cb + pn], c_wait[cb + lc:cb + pn],
                                                    t_done[tb + lc:tb + pn], t_end[tb + lc:tb + pn],
                                                    t_wait[tb + lc:tb + pn])]
            else:
                win = []
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
            live += len(win) + size
            pos_c.append((p, p_free[p] - T, p_left[p], p_exhausted[p], pt - T if pt >= T else None,
                          dp, sl, tuple(win)))
        self.size = len(heap_c) + len(keys_c) + queued + live
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
                if DEBUG:
                    print("   limit", p, "mc", mc, "mt", mt, "lcA", lcA, "pn", pn, "x", x, "ltA", ltA, "ed", ed,
                          "r", r, dc, dt)
        if m is None or m < 1:
            return self._fail(n, f"horizon {m}")
        self._apply(a, T, dT, m, shifts, dtile)
        self.hist = None
        self.fails = 0
        self.jumps.append((T, m, dT))
        if VERIFY_JUMPS:     # the jumped state must read exactly as B's did (tests, debugging)
            T2 = T + m * dT
            c2 = self.canon(T2, self._refs(T2))
            assert c2 == b["canon"], "fast-forward: the state after the jump differs from B's"
        self.ck_t.clear()
        self.ck_r.clear()
        self.seen = 0
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
            if any(wa != wb for (_, wa), (_, wb) in zip(da, db)):
                continue
            u = _shifted_or_shared([ja for ja, _ in da], [jb for jb, _ in db], dc, -1)
            if u is not None:
                u = _shifted_or_shared(sa, sb, dc, u)
            if u is not None:
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
        D = m * dT
        fclamp = self._floor_clamps(T)
        deps_end, cmds_end = self._ends_still_read(D, m, shifts)
        self._move_positions(a, T, D, m, shifts, fclamp)
        t_end, c_end = self.t_end, self.c_end
        for x, v in deps_end:
            t_end[x] = v
        for x, v in cmds_end:
            c_end[x] = v
        self._move_engines_and_servers(a, T, D, m, shifts)
        self._repeat_counters_and_events(a, m, dT, dtile)

    def _floor_clamps(self, T: int) -> dict:
        """Queued task -> the time at or below which its floor is clamped (see :meth:`canon`)."""
        queues, heads, eng_idle = self.queues, self.heads, self.eng_idle
        # queued tasks' floors: exact above their engine's clamp (see canon), else left as they are
        fclamp = {}
        for q, h, ei in zip(queues, heads, eng_idle):
            if h < len(q):
                lo = ei if ei < T else T
                for x in q[h:]:
                    fclamp[x] = lo
        return fclamp

    def _ends_still_read(self, D: int, m: int, shifts: dict) -> tuple:
        """The end times that stay readable across the jump, at their places after it: (task
        id, end) read by queued tasks' ring slots and by commands in flight, (command id,
        end) read by blocked dispatchers."""
        NC, NT = self.NC, self.NT
        c_t0, c_nt, c_end = self.c_t0, self.c_nt, self.c_end
        t_done, t_end, t_deps = self.t_done, self.t_end, self.t_deps
        queues, heads = self.queues, self.heads
        # queued tasks' finished dependencies (end times read by a ring slot), moved with the jump
        deps_end = []
        for q, h in zip(queues, heads):
            if h == len(q):
                continue
            for x in q[h:]:
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
        return deps_end, cmds_end

    def _move_positions(self, a: dict, T: int, D: int, m: int, shifts: dict, fclamp: dict) -> None:
        """Each position's live commands and tasks m periods up, the ones passed over finished."""
        NC, NT = self.NC, self.NT
        c_t0, c_nt = self.c_t0, self.c_nt
        r_sdeps = self.r_sdeps
        c_left, c_end, c_wait = self.c_left, self.c_end, self.c_wait
        t_floor, t_done, t_wait, t_end, t_deps, t_slot = (self.t_floor, self.t_done, self.t_wait,
                                                          self.t_end, self.t_deps, self.t_slot)
        for p, (dc, dt) in shifts.items():
            lcA, ltA = a["pos"][p][:2]
            lcB, ltB, pnB = self.lo_c[p], self.lo_t[p], self.p_next[p]
            cb, tb = p * NC, p * NT
            mc, mt = m * dc, m * dt
            edB = c_t0[pnB - 1] + c_nt[pnB - 1]
            # commands: the live window [lcB, pnB) moves up m periods ...
            c0, c1 = cb + lcB, cb + pnB
            c_left[c0 + mc:c1 + mc] = c_left[c0:c1]
            c_end[c0 + mc:c1 + mc] = [x + D if x >= 0 else x for x in c_end[c0:c1]]
            c_wait[c0 + mc:c1 + mc] = c_wait[c0:c1]
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
            # (a task's waiting list is copied: usually there is none)
            t_wait[base:base + len(w_wait)] = (w_wait if w_wait.count(None) == len(w_wait) else
                                               [list(w) if w is not None else None for w in w_wait])
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

    def _move_engines_and_servers(self, a: dict, T: int, D: int, m: int, shifts: dict) -> None:
        """Queues, engines, servers, channels and the heap m periods up."""
        NT = self.NT
        queues, heads, eng_idle = self.queues, self.heads, self.eng_idle
        # queues: what is queued at B, m periods up (what ran meanwhile is never read again:
        # a queue is read from its head on)
        # (every list is updated in place: the event loop's handlers hold them)
        up = {p: m * dt for p, (_, dt) in shifts.items()}       # a position's tasks move up
        for key, q in enumerate(queues):
            h = heads[key]
            if h < len(q):
                q[:] = [x + up[x // NT] for x in q[h:]]
            else:
                q.clear()
            heads[key] = 0
        eng_idle[:] = [v + D if v != va else v for v, va in zip(eng_idle, a["eng_idle"])]
        for lst in (self.busy, self.dram, self.tcm, self.link_in):
            lst[:] = [(v if v > T else T) + D for v in lst]
        if self.chans:
            for ch in self.chans:
                ch[:] = [(v if v > T else T) + D for v in ch]
        # (an entry's time and an END's task move; the order stays: all times move alike)
        heap, dt = self.heap, D << self.TIME_SHIFT
        km, am = 3 << self.KIND_SHIFT, self.ARG_MASK
        heap[:] = [e + dt if e & km else e + dt + up[(e & am) // NT] for e in heap]

    def _repeat_counters_and_events(self, a: dict, m: int, dT: int, dtile: int) -> None:
        """Counters and recorded events: A -> B's increments, m more times."""
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
