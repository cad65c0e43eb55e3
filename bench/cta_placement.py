#!/usr/bin/env python3
"""Where the H200's block scheduler puts a launch's CTAs, from the measured CTA timelines: are two CTAs of adjacent
launch positions (pid 2j, 2j + 1: at BN = 32 the two halves of B's 128-B lines) on one TPC, and on SMs that hold as
many CTAs (the same rate class)?

    python3 bench/cta_placement.py [TIMELINE.csv[.gz] ...]

Default: every timeline of calibration/h200/measured/cta_timeline_s19 (small-M GEMMs, one wave) and
decode_timeline_s17. Each file needs the columns pid (or bh, sp), smid and t_start_ns. Per launch it prints the
CTAs, the CTAs an SM at the start, and per dispatch round of 132 positions the share of adjacent pairs (2j, 2j + 1)
on one TPC (SMs 2t, 2t + 1); then the share of all adjacent pairs on SMs of equal count.

What it shows (session 42): full rounds go out a TPC at a time, both SMs of a TPC taking a pair of adjacent
positions (66 of 66 pairs on one TPC); the last, partial round goes out one CTA a TPC (4 of 26 pairs at 448 CTAs,
15 of 46 at 224), so a TPC whose one SM takes a remainder CTA holds SMs of different counts, and every pair on it,
of any round, runs in two rate classes (at 448 CTAs 59% of the adjacent pairs).
"""
from __future__ import annotations

import collections
import csv
import gzip
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = sorted((ROOT / "calibration/h200/measured/cta_timeline_s19").glob("timeline_*.csv")) + sorted(
    (ROOT / "calibration/h200/measured/decode_timeline_s17").glob("timeline_*.csv"))


def read(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        return list(csv.DictReader(f))


def launch_order(rows: list[dict]) -> list[dict]:
    """The rows in launch position order: by pid, or for decode's grid (B x HKV, SPLITS), whose axis 0 runs fastest
    (bench/h200/measure_accuracy.py's decode_launch), by (sp, bh)."""
    if "pid" in rows[0]:
        return sorted(rows, key=lambda r: int(r["pid"]))
    return sorted(rows, key=lambda r: (int(r["sp"]), int(r["bh"])))


def summary(rows: list[dict], units: int = 132) -> dict:
    rows = launch_order(rows)
    sm = [int(r["smid"]) for r in rows]
    first = [s for s, r in zip(sm, rows) if int(r["t_start_ns"]) < 1000]      # the first wave: started at once
    count = collections.Counter(first)
    rounds = {}
    for j in range(0, len(rows) - 1, 2):
        k = j // units
        same, total = rounds.get(k, (0, 0))
        rounds[k] = (same + (sm[j] // 2 == sm[j + 1] // 2), total + 1)
    pairs = [(j, j + 1) for j in range(0, len(first) - 1, 2)]
    equal = sum(count[sm[i]] == count[sm[j]] for i, j in pairs) / max(len(pairs), 1)
    return dict(ctas=len(rows), first_wave=len(first), per_sm=dict(sorted(collections.Counter(count.values()).items())),
                rounds=rounds, equal_class=equal)


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or DEFAULT
    for p in paths:
        try:
            rows = read(p)
        except OSError as e:
            print(f"cta_placement: {p}: {e.strerror}", file=sys.stderr)
            return 2
        s = summary(rows)
        rounds = ", ".join(f"{k}: {a}/{b}" for k, (a, b) in sorted(s["rounds"].items()))
        print(f"{p.name}: {s['ctas']} CTAs ({s['first_wave']} in the first wave), CTAs an SM {s['per_sm']}; "
              f"adjacent pairs on one TPC by round {{{rounds}}}; on SMs of equal count {s['equal_class']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
