#!/usr/bin/env python3
"""Which SMs run a DRAM-bound CTA faster: each measured CTA timeline's first-wave CTA lives by SM, the SMs whose CTAs
live under FAST x the launch's median (the "fast" group), and the group's life over the rest's.

    python3 bench/sm_group_rates.py [--fast 0.85] [TIMELINE.csv ...]

With no files it reads every per-CTA timeline filed under calibration/<device>/measured/decode_timeline_s* (columns
smid, t_start_ns, t_end_ns). A first-wave CTA is one that starts within 2 us of the launch's first start; its SM's
CTAs of the first wave share the SM alike, so an SM's median first-wave life, over the launch's median at the same
CTAs an SM, is the SM's rate against the rest's.

Why (docs/analysis.md, "SMs that draw DRAM faster", session 43): on both parts 24 or so SMs (smid 34-43 and 78-87, and
a few more) run a DRAM-bound decode CTA in about 0.65-0.75 of the others' time, whatever the CTA's data, in every
repeat; the group is where the tail of a launch goes first. Prints one line a file: CTAs, CTAs an SM, the fast SMs,
their life over the rest's (first wave) and the launch's makespan over the rest's median first-wave life.
"""
from __future__ import annotations

import argparse
import csv
import statistics
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIRST_WAVE_NS = 2000    # a CTA that starts this close to the launch's first start is of the first wave


def read_timeline(path: Path) -> list[tuple[int, int, int]]:
    """(smid, start ns, end ns) of every CTA of a timeline CSV (decode: t_start_ns / t_end_ns; GEMM: start_ns /
    end_ns)."""
    out = []
    with open(path, newline="") as fh:
        for r in csv.DictReader(fh):
            start = r.get("t_start_ns", r.get("start_ns"))
            end = r.get("t_end_ns", r.get("end_ns"))
            out.append((int(r["smid"]), int(start), int(end)))
    return out


def fast_group(ctas: list[tuple[int, int, int]], fast: float) -> dict:
    """The first wave's lives by SM, split at ``fast`` x the median of the SMs of the same first-wave count: the
    fast SMs, the rest, the two groups' median lives and the launch's makespan (ns from the first start)."""
    t0 = min(s for _, s, _ in ctas)
    first = [(sm, e - s) for sm, s, e in ctas if s - t0 <= FIRST_WAVE_NS]
    count = Counter(sm for sm, _ in first)
    lives = defaultdict(list)
    for sm, life in first:
        lives[sm].append(life)
    per_sm = {sm: statistics.median(v) for sm, v in lives.items()}
    fast_sms, rest_lives, fast_lives = [], [], []
    for k in sorted(set(count.values())):
        sms = [sm for sm in per_sm if count[sm] == k]
        mid = statistics.median(per_sm[sm] for sm in sms)
        for sm in sms:
            if per_sm[sm] < fast * mid:
                fast_sms.append(sm)
                fast_lives.extend(lives[sm])
            else:
                rest_lives.extend(lives[sm])
    rest = statistics.median(rest_lives)
    return {"ctas": len(ctas), "per_sm": sorted(Counter(count.values()).items()), "fast_sms": sorted(fast_sms),
            "fast_over_rest": statistics.median(fast_lives) / rest if fast_lives else None,
            "makespan_over_rest": (max(e for _, _, e in ctas) - t0) / rest}


def ranges(sms: list[int]) -> str:
    """``[34, 35, 36, 40]`` -> ``34-36,40``."""
    out, start = [], None
    for i, sm in enumerate(sms):
        if start is None:
            start = sm
        if i + 1 == len(sms) or sms[i + 1] != sm + 1:
            out.append(f"{start}-{sm}" if sm != start else f"{sm}")
            start = None
    return ",".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--fast", type=float, default=0.85, help="an SM is fast under this x its count's median life")
    args = ap.parse_args(argv)
    files = args.files or sorted(ROOT.glob("calibration/*/measured/decode_timeline_s*/timeline_*.csv"))
    for path in files:
        g = fast_group(read_timeline(path), args.fast)
        name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        ratio = f"{g['fast_over_rest']:.3f}" if g["fast_over_rest"] else "-"
        shares = " ".join(f"{n}x{k}" for k, n in g["per_sm"])
        print(f"{name}: {g['ctas']} CTAs (first wave: SMs x CTAs {shares}); fast {len(g['fast_sms'])} SMs "
              f"[{ranges(g['fast_sms'])}] life {ratio} of the rest's; makespan {g['makespan_over_rest']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
