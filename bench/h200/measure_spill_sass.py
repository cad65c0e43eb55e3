#!/usr/bin/env python3
"""Where a spilling 2-warp Triton GEMM touches local memory: LDL/STL in and out of its k-loop.

Usage (on the device machine):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_spill_sass.py OUTDIR
or without a GPU (pip install triton==3.6.0, the version of the issue-15 runs; its own ptxas
and cuobjdump compile for sm_90):
    python3 bench/h200/measure_spill_sass.py OUTDIR --cpu
The --cpu path gives the JIT's specialization by hand (pointers and the multiples of 16 get
tt.divisibility 16, the unit strides are the constant 1), as tools/compile.py does; its
registers and spills are cuobjdump -res-usage's REG and STACK / 4.

No kernel is timed. The script compiles bench/h200/triton_kernels.py's matmul_kernel (the
kernel of the issue-15 gemm rows, launched as bench/h200/measure_accuracy.py launches it) at
the 2-warp configurations of calibration/h200/measured/issue15/run*/gemm.csv that spilled
(family gemm_bf16, WARPS 2, spills > 0) and at fp8 ones for comparison, dumps each
kernel's SASS with Triton's own cuobjdump and counts, inside the k-loop body (the span of
the backward branch that holds the HMMAs) and outside it: LDL and STL by width, HMMA,
LDSM. Per loop trip (one BK deep k-tile) those are the local-memory instructions a thread
issues; the HMMA count over (warp_m/16)(warp_n/8) gives the k-steps a trip runs.

Writes spill_sass.csv (one row per kernel), log.txt and sass.tar.gz (each kernel's full
SASS and its k-loop body).
"""
import contextlib
import csv
import multiprocessing as mp
import os
import re
import subprocess
import sys
import tempfile
import tarfile
import time

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
os.environ.setdefault("TRITON_CACHE_DIR", "/tmp/tfx_triton_cache_spill_sass")

# (family, M, N, K, BM, BN, BK, STAGES, GROUP_M, layout, measured regs, measured spills)
CONFIGS = [
    ("gemm_bf16", 4096, 4096, 4096, 128, 256, 128, 2, 8, "kn", 255, 1782),
    ("gemm_bf16", 4096, 4096, 4096, 256, 64, 32, 4, 8, "kn", 255, 194),
    ("gemm_bf16", 4096, 4096, 4096, 128, 64, 128, 3, 8, "kn", 255, 30),
    ("gemm_bf16", 2048, 2048, 2048, 64, 256, 32, 4, 1, "kn", 255, 108),
    ("gemm_bf16", 2048, 2048, 2048, 256, 32, 64, 1, 8, "kn", 255, 68),
    ("gemm_bf16", 128, 4096, 4096, 128, 128, 64, 1, 8, "kn", 32, 1660),
    ("gemm_bf16", 4096, 4096, 4096, 64, 256, 32, 1, 8, "kn", 255, 96),
    ("gemm_bf16", 4096, 4096, 4096, 128, 128, 64, 5, 1, "kn", 255, 312),
    ("gemm_bf16", 1024, 14336, 4096, 256, 64, 32, 1, 1, "kn", 32, 924),
    ("gemm_bf16", 1024, 14336, 4096, 128, 128, 32, 3, 1, "kn", 255, 150),
    ("gemm_bf16", 128, 4096, 4096, 64, 256, 64, 3, 8, "kn", 255, 448),
    ("gemm_fp8", 4096, 4096, 4096, 128, 256, 128, 4, 8, "nk", 255, 1560),
    ("gemm_fp8", 2048, 2048, 2048, 64, 256, 64, 5, 1, "nk", 255, 300),
    ("gemm_fp8", 2048, 2048, 2048, 256, 64, 128, 3, 1, "nk", 255, 624),
]
WARPS = 2
INSN = re.compile(r"\s+/\*([0-9a-f]{4,})\*/\s+(.*)")


def name_of(c):
    fam, M, N, K, bm, bn, bk, st, g, lay = c[:10]
    return f"{fam}_{M}x{N}x{K}_{bm}x{bn}x{bk}_s{st}_g{g}_{lay}"


def loop_span(lines):
    """(start, end) offsets of the k-loop: the backward branch whose span holds the most HMMAs."""
    best, best_n = None, -1
    for at, text in lines:
        mb = re.search(r"\bBRA\b.*?(0x[0-9a-f]+)", text)
        if mb and int(mb.group(1), 16) < at:
            lo = int(mb.group(1), 16)
            n = sum(1 for a, t in lines if lo <= a <= at and "HMMA" in t)
            if n > best_n:
                best, best_n = (lo, at), n
    return best


