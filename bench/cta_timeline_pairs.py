#!/usr/bin/env python3
"""The merged share of a launch's copies that co-copiers in step would give, read off a measured
per-CTA timeline (bench/h200/measure_cta_timeline.py; docs/analysis.md, "What the
large-M first picks share").

Two CTAs copy the same A tile where they share pid_m, the same B tile where they share pid_n. Taking
each CTA to progress linearly from its start to its end, co-copiers on SMs of one group (the two SMs
of a TPC: smid // 2; or a block of SMs) whose starts lie within a window (a share of the median CTA
life) copy each k-step's tile together; a cluster of n such CTAs sends n - 1 of its n copies of the
tile to the slices merged. The share printed is the merged bytes over all the launch's copies.

Usage: python3 bench/cta_timeline_pairs.py TIMELINE.csv.gz A_BYTES B_BYTES [--window 0.01]
       [--group tpc|block] (A_BYTES, B_BYTES: one k-step's tile of each operand)"""
import argparse
import collections
import csv
import gzip


def block(smid):
    """The SM blocks the dispatcher's first wave walks pair by pair (cta_timeline_s18's order):
    0-15, 16-31, 32-47, 48-63 (16 SMs), 64-77, 78-91, 92-105, 106-119 (14), 120-131 (12)."""
    if smid < 64:
        return smid // 16
    if smid < 120:
        return 4 + (smid - 64) // 14
    return 8


def merged_share(rows, a_bytes, b_bytes, window, group):
    life = sorted(r["t_end_ns"] - r["t_start_ns"] for r in rows)[len(rows) // 2]
    win = window * life
    merged = 0
    for key, size in (("pid_m", a_bytes), ("pid_n", b_bytes)):
        by = collections.defaultdict(list)
        for r in rows:
            by[(r[key], group(r["smid"]))].append(r["t_start_ns"])
        for starts in by.values():
            starts.sort()
            i = 0
            while i < len(starts):
                j = i + 1
                while j < len(starts) and starts[j] - starts[i] <= win:
                    j += 1
                merged += (j - i - 1) * size
                i = j
    return merged / (len(rows) * (a_bytes + b_bytes))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("timeline")
    ap.add_argument("a_bytes", type=int)
    ap.add_argument("b_bytes", type=int)
    ap.add_argument("--window", type=float, default=0.01)
    ap.add_argument("--group", choices=("tpc", "block"), default="tpc")
    args = ap.parse_args()
    with gzip.open(args.timeline, "rt") as f:
        rows = [{k: int(v) for k, v in r.items()} for r in csv.DictReader(f)]
    group = (lambda s: s // 2) if args.group == "tpc" else block
    print(f"{merged_share(rows, args.a_bytes, args.b_bytes, args.window, group):.3f}")


if __name__ == "__main__":
    main()
