#!/usr/bin/env python3
"""How far a warp's own compiled instruction stream explains a loop's trip (no GPU: SASS compiled on the CPU).

For each .sass (cuobjdump -sass, as bench/h200/compile_attn_sass.py writes them) it takes the main loop (the
backward branch with the most tensor instructions, as bench/h200/sass_loop_counts.py does), decodes each
instruction's control code (the second 64-bit word's bits 41-61: stall cycles, yield, write and read barrier,
wait mask; Jia et al., "Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking", 2018, section 2.4)
and issues the body in order, trip after trip, for 1-4 warps sharing one sub-partition: a warp issues an
instruction once its previous one's stall has passed and the barriers it waits on are released (a
variable-latency instruction releases its write barrier after the idle latency of calibration/h200/measured/
latency: LDSM 34, LDS 23, MUFU 17, SHFL 24, BAR 20 cycles); one instruction a cycle a sub-partition; HMMA holds
the tensor unit 6 cycles and MUFU the special-function unit 8. Prints the instructions, the sum of their stalls
and the simulated cycles a trip at 1-4 warps.

    python3 bench/h200/sass_issue_bound.py DIR/*.sass

Session 57, on the seven flash-attention binaries of calibration/h100/measured/attn_warp_s56 (sass_loop_counts.csv),
at the warps a sub-partition each measured launch held: the in-order bound is 35-60% of the measured rounds (D128
32x32 w2 1,415 cycles at 2 warps against 2,928 measured; 64x32 w2 2,322 / 4,466; 64x64 w2 4,432 / 7,424; 32x64 w4
2,018 / 5,187 at 4 warps; D64 64x64 w2 s3 1,243 / 3,597 at 1 warp). The stall fields alone (1.7 a warp instruction
at 64x64 w2) are about Nsight's `wait` there (1.98), but the short-scoreboard waits at idle latency (573 cycles a
trip for one warp) fall short of Nsight's 1.24 an instruction (1,378 cycles): LDSM, MUFU and SHFL wait behind the
SM's loaded shared-memory port, which this bound leaves out, as it leaves out the barriers' wait for the CTA's
other warps. With the SM around it (`FILE:CTAS:WARPS`,
`sim_sm`: warp slot k on sub-partition k % 4, the SM's shared-memory port at 128 B a cycle for LDSM / LDS / STS /
STSM / LDGSTS / LDL / STL, each waiting its turn before its idle latency, and BAR.SYNC releasing when the CTA's
warps have all reached it) the warp-mma rounds come to 0.71-0.79 of the measured (2,206 / 2,928, 3,165 / 4,466,
5,495 / 7,424, 4,082 / 5,187) and D64 64x64 w2 s3 to 0.58 (2,072 / 3,597, 4 CTAs a SM) at the nominal 1.98 GHz,
about what tfx priced them at before session 57 (its rounds 0.67-0.96 of the measured). The binaries' TTGIR then
showed one warp layout for both dots, the later dot's ([1, 2] at BLOCK_M 64, D 128 on 2 warps), where tfx laid QK^T
out by its own extents: with it the row statistics and P cross warps (the STS / LDS / STSM issued here), and tfx
prices the D 128 warp-mma rows at 0.94-1.16 of the measured (docs/analysis.md section 3). The warpgroup binaries (HGMMA, whose tensor time this
simulation does not hold) come to 0.36-0.44.
"""
import re, sys, collections
LINE = re.compile(r"^\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;\s*/\*\s*0x([0-9a-f]{16})\s*\*/")
CTRL = re.compile(r"^\s+/\*\s*0x([0-9a-f]{16})\s*\*/\s*$")
def parse(path):
    out = []; pend = None
    for line in open(path):
        m = LINE.match(line)
        if m:
            pend = [int(m.group(1), 16), m.group(2).strip(), int(m.group(3), 16)]
            continue
        c = CTRL.match(line)
        if c and pend is not None:
            hi = int(c.group(1), 16); ctl = hi >> 41
            out.append(dict(addr=pend[0], text=pend[1], stall=ctl & 15, yld=(ctl >> 4) & 1, wbar=(ctl >> 5) & 7,
                            rbar=(ctl >> 8) & 7, wait=(ctl >> 11) & 63))
            pend = None
    return out
