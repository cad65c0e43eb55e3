#!/usr/bin/env python3
"""Read bench/h200/measure_row_states.py's output: per stamped kernel, the two CTAs of one SM.

    python3 bench/h200/row_states_summary.py calibration/h200/measured/row_states

For every CTA (all SMs, stamps_cta.npz) the phases in SM clocks, converted to ns by each SM's
own rate (%clock against %globaltimer over the launch): X wait (last X vector of any warp -
first warp's start), the reduction (x * inv - last X), the W wait (last W vector - x * inv),
the tail (last y - last W) and the CTA's span (last y - first start). The pair's offset: for
each CTA, the start of the other CTA resident on its SM (the latest start on that SM before
its own, by another slot) as a fraction of its span; lock step near 0, alternation near 0.5.
Middle CTAs only (the first and the last two waves dropped). Prints medians (and the 10th and
90th percentiles of the offset). Softmax (variant `softmax`) stamps no W: probe 4 is on
e = exp(x - max), after its first reduction, so its `reduce` is X to e and its `tail` e to the last
y (the sum's reduction and the scale); a probe a kernel never stores reads back the same value in
every slot (the zeroed buffer less the SM's base) and is printed `-`.

Then the pair states (`pair_phases`): on each SM, the sorted starts t, for every middle k the
pair's cycle t[k+2] - t[k] and its phase min(t[k+1] - t[k], t[k+2] - t[k+1]) / cycle (0: the two
CTAs of the SM start together, the lock step; 0.5: half a cycle apart, the alternation); the
share of cycles at phase < 0.2, 0.2-0.35 and >= 0.35 and the median cycle of each, beside the
plain and stamped launches' time a wave of two CTAs a SM (kernels.csv us / waves).

    python3 bench/h200/row_states_summary.py --pairs calibration/h200/measured/row_phases KEY...

reads row_phases' per-CTA scalar stamps (start, row statistic, stores issued: %clock, one
counter per SM; 0.5078 ns a clock, the slope of its %globaltimer against %clock) instead: on
each SM the CTAs are put in two slots (a CTA takes the slot that freed latest before its start),
and for waves 4 to the fourth-last, the pair's leader L (the earlier start) and follower F:
the medians of F's start, L's and F's row statistic, L's and F's stores and the start of L's
successor, in ns after L's start (`pairs`)."""
import csv
import os
import sys

import numpy as np


def load(d):
    cta = np.load(os.path.join(d, "stamps_cta.npz"))
    raw = np.load(os.path.join(d, "stamps_raw.npz"))
    keys = sorted({k.split(".")[0] for k in cta.files})
    return cta, raw, keys


def ns_per_clock(sm, gstart, start):
    """Median over SMs of the slope of %globaltimer_lo (ns) against %clock at the CTAs' starts."""
    rates = []
    for s in np.unique(sm):
        i = np.nonzero(sm == s)[0]
        if len(i) < 4:
            continue
        g = ((gstart[i].astype(np.int64) - int(gstart[i[0]]) + 2 ** 31) % 2 ** 32) - 2 ** 31
        c = start[i].astype(np.float64)
        if np.ptp(c) > 0:
            rates.append(np.polyfit(c, g.astype(np.float64), 1)[0])
    return float(np.median(rates))


def probe_absent(vmin, vmax):
    """True where a probe was never stored: every warp and rep of every CTA reads back the zeroed
    buffer less its SM's base, one value, so each CTA's min equals its max (a stored probe's
    stamps differ across 16-64 warps and reps)."""
    return bool(np.all(np.asarray(vmin) == np.asarray(vmax)))


def pair_phases(t, head=4, tail=6):
    """One SM's CTA starts t (ns, sorted): for k in head .. len(t) - tail - 1, the pair's cycle
    t[k+2] - t[k] and its phase min(t[k+1] - t[k], t[k+2] - t[k+1]) / cycle. Returns (phase,
    cycle) arrays."""
    t = np.asarray(t, dtype=np.float64)
    k = np.arange(head, len(t) - tail)
    cyc = t[k + 2] - t[k]
    ph = np.minimum(t[k + 1] - t[k], t[k + 2] - t[k + 1]) / cyc
    return ph, cyc


def states(cta, key):
    """pair_phases over every SM of one stamped kernel (starts in ns by the SMs' clock rate)."""
    sm = cta[f"{key}.sm"].astype(np.int64)
    start = cta[f"{key}.start_min"].astype(np.int64)
    rate = ns_per_clock(sm, cta[f"{key}.gstart"], start)
    ph, cyc = [], []
    for s in np.unique(sm):
        p, c = pair_phases(np.sort(start[sm == s]) * rate)
        ph.append(p)
        cyc.append(c)
    return np.concatenate(ph), np.concatenate(cyc)


