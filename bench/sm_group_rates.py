#!/usr/bin/env python3
"""Which SMs run a DRAM-bound CTA faster: each measured CTA timeline's first-wave CTA lives by SM, the SMs whose CTAs
live under FAST x the launch's median (the "fast" group), and the group's life over the rest's.

    python3 bench/sm_group_rates.py [--fast 0.85] [--classes] [TIMELINE.csv ...]
    python3 bench/sm_group_rates.py --stamps calibration/<device>/measured/sm_rates/stamps.csv

With no files it reads every per-CTA timeline filed under calibration/<device>/measured/decode_timeline_s* (columns
smid, t_start_ns, t_end_ns). A first-wave CTA is one that starts within 2 us of the launch's first start; its SM's
CTAs of the first wave share the SM alike, so an SM's median first-wave life, over the launch's median at the same
CTAs an SM, is the SM's rate against the rest's.

Why (docs/analysis.md, "SMs that draw DRAM faster", session 43): on both parts 24 or so SMs (smid 34-43 and 78-87, and
a few more) run a DRAM-bound decode CTA in about 0.65-0.79 of the others' time, whatever the CTA's data, in every
repeat; the group is where the tail of a launch goes first. Prints one line a file: CTAs, CTAs an SM, the fast SMs,
their life over the rest's (first wave) and the launch's makespan over the rest's median first-wave life.
"""
from __future__ import annotations

import argparse
import statistics
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from cta_placement import read  # noqa: E402  (bench/: a timeline CSV's rows, .csv or .csv.gz)
FIRST_WAVE_NS = 2000    # a CTA that starts this close to the launch's first start is of the first wave


def read_timeline(path: Path) -> list[tuple[int, int, int]]:
    """(smid, start ns, end ns) of every CTA of a timeline CSV (decode: t_start_ns / t_end_ns; GEMM: start_ns /
    end_ns)."""
    return [(int(r["smid"]), int(r.get("t_start_ns", r.get("start_ns"))), int(r.get("t_end_ns", r.get("end_ns"))))
            for r in read(path)]


def first_wave_lives(ctas: list[tuple[int, int, int]]) -> dict:
    """smid -> the lives (ns) of its first-wave CTAs: those starting within FIRST_WAVE_NS of the launch's first."""
    t0 = min(s for _, s, _ in ctas)
    lives = defaultdict(list)
    for sm, s, e in ctas:
        if s - t0 <= FIRST_WAVE_NS:
            lives[sm].append(e - s)
    return dict(lives)


def fast_group(ctas: list[tuple[int, int, int]], fast: float) -> dict:
    """The first wave's lives by SM, split at ``fast`` x the median of the SMs of the same first-wave count: the
    fast SMs, the rest, the two groups' median lives and the launch's makespan (ns from the first start)."""
    t0 = min(s for _, s, _ in ctas)
    lives = first_wave_lives(ctas)
    count = {sm: len(v) for sm, v in lives.items()}
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


def stamped_phases(ctas: dict, chunk_bytes: float, fast: float) -> dict:
    """One stamped launch of bench/h200/measure_sm_rates.py: ``ctas`` maps pid -> (smid, [start, stamp after each
    chunk ...]) in ns, every chunk ``chunk_bytes``. The fast SMs are those whose CTAs end (median) under ``fast`` x
    the median end. The rates (bytes streamed in a window, linear between stamps, / its length, B/ns = GB/s): all
    CTAs' before the first fast CTA ends (phase 1), and the rest's in phase 1 and after the last fast CTA ends until
    the first of the rest does (phase 2): the rest's rate rises in phase 2 to the phase-1 total where the DRAM's rate
    the fast SMs leave goes to the others. The makespan is over the balanced time, the bytes at phase 1's total rate."""
    by_sm = defaultdict(list)
    for sm, t in ctas.values():
        by_sm[sm].append(t[-1])
    mid = statistics.median(t[-1] for _, t in ctas.values())
    fast_sms = {sm for sm, ends in by_sm.items() if statistics.median(ends) < fast * mid}
    fast_ends = [t[-1] for sm, t in ctas.values() if sm in fast_sms]
    rest_ends = [t[-1] for sm, t in ctas.values() if sm not in fast_sms]

    def done(t, at):
        # bytes a CTA has streamed by ``at``: linear between its stamps (a chunk's bytes at even pace)
        if at <= t[0]:
            return 0.0
        for k in range(1, len(t)):
            if at <= t[k]:
                return chunk_bytes * (k - 1 + (at - t[k - 1]) / (t[k] - t[k - 1]))
        return chunk_bytes * (len(t) - 1)

    def rate(which, lo, hi):
        got = sum(done(t, hi) - done(t, lo) for sm, t in ctas.values() if which(sm))
        return got / (hi - lo) if hi > lo else None

    start = min(t[0] for _, t in ctas.values())
    p1_end = min(fast_ends) if fast_ends else min(rest_ends)
    p2 = (max(fast_ends), min(rest_ends)) if fast_ends else (None, None)
    total = len(ctas) * (len(next(iter(ctas.values()))[1]) - 1) * chunk_bytes
    all_p1 = rate(lambda sm: True, start, p1_end)
    return {"fast_sms": sorted(fast_sms), "all_p1": all_p1,
            "rest_p1": rate(lambda sm: sm not in fast_sms, start, p1_end),
            "rest_p2": rate(lambda sm: sm not in fast_sms, *p2) if fast_ends else None,
            "fast_end_over_rest": statistics.median(fast_ends) / statistics.median(rest_ends) if fast_ends else None,
            "makespan_over_balanced": (max(rest_ends + fast_ends) - start) / (total / all_p1)}