def counts(lines, inside):
    c = {}
    for at, text in lines:
        if inside(at):
            op = re.sub(r"^@!?U?P\w+\s+", "", text).split()[0] if text.strip() else ""
            for kind in ("LDL", "STL"):
                if op.startswith(kind):
                    width = {"": 4, ".64": 8, ".128": 16}.get(op[len(kind):].replace(".LU", ""), 4)
                    c[kind + "_n"] = c.get(kind + "_n", 0) + 1
                    c[kind + "_bytes"] = c.get(kind + "_bytes", 0) + width
            if op.startswith("HMMA"):
                c["HMMA"] = c.get("HMMA", 0) + 1
            if op.startswith("LDSM"):
                c["LDSM"] = c.get("LDSM", 0) + 1
            c["insns"] = c.get("insns", 0) + 1
    return c


def compile_cpu(c):
    """The kernel compiled for sm_90 with no GPU: (asm, regs, spills, shared)."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from common import launch_signature
    from triton_kernels import matmul_kernel
    fam, M, N, K, bm, bn, bk, st, g, lay = c[:10]
    ptr = "*fp8e4nv" if fam.startswith("gemm_fp8") else "*bf16"
    sbk, sbn = (N, 1) if lay == "kn" else (1, K)
    ints = dict(M=M, N=N, K=K, stride_am=K, stride_ak=1, stride_bk=sbk, stride_bn=sbn, stride_cm=N, stride_cn=1)
    sig, consts, attrs = launch_signature(matmul_kernel, {"a_ptr": ptr, "b_ptr": ptr, "c_ptr": "*bf16"}, ints,
                                          dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=g))
    k = triton.compile(ASTSource(fn=matmul_kernel, signature=sig, constexprs=consts, attrs=attrs),
                       target=GPUTarget("cuda", 90, 32), options=dict(num_warps=WARPS, num_stages=st))
    cub = os.path.join("/tmp", name_of(c) + ".cubin")
    with open(cub, "wb") as f:
        f.write(k.asm["cubin"])
    usage = subprocess.run([cuobjdump_path(), "-res-usage", cub], capture_output=True, text=True, timeout=60).stdout
    regs = int(re.search(r"REG:(\d+)", usage).group(1))
    stack = int(re.search(r"STACK:(\d+)", usage).group(1))
    return k.asm, regs, stack // 4, k.metadata.shared


def disassemble_cpu(c, warps, hex_bits=False):
    """``c`` compiled on the CPU at ``warps`` warps and disassembled (nvdisasm, with each instruction's
    control bits where ``hex_bits``): (regs, spills, SASS text); the cubin is removed. Raises what
    ``compile_cpu`` raises (out of shared memory, ...)."""
    global WARPS
    WARPS = warps
    _, regs, spills, _ = compile_cpu(c)
    cub = os.path.join("/tmp", name_of(c) + ".cubin")
    sass = nvdisasm(cub, hex_bits)
    os.remove(cub)
    return regs, spills, sass


@contextlib.contextmanager
def cubin_file(cubin: bytes):
    """A compiled kernel's cubin (``CompiledKernel.asm["cubin"]``) as a temporary file for the CUDA tools that read
    one (nvdisasm, cuobjdump), removed on the way out."""
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
        f.write(cubin)
        path = f.name
    try:
        yield path
    finally:
        os.remove(path)


def nvdisasm(cubin_path, hex_bits=False) -> str:
    """The SASS text of a cubin by Triton's own nvdisasm (``-c``: the code sections; each
    instruction's control bits too where ``hex_bits``)."""
    tool = cuobjdump_path().replace("cuobjdump", "nvdisasm")
    return subprocess.run([tool, "-c", *(["-hex"] if hex_bits else []), cubin_path], capture_output=True, text=True,
                          timeout=120).stdout


def cuobjdump_path():
    import triton
    tool = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
    return tool if os.path.exists(tool) else "cuobjdump"


def local_touches(lines, inside):
    """Words loaded and stored per local address ([R1+off]) inside the span."""
    ld, st = {}, {}
    for at, text in lines:
        if not inside(at):
            continue
        op = re.sub(r"^@!?U?P\w+\s+", "", text).split()[0]
        if op[:3] in ("LDL", "STL"):
            words = {"": 1, ".64": 2, ".128": 4}.get(op[3:].replace(".LU", ""), 1)
            mm = re.search(r"\[R1(?:\+(0x[0-9a-f]+))?\]", text)
            base = int(mm.group(1) or "0", 16) if mm else -1
            for j in range(words):
                d = ld if op.startswith("LDL") else st
                d[base + 4 * j] = d.get(base + 4 * j, 0) + 1
    return ld, st