BINS = ((0.0, 0.2), (0.2, 0.35), (0.35, 0.51))
LEADER = (("F start", "F", "start_min"), ("L X first", "L", "x_min"), ("L X last", "L", "x_max"),
          ("L red", "L", "red_max"), ("L W last", "L", "w_max"), ("L y last", "L", "y_max"),
          ("F X first", "F", "x_min"), ("F X last", "F", "x_max"), ("F red", "F", "red_max"),
          ("F y last", "F", "y_max"), ("L' start", "L'", "start_min"))


def leader_follower(cta, key):
    """On each SM the CTAs in two slots (a CTA takes the slot that freed latest, its last y within
    400 clocks of the CTA's start), and for waves 4 to the fourth-last the pair's leader L (the
    earlier start), follower F and L's successor L': the medians of LEADER's stamps in ns after
    L's start (a probe the kernel never stores: nan)."""
    g = {n: cta[f"{key}.{n}"].astype(np.int64) for n in ("start_min", "x_min", "x_max", "red_max", "y_max")}
    g["w_max"] = cta[f"{key}.w_max"].astype(np.int64) if f"{key}.w_max" in cta.files else None
    if g["w_max"] is not None and probe_absent(cta[f"{key}.w_min"], g["w_max"]):
        g["w_max"] = None
    sm = cta[f"{key}.sm"].astype(np.int64)
    rate = ns_per_clock(sm, cta[f"{key}.gstart"], g["start_min"])
    out = []
    for s in np.unique(sm):
        i = np.nonzero(sm == s)[0]
        i = i[np.argsort(g["start_min"][i])]
        ends, hist = [None, None], [[], []]
        for c in i:
            cand = [j for j in (0, 1) if ends[j] is None or g["y_max"][ends[j]] <= g["start_min"][c] + 400]
            j = max(cand, key=lambda j: -1 if ends[j] is None else g["y_max"][ends[j]]) if cand else 0
            ends[j] = c
            hist[j].append(c)
        for w in range(4, min(len(hist[0]), len(hist[1])) - 3):
            a0, a1 = hist[0][w], hist[1][w]
            lead, fol = (a0, a1) if g["start_min"][a0] <= g["start_min"][a1] else (a1, a0)
            who = {"L": lead, "F": fol, "L'": (hist[0] if lead == a0 else hist[1])[w + 1]}
            t0 = g["start_min"][lead]
            out.append([np.nan if g[n] is None else (g[n][who[c]] - t0) * rate for _, c, n in LEADER])
    if not out:
        return None
    a = np.array(out, dtype=np.float64)
    return np.array([np.median(a[:, j]) if np.isfinite(a[:, j]).any() else np.nan for j in range(a.shape[1])])


def phases(cta, key):
    g = {n: cta[f"{key}.{n}"] for n in ("sm", "gstart", "start_min", "x_max", "red_max", "y_max")
         if f"{key}.{n}" in cta.files}
    w_max = cta[f"{key}.w_max"] if f"{key}.w_max" in cta.files else None
    if w_max is not None and probe_absent(cta[f"{key}.w_min"], w_max):
        w_max = None
    sm, start = g["sm"].astype(np.int64), g["start_min"].astype(np.int64)
    rate = ns_per_clock(sm, g["gstart"], start)
    n = len(sm)
    span = (g["y_max"] - start) * rate
    xw = (g["x_max"] - start) * rate
    red = (g["red_max"] - g["x_max"]) * rate
    ww = (w_max - g["red_max"]) * rate if w_max is not None else np.full(n, np.nan)
    tail = (g["y_max"] - (w_max if w_max is not None else g["red_max"])) * rate
    # the partner: on the same SM, the latest start before this CTA's start that is still running
    off = np.full(n, np.nan)
    for s in np.unique(sm):
        i = np.nonzero(sm == s)[0]
        i = i[np.argsort(start[i])]
        for a, b in zip(i[:-1], i[1:]):
            pass
        for k in range(1, len(i)):
            c = i[k]
            prev = [p for p in i[:k] if g["y_max"][p] > start[c]]
            if prev:
                p = max(prev, key=lambda q: start[q])
                off[c] = (start[c] - start[p]) / max(g["y_max"][c] - start[c], 1)
    waves = n / (2 * len(np.unique(sm)))
    mid = np.arange(n) >= 2 * len(np.unique(sm))
    mid &= np.arange(n) < n - 4 * len(np.unique(sm))
    return dict(rate=rate, waves=waves, span=span[mid], xw=xw[mid], red=red[mid], ww=ww[mid], tail=tail[mid],
                off=off[mid])


