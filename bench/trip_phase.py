#!/usr/bin/env python3
"""Do the CTAs of one SM run their k-loop trips together or in turn? The figures of measure_trip_phase.py's stamps.

    python3 bench/trip_phase.py calibration/h200/measured/trip_phase

Reads DIR/trips.csv.gz (every trip's start on its SM's %clock64, and on %globaltimer where stamped) and
DIR/timing.csv as bench/h200/measure_trip_phase.py writes them. Per launch: the CTAs and the CTAs an SM, each CTA's trip
period (the median difference of its consecutive trip starts past the first PROLOGUE trips, cycles, and ns where the
global timer was stamped, with the mean trip there: the steady span over its steps), and for every two CTAs of one SM
whose trips overlap in time their phase: where in B's trip A's trips start, as a share of the period folded to 0-0.5
(0: the two start their trips together, 0.5: in turn, half a trip apart), the median over A's trips. The launch's
line gives the median period, the median phase over its pairs, the share of pairs under 0.1 (together) and every
trip's phase pooled over the pairs by tenths (0.2 each where the trips slide past each other at random). timing.csv
adds what the stamps cost: the launch timed with them over without.
A missing file is one line and exit 2.
"""
from __future__ import annotations

import argparse
import bisect
import csv
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cta_placement import read  # noqa: E402  (bench/: a CSV or its .csv.gz, as dict rows)

PROLOGUE = 4          # trips left out at a CTA's start (the pipeline's fill)
GRID_K, GRID_M = 8192, 16      # measure_trip_phase.py's K (the grids' where their rows name none) and M


def steady_starts(clks: list[int]) -> list[int]:
    """A CTA's trip starts past the first PROLOGUE trips (all of them where no two would be left)."""
    return clks[PROLOGUE:] if len(clks) > PROLOGUE + 1 else clks


def nearest_rank(sorted_xs: list, q: float):
    """The ``q`` quantile of sorted values by the nearest rank, the value at round(q x (n - 1))."""
    return sorted_xs[round(q * (len(sorted_xs) - 1))]


def period(clks: list[int]) -> float:
    """The median difference of consecutive trip starts past the first PROLOGUE trips (cycles)."""
    steady = steady_starts(clks)
    return statistics.median(b - a for a, b in zip(steady, steady[1:]))


def trip_phases(a: list[int], b: list[int], p: float) -> list[float]:
    """Where in B's trip each of A's trips starts, folded to 0-0.5 of the period ``p``: for each of A's steady trip
    starts inside B's steady span, its distance past B's last start before it over ``p`` (at most 1), folded as
    min(x, 1 - x). Empty where the two spans do not overlap."""
    bs = b[PROLOGUE:]
    xs = []
    for t in a[PROLOGUE:]:
        j = bisect.bisect_right(bs, t) - 1
        if j < 0 or j >= len(bs) - 1:
            continue               # before B's first steady start or past its last
        x = min((t - bs[j]) / p, 1.0)
        xs.append(min(x, 1 - x))
    return xs


def mean_period(clks: list[int]) -> float:
    """The mean trip past the first PROLOGUE trips: the span of the steady starts over their steps (cycles or ns).
    Over the median (``period``) it holds the slow steps too: a trip now and then that waits long moves the mean, which
    sets the launch's time, and not the median."""
    steady = steady_starts(clks)
    return (steady[-1] - steady[0]) / (len(steady) - 1)


def launches(rows, column="clk") -> dict:
    """(N, BN, WARPS, STAGES, rep) -> {pid: (smid, [clk by trip])} over trips.csv's rows; ``column``: the stamp read,
    ``clk`` (the SM's clock) or ``ns`` (the global timer, where the rows have it)."""
    out = defaultdict(dict)
    for r in rows:
        key = (int(r["N"]), int(r["BN"]), int(r["WARPS"]), int(r["STAGES"]), int(r["rep"]))
        pid = int(r["pid"])
        sm, clks = out[key].get(pid, (int(r["smid"]), []))
        clks.append((int(r["k"]), int(r[column])))
        out[key][pid] = (sm, clks)
    return {k: {pid: (sm, [c for _, c in sorted(clks)]) for pid, (sm, clks) in v.items()} for k, v in out.items()}