def opcode(t):
    return re.sub(r"^@!?U?P\w+\s+", "", t).split()[0]
def main_loop(ins):
    best, most = [], -1
    for i, x in enumerate(ins):
        m = re.search(r"\bBRA\b.*?0x([0-9a-f]+)", x["text"])
        if not m or int(m.group(1), 16) >= x["addr"]:
            continue
        body = [y for y in ins if int(m.group(1), 16) <= y["addr"] <= x["addr"]]
        mma = sum(opcode(y["text"]).startswith(("HMMA", "HGMMA")) for y in body)
        if mma > most:
            best, most = body, mma
    return best
# variable latencies (cycles), calibration/h200/measured/latency (H200 = H100 die)
LAT = {"LDSM": 34, "LDS": 23, "MUFU": 17, "SHFL": 24, "LDGSTS": 20, "LDG": 600, "S2R": 20, "BAR": 20,
       "HMMA": 24, "STS": 20, "LDL": 30, "STL": 20, "ATOM": 100, "REDUX": 24, "CS2R": 10, "DEPBAR": 0}
# pipe issue intervals a warp instruction holds its sub-partition's unit (cycles)
PIPE = {"HMMA": ("tensor", 6), "MUFU": ("mufu", 8)}
def sim(body, warps, trips=8, pipes=True):
    """Cycles a round (every warp's trip) when ``warps`` warps issue ``body`` on one sub-partition:
    the span of trips 2..``trips`` of the slowest warp over ``trips`` - 1 (the oldest ready warp
    issues first, as Hopper's scheduler favours it)."""
    n = len(body)
    # each warp: its next instruction, when it may issue, its barriers' release times, trips done
    st = [dict(pc=0, t=0, bars=[0] * 6, trip=0, ends=[]) for _ in range(warps)]
    busy = collections.defaultdict(int)
    issue_slot = 0
    while any(s["trip"] < trips for s in st):
        cand = None
        for w, s in enumerate(st):
            if s["trip"] >= trips:
                continue
            ins = body[s["pc"]]
            ready = s["t"]
            for b in range(6):
                if ins["wait"] >> b & 1:
                    ready = max(ready, s["bars"][b])
            op = opcode(ins["text"]).split(".")[0]
            if pipes and op in PIPE:
                ready = max(ready, busy[PIPE[op][0]])
            ready = max(ready, issue_slot)
            key = (ready, s["trip"], w)      # the oldest (fewest trips done) first on a tie
            if cand is None or key < cand[0]:
                cand = (key, w, ins, op)
        (t, _, _), w, ins, op = cand
        s = st[w]
        issue_slot = t + 1
        if pipes and op in PIPE:
            busy[PIPE[op][0]] = t + PIPE[op][1]
        if ins["wbar"] != 7:
            s["bars"][ins["wbar"]] = t + LAT.get(op, 24)
        if ins["rbar"] != 7:
            s["bars"][ins["rbar"]] = t + 4
        s["t"] = t + max(ins["stall"], 1)
        s["pc"] += 1
        if s["pc"] == n:
            s["pc"] = 0
            s["trip"] += 1
            s["ends"].append(s["t"])
    return max((s["ends"][-1] - s["ends"][0]) / (trips - 1) for s in st)


def smem_bytes(op_full):
    op = op_full.split(".")[0]
    if op in ("LDSM", "STSM"):
        n = op_full.rsplit(".", 1)[-1]
        return 128 * (int(n) if n.isdigit() else 1)
    if op in ("LDS", "STS", "LDGSTS", "LDL", "STL"):
        for w in (128, 64):
            if f".{w}" in op_full:
                return 32 * w // 8
        return 128
    return 0