def pairs(npz, key, ns_per_clk=0.5078):
    a = np.load(npz)[key]
    sm, cst, cred, csto = a[:, 4], a[:, 5].astype(np.int64), a[:, 6].astype(np.int64), a[:, 7].astype(np.int64)
    rows = []
    for s in np.unique(sm):
        i = np.nonzero(sm == s)[0]
        i = i[np.argsort(cst[i])]
        ends, hist = [None, None], [[], []]
        for c in i:
            cand = [j for j in (0, 1) if ends[j] is None or csto[ends[j]] <= cst[c] + 200]
            j = max(cand, key=lambda j: -1 if ends[j] is None else csto[ends[j]]) if cand else 0
            ends[j] = c
            hist[j].append(c)
        n = min(len(hist[0]), len(hist[1]))
        for w in range(4, n - 3):
            a0, a1 = hist[0][w], hist[1][w]
            lead, fol = (a0, a1) if cst[a0] <= cst[a1] else (a1, a0)
            nxt = (hist[0] if lead == a0 else hist[1])[w + 1]
            rows.append([(x - cst[lead]) * ns_per_clk for x in
                         (cst[fol], cred[lead], cred[fol], csto[lead], csto[fol], cst[nxt])])
    return np.median(np.array(rows), axis=0)


def main():
    if sys.argv[1] == "--pairs":
        print("kernel                      F start  L stat  F stat  L stores  F stores  L' start  (ns after L's start)")
        for key in sys.argv[3:]:
            v = pairs(os.path.join(sys.argv[2], "stamps.npz"), key)
            print(f"{key:26s} " + " ".join(f"{x:7.0f}" for x in v))
        return
    d = sys.argv[1]
    cta, raw, keys = load(d)
    times, rows = {}, {}
    with open(os.path.join(d, "kernels.csv")) as f:
        for r in csv.DictReader(f):
            times[(r["variant"], r["stamp"], r["BLOCK_M"], r["WARPS"], r["N"])] = r["us_first"]
            rows[(r["variant"], r["stamp"], r["BLOCK_M"], r["WARPS"], r["N"])] = r
    print("kernel                    plain us  stamped us  ns/clk  span   X wait  reduce  W wait  tail   "
          "offset p10/p50/p90")
    for key in keys:
        v, cfg, n = key.split("_")
        bm, wp = cfg.split("x")
        p = phases(cta, key)
        med = {k: float(np.nanmedian(p[k])) if np.isfinite(p[k]).any() else float("nan")
               for k in ("span", "xw", "red", "ww", "tail")}
        o = np.nanpercentile(p["off"], [10, 50, 90])
        ww = "      -" if np.isnan(med["ww"]) else f"{med['ww']:7.0f}"
        print(f"{key:25s} {times.get((v, '0', bm, wp, n), ''):>8s} {times.get((v, '1', bm, wp, n), ''):>10s}  "
              f"{p['rate']:.3f}  {med['span']:6.0f} {med['xw']:7.0f} {med['red']:7.0f} {ww} "
              f"{med['tail']:6.0f}   {o[0]:.2f}/{o[1]:.2f}/{o[2]:.2f}")
    print("(ns; softmax: reduce = X to e = exp(x - max), tail = e to the last y; it stamps no W)")
    print()
    print("kernel                    ns a wave of 2 CTAs/SM   pair phase < 0.2        0.2-0.35          >= 0.35"
          "      (share, median cycle ns)")
    print("                           plain  stamped  cycles")
    for key in keys:
        v, cfg, n = key.split("_")
        bm, wp = cfg.split("x")
        ph, cyc = states(cta, key)
        sms = len(np.unique(cta[f"{key}.sm"]))
        per = []
        for st in ("0", "1"):
            r = rows.get((v, st, bm, wp, n))
            waves = int(r["M"]) / (int(bm) * 2 * sms) if r else 0
            per.append(f"{1e3 * float(r['us_first']) / waves:7.0f}" if r else "      -")
        cells = []
        for a, b in BINS:
            m = (ph >= a) & (ph < b)
            cells.append(f"{100 * m.mean():3.0f}% {np.median(cyc[m]) if m.any() else 0:5.0f}")
        print(f"{key:25s} {per[0]} {per[1]} {np.mean(cyc):7.0f}    " + "        ".join(cells))
    print()
    print("leader L / follower F of each SM's pair, waves 4 to the fourth-last (medians, ns after L's start)")
    print("kernel                   " + " ".join(f"{h:>9s}" for h, _, _ in LEADER))
    for key in keys:
        m = leader_follower(cta, key)
        print(f"{key:24s} " + " ".join("        -" if np.isnan(x) else f"{x:9.0f}" for x in m))


if __name__ == "__main__":
    main()
