#!/usr/bin/env python3
"""How much of a DRAM round trip the trips of a launch's drifted CTAs wait, read off a measured per-CTA
timeline (bench/h200/measure_cta_timeline.py; docs/analysis.md, "A drifted CTA's trip does not wait
only its own misses").

Two CTAs read the same A tile where they share pid_m, the same B tile where they share pid_n. Taking
each CTA to progress linearly from its start to its end (step j issued at start + life x j / (K / BK)),
the reads of one tile's k-step are replayed in time order against one line state: a read with no
earlier read of that tile-step, or whose last read lies more than LIFE ns before it (evicted), misses
and waits the whole round trip RT (its fill arrives RT after it); a read before a pending fill arrives
waits what is left of it, (fill - t) / RT of a round trip; a later one hits (0). A trip waits its
slower tile. Printed per launch of more than one wave (M >= 1024), for the CTAs started after the
launch's first microsecond (the drifted ones, pipeline_depth.drifted_share) and the first wave: the
share of trips that miss outright (what the first-reader rule, memory_parallelism.first_reader_share,
prices) and the mean share of a round trip waited (misses plus pending fills).

Usage: python3 bench/cta_timeline_coread_wait.py [RT_NS [LIFE_NS]]   (default 1000 and 12000)"""
import csv
import glob
import gzip
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent / "calibration/h200/measured"


def waits(keys, times, rt, life):
    """Each read's share of a round trip waited, replayed per key (a tile's k-step) in time order."""
    order = np.lexsort((times, keys))
    k, t = keys[order], times[order]
    w = np.empty(len(t))
    prev, fill, last = None, -1e18, -1e18
    for i in range(len(t)):
        if k[i] != prev or t[i] - last > life:
            fill, w[i] = t[i] + rt, 1.0
        else:
            w[i] = max(fill - t[i], 0.0) / rt
        prev, last = k[i], t[i]
    out = np.empty(len(t))
    out[order] = w
    return out


def launch(path, rt, life):
    name = Path(path).name[len("timeline_"):-len(".csv.gz")]
    mnk, tile = name.replace("fp8_", "").split("_")[:2]
    m, _, k = map(int, mnk.split("x"))
    bk = int(tile.split("x")[2])
    rows = list(csv.DictReader(gzip.open(path, "rt")))
    if len(rows) <= 200 or m < 1024:
        return None
    pm = np.array([int(r["pid_m"]) for r in rows])
    pn = np.array([int(r["pid_n"]) for r in rows])
    s = np.array([float(r["t_start_ns"]) for r in rows])
    e = np.array([float(r["t_end_ns"]) for r in rows])
    nk = k // bk
    j = np.arange(nk)
    t = s[:, None] + (e - s)[:, None] * (j[None, :] / nk)
    wa = waits((pm[:, None] * nk + j).ravel(), t.ravel(), rt, life).reshape(t.shape)
    wb = waits((pn[:, None] * nk + j).ravel(), t.ravel(), rt, life).reshape(t.shape)
    w = np.maximum(wa, wb)
    drifted = s > 1000
    return name, drifted.mean(), (w[drifted] == 1).mean(), w[drifted].mean(), w[~drifted].mean()


def main():
    rt = float(sys.argv[1]) if len(sys.argv) > 1 else 1000.0
    life = float(sys.argv[2]) if len(sys.argv) > 2 else 12000.0
    print(f"round trip {rt:.0f} ns, L2 life {life:.0f} ns")
    print(f"{'launch':42s} drifted  its trips: miss  wait   first wave: wait")
    for path in sorted(glob.glob(str(ROOT / "cta_timeline*/timeline_*.csv.gz"))):
        got = launch(path, rt, life)
        if got is not None:
            name, d, miss, wait, first = got
            print(f"{name:42s} {d:7.2f}  {miss:15.2f} {wait:5.2f}  {first:17.2f}")


if __name__ == "__main__":
    main()
