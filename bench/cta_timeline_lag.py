#!/usr/bin/env python3
"""GROUP_M = 1 co-readers in a measured per-CTA timeline (bench/h200/measure_cta_timeline.py): how
far apart the readers of one B tile run, against the L2's reach (docs/analysis.md, "The co-readers'
lag against the L2's reach, and the 24 SMs that outrun the rest").

For one timeline_*.csv.gz and a reach L (a share of the mean CTA life; the drift term's room /
the wave's loop bytes, or room / all the DRAM bytes a CTA's life):
- per wave (W = the most CTAs in flight at once), the start gaps of the co-reader pairs p, p + g1
  of that wave (g1 = the launch's column tiles), as shares of the mean life;
- the share of the lock step's shared re-reads lost: each pair progressing linearly from its
  start to its end, the share of the loop positions at which their times differ by more than L
  of the mean life, over the pairs of one wave;
- the median CTA duration on the 24 SMs that outrun the rest in memory-heavy launches (ids 32-43,
  78-87, 126-127) over the other SMs'.
With --dram BYTES (Nsight's dram__bytes_read.sum of the same launch) it also prints the fills'
reach, room / (BYTES x mean life / makespan), and the lost share there.

Usage: python3 bench/cta_timeline_lag.py TIMELINE.csv.gz L [--dram BYTES] [--room BYTES]
(room: the L2 capacity over its partitions, 31,457,280 B on the H200)"""
import argparse
import csv
import gzip
import statistics

FAST_SMS = set(range(32, 44)) | set(range(78, 88)) | {126, 127}


def read(path):
    with gzip.open(path, "rt") as f:
        rows = [{k: int(v) for k, v in r.items()} for r in csv.DictReader(f)]
    return sorted(rows, key=lambda r: r["pid"])


def in_flight(rows):
    """The most CTAs running at once: the launch's wave."""
    events = sorted([(r["t_start_ns"], 1) for r in rows] + [(r["t_end_ns"], -1) for r in rows])
    now = most = 0
    for _, d in events:
        now += d
        most = max(most, now)
    return most


def lost_share(rows, W, g1, reach, life, steps=50):
    """The share of the loop over which the co-readers of one wave run more than ``reach`` x
    ``life`` apart, over the wave's pairs (each CTA progressing linearly over its life)."""
    by = {r["pid"]: r for r in rows}
    pairs = lost = 0.0
    for p in range(len(rows) - g1):
        q = p + g1
        if q // W != p // W:
            continue
        a, b = by[p], by[q]
        da, db = a["t_end_ns"] - a["t_start_ns"], b["t_end_ns"] - b["t_start_ns"]
        pairs += 1
        lost += sum(abs(b["t_start_ns"] + (i + .5) / steps * db - a["t_start_ns"] - (i + .5) / steps * da)
                    > reach * life for i in range(steps)) / steps
    return lost / pairs if pairs else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("timeline")
    ap.add_argument("reach", type=float)
    ap.add_argument("--dram", type=float, default=None)
    ap.add_argument("--room", type=float, default=62914560 / 2)
    a = ap.parse_args()
    rows = read(a.timeline)
    g1 = max(r["pid_n"] for r in rows) + 1
    W = in_flight(rows)
    life = statistics.mean(r["t_end_ns"] - r["t_start_ns"] for r in rows)
    span = max(r["t_end_ns"] for r in rows)
    by = {r["pid"]: r for r in rows}
    print(f"{len(rows)} CTAs, {W} in flight, g1 {g1}: {len(rows) / W:.2f} waves, the dispatcher's offset "
          f"g1 / W {g1 / W:.3f} of a life; mean life {life / 1e3:.1f} us, makespan {span / 1e3:.1f} us")
    for w in range(-(-len(rows) // W)):
        gaps = [abs(by[p + g1]["t_start_ns"] - by[p]["t_start_ns"]) / life
                for p in range(w * W, min((w + 1) * W, len(rows)) - g1)]
        if gaps:
            print(f"  wave {w}: {len(gaps)} pairs, start gap median {statistics.median(gaps):.3f}, "
                  f"over 0.1 of a life {sum(g > 0.1 for g in gaps) / len(gaps):.2f}")
    fast = [r["t_end_ns"] - r["t_start_ns"] for r in rows if r["smid"] in FAST_SMS]
    slow = [r["t_end_ns"] - r["t_start_ns"] for r in rows if r["smid"] not in FAST_SMS]
    if fast and slow:
        print(f"median CTA on the 24 SMs / on the others: {statistics.median(fast) / statistics.median(slow):.3f}")
    print(f"lost at the reach {a.reach:.3f}: {lost_share(rows, W, g1, a.reach, life):.3f}")
    if a.dram:
        fills = a.room / (a.dram * life / span)
        print(f"lost at the fills' reach {fills:.3f}: {lost_share(rows, W, g1, fills, life):.3f}")


if __name__ == "__main__":
    main()