def compile_gpu(c):
    """The kernel compiled as measure_accuracy.py's launch compiles it: (asm, regs, spills, shared)."""
    import torch
    from triton_kernels import matmul_kernel
    fam, M, N, K, bm, bn, bk, st, g, lay = c[:10]
    dt = torch.float8_e4m3fn if fam.startswith("gemm_fp8") else torch.bfloat16
    A = torch.empty(64, device="cuda", dtype=dt)
    B = torch.empty(64, device="cuda", dtype=dt)
    C = torch.empty(64, device="cuda", dtype=torch.bfloat16)
    sbk, sbn = (N, 1) if lay == "kn" else (1, K)
    grid = (((M + bm - 1) // bm) * ((N + bn - 1) // bn),)
    k = matmul_kernel.warmup(A, B, C, M, N, K, K, 1, sbk, sbn, N, 1, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                             GROUP_M=g, num_warps=WARPS, num_stages=st, grid=grid)
    k._init_handles()
    return k.asm, k.n_regs, k.n_spills, k.metadata.shared


def worker(c):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    fam, M, N, K, bm, bn, bk, st, g, lay, regs_meas, spills_meas = c
    name = name_of(c)
    t = time.time()
    try:
        if "--cpu" in sys.argv:
            asm, n_regs, n_spills, shared = compile_cpu(c)
        else:
            asm, n_regs, n_spills, shared = compile_gpu(c)
        cub = os.path.join("/tmp", name + ".cubin")
        with open(cub, "wb") as f:
            f.write(asm["cubin"])
        sass = subprocess.run([cuobjdump_path(), "-sass", cub], capture_output=True, text=True, timeout=120).stdout
        ttgir = asm.get("ttgir", "")
        wpc = re.search(r"warpsPerCTA = \[(\d+), (\d+)\]", ttgir[ttgir.find("nvidia_mma"):] if "nvidia_mma" in ttgir else ttgir)
        lines = []
        for ln in sass.splitlines():
            m = INSN.match(ln)
            if m:
                lines.append((int(m.group(1), 16), m.group(2).split(";")[0].strip()))
        span = loop_span(lines)
        lo, hi = span if span else (1, 0)
        ins = counts(lines, lambda a: lo <= a <= hi)
        outs = counts(lines, lambda a: not (lo <= a <= hi))
        ld, stw = local_touches(lines, lambda a: lo <= a <= hi)
        body = "\n".join(f"/*{a:04x}*/ {t}" for a, t in lines if lo <= a <= hi)
        row = dict(kernel=name, family=fam, M=M, N=N, K=K, BM=bm, BN=bn, BK=bk, WARPS=WARPS, STAGES=st,
                   GROUP_M=g, layout=lay, regs_measured=regs_meas, spills_measured=spills_meas,
                   n_regs=n_regs, n_spills=n_spills, shared=shared,
                   mma_warps=("%sx%s" % wpc.groups()) if wpc else "",
                   loop_lo=f"{lo:#x}", loop_hi=f"{hi:#x}",
                   **{"loop_" + key: ins.get(key, 0) for key in
                      ("insns", "HMMA", "LDSM", "LDL_n", "LDL_bytes", "STL_n", "STL_bytes")},
                   **{"out_" + key: outs.get(key, 0) for key in
                      ("insns", "HMMA", "LDSM", "LDL_n", "LDL_bytes", "STL_n", "STL_bytes")},
                   loop_LDL_words_distinct=len(ld), loop_STL_words_distinct=len(stw),
                   loop_load_only_words=len(set(ld) - set(stw)),
                   loop_reloads_beyond_once=sum(ld.values()) - len(ld),
                   compile_s=round(time.time() - t, 1), error="")
        return row, sass, body, ttgir
    except Exception as exc:  # noqa: BLE001
        return dict(kernel=name, error=repr(exc)[:400]), "", "", ""


def main():
    os.makedirs(OUT, exist_ok=True)
    logf = open(os.path.join(OUT, "log.txt"), "w")

    def log(*a):
        s = " ".join(str(x) for x in a)
        print(s, flush=True)
        logf.write(s + "\n")
        logf.flush()
    import triton
    if "--cpu" in sys.argv:
        log("triton", triton.__version__, "compiled for sm_90 without a GPU (--cpu)")
    else:
        import torch
        log("torch", torch.__version__, "triton", triton.__version__, "gpu", torch.cuda.get_device_name(0))
    t0 = time.time()
    rows = []
    tar = tarfile.open(os.path.join(OUT, "sass.tar.gz"), "w:gz")
    budget = float(os.environ.get("SASS_BUDGET_S", "120"))
    with mp.get_context("spawn").Pool(min(len(CONFIGS), max(1, (os.cpu_count() or 4) - 2))) as pool:
        it = pool.imap_unordered(worker, CONFIGS, chunksize=1)
        for _ in CONFIGS:
            left = budget - (time.time() - t0)
            if left <= 0:
                log("budget spent")
                break
            try:
                row, sass, body, ttgir = it.next(timeout=left)
            except Exception as exc:  # noqa: BLE001
                log("stopped:", repr(exc)[:200])
                break
            log(row)
            rows.append(row)
            for suffix, text in ((".sass", sass), (".loop.sass", body), (".ttgir", ttgir)):
                if text:
                    p = os.path.join("/tmp", row["kernel"] + suffix)
                    with open(p, "w") as f:
                        f.write(text)
                    tar.add(p, arcname=row["kernel"] + suffix)
        pool.terminate()
    tar.close()
    cols = []
    for r in rows:
        cols += [k for k in r if k not in cols]
    with open(os.path.join(OUT, "spill_sass.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)
    log(f"done in {time.time() - t0:.1f}s, {len(rows)} kernels")


if __name__ == "__main__":
    main()