def launch_figures(ctas: dict) -> dict:
    """One launch's figures: CTAs, {CTAs an SM: SMs}, the median period (cycles) and, over every two CTAs of one SM,
    the median phase and the share under 0.1, with the pairs' count."""
    by_sm = defaultdict(list)
    for pid, (sm, clks) in ctas.items():
        by_sm[sm].append(clks)
    periods = {pid: period(clks) for pid, (_, clks) in ctas.items()}
    phases, trips = [], []
    for clks_list in by_sm.values():
        for i in range(len(clks_list)):
            for j in range(i + 1, len(clks_list)):
                a, b = clks_list[i], clks_list[j]
                xs = trip_phases(a, b, statistics.median([period(a), period(b)]))
                if xs:
                    phases.append(statistics.median(xs))
                    trips += xs
    counts = defaultdict(int)
    for v in by_sm.values():
        counts[len(v)] += 1
    return {
        "ctas": len(ctas),
        "sms_by_count": dict(sorted(counts.items())),
        "period": statistics.median(periods.values()),
        "pairs": len(phases),
        "phase": statistics.median(phases) if phases else None,
        "together": sum(1 for x in phases if x < 0.1) / len(phases) if phases else None,
        # every trip's phase pooled over the pairs, the share in each tenth 0-0.1 .. 0.4-0.5: 0.2 each where the CTAs'
        # trips slide past each other at random, most in the first where they start together, the last in turn
        "tenths": [sum(1 for x in trips if t / 10 <= x < (t + 1) / 10 or (t == 4 and x == 0.5)) / len(trips)
                   for t in range(5)] if trips else None,
    }


def grid_key(r: dict) -> tuple:
    """(N, BN, BK, warps, stages, K) of a ctas.csv or timing.csv row (K: GRID_K where the row names none)."""
    return (int(r["N"]), int(r["BN"]), int(r["BK"]), int(r["WARPS"]), int(r["STAGES"]), int(r.get("K") or GRID_K))


def grid_figures(ctas_rows, timing_rows) -> dict:
    """measure_trip_phase.py TRIP_SET=grid, kgrid, fgrid, sgrid or mkgrid: (N, BN, BK, warps, stages, K) -> {ctas,
    trips, mean_ns: the median over the CTAs of their steady mean trip, plain_ns: the launch timed plain
    (timing.csv), rest_ns: that less trips x mean_ns (the launch's start, fill and end), outside_ns: the plain time
    less the stamps' span (first CTA's first trip to the last CTA's last), end_spread_ns: the last CTA's last trip
    past the median CTA's, k_spread: the CTAs' spread in k at the launch's middle (``k_spread``), fast_sms: (SMs
    ahead, the 90th percentile SM's rate over the median's) (``fast_sms``), one_wave: every CTA resident at once, M
    (timing.csv's, GRID_M where it names none), regs, smem_bytes}."""
    per = defaultdict(list)
    ends = defaultdict(list)
    on_sm = defaultdict(lambda: defaultdict(list))
    for r in ctas_rows:
        key = grid_key(r)
        per[key].append(float(r["steady_mean_ns"]))
        ends[key].append((int(r["first_ns"]), int(r["last_ns"])))
        on_sm[key][int(r["smid"])].append(float(r["steady_mean_ns"]))
    timing = {grid_key(r): r for r in timing_rows}
    out = {}
    for key, means in sorted(per.items()):
        trips = key[5] // key[2]
        mean = statistics.median(means)
        t = timing.get(key)
        plain = None if t is None else float(t["ms_plain"]) * 1e6
        firsts, lasts = [a for a, _ in ends[key]], [b for _, b in ends[key]]
        span = max(lasts) - min(firsts)
        out[key] = dict(ctas=len(means), trips=trips, mean_ns=mean, plain_ns=plain,
                        rest_ns=None if plain is None else plain - trips * mean,
                        # the launch outside its stamps (its start, the first trip's top, the last trip, the end) and
                        # how far the last CTA ends past the median one
                        outside_ns=None if plain is None else plain - span,
                        end_spread_ns=max(lasts) - statistics.median(lasts),
                        k_spread=k_spread(ends[key], trips),
                        fast_sms=fast_sms(on_sm[key]),
                        # every CTA resident at once: the SMs it ran on hold all of them (blocks_per_sm of timing.csv)
                        one_wave=t is not None and len(on_sm[key]) * int(t["blocks_per_sm"]) >= len(means),
                        # the rows' M (timing.csv from TRIP_SET=mkgrid on; GRID_M before it named none)
                        M=int(t["M"]) if t is not None and t.get("M") else GRID_M,
                        regs=None if t is None else int(t["regs"]),
                        smem_bytes=None if t is None else int(t["smem_bytes"]))
    return out


FAST = 1.12     # an SM whose CTAs trip this much faster than the median SM's runs ahead (fast_sms)


def fast_sms(trips_on_sm: dict) -> tuple[int, float]:
    """(how many SMs run ahead, the 90th percentile SM's rate over the median SM's): each SM's rate the inverse of
    its CTAs' mean steady trip; an SM runs ahead at FAST x the median SM's rate or more (the favoured SMs of
    tfx.analysis.favoured_tail draw 1.24-1.35 x)."""
    rates = sorted(1 / statistics.fmean(v) for v in trips_on_sm.values())
    median = statistics.median(rates)
    return sum(1 for x in rates if x >= FAST * median), nearest_rank(rates, 0.9) / median


