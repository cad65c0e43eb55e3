"""Two row CTAs on one SM, their warps' loads served first come first served (CPU only).

docs/analysis.md 8 (y), the two-round pairs: a discrete-event simulation of r CTAs sharing one
SM's memory pipe, each of W warps. A warp issues its row-tile loads (16-byte vectors, 32 lanes:
one request of 512 B) in the dependent rounds of the compiled binary
(calibration/h200/measured/row_sass_counts/load_rounds.csv `pattern`): round 1 at the CTA's
start, round k + 1 once all of the warp's round-k data has arrived (the assumption this tests:
the SASS may make a late load wait for an earlier vector only). The pipe serves requests in
the order they are issued at the SM's DRAM share (4,238.4 B/ns / 132); data reaches its warp a
latency (700 ns) after its request is served. When every warp holds its rows (the reduction's
barrier) the CTA computes for Z_c, then posts its stores (requests in the same pipe, no wait)
and its slot takes the next CTA. Printed: the steady cycle of the r CTAs against 2 D (D: one
CTA's X and Y bytes at the share), the alternation's cycle, and that of the same binary with
its tile loaded in one round.

    python3 bench/row_pair_fcfs.py
"""

from __future__ import annotations

import heapq
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tfx.hw.units import format_time_ns  # noqa: E402

RATE = 4238.4 / 132          # B/ns: one SM's DRAM share (h200_sxm)
LATENCY = 700.0              # ns: memory.gmem.latency
X_BYTES = Y_BYTES = 32768    # one CTA's row tile, loaded and stored (the 32 KB tiles of (x))


def waits_of(pattern):
    """Each load's wait (the program-order index of the load whose data it issues after, -1: at
    the start) where a load of round k + 1 waits for all of round k: the last load of round k."""
    last = {}
    for i, rnd in enumerate(pattern):
        last[rnd] = i
    return [last[chr(ord(rnd) - 1)] if rnd != "1" else -1 for rnd in pattern]


def cycle_ns(warps, pattern, z_c, r=2, ctas=200, waits=None):
    """ns in which each of the r slots completes one CTA, in the steady state. ``waits``: each
    load's wait (bench/h200/row_load_waits.py's column; None: ``waits_of(pattern)``). A warp
    issues its loads in program order, each no earlier than the data of the load it waits for."""
    vectors = len(pattern)
    waits = waits_of(pattern) if waits is None else waits
    load_ns = X_BYTES / (warps * vectors) / RATE
    store_ns = Y_BYTES / (warps * vectors) / RATE
    pipe_free = 0.0
    events, seq, ends, state, started = [], [0], [], {}, [0]

    def push(t, kind, data):
        seq[0] += 1
        heapq.heappush(events, (t, seq[0], kind, data))

    def advance(cta, warp, t):
        """Issue the warp's next loads in order while each one's wait is met."""
        st = state[cta]
        k = st["next"][warp]
        while k < vectors and (waits[k] < 0 or waits[k] in st["arrived"][warp]):
            push(t, "load", (cta, warp, k))
            k += 1
        st["next"][warp] = k

    def start(slot, t):
        cta = started[0]
        started[0] += 1
        state[cta] = {"slot": slot, "next": [0] * warps, "arrived": [set() for _ in range(warps)], "ready": 0}
        for w in range(warps):
            advance(cta, w, t)

    for s in range(r):
        start(s, 0.0)
    while events:
        t, _, kind, data = heapq.heappop(events)
        if kind in ("load", "store"):
            pipe_free = max(t, pipe_free) + (load_ns if kind == "load" else store_ns)
            if kind == "load":
                push(pipe_free + LATENCY, "arrive", data)
        elif kind == "arrive":
            cta, warp, k = data
            st = state[cta]
            st["arrived"][warp].add(k)
            advance(cta, warp, t)
            if len(st["arrived"][warp]) == vectors:
                st["ready"] += 1
                if st["ready"] == warps:
                    push(t + z_c, "done", cta)
        elif kind == "done":
            for w in range(warps):
                for _ in range(vectors):
                    push(t, "store", data)
            ends.append(t)
            if started[0] < ctas:
                start(state[data]["slot"], t)
    ends.sort()
    a, b = len(ends) // 4, len(ends) - 5
    return (ends[b] - ends[a]) / (b - a) * r


# (label, warps, load_rounds.csv pattern, Z_c = the model's chain less its latency and transfer,
#  the campaigns' slot cycle over 2 D: measured / predicted x the model's batch, many-wave rows)
CASES = [
    ("rmsnorm (1, 16) at 16384", 16, "1112", 633, 1.28),
    ("rmsnorm (8, 16) at 2048", 16, "1112", 605, 1.28),
    ("rmsnorm (1, 8) at 16384", 8, "11111122", 810, 1.28),
    ("rmsnorm (8, 8) at 2048", 8, "11111112", 782, 1.22),
    ("rmsnorm (2, 8) at 8192", 8, "11111112", 794, 1.18),
    ("rmsnorm (1, 4) at 16384", 4, "1111111222222222", 1181, 1.12),
    ("rmsnorm (16, 4) at 1024", 4, "1111111111111112", 1151, 1.11),
]


def main() -> int:
    two_d = 2 * (X_BYTES + Y_BYTES) / RATE
    print(f"2 D = {format_time_ns(two_d)} (one CTA's X and Y at {RATE:.3f} B/ns, twice)")
    print(f"{'binary':28s} {'simulated':>12s} {'/ 2 D':>7s} {'one round':>12s} {'measured / 2 D':>15s}")
    for label, warps, pattern, z_c, measured in CASES:
        c = cycle_ns(warps, pattern, z_c)
        one = cycle_ns(warps, "1" * len(pattern), z_c)
        print(f"{label:28s} {format_time_ns(c):>12s} {c / two_d:7.3f} {format_time_ns(one):>12s} {measured:15.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
