#!/usr/bin/env python3
"""The partner-lag probe's figures: BN = 32 split over together at each lag, and how far apart the two CTAs of a pair
run by themselves.

    python3 bench/partner_lag.py calibration/h200/measured/partner_lag [--stages S]

Reads DIR/lag.csv and DIR/timeline.csv (or timeline.csv.gz) as bench/h200/measure_partner_lag.py writes them
(docs/analysis.md, "The partner lag, on an H100" and "The H200 answers"). For each (N, BN, BK, warps, stages):
- split / together at every lag: the cost of the lag alone (split holds one CTA of every pair, together both CTAs of
  every other pair: as many CTAs held as long), and split over split at lag 0;
- BN = 32 together at lag 0 over BN = 64 together at lag 0: the continued pieces' cost with the pairs as they run;
- from each unheld launch of the timeline: the CTAs, the median CTA life, and the pairs (launch positions 2j and
  2j + 1) apart at their start and end (median, p90, max in us), the share of pairs on one TPC (SMs 2t, 2t + 1) and
  the CTAs an SM;
- with --classes, each unheld launch's median CTA life by the CTAs its SM ran, and the pairs' end gaps with both SMs
  of one such count and of two.
A missing file is one line and exit 2.
"""
from __future__ import annotations

import argparse
import statistics
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cta_placement import launch_order, read  # noqa: E402  (bench/: the timelines' reader and launch order)


def lag_table(rows: list[dict]) -> dict:
    """(N, BN, BK, warps, stages) -> {lag_us: (split ms, together ms)} over lag.csv's rows (WARPS or STAGES missing:
    0)."""
    out = defaultdict(dict)
    for r in rows:
        key = (int(r["N"]), int(r["BN"]), int(r["BK"]), int(r.get("WARPS") or 0), int(r.get("STAGES") or 0))
        split, together = out[key].get(float(r["lag_us"]), (None, None))
        if r["mode"] == "split":
            split = float(r["ms"])
        else:
            together = float(r["ms"])
        out[key][float(r["lag_us"])] = (split, together)
    return dict(out)


def continued_cost(table: dict, n: int, bk: int, warps: int, stages: int) -> float | None:
    """BN = 32 together at lag 0 over BN = 64 together at lag 0 at one (N, BK, warps, stages); None where either is
    missing."""
    a = table.get((n, 32, bk, warps, stages), {}).get(0.0, (None, None))[1]
    b = table.get((n, 64, bk, warps, stages), {}).get(0.0, (None, None))[1]
    return a / b if a and b else None


def quantile(xs: list[float], q: float) -> float:
    """The value at rank floor(q x len) of the sorted values (the p90 of the summaries)."""
    s = sorted(xs)
    return s[min(int(q * len(s)), len(s) - 1)]


