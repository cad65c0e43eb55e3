#!/usr/bin/env python3
"""How the start times of a GROUP_M = 1 launch's waves spread, wave by wave, in every stored
per-CTA timeline (calibration/h200/measured/cta_timeline*/timeline_*g1.csv[.gz]; docs/analysis.md,
"GROUP_M = 1: why the co-readers walk apart"). For each launch of two waves or more
(W = the most CTAs in flight, bench/cta_timeline_lag.py):
- E0: the first wave's spread of end times (5th to 95th percentile, in mean CTA lives), with and
  without the 24 favoured SMs (ids 32-43, 78-87, 126-127);
- persist: the correlation of an SM's mean CTA life in wave w with its mean in wave w + 1
  (mean over w = 0 .. 2); start/life: the correlation, within a wave, of a CTA's start with its
  life (mean over waves 1 .. 3). Positive: a slot that started late runs slow again (its lag adds
  up); negative: it runs faster (the lag is restored);
- S_w: wave w's spread of start times (5th to 95th percentile) beside E0 x w (a lag that grows by
  the first wave's spread each wave), and the co-readers' (p, p + g1) median start gap in the last
  full wave beside the dispatcher's offset g1 / W.

Usage: python3 bench/cta_timeline_walk.py [TIMELINE ...]"""
import glob
import importlib.util
import os
import statistics
import sys

_spec = importlib.util.spec_from_file_location(
    "cta_timeline_lag", os.path.join(os.path.dirname(os.path.abspath(__file__)), "cta_timeline_lag.py"))
lag = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lag)


def spread(xs):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(.95 * len(xs)))] - xs[int(.05 * len(xs))]


def corr(a, b):
    ma, mb = statistics.mean(a), statistics.mean(b)
    sa, sb = statistics.pstdev(a), statistics.pstdev(b)
    return sum((x - ma) * (y - mb) for x, y in zip(a, b)) / len(a) / (sa * sb) if sa and sb else float("nan")


def read(path):
    if path.endswith(".gz"):
        return lag.read(path)
    import csv
    with open(path) as f:
        return sorted(({k: int(v) for k, v in r.items()} for r in csv.DictReader(f)), key=lambda r: r["pid"])


def main():
    paths = sys.argv[1:] or sorted(glob.glob("calibration/h200/measured/cta_timeline*/timeline_*g1.csv*"))
    for path in paths:
        rows = read(path)
        by = {r["pid"]: r for r in rows}
        g1 = max(r["pid_n"] for r in rows) + 1
        W = lag.in_flight(rows)
        n = len(rows)
        life = statistics.mean(r["t_end_ns"] - r["t_start_ns"] for r in rows)
        sms = len({r["smid"] for r in rows})
        name = f"{os.path.basename(os.path.dirname(path))}/{os.path.basename(path).split('.csv')[0][9:]}"
        first = rows[:W]
        E0 = spread([r["t_end_ns"] / life for r in first])
        E0x = spread([r["t_end_ns"] / life for r in first if r["smid"] not in lag.FAST_SMS])
        head = (f"{name}: {W / sms:.2f} CTAs an SM, {n / W:.2f} waves, offset g1 / W {g1 / W:.3f}; "
                f"E0 {E0:.3f} ({E0x:.3f} without the 24 SMs)")
        full = n // W
        if full < 2:
            print(head + "; one wave")
            continue
        per = []
        for w in range(full):
            d = {}
            for r in rows[w * W:(w + 1) * W]:
                d.setdefault(r["smid"], []).append(r["t_end_ns"] - r["t_start_ns"])
            per.append({k: statistics.mean(v) for k, v in d.items()})
        pers = []
        for a, b in list(zip(per, per[1:]))[:3]:
            ks = sorted(set(a) & set(b))
            pers.append(corr([a[k] for k in ks], [b[k] for k in ks]))
        sl = []
        for w in range(1, min(4, full)):
            ws = rows[w * W:(w + 1) * W]
            sl.append(corr([r["t_start_ns"] for r in ws], [r["t_end_ns"] - r["t_start_ns"] for r in ws]))
        S = [spread([r["t_start_ns"] / life for r in rows[w * W:(w + 1) * W]]) for w in range(1, full)]
        last = full - 1
        gaps = [abs(by[p + g1]["t_start_ns"] - by[p]["t_start_ns"]) / life
                for p in range(last * W, (last + 1) * W - g1)]
        print(head + f"; persist {statistics.mean(pers):+.2f}, start/life {statistics.mean(sl):+.2f}")
        print("   S_w / E0 x w: " + " ".join(f"{s:.2f}/{min(E0 * (w + 1), 1):.2f}" for w, s in enumerate(S)))
        print(f"   co-readers' median start gap in wave {last}: {statistics.median(gaps):.3f} (offset {g1 / W:.3f})")


if __name__ == "__main__":
    main()
