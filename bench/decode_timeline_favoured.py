#!/usr/bin/env python3
"""The favoured SMs of the decode timelines (tfx.analysis.favoured_tail's source).

Usage: python3 bench/decode_timeline_favoured.py [DIR ...]
(default: calibration/h200/measured/decode_timeline_s14, _s17, _s20)

For each launch (timeline_*.csv of bench/h200/measure_decode_timeline.py: bh, sp, smid,
t_start_ns, t_loop_ns, t_end_ns): r (the first wave's CTAs on the busiest SM), the SMs whose
first wave (the CTAs that start in the first 5 us) ends before 0.9 x the median SM's end and
that run all r of them (an SM with a CTA fewer ends early for that alone), each SM's first-wave
DRAM rate (its CTAs' K and V bytes, SKV / SPLITS x D x 2 B x 2, over its last first-wave end),
the favoured SMs' median rate over the others' (kappa), their first-wave end over the others',
the tail CTAs each favoured SM takes, and the launch's end.
"""
import csv
import glob
import os
import re
import statistics as st
import sys
from collections import defaultdict

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "calibration", "h200", "measured")
DIRS = [os.path.join(ROOT, d) for d in ("decode_timeline_s14", "decode_timeline_s17", "decode_timeline_s20")]
NAME = re.compile(r"b(\d+)(?:_hq(\d+))?_skv(\d+)_sp(\d+)_n(\d+)_w(\d+)_s(\d+)")
FIRST_NS = 5000


def launch(path):
    m = NAME.search(os.path.basename(path))
    _, _, skv, sp, _, _, _ = m.groups()
    cta_bytes = int(skv) // int(sp) * 128 * 2 * 2
    rows = [{k: int(v) for k, v in r.items()} for r in csv.DictReader(open(path))]
    first = defaultdict(list)
    tail = defaultdict(int)
    for r in rows:
        if r["t_start_ns"] < FIRST_NS:
            first[r["smid"]].append(r)
        else:
            tail[r["smid"]] += 1
    r_max = max(len(v) for v in first.values())
    end = {s: max(r["t_end_ns"] for r in v) for s, v in first.items()}
    med = st.median(end.values())
    fav = sorted(s for s in first if end[s] < 0.9 * med and len(first[s]) == r_max)
    oth = [s for s in first if s not in fav and len(first[s]) == r_max]
    rate = {s: len(first[s]) * cta_bytes / end[s] for s in first}
    out = dict(launch=os.path.basename(path)[9:-4], r=r_max, favoured=len(fav),
               makespan_us=max(r["t_end_ns"] for r in rows) / 1e3)
    if fav:
        a, b = st.median(rate[s] for s in fav), st.median(rate[s] for s in oth)
        out.update(kappa=a / b, end_ratio=st.median(end[s] for s in fav) / st.median(end[s] for s in oth),
                   rate_fav=a, rate_other=b, tail_each=st.median(tail[s] for s in fav), smids=fav)
    return out


def main():
    dirs = sys.argv[1:] or DIRS
    kappas = []     # (favoured SMs, kappa) of each launch that has them
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(d, "timeline_*.csv"))):
            o = launch(path)
            if o["favoured"]:
                kappas.append((o["favoured"], o["kappa"]))
                print(f"{o['launch']:45s} r {o['r']}  {o['favoured']:3d} favoured SMs  rate {o['rate_fav']:.1f} / "
                      f"{o['rate_other']:.1f} B/ns = {o['kappa']:.3f}  first-wave end {o['end_ratio']:.3f} of the "
                      f"others'  {o['tail_each']:g} tail CTAs each  end {o['makespan_us']:.1f} us")
            else:
                print(f"{o['launch']:45s} r {o['r']}  no favoured SMs  end {o['makespan_us']:.1f} us")
    if kappas:
        # the launches whose favoured SMs are the modal count (a lone early SM is not a GPC's)
        n = st.mode(f for f, _ in kappas)
        ks = [k for f, k in kappas if f == n]
        print(f"kappa over the {len(ks)} launches with {n} favoured SMs: median {st.median(ks):.3f}, "
              f"{min(ks):.3f}-{max(ks):.3f}; an other SM's rate over a favoured one's (1 / kappa): median "
              f"{st.median(1 / k for k in ks):.3f}")


if __name__ == "__main__":
    main()
