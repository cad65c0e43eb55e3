"""Read persist_walk_s20 (bench/h200/measure_persist_walk_s20.py) on the CPU: per walk, the lag of a B
column's co-readers by round (median / p90, in tiles), the whole round's start spread, the CTAs' tile times,
by SM block and by TPC partner busy or idle. Usage: python3 bench/h200/persist_walk_s20_summary.py DIR"""
import csv, glob, os, statistics, sys
d = sys.argv[1]
for f in sorted(glob.glob(os.path.join(d, "walk_*.csv"))):
    rows = [dict((k, int(v)) for k, v in r.items()) for r in csv.DictReader(open(f))]
    name = os.path.basename(f)[5:-4]
    ctas = max(r["cta"] for r in rows) + 1
    tn = max(r["pid_n"] for r in rows) + 1
    rounds = max(r["round"] for r in rows) + 1
    tile = statistics.median(r["t_end_ns"] - r["t_start_ns"] for r in rows)
    print(f"== {name}: {ctas} CTAs, {tn} columns, {rounds} rounds, median tile {tile/1e3:.2f} us")
    # per round: lag of each column's co-readers (max-min start) in tiles; also the start spread of the whole round
    line = []
    for i in range(rounds):
        rr = [r for r in rows if r["round"] == i]
        cols = {}
        for r in rr: cols.setdefault(r["pid_n"], []).append(r["t_start_ns"])
        sp = sorted((max(v) - min(v)) / tile for v in cols.values() if len(v) > 1)
        allsp = (max(r["t_start_ns"] for r in rr) - min(r["t_start_ns"] for r in rr)) / tile
        if sp:
            line.append(f"{i}:{sp[len(sp)//2]:.2f}/{sp[int(0.9*len(sp))]:.2f}/{allsp:.2f}")
    print("  round: median/p90 column lag, whole-round start spread (tiles):", " ".join(line))
    # per CTA: mean tile time; by smid
    per = {}
    for r in rows: per.setdefault(r["cta"], []).append(r)
    rate = {c: statistics.mean(x["t_end_ns"] - x["t_start_ns"] for x in v) for c, v in per.items()}
    sm = {c: v[0]["smid"] for c, v in per.items()}
    vals = sorted(rate.values())
    print(f"  CTA mean tile: min {vals[0]/1e3:.2f} p10 {vals[len(vals)//10]/1e3:.2f} med {vals[len(vals)//2]/1e3:.2f} p90 {vals[int(.9*len(vals))]/1e3:.2f} max {vals[-1]/1e3:.2f} us; cv {statistics.pstdev(vals)/statistics.mean(vals):.4f}")
    # by smid block of 16 (GPC guess) and TPC partner busy
    smset = set(sm.values())
    blocks = {}
    for c, s in sm.items(): blocks.setdefault(s // 18, []).append(rate[c])
    print("  by smid//18:", " ".join(f"{b}:{len(v)}:{statistics.mean(v)/1e3:.2f}" for b, v in sorted(blocks.items())))
    lone = [rate[c] for c, s in sm.items() if (s ^ 1) not in smset]
    pair = [rate[c] for c, s in sm.items() if (s ^ 1) in smset]
    if lone: print(f"  TPC partner idle: {len(lone)} CTAs {statistics.mean(lone)/1e3:.2f} us; busy {len(pair)} {statistics.mean(pair)/1e3:.2f}")
    # gaps between tiles (epilogue/prologue), per-CTA end spread
    ends = sorted(max(x["t_end_ns"] for x in v) for v in per.values())
    print(f"  CTA end spread {(ends[-1]-ends[0])/1e3:.1f} us; makespan {ends[-1]/1e3:.1f} us")
    # lag growth: for each co-reader group (cta mod tn), start-time spread of the group's tiles at each round