def k_spread(ends: list[tuple[int, int]], trips: int) -> float:
    """How far apart in k the launch's CTAs are at its middle (the median of the CTAs' midpoints), in trips: the
    10th to 90th percentile of their positions, each CTA's position interpolated between its first and last trip
    start (trip 0 and trip ``trips`` - 1), held at those ends outside them; percentiles by the nearest rank."""
    middle = statistics.median((a + b) / 2 for a, b in ends)
    at = sorted(min(max((middle - a) / (b - a), 0.0), 1.0) * (trips - 1) if b > a else 0.0 for a, b in ends)
    return nearest_rank(at, 0.9) - nearest_rank(at, 0.1)


def continued_pieces(figures: dict) -> list[tuple]:
    """BN = 32's mean trip over BN = 64's at the same (N, BK, warps, stages, K), one wave each: the cost of B's
    64-byte pieces whose other half the neighbouring CTA reads. Rows of (N, BK, warps, stages, K, cost, in_flight_mb:
    (S - 1) x BK x N x 2 B, the B rows the launch's stages hold, span_mb: (S - 1 + BN = 32's k spread) x BK x N x 2
    B, the B rows its CTAs read across at its middle, BN = 32's SMs ahead)."""
    out = []
    for (n, bn, bk, w, st, k), g in figures.items():
        wide = figures.get((n, 64, bk, w, st, k))
        if bn != 32 or wide is None or not (g["one_wave"] and wide["one_wave"]):
            continue
        row_bytes = bk * n * 2
        out.append((n, bk, w, st, k, g["mean_ns"] / wide["mean_ns"], (st - 1) * row_bytes / 1e6,
                    (st - 1 + g["k_spread"]) * row_bytes / 1e6, g["fast_sms"][0]))
    return out


def loop_and_edges(g: dict, round_ns: float, total_ns: float) -> tuple[float, float]:
    """tfx's one-wave loop (``round_ns`` x the trips) over the measured loop to the last CTA (the median CTA's trips x
    its mean trip, plus the last CTA's end past the median's: the launch ends with its slowest CTA), and tfx's edges
    (``total_ns`` less its loop: the launch, the fill, a dirty L2's write-back) in ns, to set beside the launch's time
    outside the stamps (``outside_ns``)."""
    loop = g["trips"] * round_ns
    return loop / (g["trips"] * g["mean_ns"] + g["end_spread_ns"]), total_ns - loop


