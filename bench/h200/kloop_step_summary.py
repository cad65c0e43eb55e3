#!/usr/bin/env python3
"""Summarise calibration/h200/measured/kloop_step/kloop_step.csv (bench/h200/measure_kloop_step.py).

Usage: python3 bench/h200/kloop_step_summary.py [CSV]

Per tile and stages: ns per trip of each variant's modulo (mod) and pointer-stepping (step)
k-loop and the ratio step / mod (same buffers, addresses and trips); then the load-trip floor
refitted as measure_kloop's README does (single CTA, the six warpgroup-mma tiles, 3-5 stages:
least squares ns = chain + bytes / port, and the chain's lower envelope at that port) for each
kernel, next to the profile's 122.4 ns + bytes / 128.7 B/ns.
"""
import csv
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CSV = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "calibration", "h200", "measured",
                                                         "kloop_step", "kloop_step.csv")
WGMMA_TILES = {(128, 32, 32, 8), (128, 32, 128, 8), (64, 64, 32, 4), (64, 128, 64, 4), (128, 128, 64, 8),
               (64, 256, 32, 8)}
PORT_PROFILE, CHAIN_PROFILE = 128.7, 122.4


def main():
    rows = [r for r in csv.DictReader(open(CSV)) if r["status"] == "ok"]
    t = {}
    for r in rows:
        tile = (int(r["BM"]), int(r["BN"]), int(r["BK"]), int(r["WARPS"]))
        t[(tile, int(r["STAGES"]), r["variant"], r["kernel"])] = (float(r["ns_per_trip"]), int(r["bytes_per_trip"]))
    keys = sorted({(k[0], k[1]) for k in t})
    print(f"{'tile':>18} {'S':>2} | {'single wrap':>11} {'mod':>7} {'step':>7} {'s/m':>6} | "
          f"{'shared mod':>10} {'step':>7} {'s/m':>6} | {'private mod':>11} {'step':>7} {'s/m':>6}")
    ratios = {"single": [], "shared": [], "private": []}
    for tile, st in keys:
        cells = []
        for v in ("single", "shared", "private"):
            m, s = t.get((tile, st, v, "mod")), t.get((tile, st, v, "step"))
            r = s[0] / m[0] if m and s else float("nan")
            if m and s:
                ratios[v].append(r)
            cells.append((m[0] if m else float("nan"), s[0] if s else float("nan"), r))
        wrap = t.get((tile, st, "single_wrap", "mod"), (float("nan"),))[0]
        name = "%dx%dx%d w%d" % tile
        print(f"{name:>18} {st:>2} | {wrap:>11.1f} {cells[0][0]:>7.1f} {cells[0][1]:>7.1f} {cells[0][2]:>6.3f} | "
              f"{cells[1][0]:>10.1f} {cells[1][1]:>7.1f} {cells[1][2]:>6.3f} | {cells[2][0]:>11.1f} "
              f"{cells[2][1]:>7.1f} {cells[2][2]:>6.3f}")
    for v, rs in ratios.items():
        if rs:
            print(f"step / mod, {v}: median {np.median(rs):.3f}, range {min(rs):.3f}..{max(rs):.3f} over {len(rs)}")
    for variant, kern in (("single_wrap", "mod"), ("single", "mod"), ("single", "step")):
        pts = [(b, ns, tile) for (tile, st, v, k), (ns, b) in t.items()
               if v == variant and k == kern and tile in WGMMA_TILES and st >= 3]
        if len(pts) < 3:
            continue
        x = np.array([p[0] for p in pts], float)
        y = np.array([p[1] for p in pts], float)
        c, s = np.linalg.lstsq(np.vstack([np.ones_like(x), x]).T, y, rcond=None)[0]
        env = min(ns - b / PORT_PROFILE for b, ns, _ in pts)
        low = min(pts, key=lambda p: p[1] - p[0] / PORT_PROFILE)
        below = sum(1 for b, ns, _ in pts if ns < CHAIN_PROFILE + b / PORT_PROFILE)
        print(f"{variant:>12} {kern:>4}: least squares {c:.1f} ns + bytes / {1 / s:.1f} B/ns over {len(pts)}; "
              f"chain envelope at 128.7 B/ns {env:.1f} ns ({'%dx%dx%d w%d' % low[2]}); "
              f"{below} of {len(pts)} under the profile's floor 122.4 + bytes / 128.7")


if __name__ == "__main__":
    main()
