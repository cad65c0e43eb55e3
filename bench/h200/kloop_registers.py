#!/usr/bin/env python3
"""What a pipelined one-tile GEMM k-loop keeps in registers, by role (no GPU: compiled on the CPU).

The register estimate (tfx/analysis/register_estimate.py, docs/analysis.md section 6) counts a
GEMM k-loop's accumulator, its mma.sync fragments and 2 registers per 16-byte copy, plus a base
for everything else. This measures that base. It draws 30 configurations at random (seed 16)
from the issue-15 campaigns' non-spilling pipelined gemm_bf16 / gemm_fp8 rows (every distinct
(family, BM, BN, BK, WARPS, STAGES) with STAGES >= 2, spills 0, regs < 255), compiles each with
Triton 3.6.0 for sm_90 at 4096^3 (bench/h200/triton_kernels.py's matmul_kernel as
bench/h200/measure_accuracy.py launches it: bf16 B [K, N], fp8 B [N, K]), and reads nvdisasm's
register live ranges (-plr -lrm narrow) at the instruction of the innermost mma loop where the
most registers are live. Each live register is classified by its next reader in the loop
(cyclically): an mma's accumulator (HMMA C/D, HGMMA/QGMMA D), an mma's A/B operand (the
ldmatrix fragments), a copy's 64-bit global address (LDGSTS [..][Rn.64]) or an integer op whose
result becomes one (the carried per-copy offsets), an ldmatrix / LDGSTS shared address, a
predicate compare (the K mask), other. The rest = cuobjdump's REG - accumulator - fragments -
copy addresses is what the estimate's base stands for. Writes OUTDIR/kloop_registers.csv.

    python3 bench/h200/kloop_registers.py OUTDIR
"""
import collections
import csv
import glob
import os
import random
import re
import statistics
import subprocess
import sys

ONE_STAGE = "--one-stage" in sys.argv
OUT = ([a for a in sys.argv[1:] if a != "--one-stage"] or ["."])[0]
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
os.environ.setdefault("TRITON_CACHE_DIR", "/tmp/tfx_triton_cache_kloop_registers")

import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402
from common import launch_signature, write_rows  # noqa: E402
from triton_kernels import matmul_kernel  # noqa: E402

BIN = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")
KEYS = ("BM", "BN", "BK", "WARPS", "STAGES")
LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?);\s*//\s*\|\s*(\d+)\s?(.*?)\|")
MMA = ("HMMA", "HGMMA", "QGMMA")


def configs(one_stage=False):
    """The distinct pipelined non-spilling configurations of the campaigns, drawn as described
    (``one_stage``: those with STAGES = 1 instead, whose loop loads through registers)."""
    seen = set()
    for path in sorted(glob.glob(os.path.join(ROOT, "calibration/h200/measured/issue15/run*/gemm.csv"))):
        for r in csv.DictReader(open(path)):
            if r["family"] in ("gemm_bf16", "gemm_fp8") and r["status"] == "ok" and r["regs"] \
                    and int(r["spills"] or 0) == 0 and int(r["regs"]) < 255 \
                    and (int(r["STAGES"]) == 1) == one_stage:
                seen.add((r["family"],) + tuple(f"{k}={r[k]}" for k in KEYS))
    random.seed(16)
    return [(c[0],) + tuple(int(x.split("=")[1]) for x in c[1:]) for c in random.sample(sorted(seen), 30)]


def compile_one(fam, bm, bn, bk, w, st, M=4096, N=4096, K=4096):
    fp8 = fam == "gemm_fp8"
    sbk, sbn = (1, K) if fp8 else (N, 1)
    ints = dict(M=M, N=N, K=K, stride_am=K, stride_ak=1, stride_bk=sbk, stride_bn=sbn, stride_cm=N, stride_cn=1)
    t = "*fp8e4nv" if fp8 else "*bf16"
    sig, consts, attrs = launch_signature(matmul_kernel, {"a_ptr": t, "b_ptr": t, "c_ptr": "*bf16"}, ints,
                                          dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8))
    k = triton.compile(ASTSource(fn=matmul_kernel, signature=sig, constexprs=consts, attrs=attrs),
                       target=GPUTarget("cuda", 90, 32), options=dict(num_warps=w, num_stages=st))
    cub = os.path.join(OUT, f"{fam}_{bm}x{bn}x{bk}_w{w}_s{st}.cubin")
    with open(cub, "wb") as f:
        f.write(k.asm["cubin"])
    usage = subprocess.run([f"{BIN}/cuobjdump", "-res-usage", cub], capture_output=True, text=True).stdout
    lr = subprocess.run([f"{BIN}/nvdisasm", "-plr", "-lrm", "narrow", cub], capture_output=True, text=True).stdout
    os.remove(cub)
    return int(re.search(r"REG:(\d+)", usage).group(1)), lr


def instructions(listing):
    """(address, instruction with branch labels resolved, live count, live columns)."""
    out, labels, pending = [], {}, []
    for line in listing.splitlines():
        lm = re.match(r"^(\.L_x_\d+):", line)
        if lm:
            pending.append(lm.group(1))
        m = LINE.search(line)
        if m:
            a = int(m.group(1), 16)
            for p in pending:
                labels[p] = a
            pending = []
            t = re.sub(r"`\((\.L_x_\d+)\)", lambda mm: "0x%x" % labels.get(mm.group(1), 1 << 30), m.group(2).strip())
            out.append((a, re.sub(r"^@!?U?P\w+\s+", "", t), int(m.group(3)), m.group(4)))
    return out