def sim_sm(body, ctas, wpc, trips=8, port_bpc=128, mem_lat=None):
    """A whole SM: ctas x wpc warps, warp slot k on sub-partition k % 4; one issue a cycle per
    sub-partition; HMMA 6 / MUFU 8 cycles of its sub-partition's unit; the SM's shared-memory port
    port_bpc bytes a cycle for LDSM/LDS/STS/STSM/LDGSTS (and local memory LDL/STL through L1);
    BAR.SYNC releases when every warp of the CTA has reached it."""
    n = len(body)
    W = ctas * wpc
    st = [dict(pc=0, t=0, bars=[0] * 6, trip=0, ends=[], sp=k % 4, cta=k // wpc, at_bar=None) for k in range(W)]
    busy = collections.defaultdict(int)
    slot = [0] * 4
    port = 0
    barq = collections.defaultdict(list)   # (cta, bar instance) -> arrival times
    while any(s["trip"] < trips for s in st):
        cand = None
        for w, s in enumerate(st):
            if s["trip"] >= trips or s["at_bar"] is not None:
                continue
            ins = body[s["pc"]]
            ready = max(s["t"], slot[s["sp"]])
            for b in range(6):
                if ins["wait"] >> b & 1:
                    ready = max(ready, s["bars"][b])
            opf = opcode(ins["text"]); op = opf.split(".")[0]
            if op in PIPE:
                ready = max(ready, busy[(s["sp"], PIPE[op][0])])
            key = (ready, s["trip"], w)
            if cand is None or key < cand[0]:
                cand = (key, w, ins, opf)
        if cand is None:
            break
        (t, _, _), w, ins, opf = cand
        op = opf.split(".")[0]
        s = st[w]
        slot[s["sp"]] = t + 1
        if op in PIPE:
            busy[(s["sp"], PIPE[op][0])] = t + PIPE[op][1]
        lat = LAT.get(op, 24)
        nb = smem_bytes(opf)
        if nb:
            port = max(port, t) + nb / port_bpc
            lat = max(lat, port - t + LAT.get(op, 24) - nb / port_bpc)
        if ins["wbar"] != 7:
            s["bars"][ins["wbar"]] = t + lat
        if ins["rbar"] != 7:
            s["bars"][ins["rbar"]] = t + (port - t if nb else 4)
        s["t"] = t + max(ins["stall"], 1)
        s["pc"] += 1
        if op == "BAR" and ".SYNC" in opf or opf == "BAR.SYNC":
            key = (s["cta"], s["trip"], s["pc"])
            barq[key].append(w)
            s["at_bar"] = key
            if len(barq[key]) == wpc:
                rel = max(st[x]["t"] for x in barq[key]) + LAT["BAR"]
                for x in barq[key]:
                    st[x]["t"] = rel
                    st[x]["at_bar"] = None
        if s["pc"] == n:
            s["pc"] = 0
            s["trip"] += 1
            s["ends"].append(s["t"])
    return max((s["ends"][-1] - s["ends"][0]) / (trips - 1) for s in st if len(s["ends"]) > 1)


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        path, _, layout = arg.partition(":")
        body = main_loop(parse(path))
        if layout:      # FILE:CTAS:WARPS: the whole SM, as the launch held it
            ctas, wpc = (int(x) for x in layout.split(":"))
            print(path.split("/")[-1], f"SM of {ctas} CTAs x {wpc} warps: {sim_sm(body, ctas, wpc):.0f} cycles a round")
            continue
        stall = sum(max(x["stall"], 1) for x in body)
        print(path.split("/")[-1], "instrs", len(body), "stall sum", stall,
              "sim w1", sim(body, 1), "w2", sim(body, 2), "w3", sim(body, 3), "w4", sim(body, 4))