def priced_trip_ns(figures: dict, profile: str) -> dict:
    """(N, BN, BK, warps, stages, K) -> (tfx's round a trip (ns), tfx's launch (ns)) for each grid launch: the round is
    breakdown's one-wave ("tail wave") time over the trips, None for a launch of more waves (its waves' time is no
    one CTA's life); each launch priced as kernels/gemm.tile at its parameters (its M, BM = 16, B [K, N], and GROUP_M
    the row tiles, M / 16: the kernel's pid_m = pid % its row tiles puts a B tile's co-readers on neighbouring pids,
    Triton's grouped order with one group over all rows; 1 at M = 16) and the compiled registers and shared memory of
    timing.csv, after an L2 clear as do_bench timed it."""
    import tempfile
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tfx.analysis.measured import Predictor, read_measurements
    root = Path(__file__).resolve().parent.parent
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "grid.csv"
        keys = list(figures)
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["kernel", "profile", "measured_ms", "M", "N", "K", "BM", "BN", "BK", "WARPS", "STAGES",
                        "GROUP_M", "layout", "regs", "spills", "smem_bytes"])
            for (n, bn, bk, warps, st, k) in keys:
                g = figures[(n, bn, bk, warps, st, k)]
                w.writerow([root / "kernels" / "gemm.tile", profile, (g["plain_ns"] or 1e3) / 1e6, g["M"], n, k,
                            16, bn, bk, warps, st, -(-g["M"] // 16), "kn", g["regs"] or "", 0, g["smem_bytes"] or ""])
        predictor = Predictor(profile)
        for key, row in zip(keys, read_measurements(path)):
            a = predictor.analysis(row)
            terms = {t.name: float(t.ns) for t in a.terms}
            one_wave = terms.get("waves", 0) == 0 and "tail wave" in terms
            out[key] = (terms["tail wave"] / figures[key]["trips"] if one_wave else None,
                        float(a.metrics["performance.predicted_ns"]))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--profile", default=None, help="with a grid (ctas.csv): tfx's round a trip on this profile too")
    args = ap.parse_args(argv)
    d = Path(args.dir)
    ctas_csv = next((p for p in (d / "ctas.csv", d / "ctas.csv.gz") if p.is_file()), None)   # filed gzipped too
    if ctas_csv is not None:
        if not (d / "timing.csv").is_file():
            print(f"{d / 'timing.csv'}: no such file (expected beside ctas.csv)", file=sys.stderr)
            return 2
        figures = grid_figures(read(ctas_csv), read(d / "timing.csv"))
        priced = priced_trip_ns(figures, args.profile) if args.profile else {}
        several_k = len({k[5] for k in figures}) > 1
        for (n, bn, bk, w, st, k), g in figures.items():
            rest = ("" if g["rest_ns"] is None else
                    f"; the launch {g['plain_ns'] / 1e3:.2f} us, {g['rest_ns'] / 1e3:.2f} beyond (outside the stamps "
                    f"{g['outside_ns'] / 1e3:.2f}, the last CTA's end {g['end_spread_ns'] / 1e3:.2f} past the median)")
            tfx, total = priced.get((n, bn, bk, w, st, k), (None, None))
            tfx_text = "" if tfx is None else f"; tfx's round {tfx:.0f} ns ({tfx / g['mean_ns']:.3f} x)"
            if tfx is not None and g["outside_ns"] is not None:
                to_last, edges = loop_and_edges(g, tfx, total)
                tfx_text += f", its loop {to_last:.3f} x the loop to the last CTA, its edges {edges / 1e3:.2f} us"
            if total is not None and g["plain_ns"]:
                tfx_text += (", its" if tfx is not None else "; tfx's") + \
                    f" launch {total / 1e3:.2f} us ({total / g['plain_ns']:.3f} x)"
            print((f"M {g['M']} " if g["M"] != GRID_M else "") + f"N {n}" + (f" K {k}" if several_k else "") +
                  f" BN {bn} BK {bk} W {w} S {st}: {g['ctas']} CTAs, "
                  f"{g['trips']} trips, mean trip "
                  f"{g['mean_ns']:.0f} ns, the CTAs {g['k_spread']:.1f} trips apart at the middle (10th-90th), "
                  f"{g['fast_sms'][0]} SMs ahead (90th percentile SM {g['fast_sms'][1]:.3f} x the median's rate)"
                  f"{rest}{tfx_text}")
        for n, bk, w, st, k, cost, in_flight, span, ahead in continued_pieces(figures):
            print(f"continued pieces N {n}" + (f" K {k}" if several_k else "") + f" BK {bk} W {w} S {st}: BN 32 / "
                  f"BN 64 trip {cost:.3f}; B in flight {in_flight:.1f} MB, read across {span:.1f} MB; "
                  f"{ahead} SMs ahead")
        return 0
    trips, timing = d / "trips.csv.gz", d / "timing.csv"
    for p in (trips, timing):
        if not p.is_file():
            print(f"{p}: no such file (expected measure_trip_phase.py's trips.csv.gz and timing.csv)", file=sys.stderr)
            return 2
    for r in read(timing):
        cost = float(r["ms_stamped"]) / float(r["ms_plain"])
        print(f"N {r['N']} BN {r['BN']} W {r['WARPS']} S {r['STAGES']}: {r['ctas']} CTAs, {r['blocks_per_sm']} an "
              f"SM at most; {float(r['ms_plain']) * 1e3:.2f} us plain, stamped {cost:.3f} x")
    rows = read(trips)
    found = launches(rows)
    timed = launches(rows, "ns") if rows and "ns" in rows[0] else {}
    for (n, bn, w, s, rep), ctas in sorted(found.items()):
        g = launch_figures(ctas)
        ns = timed.get((n, bn, w, s, rep))
        in_ns = ("" if ns is None else
                 f" = {statistics.median(period(c) for _, c in ns.values()):.0f} ns, mean "
                 f"{statistics.median(mean_period(c) for _, c in ns.values()):.0f} ns")
        counts = ", ".join(f"{sms} SMs of {c}" for c, sms in g["sms_by_count"].items())
        phase = "-" if g["phase"] is None else f"{g['phase']:.3f}"
        together = "-" if g["together"] is None else f"{g['together']:.2f}"
        tenths = ("" if g["tenths"] is None else
                  "; trips by tenth of a phase " + " / ".join(f"{x:.2f}" for x in g["tenths"]))
        print(f"N {n} BN {bn} W {w} S {s} rep {rep}: {g['ctas']} CTAs ({counts}); period {g['period']:.0f} "
              f"cycles{in_ns}; {g['pairs']} pairs on one SM, phase {phase} (0 together, 0.5 in turn), "
              f"together {together}{tenths}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