def pair_gaps(ctas: list[dict]) -> dict:
    """The pairs (positions 2j, 2j + 1 by pid) of one unheld launch: their start and end gaps in us (median, p90,
    max), the share of pairs whose two SMs form one TPC (smid // 2 equal), the median CTA life in us and the CTAs
    an SM (most, least)."""
    rs = launch_order(ctas)
    start = [int(r["start_ns"]) for r in rs]
    end = [int(r["end_ns"]) for r in rs]
    sm = [int(r["smid"]) for r in rs]
    pairs = [(i, i + 1) for i in range(0, len(rs) - 1, 2)]
    d_start = [abs(start[i] - start[j]) / 1e3 for i, j in pairs]
    d_end = [abs(end[i] - end[j]) / 1e3 for i, j in pairs]
    per_sm = Counter(sm)
    return {
        "ctas": len(rs),
        "life_us": statistics.median((e - s) / 1e3 for s, e in zip(start, end)),
        "start_gap_us": (statistics.median(d_start), quantile(d_start, 0.9), max(d_start)),
        "end_gap_us": (statistics.median(d_end), quantile(d_end, 0.9), max(d_end)),
        "same_tpc": sum(1 for i, j in pairs if sm[i] // 2 == sm[j] // 2) / len(pairs),
        "ctas_an_sm": (max(per_sm.values()), min(per_sm.values())),
    }


def count_classes(ctas: list[dict]) -> dict:
    """One unheld launch's CTAs by the CTAs their SM ran: {count: median life in us} under "lives", and the pairs'
    end gaps in us (median, p90) with both SMs of one count ("within") and of two ("across"), each with its pairs'
    number: do the pairs on SMs of different CTA counts drift apart?"""
    rs = launch_order(ctas)
    per_sm = Counter(int(r["smid"]) for r in rs)
    count = [per_sm[int(r["smid"])] for r in rs]
    lives = defaultdict(list)
    for r, c in zip(rs, count):
        lives[c].append((int(r["end_ns"]) - int(r["start_ns"])) / 1e3)
    gaps = {"within": [], "across": []}
    for i in range(0, len(rs) - 1, 2):
        gap = abs(int(rs[i]["end_ns"]) - int(rs[i + 1]["end_ns"])) / 1e3
        gaps["within" if count[i] == count[i + 1] else "across"].append(gap)
    out = {"lives": {c: statistics.median(v) for c, v in sorted(lives.items())}}
    for k, v in gaps.items():
        out[k] = (len(v), statistics.median(v), quantile(v, 0.9)) if v else (0, None, None)
    return out


def launches(rows: list[dict]) -> dict:
    """(N, BN, BK, warps, stages, rep) -> the rows of one unheld launch of timeline.csv."""
    out = defaultdict(list)
    for r in rows:
        out[(int(r["N"]), int(r["BN"]), int(r["BK"]), int(r.get("WARPS") or 0), int(r.get("STAGES") or 0),
             int(r["rep"]))].append(r)
    return dict(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--stages", type=int, default=None, help="only these stages")
    ap.add_argument("--classes", action="store_true",
                    help="each unheld launch's CTA lives by the CTAs their SM ran, and its pairs' end gaps within one "
                         "such class and across two")
    args = ap.parse_args(argv)
    d = Path(args.dir)
    lag_csv, timeline_csv = d / "lag.csv", d / "timeline.csv"
    if not timeline_csv.is_file() and (d / "timeline.csv.gz").is_file():
        timeline_csv = d / "timeline.csv.gz"      # the larger sets are filed compressed
    for p in (lag_csv, timeline_csv):
        if not p.is_file():
            print(f"{p}: no such file (expected measure_partner_lag.py's lag.csv and timeline.csv)", file=sys.stderr)
            return 2
    table = lag_table(read(lag_csv))
    timelines = launches(read(timeline_csv))
    # the warps are named only where the probe ran several (PARTNER_LAG_SET=s45)
    several = len({k[3] for k in table} | {k[3] for k in timelines}) > 1
    name = lambda n, bn, bk, w, st: f"N {n} BN {bn} BK {bk}" + (f" W {w}" if several else "") + f" S {st}"
    for (n, bn, bk, w, st), lags in sorted(table.items()):
        if args.stages is not None and st != args.stages:
            continue
        base = lags.get(0.0, (None, None))[0]
        cells = [f"{lag:g} us {s / g:.3f}" for lag, (s, g) in sorted(lags.items()) if s and g]
        line = f"{name(n, bn, bk, w, st)}: split / together " + ", ".join(cells)
        if base:
            line += "; split / split at 0: " + ", ".join(f"{s / base:.3f}" for _, (s, _g) in sorted(lags.items()) if s)
        cost = continued_cost(table, n, bk, w, st) if bn == 32 else None
        if cost:
            line += f"; together at 0 over BN 64's: {cost:.3f}"
        print(line)
    for (n, bn, bk, w, st, rep), rows in sorted(timelines.items()):
        if args.stages is not None and st != args.stages:
            continue
        g = pair_gaps(rows)
        print(f"{name(n, bn, bk, w, st)} rep {rep}: {g['ctas']} CTAs, life {g['life_us']:.1f} us; pairs apart at "
              "the start {:.2f} / {:.2f} / {:.2f} us, at the end {:.2f} / {:.2f} / {:.2f} (median / p90 / max); "
              "one TPC {:.2f}; CTAs an SM {} to {}".format(*g["start_gap_us"], *g["end_gap_us"], g["same_tpc"],
                                                           g["ctas_an_sm"][1], g["ctas_an_sm"][0]))
        if args.classes:
            c = count_classes(rows)
            lives = ", ".join(f"{k} an SM {v:.1f}" for k, v in c["lives"].items())
            pairs = "; ".join(f"{k} {n} pairs " + (f"{m:.2f} / {p:.2f}" if n else "-")
                              for k, (n, m, p) in ((k, c[k]) for k in ("within", "across")))
            print(f"    lives (us) {lives}; pairs' end gaps (median / p90 us) {pairs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
