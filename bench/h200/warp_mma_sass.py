#!/usr/bin/env python3
"""What a warp-mma GEMM k-loop trip issues and keeps in registers (no GPU: compiled on the CPU).

The campaigns' pipelined (STAGES >= 2), non-spilling gemm_bf16 / gemm_fp8 configurations that take
the warp mma (mma.sync: warps not a multiple of 4, or BM not of 64), compiled with Triton 3.6.0 for
sm_90 at 4096^3 as bench/h200/kloop_registers.py compiles them (its `compile_one`, `instructions`,
`loop_peak` and `classify`). Per configuration: cuobjdump's REG, the instructions of the innermost
loop holding the mmas (one warp's trip) and among them HMMA, LDSM, LDGSTS, BAR, F2FP (fp8 -> f16)
and LDS, and the registers live at the loop's peak by their next reader (accumulator, fragment: the
HMMA A/B operands, copy address), as kloop_registers.csv.

Order: the configurations of run25's rows and of every M <= 128 row first, then the rest, each
shuffled with seed 17; the census stops after ``--limit`` configurations (compiling one takes
8-15 s on a loaded 2-core machine). Configurations whose loop has no backward branch around an
HMMA (the walk finds none) are reported on stderr and skipped.

    TRITON_CACHE_DIR=/tmp/tc python3 bench/h200/warp_mma_sass.py OUTDIR [--limit N]
"""
import collections
import csv
import glob
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
os.environ.setdefault("TRITON_CACHE_DIR", "/tmp/tfx_triton_cache_warp_mma_sass")

import kloop_registers as K  # noqa: E402

COLUMNS = ["family", "BM", "BN", "BK", "WARPS", "STAGES", "regs", "loop_instructions", "hmma", "ldsm", "ldgsts",
           "bar", "f2fp", "lds", "loop_peak_live", "accumulator", "fragment", "copy_address"]


def configs():
    """The warp-mma configurations of the campaigns, in the census order (module docstring)."""
    seen, first = {}, []
    for path in sorted(glob.glob(os.path.join(ROOT, "calibration/h200/measured/issue15/run*/gemm.csv"))):
        for r in csv.DictReader(open(path)):
            if r["family"] not in ("gemm_bf16", "gemm_fp8") or r["status"] != "ok" or not r["regs"] \
                    or int(r["spills"] or 0) or int(r["STAGES"]) < 2:
                continue
            bm, bn, bk, w, s = (int(r[k]) for k in ("BM", "BN", "BK", "WARPS", "STAGES"))
            if w % 4 == 0 and bm % 64 == 0:
                continue                 # the warpgroup mma
            key = (r["family"], bm, bn, bk, w, s)
            seen[key] = 1
            if "run25" in path or int(r["M"]) <= 128:
                first.append(key)
    keys = list(dict.fromkeys(first))
    random.seed(17)
    random.shuffle(keys)
    chosen = set(keys)
    rest = [k for k in seen if k not in chosen]
    random.shuffle(rest)
    return keys + rest


def main():
    out = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("--") else "."
    limit = int(sys.argv[sys.argv.index("--limit") + 1]) if "--limit" in sys.argv else None
    os.makedirs(out, exist_ok=True)
    K.OUT = out
    with open(os.path.join(out, "warp_mma_sass.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        done = 0
        for fam, bm, bn, bk, warps, stages in configs():
            if limit is not None and done >= limit:
                break
            try:
                reg, listing = K.compile_one(fam, bm, bn, bk, warps, stages)
                body, at = K.loop_peak(K.instructions(listing))
            except ValueError as e:
                print(f"skipped {fam} {bm}x{bn}x{bk} w{warps} s{stages}: {e}", file=sys.stderr, flush=True)
                continue
            ops = collections.Counter(t.split(" ")[0].split(".")[0] for _, t, _, _ in body)
            c = K.classify(body, at)
            w.writerow([fam, bm, bn, bk, warps, stages, reg, len(body), ops["HMMA"], ops["LDSM"], ops["LDGSTS"],
                        ops["BAR"], ops["F2FP"], ops["LDS"], body[at][2], c["accumulator"], c["fragment"],
                        c["copy address"]])
            f.flush()
            done += 1
            print(f"{done}: {fam} {bm}x{bn}x{bk} w{warps} s{stages} REG {reg}, {len(body)} instructions a trip",
                  flush=True)


if __name__ == "__main__":
    main()
