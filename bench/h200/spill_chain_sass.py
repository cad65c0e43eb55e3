#!/usr/bin/env python3
"""The local-load wait chain of Triton's 32-register spilling GEMM k-loops (SASS, sm_90, no GPU).

Usage (pip install triton==3.6.0, the version of the issue-15 runs):
    python3 bench/h200/spill_chain_sass.py OUTDIR

Compiles bench/h200/triton_kernels.py's matmul_kernel on the CPU (bench/h200/measure_spill_sass.py's
`compile_cpu`: Triton's own ptxas for sm_90, the JIT's specialization given by hand) at every
2-warp configuration of calibration/h200/measured/issue15/run*/gemm.csv that ptxas compiled to
32 registers, checks REG / STACK against the measured regs / spills, and walks each k-loop body
(the backward branch holding the HMMAs) in issue order with bench/h200/spill_sass_waits.py's
`waits`: an LDL's registers are pending until an instruction reads or overwrites one of them,
which waits for it and every earlier LDL. Per kernel: the HMMAs and LDL a trip, the waits a trip
and their median distance (instructions between the load and its first use).

Also the share of those waits that cover a load of a word last stored in an earlier trip (or
before the loop): walking the body in order, a local word is "near" once the trip has stored it;
a wait is far when any load it waits for read a word not yet stored in the trip.

Writes chain.csv (one row a kernel), log.txt and sass.tar.gz (each kernel's k-loop body).
No kernel is run or timed.

    python3 bench/h200/spill_chain_sass.py --tar calibration/h200/measured/spill_chain/sass.tar.gz
recomputes the wait columns of chain.csv from the stored loop bodies (prints the CSV).
"""
import csv
import io
import os
import re
import statistics
import sys
import tarfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
if "--cpu" not in sys.argv:
    sys.argv.append("--cpu")                                  # measure_spill_sass.worker reads it

import measure_spill_sass as mss                              # noqa: E402
import spill_sass_waits as ssw                                # noqa: E402

# (family, M, N, K, BM, BN, BK, STAGES, GROUP_M, layout, measured regs, measured spills): every
# distinct 2-warp configuration of issue15/run1..run7/gemm.csv compiled to 32 registers
CONFIGS = [
    ("gemm_bf16", 128, 4096, 4096, 128, 128, 64, 1, 8, "kn", 32, 1660),
    ("gemm_bf16", 1024, 14336, 4096, 256, 64, 32, 1, 1, "kn", 32, 924),
    ("gemm_bf16", 3072, 3072, 3072, 128, 128, 128, 1, 8, "kn", 32, 2936),
    ("gemm_bf16", 6144, 6144, 6144, 128, 256, 128, 1, 1, "kn", 32, 6076),
    ("gemm_bf16", 1536, 1536, 1536, 256, 128, 64, 1, 1, "kn", 32, 3368),
    ("gemm_bf16", 4096, 14336, 4096, 64, 256, 128, 1, 1, "kn", 32, 3094),
    ("gemm_bf16", 2560, 2560, 2560, 256, 128, 128, 1, 8, "kn", 32, 6310),
    ("gemm_bf16", 2560, 2560, 2560, 128, 256, 32, 1, 8, "kn", 32, 2040),
    ("gemm_fp8", 2048, 2048, 2048, 64, 256, 128, 1, 1, "nk", 32, 2580),
    ("gemm_fp8", 4096, 4096, 4096, 128, 256, 64, 1, 8, "nk", 32, 2850),
    ("gemm_fp8", 4096, 8192, 4096, 128, 128, 64, 1, 1, "nk", 32, 1268),
    ("gemm_fp8", 4096, 8192, 4096, 256, 64, 128, 1, 8, "nk", 32, 2330),
    ("gemm_fp8_kn", 4096, 4096, 4096, 128, 256, 64, 1, 8, "kn", 32, 3042),
]


ADDR = re.compile(r"\[R1(?:\+(0x[0-9a-f]+))?\]")


