#!/usr/bin/env python3
"""Decode's one-wave long splits by class: each gqa_decode row of the issue-15 campaigns whose split-KV launch is one
wave of at least one CTA a SM (132 <= B x HKV x SPLITS <= 132 x its CTAs an SM) and whose split is at least
MIN_KEYS keys, its error less the median error of its campaign's shape (what turns the ranks), grouped by
(WARPS, BLOCK_N, STAGES) and ordered by the class median.

    python3 bench/decode_one_wave_classes.py [--min-keys 8192] [--units 132] [--by-inflight]

Why (docs/analysis.md, "Decode's one-wave long splits, by class", session 42): every held-out decode miss is an
SKV = 65536 shape whose SPLITS 1-4 one-wave launches on 8 warps or BLOCK_N = 128 are priced 3-6% fast. The classes
print as `(warps, block_n, stages) rows median  each row's relative error (CTAs an SM)`.
"""
from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from accuracy_classes import relative_errors  # noqa: E402  (bench/: each row's error less its shape's median)
from tfx.analysis.measured import Predictor, read_measurements  # noqa: E402

ISSUE15 = ROOT / "calibration" / "h200" / "measured" / "issue15"


def one_wave_long(params: dict, blocks_per_sm: int, min_keys: int, units: int) -> bool:
    """Whether a decode row's split launch is one wave that fills every SM (units <= CTAs <= units x CTAs an SM)
    and its split holds at least ``min_keys`` keys (SKV / SPLITS)."""
    ctas = params["B"] * params["HKV"] * params["SPLITS"]
    return (bool(blocks_per_sm) and units <= ctas <= units * blocks_per_sm
            and params["SKV"] // params["SPLITS"] >= min_keys)


def inflight_kb(params: dict, units: int) -> int:
    """KB of K and V copies in flight on the busiest SM of a decode split launch: its CTAs (ceil(CTAs / units)) x
    the tiles a CTA keeps in flight (STAGES - 1; one at one stage, whose copies wait before its chain) x BLOCK_N keys
    x D x 2 B x 2 (K and V). With --by-inflight the rows group by it ("SMs that draw DRAM faster": 24 SMs draw faster
    from about 128 KB an SM)."""
    ctas = params["B"] * params["HKV"] * params["SPLITS"]
    return -(-ctas // units) * max(params["STAGES"] - 1, 1) * params["BLOCK_N"] * params["D"] * 4 // 1024


def classes(compared, min_keys: int, units: int, key=None) -> dict:
    """(WARPS, BLOCK_N, STAGES) (or ``key(params)``) -> [(error less the shape's median, CTAs an SM of the busiest
    SM)] over the rows ``one_wave_long`` keeps; each shape's median is over all its rows (one campaign's:
    accuracy_classes's ``relative_errors``), in the rows' order."""
    error = relative_errors(compared, spilling=True)
    out = defaultdict(list)
    for c in compared:
        p = c.row.params
        if one_wave_long(p, int(c.row.notes.get("blocks_per_sm") or 0), min_keys, units):
            out[key(p) if key else (p["WARPS"], p["BLOCK_N"], p["STAGES"])].append(
                (error(c), -(-p["B"] * p["HKV"] * p["SPLITS"] // units)))
    return dict(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--min-keys", type=int, default=8192, help="the least keys a split holds (SKV / SPLITS)")
    ap.add_argument("--units", type=int, default=132, help="the SMs (the H200's 132)")
    ap.add_argument("--by-inflight", action="store_true", help="group by KB in flight an SM (inflight_kb)")
    args = ap.parse_args(argv)
    rows = []
    for path in sorted(ISSUE15.glob("run*/decode.csv")):
        for r in read_measurements(path):
            r.notes["run"] = path.parent.name
            rows.append(r)
    key = (lambda p: inflight_kb(p, args.units)) if args.by_inflight else None
    got = classes(Predictor("h200_sxm").compare(rows), args.min_keys, args.units, key)
    order = sorted(got) if args.by_inflight else sorted(got, key=lambda k: statistics.median(x[0] for x in got[k]))
    for key in order:
        v = got[key]
        label = f"{key:4d} KB an SM" if args.by_inflight else str(key)
        print(f"{label} {len(v):3d} {100 * statistics.median(x[0] for x in v):+5.1f}%  "
              + " ".join(f"{100 * e:+.0f}({n})" for e, n in v))
    return 0


if __name__ == "__main__":
    sys.exit(main())
