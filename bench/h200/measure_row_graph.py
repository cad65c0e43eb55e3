"""Re-time the small-N row-kernel shapes of issue 15 two ways: triton's do_bench (the campaigns'
measured_ms: L2 cleared before each call, the host launching every call) and inside a CUDA graph
(measure_accuracy.graph_ms: the host's launch cost gone), each twice in two passes over all the
configurations, to tell which differences between configurations are the kernels' and which are
the timing's noise (issue 15, session 9, rowsN9).

The configurations are the non-spilling rows that runs 1-9 measured on the shapes that miss a
ranking target at N <= 4096 (development shapes only: nothing of ACC_SHAPE_SET=alt7), with the
same kernels, launches and buffers as bench/h200/measure_accuracy.py (imported from it).

    PYTHONUNBUFFERED=1 python3 bench/h200/measure_row_graph.py OUTDIR

Writes OUTDIR/times.csv (one row per configuration and pass: measured_ms the campaign's do_bench
time, bench_ms this pass's do_bench median, graph_ms its graph time, ms) and OUTDIR/log.txt.
"""

from __future__ import annotations

import csv
import os
import sys
from pathlib import Path

os.environ.setdefault("ACC_DEADLINE_S", "100")
import measure_accuracy as acc  # noqa: E402  (bench/h200 is sys.path[0] when run as a script)

ROOT = Path(__file__).resolve().parent.parent.parent
ISSUE15 = ROOT / "calibration" / "h200" / "measured" / "issue15"
# (run, family, shape): the shapes at N <= 4096 that miss Spearman 0.85 or regret 10% at session 9's start
SHAPES = [("run9", "rmsnorm", "4096x1024"), ("run8", "rmsnorm", "8192x1024"), ("run7", "rmsnorm", "16384x4096"),
          ("run7", "rmsnorm", "4096x2048"), ("run7", "softmax", "4096x2048"), ("run8", "softmax", "8192x1024")]
DEADLINE_S = float(os.environ.get("ROWGRAPH_DEADLINE_S", "105"))
COLS = ["run", "family", "shape", "M", "N", "BLOCK_M", "WARPS", "regs", "spills", "measured_ms",
        "pass", "bench_ms", "graph_ms"]


def jobs():
    out = []
    for run, fam, shape in SHAPES:
        with open(ISSUE15 / run / "rows.csv") as f:
            for r in csv.DictReader(f):
                if r["family"] != fam or r["shape"] != shape or r["status"] != "ok" or int(r["spills"] or 0):
                    continue
                p = dict(M=int(r["M"]), N=int(r["N"]), BLOCK_M=int(r["BLOCK_M"]), WARPS=int(r["WARPS"]))
                job = ("rows.csv", fam, f"kernels/{fam}.tile", "rowgraph", 0, shape, p)
                out.append((run, r, job))
    return out


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "row_graph_out"
    acc.RUN.open(out_dir, "log.txt")
    acc.env_report()
    todo = jobs()
    acc.log(f"{len(todo)} configurations on {len(SHAPES)} shapes")
    ok, errs = acc.precompile([j for _, _, j in todo], min(60.0, DEADLINE_S / 2))
    table = acc.RUN.csv("times.csv", COLS)
    done = 0
    for pas in (1, 2):
        by_shape = {}
        for item in todo:
            by_shape.setdefault((item[0], item[2][1], item[2][5]), []).append(item)
        for (run, fam, shape), group in by_shape.items():
            if acc.elapsed() > DEADLINE_S:
                break
            bufs = acc.make_bufs(group[0][2])
            for run_, r, j in group:
                if acc.elapsed() > DEADLINE_S:
                    break
                key = acc.compile_key(j)
                if key in errs or (ok and key not in ok):
                    continue
                fn = lambda: acc.launch(j, bufs)  # noqa: E731
                b = acc.bench(fn)
                g = acc.graph_ms(fn)
                done += 1
                table.row(run=run_, family=fam, shape=shape, **j[6], regs=r["regs"], spills=r["spills"],
                          measured_ms=float(r["measured_ms"]), bench_ms=b, graph_ms=g, **{"pass": pas})
                acc.log(f"  pass {pas} {fam} {shape} BM={j[6]['BLOCK_M']} W={j[6]['WARPS']}: "
                        f"do_bench {b * 1e3:.2f} us, graph {g * 1e3:.2f} us (campaign {float(r['measured_ms']) * 1e3:.2f})")
            bufs = None
            acc.torch.cuda.empty_cache()
    acc.log(f"{done} timings, total {acc.elapsed():.0f}s")
    acc.RUN.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
