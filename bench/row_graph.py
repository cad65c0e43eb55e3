"""The small-N row shapes re-timed by do_bench and in a CUDA graph (calibration/h200/measured/row_graph,
bench/h200/measure_row_graph.py) against the model: per shape, how far do_bench's orders agree
with themselves and with the graph's (the ceiling any kernel-time model can reach against
do_bench), and the model's Spearman and top-pick regret against each timing.

    python3 bench/row_graph.py
"""

from __future__ import annotations

import csv
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tfx.analysis.measured import Predictor, read_measurements, spearman  # noqa: E402

DATA = ROOT / "calibration" / "h200" / "measured" / "row_graph" / "times.csv"


def regret(pred, meas):
    """measured time of the configuration ranked first over the best measured, minus one"""
    return meas[min(range(len(pred)), key=pred.__getitem__)] / min(meas) - 1


def load():
    """{(run, family, shape): [dict(config, measured, bench1, bench2, graph1, graph2, predicted)]}"""
    with open(DATA) as f:
        rows = list(csv.DictReader(f))
    cfg = {}
    for r in rows:
        key = (r["run"], r["family"], r["shape"], int(r["BLOCK_M"]), int(r["WARPS"]))
        c = cfg.setdefault(key, {"measured": float(r["measured_ms"]) * 1e3, "regs": r["regs"]})
        c[f"bench{r['pass']}"] = float(r["bench_ms"]) * 1e3
        c[f"graph{r['pass']}"] = float(r["graph_ms"]) * 1e3
    text = ["kernel,profile,measured_ms,M,N,BLOCK_M,WARPS,regs,spills,family,shape,status"]
    keys = list(cfg)
    for run, fam, shape, bm, w in keys:
        m, n = shape.split("x")
        text.append(f"kernels/{fam}.tile,h200_sxm,{cfg[(run, fam, shape, bm, w)]['measured'] / 1e3},{m},{n},{bm},{w},"
                    f"{cfg[(run, fam, shape, bm, w)]['regs']},0,{fam},{shape},ok")
    measured = read_measurements(DATA.parent / "rows.csv", text="\n".join(text) + "\n")
    for key, c in zip(keys, Predictor("h200_sxm").compare(measured)):
        cfg[key]["predicted"] = c.predicted_ms * 1e3
    out = {}
    for key, c in cfg.items():
        out.setdefault(key[:3], []).append(dict(c, BLOCK_M=key[3], WARPS=key[4]))
    return out


def main():
    groups = load()
    print(f"{'shape':<28} {'n':>2}  {'Spearman of timings':^33}  {'model Spearman vs':^26}  {'model regret vs':^20}")
    print(f"{'':<28} {'':>2}  {'bench1:2':>8} {'graph1:2':>8} {'bench:graph':>11}  {'campaign':>8} {'bench':>8} "
          f"{'graph':>8}  {'campaign':>8} {'graph':>8}")
    for (run, fam, shape), cs in groups.items():
        if any("bench2" not in c or "graph2" not in c for c in cs):
            continue
        b = [(c["bench1"] + c["bench2"]) / 2 for c in cs]
        g = [(c["graph1"] + c["graph2"]) / 2 for c in cs]
        p = [c["predicted"] for c in cs]
        meas = [c["measured"] for c in cs]
        print(f"{fam} {shape} ({run})".ljust(28) + f" {len(cs):>2}  "
              f"{spearman([c['bench1'] for c in cs], [c['bench2'] for c in cs]):>8.2f} "
              f"{spearman([c['graph1'] for c in cs], [c['graph2'] for c in cs]):>8.2f} "
              f"{spearman(b, g):>11.2f}  {spearman(p, meas):>8.2f} {spearman(p, b):>8.2f} {spearman(p, g):>8.2f}  "
              f"{regret(p, meas) * 100:>7.1f}% {regret(p, g) * 100:>7.1f}%")
    print("\nper configuration (us): campaign do_bench, this run's do_bench (two passes), graph (two passes), predicted")
    for (run, fam, shape), cs in groups.items():
        print(f"  {fam} {shape} ({run})")
        for c in sorted(cs, key=lambda c: c.get("graph1", 0)):
            print(f"    BM={c['BLOCK_M']:>2} W={c['WARPS']:>2}  {c['measured']:7.2f}  {c.get('bench1', 0):7.2f} "
                  f"{c.get('bench2', 0):7.2f}  {c.get('graph1', 0):7.2f} {c.get('graph2', 0):7.2f}  {c['predicted']:7.2f}"
                  f"  (graph + 3 us: {(c['predicted'] / (c.get('graph1', 0) + 3) - 1) * 100:+5.1f}%)")


if __name__ == "__main__":
    main()
