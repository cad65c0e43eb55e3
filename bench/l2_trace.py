#!/usr/bin/env python3
"""A trace of every tile read of the l2_groupm launches through one L2, beside Nsight Compute's
DRAM bytes (calibration/h200/measured/l2_groupm/l2_groupm.csv) and the model's count: what a
given order in time and a given replacement would fetch (docs/analysis.md, "Not modelled:
GROUP_M = 1 and the lock step's limits").

Each CTA reads its A tile (BM x BK) and B tile (BK x BN) of every k-trip; CTA p (Triton's
grouped launch order, or the persistent walk's tile p run by CTA p mod W) starts at
``start(p)`` trips and reads trip k at start(p) + k; events in time order (ties in launch
order) go through a cache of whole tiles. Bytes are bf16. Not the model (that is closed form,
tfx.analysis.l2_reuse): a check of it.

Usage: python3 bench/l2_trace.py [--order lock|ramp:S|spread] [--policy lru|random]
                                 [--capacity room|whole] [--only SUBSTRING]
  lock: start(p) = (p // W) x T (waves in lock step; T = the k-trips of a CTA)
  ramp:S: a wave's starts spread over S x T in launch order: (p // W) T + S T (p % W) / W
  spread: evenly spread starts, p T / W (the steady state of a launch without waves)
  room: capacity / partitions (hw profile memory.l2), whole: capacity
"""
import argparse
import csv
import random
import sys
from collections import OrderedDict
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tfx.analysis.analyze import analyze  # noqa: E402
from tfx.hw import load_profile  # noqa: E402
from tfx.lang import parse_file  # noqa: E402


def launch_order(g0, g1, G):
    """(row, column) of each launch position: Triton's group-M order (G = 0: row-major walk)."""
    out = []
    for pid in range(g0 * g1):
        if G == 0:
            out.append((pid // g1, pid % g1))
            continue
        group = G * g1
        first = pid // group * G
        size = min(g0 - first, G)
        out.append((first + (pid % group) % size, (pid % group) // size))
    return out


def trace(M, N, K, BM, BN, BK, W, G, capacity, order="lock", policy="lru", seed=0):
    """DRAM bytes the trace fetches."""
    g0, g1, T = -(-M // BM), -(-N // BN), -(-K // BK)
    ta, tb = BM * BK * 2, BK * BN * 2
    tiles = launch_order(g0, g1, G)
    if order == "lock":
        start = [(p // W) * T for p in range(len(tiles))]
    elif order.startswith("ramp:"):
        s = float(order[5:])
        start = [(p // W) * T + s * T * (p % W) / W for p in range(len(tiles))]
    else:
        start = [p * T / W for p in range(len(tiles))]
    events = sorted((start[p] + k, p, r, c, k) for p, (r, c) in enumerate(tiles) for k in range(T))
    dram = used = 0
    if policy == "lru":
        cache = OrderedDict()
        for _, _, r, c, k in events:
            for key, b in ((("A", r, k), ta), (("B", c, k), tb)):
                if key in cache:
                    cache.move_to_end(key)
                    continue
                dram += b
                cache[key] = b
                used += b
                while used > capacity:
                    used -= cache.popitem(last=False)[1]
        return dram
    rng = random.Random(seed)
    slots, where = [], {}
    for _, _, r, c, k in events:
        for key, b in ((("A", r, k), ta), (("B", c, k), tb)):
            if key in where:
                continue
            dram += b
            where[key] = len(slots)
            slots.append((key, b))
            used += b
            while used > capacity:
                i = rng.randrange(len(slots))
                gone, gb = slots[i]
                last = slots.pop()
                if i < len(slots):
                    slots[i] = last
                    where[last[0]] = i
                del where[gone]
                used -= gb
    return dram


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--order", default="lock")
    ap.add_argument("--policy", default="lru", choices=("lru", "random"))
    ap.add_argument("--capacity", default="room", choices=("room", "whole"))
    ap.add_argument("--only", default=None)
    ap.add_argument("--csv", default=str(ROOT / "calibration/h200/measured/l2_groupm/l2_groupm.csv"))
    args = ap.parse_args()
    prof = load_profile("h200_sxm")
    l2 = prof.memory_levels()["l2"]
    partitions = prof.get("memory.l2.partitions", None) or 1
    capacity = l2.capacity / partitions if args.capacity == "room" else l2.capacity
    units = prof.units_of("sm")
    mods = {"gemm": parse_file(ROOT / "kernels/gemm.tile"), "persistent": parse_file(ROOT / "kernels/persistent_gemm.tile")}
    for r in csv.DictReader(open(args.csv)):
        p = {k: int(r[k]) for k in ("M", "N", "K", "BM", "BN", "BK", "WARPS", "STAGES")}
        if r["kernel"] == "gemm":
            p["GROUP_M"] = int(r["GROUP_M"])
        else:
            p["NUM_SMS"] = int(r["NUM_SMS"])
        label = (f"{r['kernel'][:4]} {r['M']}x{r['N']}x{r['K']} {r['BM']}x{r['BN']}x{r['BK']} w{r['WARPS']} "
                 f"s{r['STAGES']} G{r['GROUP_M']}")
        if args.only and args.only not in label:
            continue
        a = analyze(mods[r["kernel"]], None, prof, p, check=False)
        g0, g1 = -(-p["M"] // p["BM"]), -(-p["N"] // p["BN"])
        if r["kernel"] == "gemm":
            W, G = min(units * int(a.metrics["occupancy.blocks_per_sm"]), g0 * g1), p["GROUP_M"]
        else:
            W, G = min(p["NUM_SMS"], g0 * g1), 0
        rd, wr = a.metrics["memory.traffic.gmem.total.read"], a.metrics["memory.traffic.gmem.total.write"]
        h = a.metrics["performance.l2_hit_ratio"]
        h = float(Fraction(str(h))) if not isinstance(h, float) else h
        model = (rd + wr) * (1 - h) - wr
        got = trace(p["M"], p["N"], p["K"], p["BM"], p["BN"], p["BK"], W, G, capacity, args.order, args.policy)
        meas = int(r["dram_read_bytes"])
        print(f"{label} W {W:4d} nsight {meas / 1e9:6.3f} model {model / 1e9:6.3f} trace {got / 1e9:6.3f} "
              f"GB  trace/nsight {got / meas:5.2f}", flush=True)


if __name__ == "__main__":
    main()