def far_waits(parsed):
    """(waits, far waits) of a loop body: a wait is far when a load it covers read a local word
    the trip has not stored yet (stored in an earlier trip, or before the loop)."""
    stored, pending = set(), []
    waits = far = 0
    for i, (op, ops) in enumerate(parsed):
        touched = ssw.read(op, ops) | ssw.written(op, ops)
        hit = [k for k, (_, rs, _) in enumerate(pending) if rs & touched]
        if hit:
            last = max(hit)
            waits += 1
            far += any(f for _, _, f in pending[:last + 1])
            pending = pending[last + 1:]
        if op.startswith(("LDL", "STL")):
            m = ADDR.search(" ".join(ops))
            off = int(m.group(1) or "0", 16) if m else None
            if op.startswith("LDL"):
                pending.append((i, ssw.written(op, ops), off not in stored))
            else:
                stored.add(off)
    return waits, far


def from_tar(path):
    """chain.csv's wait columns recomputed from a sass.tar.gz of loop bodies (stdout)."""
    out = csv.writer(sys.stdout)
    out.writerow(["kernel", "loop_HMMA", "loop_LDL", "LDL_waits", "waits_per_HMMA", "far_waits", "far_wait_share"])
    with tarfile.open(path) as tar:
        for member in sorted(tar.getmembers(), key=lambda m: m.name):
            text = tar.extractfile(member).read().decode()
            parsed = [p for p in (ssw.parse(ln) for ln in io.StringIO(text)) if p]
            hmma = sum(op.startswith("HMMA") for op, _ in parsed)
            waits, far = far_waits(parsed)
            out.writerow([member.name[:-len(".loop.sass")], hmma, sum(op.startswith("LDL") for op, _ in parsed),
                          waits, round(waits / max(hmma, 1), 3), far, round(far / max(waits, 1), 3)])
    return 0


def main():
    if "--tar" in sys.argv:
        return from_tar(sys.argv[sys.argv.index("--tar") + 1])
    out = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("--") else "."
    os.makedirs(out, exist_ok=True)
    only = os.environ.get("CHAIN_ONLY")
    log = open(os.path.join(out, "log.txt"), "w")
    tar = tarfile.open(os.path.join(out, "sass.tar.gz"), "w:gz")
    rows = []
    for c in CONFIGS:
        name = mss.name_of(c)
        if only and only not in name:
            continue
        t = time.time()
        row, _sass, body, _ttgir = mss.worker(c)
        if row.get("error"):
            print(name, row["error"], file=log, flush=True)
            continue
        parsed = [p for p in (ssw.parse(ln) for ln in body.splitlines()) if p]
        ldl = ssw.waits(parsed, "LDL")
        rec = dict(kernel=name, regs_measured=c[10], spills_measured=c[11], n_regs=row["n_regs"],
                   n_spills=row["n_spills"], mma_warps=row["mma_warps"], loop_insns=len(parsed),
                   loop_HMMA=row["loop_HMMA"], loop_LDL=row["loop_LDL_n"], loop_LDL_bytes=row["loop_LDL_bytes"],
                   loop_STL=row["loop_STL_n"], loop_STL_bytes=row["loop_STL_bytes"], LDL_waits=len(ldl),
                   LDL_median_distance=statistics.median(ldl) if ldl else "",
                   waits_per_HMMA=round(len(ldl) / max(row["loop_HMMA"], 1), 3),
                   far_waits=far_waits(parsed)[1], far_wait_share=round(far_waits(parsed)[1] / max(len(ldl), 1), 3),
                   compile_s=round(time.time() - t, 1))
        print(rec, file=log, flush=True)
        rows.append(rec)
        p = os.path.join("/tmp", name + ".loop.sass")
        with open(p, "w") as f:
            f.write(body)
        tar.add(p, arcname=name + ".loop.sass")
    tar.close()
    if rows:
        with open(os.path.join(out, "chain.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