def read_stamps(path: Path) -> dict:
    """(config, rep) -> {pid: (smid, [start, stamps ...])} from measure_sm_rates.py's stamps.csv."""
    out = defaultdict(dict)
    for r in read(path):
        launch = out[(r["config"], int(r["rep"]))]
        sm, stamps = launch.setdefault(int(r["pid"]), (int(r["smid"]), []))
        stamps.append((int(r["chunk"]), int(r["t_ns"])))
    return {k: {pid: (sm, [t for _, t in sorted(st)]) for pid, (sm, st) in v.items()} for k, v in out.items()}


def print_stamps(path: Path, fast: float) -> None:
    summary = {(r["config"], int(r["rep"])): r for r in read(path.parent / "summary.csv")}
    for key, ctas in read_stamps(path).items():
        s = summary[key]
        chunks = len(next(iter(ctas.values()))[1]) - 1
        g = stamped_phases(ctas, int(s["bytes"]) / int(s["ctas"]) / chunks, fast)
        opt = lambda v, f: format(v, f) if v is not None else "-"  # noqa: E731
        print(f"{key[0]} rep {key[1]}: {s['inflight_sm_kb']} KB an SM, {s['tbps']} TB/s; fast {len(g['fast_sms'])} SMs "
              f"[{ranges(g['fast_sms'])}] end at {opt(g['fast_end_over_rest'], '.3f')} of the rest; GB/s all "
              f"{g['all_p1']:.0f}, rest {g['rest_p1']:.0f} -> {opt(g['rest_p2'], '.0f')} once the fast end; makespan "
              f"{g['makespan_over_balanced']:.3f} x balanced")


def placement_classes(ctas: list[tuple[int, int, int]], fast_sms=()) -> dict:
    """The first wave's SMs by (CTAs on the SM, CTAs on its TPC (SMs 2t, 2t + 1), in the fast group or not) ->
    (SMs, the median of their median lives, the least, the most), lives in ns: where an uneven one-wave launch's
    SMs of 3 CTAs, and of 6-CTA TPCs, end (docs/analysis.md, "The H200 answers")."""
    lives = first_wave_lives(ctas)
    count = {sm: len(v) for sm, v in lives.items()}
    fast = set(fast_sms)
    groups = defaultdict(list)
    for sm, v in lives.items():
        groups[(count[sm], count[sm] + count.get(sm ^ 1, 0), sm in fast)].append(statistics.median(v))
    return {k: (len(v), statistics.median(v), min(v), max(v)) for k, v in sorted(groups.items())}


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
    ap.add_argument("--stamps", type=Path, help="measure_sm_rates.py's stamps.csv (summary.csv beside it)")
    ap.add_argument("--classes", action="store_true",
                    help="also each file's first-wave lives by CTAs on the SM and on its TPC, fast group apart")
    args = ap.parse_args(argv)
    files = args.files or sorted(ROOT.glob("calibration/*/measured/decode_timeline_s*/timeline_*.csv"))
    for path in ([args.stamps, args.stamps.parent / "summary.csv"] if args.stamps else files):
        if not path.is_file():
            print(f"{path}: no such file (expected a CTA timeline CSV, or measure_sm_rates.py's stamps.csv with "
                  f"summary.csv beside it)", file=sys.stderr)
            return 2
    if args.stamps:
        print_stamps(args.stamps, args.fast)
        return 0
    for path in files:
        ctas = read_timeline(path)
        g = fast_group(ctas, args.fast)
        name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        ratio = f"{g['fast_over_rest']:.3f}" if g["fast_over_rest"] else "-"
        shares = " ".join(f"{n}x{k}" for k, n in g["per_sm"])
        print(f"{name}: {g['ctas']} CTAs (first wave: SMs x CTAs {shares}); fast {len(g['fast_sms'])} SMs "
              f"[{ranges(g['fast_sms'])}] life {ratio} of the rest's; makespan {g['makespan_over_rest']:.3f}")
        if args.classes:
            for (on_sm, on_tpc, is_fast), (n, mid, lo, hi) in placement_classes(ctas, g["fast_sms"]).items():
                print(f"    {on_sm} CTAs an SM, {on_tpc} a TPC, {'fast' if is_fast else 'rest'}: {n} SMs, life "
                      f"{mid / 1e3:.0f} us ({lo / 1e3:.0f}-{hi / 1e3:.0f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
