"""The row binaries' steady cycle at r CTAs a SM on the SM's FOUR warp schedulers, from their compiled
SASS (CPU only; docs/analysis.md 8 (ak)).

    ROW_SASS_DIR=/tmp/row_sass python3 bench/h200/row_sched_sim.py > sched_cycles.csv
    ROW_SASS_DIR=/tmp/row_sass python3 bench/h200/row_sched_sim.py one rmsnorm,2048,2,16,4 ...
    python3 bench/h200/row_sched_sim.py compare sched_cycles.csv implied_rmsnorm.csv implied_softmax.csv

Session 25's `slots` simulation (row_sass_sim.scheduler) runs ONE scheduler holding WARPS / 4 warps of
each of r CTA slots and lets each of its loads stand for the four schedulers' (4 x 512 B at once).
Here the SM's four sub-partitions are simulated: the r CTAs' warps take consecutive warp slots of the SM
(slot s's warp w is the SM's warp s x WARPS + w; for WARPS >= 4 that is warp w on scheduler w mod 4,
the CUDA C++ Programming Guide's "warps statically assigned" to one of the four schedulers; a CTA of 1 or
2 warps sits on 1 or 2 of them, the r CTAs spread over all four), each scheduler issuing at most one
instruction a cycle (no dual issue: ncu_rows_s15, docs/analysis.md 8) among its resident warps, each warp
in program order, the OLDEST ready warp first (the CTA launched first, then the lower warp: the
schedulers favour the oldest warps, the CTAs-of-one-SM drift of docs/analysis.md 8's GEMM pairs; the
same order as session 25's `slots`). Latencies, the SFU (8 cycles a warp's MUFU, per scheduler), the
barrier (a CTA's warps on all four schedulers), rmsnorm's weight row from L2 (200 ns) are `slots`'s;
each warp's LDG / STG is ONE request of 32 x its width bytes (512 B for .128) into one first-come-first-
served pipe at the SM's DRAM share (32.109 B/ns), the data 700 ns after its service. A slot is refilled
at the cycle its CTA's last warp exits. 240 CTAs a run; the steady cycle over the last two thirds.

TURN=ns in the environment: a turnaround before a slot's refill (0 for the table; 79.4 and 200 were
tried as a sensitivity, docs/analysis.md 8 (ak)).

Output: family,N,BLOCK_M,WARPS,r,cycle_ns,over_rd (over r D, D = one CTA's X and Y bytes at the share).
The configurations: pairs28's row_slot_cycles.py CONFIGS (4 or more warps) and FEW_WARPS (1 or 2),
every non-spilling campaign configuration at the model's r >= 2.
"""
import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import row_sass_sim as S  # noqa: E402

NSCHED = 4

