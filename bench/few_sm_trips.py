#!/usr/bin/env python3
"""The model's trip against the measured one for the small-M k-loops of calibration/h200/measured/
stream_depth*/ and copy_issue*_s24/ (docs/analysis.md, "The held-out 2-warp 16x128x128 misses are the
GEMM's loop, not the stream"): each row's ns a trip is (t(256 trips) - t(64 trips)) / 192 measured, and
the same difference of two predictions of kernels/gemm.tile at M = BM, N = CTAs x BN, K = 64 x BK and
256 x BK (GROUP_M 1: one tile row, A shared by every CTA, B read by one), each with the row's compiled
registers and shared memory. stream_depth's `pair` / `quad` rows (B tile i read by CTAs i, i + CTAs / n, ...,
n = 2 / 4) are priced at M = n x BM, N = CTAs / n x BN: GROUP_M 1 puts CTA i and i + N / BN on one B tile,
as the kernel's pid % tiles_n does. --rows also prints the implied DRAM part of the round trip,
(S-1) x ns a trip - 122.2 ns of chain - trip bytes / 128.7 B/ns, measured and modelled. Rows that spill are left out (the model prices their local traffic, the
loops' launches do not separate it).

Usage: python3 bench/few_sm_trips.py CSV [VARIANT] [--rows]
  VARIANT: matmul, depth, masked, stepped or own (stream_depth's); default: every variant in the file.
  Prints the median signed and |error| by variant and warps; --rows adds each row, worst first.
  A row whose `dtype` is fp8e4m3 (shallow8_s25) is priced as kernels/gemm_fp8.tile (B stored [N, K]),
  the others as kernels/gemm.tile."""
import csv
import statistics
import sys
from collections import defaultdict

from pathlib import Path

from tfx.analysis.analyze import analyze
from tfx.hw import load_profile
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent
TRIPS = (64, 256)
READERS = {"pair": 2, "quad": 4}      # stream_depth's variants whose B tile n CTAs read a step
CHAIN_NS, PORT_B_NS = 122.2, 128.7    # the load trip's chain and the SM's L2 port (hw_profiles/h200_sxm.toml [pipeline])


def model_trip_ns(module, profile, row) -> float:
    bm, bn, bk, w, s, ctas = (int(row[k]) for k in ("BM", "BN", "BK", "WARPS", "STAGES", "ctas"))
    res = dict(regs=int(row["regs"]), spills=int(row["spills"]), smem=int(row["smem_bytes"]))
    # B read by n CTAs: stream_depth's pair / quad, or coread_s25's `readers` column (with its GROUP_M)
    n = int(row.get("readers") or READERS.get(row.get("variant"), 1))
    g = int(row.get("GROUP_M") or 1)

    def ns(trips):
        a = analyze(module, None, profile, dict(M=bm * n, N=bn * ctas // n, K=bk * trips, BM=bm, BN=bn, BK=bk, WARPS=w,
                                                STAGES=s, GROUP_M=g), resources=res, check=False, l2_clear=True)
        return float(a.metrics["performance.predicted_ns"])
    return (ns(TRIPS[1]) - ns(TRIPS[0])) / (TRIPS[1] - TRIPS[0])


def priced_rows(table, only=None):
    """(row, measured ns a trip, model ns a trip) of each `ok`, non-spilling row of a trip table (of
    variant ``only`` where given), each priced as its ``dtype``'s GEMM (gemm.tile or gemm_fp8.tile)."""
    modules = {"bf16": parse_file(str(ROOT / "kernels" / "gemm.tile")),
               "fp8e4m3": parse_file(str(ROOT / "kernels" / "gemm_fp8.tile"))}
    profile = load_profile("h200_sxm")
    return [(r, float(r["ns_per_trip"]), model_trip_ns(modules[r.get("dtype") or "bf16"], profile, r))
            for r in table if r["status"] == "ok" and not int(r["spills"]) and (not only or r["variant"] == only)]


def main(argv):
    files = [a for a in argv if not a.startswith("--")]
    if not files:
        print("usage: python3 bench/few_sm_trips.py CSV [VARIANT] [--rows]", file=sys.stderr)
        sys.exit(2)
    path, only = files[0], (files[1] if len(files) > 1 else None)
    try:
        table = list(csv.DictReader(open(path)))
    except OSError as e:
        print(f"{path}: cannot read ({e.strerror})", file=sys.stderr)
        sys.exit(2)
    errors, rows = defaultdict(list), []
    for r, measured, model in priced_rows(table, only):
        err = model / measured - 1
        # coread_s25's rows: by readers and GROUP_M too
        label = r["variant"] + (f" n{r['readers']} G{r['GROUP_M']}" if r.get("readers") else "")
        errors[(label, int(r["WARPS"]))].append(err)
        s1, trip = int(r["STAGES"]) - 1, int(r["trip_bytes"])
        dram = "" if "dram_tb_s" not in r else (
            f"  DRAM part {s1 * measured - CHAIN_NS - trip / PORT_B_NS:6.0f} / {s1 * model - CHAIN_NS - trip / PORT_B_NS:6.0f} ns"
            f" at {float(r['dram_tb_s']):.2f} TB/s")
        rows.append((err, f"{label:8s} {r['BM']}x{r['BN']}x{r['BK']} w{r['WARPS']} s{r['STAGES']} "
                          f"{int(r['ctas']):3d} CTAs  measured {measured:8.1f} ns  model {model:8.1f} ns{dram}"))
    for (variant, warps), errs in sorted(errors.items()):
        print(f"{variant:8s} {warps} warps: {len(errs):3d} rows, median {statistics.median(errs) * 100:+.1f}%, "
              f"median |error| {statistics.median(abs(e) for e in errs) * 100:.1f}%")
    if "--rows" in argv:
        for err, text in sorted(rows, key=lambda x: -abs(x[0])):
            print(f"  {text}  {err * 100:+6.1f}%")


if __name__ == "__main__":
    main(sys.argv[1:])
