"""Session 25's tries at the rows' per-configuration offsets from their compiled SASS (CPU only;
docs/analysis.md 8 (ac); none of them is a model term: each came out no closer than the model).

    PYTHONPATH=<triton 3.6.0> python3 bench/h200/row_sass_sim.py fifo   rmsnorm,2048,8,16,2 ...
    PYTHONPATH=<triton 3.6.0> python3 bench/h200/row_sass_sim.py lone   softmax,2048,16,8 ...
    PYTHONPATH=<triton 3.6.0> python3 bench/h200/row_sass_sim.py slots  softmax,1024,1,16,4 ...

`fifo FAMILY,N,BLOCK_M,WARPS,R[,Z_NS]`: r CTA slots at an SM's memory pipe, a FIFO of 512-B warp
requests at 32.109 B/ns (the profile's DRAM share), data 700 ns after service; a CTA's tile loads
per warp in program order, a late one issued when the load it waits for (late_waits, as
row_late_waits.py reads them) has arrived; Z ns of compute after its data, then its stores queued;
prints the steady cycle of r CTAs over r x D (D: its X and Y bytes at the share), once with every
load in the first round and once with the compiled waits.
`lone FAMILY,N,BLOCK_M,WARPS`: one CTA alone on its SM, its warps / 4 on one scheduler issuing the
compiled SASS in order (one instruction a cycle; the profile's measured latencies fma 4, ex2 17,
shfl_sync 24, smem_load 23, bar_sync 20 cycles; the SFU 8 cycles a warp's MUFU), each LDG standing
for 4 requests (one a scheduler) into the FIFO above, its stores posted (not queued); rmsnorm's
weight-row loads after the tile are L2 hits (200 ns). Prints ns until its last instruction.
`slots FAMILY,N,BLOCK_M,WARPS,R`: the same scheduler running r CTA slots, refilled as a CTA's warps
exit (TURN=ns in the environment: a turnaround before each refill); prints the steady batch of r
CTAs over r x D.
"""
import heapq
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from row_late_waits import late_waits  # noqa: E402
from row_load_rounds import sass_path, x_vectors  # noqa: E402,F401  (x_vectors: row_pair_cycles, measure_round_split)

CLK = 1.98            # GHz, the profile's SM clock
# B/ns, one SM's share of the copy bandwidth (4,238.4 / 132); ROW_SIM_SHARE gives another device's
# (the H100 SXM5's: 3,350 x 0.883 / 132 = 22.41)
B = float(os.environ.get("ROW_SIM_SHARE", "32.109"))
L_DRAM = 700.0        # ns, the profile's loaded DRAM latency
L_L2 = 200.0          # ns, the profile's L2-hit latency
LAT = dict(fma=4, ex2=17, shfl=24, lds=23, bar=20)   # cycles, hw_profiles/h200_sxm.toml [instruction_latency]
SFU = 8               # cycles a warp's MUFU holds a scheduler's SFU (16 results a cycle an SM)
INSN = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)\s*(.*?);")
REG = re.compile(r"\b(U?R|U?P)(\d+|Z|T)(\.64)?\b")


def sass_of(fam, n, bm, w):
    return open(sass_path(fam, n, bm, w)).read()


def lat_of(op):
    b = op.split('.')[0]
    if b == 'MUFU':
        return LAT['ex2']
    if b == 'SHFL':
        return LAT['shfl']
    if b == 'LDS':
        return LAT['lds']
    if b in ('S2R', 'S2UR', 'CS2R', 'LDC', 'ULDC'):
        return 20
    return LAT['fma']


def decode(sass):
    """(base opcode, opcode, source registers, destination registers, latency) in program order.

    The destinations are the leading operands (two for a SETP, none for a store or barrier), the
    sources every register of the others and the guard predicate: an instruction that reads the
    register it writes (``FFMA R5, R6, R6, R5``, ``FMUL R54, R54, R54``) waits for it. (Until
    session 39 the sources left out every register among the destinations, so a fold's
    accumulator and the exp's in-place square waited for nothing.)"""
    prog = []
    for line in sass.splitlines():
        m = INSN.search(line)
        if not m:
            continue
        pred, op, ops = m.group(2), m.group(3), m.group(4)
        b = op.split('.')[0]
        if b == 'EXIT' and pred is None:
            break
        if b in ('EXIT', 'NOP', 'BRA', 'BSYNC', 'BSSY', 'WARPSYNC'):
            continue
        toks = [x.strip() for x in ops.split(',')]
        nd = 0 if b in ('STG', 'STS', 'STL', 'BAR', 'RED', 'ATOM') else (2 if 'SETP' in op else 1)

        def regs_of(tok, dest):
            out = []
            for r in REG.finditer(tok):
                kind, idx, wide = r.groups()
                if idx in ('Z', 'T'):
                    continue
                width = (4 if (dest and '.128' in op and b in ('LDG', 'LDS'))
                         else 2 if (wide or (dest and '.64' in op)) else 1)
                out += [(kind, int(idx) + k) for k in range(width)]
            return out
        dests = [x for tok in toks[:nd] for x in regs_of(tok, True)]
        srcs = [x for tok in toks[nd:] for x in regs_of(tok, False)]
        if pred:
            pm = re.search(r"(U?P)(\d)", pred)
            if pm:
                srcs.append((pm.group(1), int(pm.group(2))))
        prog.append((b, op, srcs, dests, lat_of(op)))
    return prog