# pairs28's row_slot_cycles.py (branch pairs28, not landed): every non-spilling campaign configuration
# (family, N, BLOCK_M, WARPS, r) at the model's r >= 2, 4 or more warps (CONFIGS) and 1 or 2 (FEW_WARPS)
CONFIGS = [
    ("rmsnorm", 1024, 1, 8, 8), ("rmsnorm", 1024, 1, 16, 4), ("rmsnorm", 1024, 2, 8, 8), ("rmsnorm", 1024, 2, 16, 4),
    ("rmsnorm", 1024, 4, 8, 8), ("rmsnorm", 1024, 4, 16, 4), ("rmsnorm", 1024, 8, 4, 5), ("rmsnorm", 1024, 8, 8, 4),
    ("rmsnorm", 1024, 8, 16, 3), ("rmsnorm", 1024, 16, 4, 2), ("rmsnorm", 1024, 16, 8, 2), ("rmsnorm", 1024, 16, 16, 2),
    ("rmsnorm", 2048, 1, 8, 8), ("rmsnorm", 2048, 1, 16, 4), ("rmsnorm", 2048, 2, 8, 8), ("rmsnorm", 2048, 2, 16, 4),
    ("rmsnorm", 2048, 4, 4, 5), ("rmsnorm", 2048, 4, 8, 4), ("rmsnorm", 2048, 4, 16, 4), ("rmsnorm", 2048, 8, 4, 3),
    ("rmsnorm", 2048, 8, 8, 2), ("rmsnorm", 2048, 8, 16, 2), ("rmsnorm", 4096, 1, 8, 8), ("rmsnorm", 4096, 1, 16, 4),
    ("rmsnorm", 4096, 2, 4, 5), ("rmsnorm", 4096, 2, 8, 4), ("rmsnorm", 4096, 2, 16, 4), ("rmsnorm", 4096, 4, 4, 3),
    ("rmsnorm", 4096, 4, 8, 2), ("rmsnorm", 4096, 4, 16, 2), ("rmsnorm", 8192, 1, 4, 5), ("rmsnorm", 8192, 1, 8, 4),
    ("rmsnorm", 8192, 1, 16, 3), ("rmsnorm", 8192, 2, 4, 2), ("rmsnorm", 8192, 2, 8, 2), ("rmsnorm", 8192, 2, 16, 2),
    ("rmsnorm", 16384, 1, 4, 2), ("rmsnorm", 16384, 1, 8, 2), ("rmsnorm", 16384, 1, 16, 2),
    ("softmax", 1024, 1, 8, 8), ("softmax", 1024, 1, 16, 4), ("softmax", 1024, 2, 8, 8), ("softmax", 1024, 2, 16, 4),
    ("softmax", 1024, 4, 8, 6), ("softmax", 1024, 4, 16, 4), ("softmax", 1024, 8, 4, 5), ("softmax", 1024, 8, 8, 4),
    ("softmax", 1024, 8, 16, 3), ("softmax", 1024, 16, 4, 2), ("softmax", 1024, 16, 8, 2), ("softmax", 1024, 16, 16, 2),
    ("softmax", 2048, 1, 8, 8), ("softmax", 2048, 1, 16, 4), ("softmax", 2048, 2, 8, 8), ("softmax", 2048, 2, 16, 4),
    ("softmax", 2048, 4, 4, 5), ("softmax", 2048, 4, 8, 4), ("softmax", 2048, 4, 16, 3), ("softmax", 2048, 8, 4, 3),
    ("softmax", 2048, 8, 8, 2), ("softmax", 2048, 8, 16, 2), ("softmax", 4096, 1, 8, 8), ("softmax", 4096, 1, 16, 4),
    ("softmax", 4096, 2, 4, 5), ("softmax", 4096, 2, 8, 5), ("softmax", 4096, 2, 16, 4), ("softmax", 4096, 4, 4, 3),
    ("softmax", 4096, 4, 8, 2), ("softmax", 4096, 4, 16, 2), ("softmax", 8192, 1, 4, 5), ("softmax", 8192, 1, 8, 5),
    ("softmax", 8192, 1, 16, 4), ("softmax", 8192, 2, 4, 3), ("softmax", 8192, 2, 8, 2), ("softmax", 8192, 2, 16, 2),
    ("softmax", 16384, 1, 4, 3), ("softmax", 16384, 1, 8, 2), ("softmax", 16384, 1, 16, 2),
]


FEW_WARPS = [
    ('rmsnorm', 1024, 1, 1, 32), ('rmsnorm', 1024, 1, 2, 32), ('rmsnorm', 1024, 2, 1, 20),
    ('rmsnorm', 1024, 2, 2, 20), ('rmsnorm', 1024, 4, 1, 12), ('rmsnorm', 1024, 4, 2, 10),
    ('rmsnorm', 1024, 8, 2, 6), ('rmsnorm', 2048, 1, 1, 16), ('rmsnorm', 2048, 1, 2, 18),
    ('rmsnorm', 2048, 2, 1, 8), ('rmsnorm', 2048, 2, 2, 10), ('rmsnorm', 2048, 4, 2, 6),
    ('rmsnorm', 4096, 1, 1, 8), ('rmsnorm', 4096, 1, 2, 10), ('rmsnorm', 4096, 2, 2, 4),
    ('rmsnorm', 8192, 1, 2, 4), ('softmax', 1024, 1, 1, 32), ('softmax', 1024, 1, 2, 32),
    ('softmax', 1024, 2, 1, 28), ('softmax', 1024, 2, 2, 20), ('softmax', 1024, 4, 1, 16),
    ('softmax', 1024, 4, 2, 10), ('softmax', 1024, 8, 1, 8), ('softmax', 1024, 8, 2, 6),
    ('softmax', 2048, 1, 1, 24), ('softmax', 2048, 1, 2, 20), ('softmax', 2048, 2, 1, 16),
    ('softmax', 2048, 2, 2, 10), ('softmax', 2048, 4, 1, 8), ('softmax', 2048, 4, 2, 6),
    ('softmax', 4096, 1, 1, 12), ('softmax', 4096, 1, 2, 10), ('softmax', 4096, 2, 1, 8),
    ('softmax', 4096, 2, 2, 6), ('softmax', 8192, 1, 2, 6),
]


def width(op):
    return 16 if '.128' in op else 8 if '.64' in op else 4