def operands(text):
    """(position, role or None, registers) of each register operand of one instruction."""
    op, _, ops = text.partition(" ")
    res = []
    for i, part in enumerate(p.strip() for p in ops.split(",")):
        for m in re.finditer(r"\bR(\d+)(\.64)?", part):
            r, w, role = int(m.group(1)), 2 if m.group(2) else 1, None
            if op.startswith("HMMA"):
                w = {0: 4, 1: 4, 2: 2, 3: 4}[i] if op.split(".")[1] in ("16816", "16832") else {0: 4, 1: 2, 2: 1, 3: 4}[i]
                role = "accumulator" if i in (0, 3) else "fragment"
            elif op.startswith(("HGMMA", "QGMMA")):
                n = int(re.search(r"64x(\d+)x", op).group(1))
                w, role = (n // 2, "accumulator") if i in (0, 2) else (4, "fragment")
            elif op.startswith("LDSM"):
                w, role = (int(op.split(".")[-1]), "fragment") if i == 0 else (w, "shared address")
            elif op.startswith("LDGSTS"):
                role = "copy address" if m.group(2) else "shared address"
            elif op.startswith("LDG"):
                # a one-stage loop's copy: LDG.E.128 Rd, desc[..][Rn.64]; its destination is written
                w = int(re.search(r"\.(\d+)", op.replace(".E", "")).group(1)) // 32 if i == 0 and re.search(
                    r"\.(64|128)\b", op) else w
                role = "copy address" if m.group(2) else None
            elif op.startswith("STS"):
                # STS [Rs+imm], Rv: the value a one-stage loop's LDG loaded, on its way to shared memory
                if i == 1:
                    w = int(re.search(r"\.(64|128)\b", op).group(1)) // 32 if re.search(r"\.(64|128)\b", op) else 1
                    role = "loaded value"
                else:
                    role = "shared address"
            elif op.startswith("ISETP"):
                role = "mask"
            res.append((i, role, range(r, r + w)))
    return op, res


def classify(body, at):
    """role of each register live at body[at], by its next reader (cyclically)."""
    order = body[at + 1:] + body[:at + 1]
    live = [i for i, c in enumerate(body[at][3]) if c != " "]

    def reader(reg, start, depth):
        for a, t, _, _ in order[start:] + order[:start]:
            op, regs = operands(t)
            hit = [(i, role) for i, role, rr in regs if reg in rr]
            if not hit:
                continue
            writes = any(i == 0 for i, _ in hit) and not op.startswith(MMA + ("LDGSTS", "STS", "STG"))
            reads = [role for i, role in hit if i != 0 or op.startswith(MMA + ("LDGSTS", "STS", "STG"))]
            if not reads:
                return "other" if writes else "other"
            role = reads[0]
            if role is None and depth and op.startswith(("IADD3", "IMAD", "LEA", "VIADD")):
                dst = regs[0][2][0] if regs and regs[0][0] == 0 else None
                k = next(j for j, x in enumerate(order) if x[0] == a)
                nxt = reader(dst, k + 1, depth - 1) if dst is not None else None
                return "copy address" if nxt == "copy address" else "other"
            return role or "other"
        return "other"
    return collections.Counter(reader(r, 0, 3) for r in live)


def loop_peak(ins):
    """(body, index of its most-live instruction) of the innermost backward branch holding an mma."""
    spans = []
    for k, (a, t, _, _) in enumerate(ins):
        m = re.search(r"BRA\s+0x([0-9a-f]+)", t)
        if m and int(m.group(1), 16) < a:
            s = next(j for j, x in enumerate(ins) if x[0] == int(m.group(1), 16))
            if any(x[1].startswith(MMA) for x in ins[s:k + 1]):
                spans.append((s, k))
    s, e = min(spans, key=lambda x: x[1] - x[0])
    body = ins[s:e + 1]
    return body, max(range(len(body)), key=lambda i: body[i][2])


def main():
    os.makedirs(OUT, exist_ok=True)
    rows = []
    for fam, bm, bn, bk, w, st in configs(one_stage=ONE_STAGE):
        reg, listing = compile_one(fam, bm, bn, bk, w, st)
        body, at = loop_peak(instructions(listing))
        c = classify(body, at)
        rest = reg - c["accumulator"] - c["fragment"] - c["copy address"] - c["loaded value"]
        rows.append(dict(family=fam, BM=bm, BN=bn, BK=bk, WARPS=w, STAGES=st, regs=reg, loop_peak_live=body[at][2],
                         accumulator=c["accumulator"], fragment=c["fragment"], copy_address=c["copy address"],
                         loaded_value=c["loaded value"], shared_address=c["shared address"], mask=c["mask"],
                         other=c["other"], rest=rest))
        print(" ".join(f"{k}={v}" for k, v in rows[-1].items()), flush=True)
    write_rows(os.path.join(OUT, "kloop_registers_one_stage.csv" if ONE_STAGE else "kloop_registers.csv"), rows)
    rest = sorted(r["rest"] for r in rows)
    print(f"rest over {len(rest)} loops: {rest}; median {statistics.median(rest)}")


if __name__ == "__main__":
    main()