def fifo(r, warps, waits, z, req=512.0, n=300):
    """ns a batch of r CTAs in the steady state of the FIFO pipe (module docstring, `fifo`)."""
    v = len(waits)
    pipe = [0.0]
    ev, seq = [], [0]

    def push(t, kind, *a):
        seq[0] += 1
        heapq.heappush(ev, (t, seq[0], kind, a))

    def serve(t, nbytes):
        s = max(t, pipe[0])
        pipe[0] = s + nbytes / B
        return pipe[0] + L_DRAM
    left, ends = {}, []
    for s in range(r):
        push(0.0, 'start', s)
    while ev and len(ends) < n:
        t, _, kind, a = heapq.heappop(ev)
        if kind == 'start':
            left[a[0]] = warps * v
            for j in range(v):
                if waits[j] is None:
                    for w in range(warps):
                        push(t, 'issue', a[0], w, j)
        elif kind == 'issue':
            push(serve(t, req), 'arrive', *a)
        elif kind == 'arrive':
            s, w, j = a
            left[s] -= 1
            for k in range(v):
                if waits[k] == j:
                    push(t, 'issue', s, w, k)
            if left[s] == 0:
                push(t + z, 'store', s)
        else:
            serve(t, req * warps * v)
            ends.append(t)
            push(t, 'start', a[0])
    k0 = len(ends) // 3
    return (ends[-1] - ends[k0]) / (len(ends) - 1 - k0) * r


def scheduler(prog, wps, r, xv, n_ctas=60, turn=0.0, lone=False):
    """ns (lone: until the CTA's last instruction; else a steady batch of r slots) on one scheduler."""
    n = len(prog)
    warps, cta_left, nxt, ends = [], {}, [0], []

    def width(op):
        return 16 if '.128' in op else 8 if '.64' in op else 4

    def start(slot, t):
        c = nxt[0]
        nxt[0] += 1
        cta_left[c] = wps
        for _ in range(wps):
            warps.append(dict(cta=c, slot=slot, pc=0, ready={'bar': t + int(turn * CLK)}, bar=False, nld=0, born=t))
    for s in range(r):
        start(s, 0)
    t, pipe, sfu_free = 0, 0.0, 0
    while len(ends) < (1 if lone else n_ctas):
        for c in list(cta_left):
            ws = [w for w in warps if w['cta'] == c]
            if ws and all(w['bar'] for w in ws):
                for w in ws:
                    w['bar'] = False
                    w['pc'] += 1
                    w['ready']['bar'] = t + LAT['bar']
        for w in sorted(warps, key=lambda w: (w['born'], w['cta'], w['pc'])):
            if w['bar'] or w['pc'] >= n or w['ready'].get('bar', 0) > t:
                continue
            b, op, srcs, dests, lat = prog[w['pc']]
            if any(w['ready'].get(x, 0) > t for x in srcs):
                continue
            if b == 'MUFU':
                if sfu_free > t:
                    continue
                sfu_free = t + SFU
            if b == 'BAR':
                w['bar'] = True
                break
            if b in ('LDG', 'STG'):
                now = t / CLK
                if b == 'STG' and lone:
                    arr = now      # a lone CTA posts its stores (row_body.batch): not in the pipe
                elif b == 'STG' or w['nld'] < xv:
                    s0 = max(now, pipe)
                    pipe = s0 + 4 * 32 * width(op) / B
                    arr = pipe + L_DRAM
                else:
                    arr = now + L_L2
                if b == 'LDG':
                    w['nld'] += 1
                    for d in dests:
                        w['ready'][d] = int(arr * CLK) + 1
            else:
                for d in dests:
                    w['ready'][d] = t + lat
            w['pc'] += 1
            if w['pc'] >= n:
                cta_left[w['cta']] -= 1
                if cta_left[w['cta']] == 0:
                    del cta_left[w['cta']]
                    ends.append(t / CLK)
                    warps[:] = [x for x in warps if x['cta'] != w['cta']]
                    if not lone:
                        start(w['slot'], t)
            break
        t += 1
    if lone:
        return ends[0]
    k0 = len(ends) // 3
    return (ends[-1] - ends[k0]) / (len(ends) - 1 - k0) * r


def main():
    mode = sys.argv[1]
    for spec in sys.argv[2:]:
        f = spec.split(',')
        fam, n, bm, w = f[0], int(f[1]), int(f[2]), int(f[3])
        sass = sass_of(fam, n, bm, w)
        xv = x_vectors(n, bm, w)
        d = 2 * bm * n * 2 / B
        if mode == 'fifo':
            r, z = int(f[4]), float(f[5]) if len(f) > 5 else 600.0
            waits = late_waits(sass, xv)
            one = fifo(r, w, [None] * len(waits), z) / (r * d)
            got = fifo(r, w, waits, z) / (r * d)
            print(spec, f"one round {one:.3f} x rD, compiled waits {got:.3f} x rD")
        elif mode == 'lone':
            print(spec, f"{scheduler(decode(sass), max(w // 4, 1), 1, xv, lone=True):.1f} ns")
        else:
            r = int(f[4])
            c = scheduler(decode(sass), max(w // 4, 1), r, xv, turn=float(os.environ.get('TURN', '0')))
            print(spec, f"{c:.1f} ns a batch, {c / (r * d):.3f} x rD")


if __name__ == "__main__":
    main()