def sm_cycle(prog, w, r, xv, n_ctas=240, turn_ns=0.0):
    """ns a steady batch of r CTAs of w warps each on one SM's four schedulers (module docstring)."""
    n = len(prog)
    BIG = 1 << 60
    scheds = [[] for _ in range(NSCHED)]     # warps, oldest first (appended in launch order)
    ctas = {}                                # cta -> [warps left, warps at the barrier, its warps]
    nxt = [0]
    ends = []

    def start(slot, t):
        c = nxt[0]
        nxt[0] += 1
        ws = []
        for k in range(w):
            wp = dict(cta=c, slot=slot, pc=0, ready={}, bar=False, barready=t, nld=0)
            ws.append(wp)
            scheds[(slot * w + k) % NSCHED].append(wp)
        ctas[c] = [w, 0, ws]

    for s in range(r):
        start(s, 0)
    t, pipe = 0, 0.0
    sfu = [0] * NSCHED
    while len(ends) < n_ctas:
        issued = False
        t_next = BIG
        for q in range(NSCHED):
            for wp in scheds[q]:
                if wp['bar']:
                    continue
                b, op, srcs, dests, lat = prog[wp['pc']]
                rdy = wp['barready']
                for x in srcs:
                    v = wp['ready'].get(x, 0)
                    if v > rdy:
                        rdy = v
                if b == 'MUFU' and sfu[q] > rdy:
                    rdy = sfu[q]
                if rdy > t:
                    if rdy < t_next:
                        t_next = rdy
                    continue
                # issue
                issued = True
                if b == 'MUFU':
                    sfu[q] = t + S.SFU
                if b == 'BAR':
                    wp['bar'] = True
                    cs = ctas[wp['cta']]
                    cs[1] += 1
                    if cs[1] == cs[0]:
                        cs[1] = 0
                        for x in cs[2]:
                            if x['bar']:
                                x['bar'] = False
                                x['pc'] += 1
                                x['barready'] = t + S.LAT['bar']
                    break
                if b in ('LDG', 'STG'):
                    now = t / S.CLK
                    if b == 'STG' or wp['nld'] < xv:
                        s0 = now if now > pipe else pipe
                        pipe = s0 + 32 * width(op) / S.B
                        arr = pipe + S.L_DRAM
                    else:
                        arr = now + S.L_L2
                    if b == 'LDG':
                        wp['nld'] += 1
                        for d in dests:
                            wp['ready'][d] = int(arr * S.CLK) + 1
                else:
                    for d in dests:
                        wp['ready'][d] = t + lat
                wp['pc'] += 1
                if wp['pc'] >= n:
                    cs = ctas[wp['cta']]
                    cs[0] -= 1
                    scheds[q].remove(wp)
                    cs[2].remove(wp)
                    if cs[0] == 0:
                        del ctas[wp['cta']]
                        ends.append(t / S.CLK)
                        start(wp['slot'], t + 1 + int(turn_ns * S.CLK))
                break
        if issued or t_next == BIG:
            t += 1
        else:
            t = max(t + 1, t_next)
    k0 = len(ends) // 3
    return (ends[-1] - ends[k0]) / (len(ends) - 1 - k0) * r


def configs():
    return CONFIGS + FEW_WARPS


def run(specs, n_ctas=240):
    print("family,N,BLOCK_M,WARPS,r,cycle_ns,over_rd", flush=True)
    for fam, n, bm, w, r in specs:
        c = sm_cycle(S.decode(S.sass_of(fam, n, bm, w)), w, r, S.x_vectors(n, bm, w), n_ctas,
                     float(os.environ.get("TURN", "0")))
        print(f"{fam},{n},{bm},{w},{r},{c:.1f},{c / (r * 2 * bm * n * 2 / S.B):.4f}", flush=True)


def compare(sim, *implied_paths):
    implied = {}
    for path in implied_paths:
        for row in csv.DictReader(open(path)):
            implied[(row["family"], *(int(row[k]) for k in ("N", "BLOCK_M", "WARPS", "r")))] = row
    print("family,N,BLOCK_M,WARPS,r,rows,simulated,implied,model")
    for row in csv.DictReader(open(sim)):
        key = (row["family"], *(int(row[k]) for k in ("N", "BLOCK_M", "WARPS", "r")))
        if key in implied:
            i = implied[key]
            print(f"{','.join(str(x) for x in key)},{i['rows']},{float(row['over_rd']):.4f},"
                  f"{i['implied_over_rd']},{i['model_over_rd']}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["compare"]:
        compare(*sys.argv[2:])
    elif sys.argv[1:2] == ["one"]:
        run([(f[0], *map(int, f[1:5])) for f in (s.split(',') for s in sys.argv[2:])],
            int(os.environ.get("N_CTAS", "240")))
    else:
        run(configs())
