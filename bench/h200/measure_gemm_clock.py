#!/usr/bin/env python3
"""H200: the SM clock under a real persistent GEMM against how many SMs run it (issue 15,
persistent_gemm priced too slow at NUM_SMS = 78 and 114; session 15, bigtile15).

Usage (on the device machine, from the repository root):
    PYTHONUNBUFFERED=1 GCLOCK_DEADLINE_S=150 python3 bench/h200/measure_gemm_clock.py OUTDIR
    python3 bench/h200/measure_gemm_clock.py OUTDIR --cpu      # compile only (sm_90, no GPU)

The question. The persistent GEMM rows of the campaigns (bench/h200/measure_accuracy.py's
persistent_kernel, one CTA per SM) run a 128x256x64 tile on 8 warps at ~620-640 ns a trip on
78 SMs, ~680-710 on 114 and ~744 on 132 (issue15 run1, run3, run6, run7, run9, run14: the
busiest CTA's time / its trips). The warpgroup mma alone (calibration/h200/measured/
tensor_clock: operands resident in shared memory, no global traffic) issues 4,096 flop a cycle
at 1.735 GHz on 132 SMs and 1.75-1.81 GHz on fewer: 590 ns for this tile, 2-4% apart. cuBLAS
at 8192^3 read 1.41-1.53 GHz at 680-690 W (calibration/h200/measured/fp8_rate, the 700 W
limit). So: is the tensor rate of a real GEMM the SM clock the power limit leaves, and how
does that clock fall with the SMs that run it?

What it times (no configuration is fitted to; the campaign's kernel, its shape and data):
``persistent_kernel`` of measure_accuracy.py at M = N = 8192, K = 4096, bf16 random normal
data (and zeros, the same launch, for one tile: a power limit depends on the bits that
toggle, a fixed clock does not), for each tile on NUM_SMS = 132, 114, 78, 33 CTAs:
  * plain: do_bench's median over 25 ms of runs (L2 cleared before each; the campaigns' timing);
  * stamped: the same kernel with %clock64, %globaltimer and %smid read by each CTA before its
    first tile and after its last (its stores done), timed the same way; clock_ghz = the
    median over CTAs of cycles / ns of the last timed call;
  * smi: nvidia-smi sampled every 20 ms (clocks.sm, power.draw) while the plain kernel runs
    back to back for ~400 ms (the median of the samples after the first 100 ms).
Columns of gemm_clock.csv: tile, warps, stages, ctas, data, plain_ms, stamped_ms, clock_ghz
(median, min, max over CTAs), busiest_tiles, ns_per_trip (plain_ms / (busiest tiles x trips)),
flop_per_cycle_per_sm (the busiest CTA's flop / its cycles), smi_sm_mhz, smi_power_w, status.
Writes gemm_clock.csv and log.txt (the SASS too with --cpu).
"""
import csv
import os
import statistics
import subprocess
import sys
import time
import traceback

import triton
import triton.language as tl
from clock_stamps import clock64 as _clock, globaltimer as _timer, smid as _smid  # noqa: E402

from triton_kernels import persistent_kernel  # the campaigns' kernel (bench/h200/measure_accuracy.py)

T0 = time.time()
OUT = sys.argv[1] if len(sys.argv) > 1 else "."
CPU = "--cpu" in sys.argv
DEADLINE_S = float(os.environ.get("GCLOCK_DEADLINE_S", "150"))
os.makedirs(OUT, exist_ok=True)
LOG = open(os.path.join(OUT, "log.txt" if not CPU else "cpu_log.txt"), "w")

M, N, K = 8192, 8192, 4096
# (BM, BN, BK, WARPS, STAGES): the campaigns' large tiles, and a small memory-bound control
TILES = [(128, 256, 64, 8, 3), (128, 128, 64, 8, 4), (256, 128, 64, 8, 3), (64, 64, 128, 4, 3)]
SMS = [132, 114, 78, 33]
ZEROS = [(128, 256, 64, 8, 3)]          # also timed on zeros (every SM count)


def log(*a):
    line = f"[{time.time() - T0:6.1f}s] " + " ".join(str(x) for x in a)
    print(line, flush=True)
    LOG.write(line + "\n")
    LOG.flush()


@triton.jit
def stamped_kernel(a_ptr, b_ptr, c_ptr, t_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                   stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                   BLOCK_K: tl.constexpr, NUM_SMS: tl.constexpr):
    # the same kernel, each CTA's clock64 / globaltimer / smid before its first tile and after its last
    start = tl.program_id(0)
    ctas = tl.num_programs(0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    tiles = tl.cdiv(M, BLOCK_M) * num_pid_n
    offs_k = tl.arange(0, BLOCK_K)
    rows = tl.arange(0, BLOCK_M)
    dep = rows * 0 + start
    g0 = _timer(dep)
    c0 = _clock(dep)
    chk = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for t in range(start, tiles, ctas):
        pid_m = t // num_pid_n
        pid_n = t % num_pid_n
        offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
        offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
        a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
        b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
            acc = tl.dot(a, b, acc)
            a_ptrs += BLOCK_K * stride_ak
            b_ptrs += BLOCK_K * stride_bk
        offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
        tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))
        chk += tl.max(acc, 1)
    dep1 = chk.to(tl.int32, bitcast=True)
    g1 = _timer(dep1)
    c1 = _clock(dep1)
    sm = _smid(dep1)
    one = rows == 0
    tl.store(t_ptr + start * 8 + 0 + rows * 0, g0, mask=one)
    tl.store(t_ptr + start * 8 + 1 + rows * 0, g1, mask=one)
    tl.store(t_ptr + start * 8 + 2 + rows * 0, c0, mask=one)
    tl.store(t_ptr + start * 8 + 3 + rows * 0, c1, mask=one)
    tl.store(t_ptr + start * 8 + 4 + rows * 0, sm.to(tl.int64), mask=one)


def _consts(p):
    bm, bn, bk, w, st = p
    return dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, NUM_SMS=132)


def compile_cpu(kind, p):
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    fn = stamped_kernel if kind == "stamped" else persistent_kernel
    sig = {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*bf16", "t_ptr": "*i64"}
    for name in ("M", "N", "K", "stride_am", "stride_bk", "stride_cm"):
        sig[name] = "i32"
    # the unit strides, as Triton's JIT specializes an integer argument equal to 1
    ones = dict(stride_ak=1, stride_bn=1, stride_cn=1)
    names = fn.arg_names
    div = ("a_ptr", "b_ptr", "c_ptr", "t_ptr", "M", "N", "K", "stride_am", "stride_bk", "stride_cm")
    attrs = {(names.index(x),): [["tt.divisibility", 16]] for x in div if x in names}
    sig = {key: sig.get(key, "constexpr") for key in names}
    return triton.compile(ASTSource(fn=fn, signature=sig, constexprs={**_consts(p), **ones}, attrs=attrs),
                          target=GPUTarget("cuda", 90, 32), options=dict(num_warps=p[3], num_stages=p[4]))


def _bufs(zeros=False, tiny=False):
    import torch
    gen = torch.Generator(device="cuda")
    gen.manual_seed(15)
    m, n, k = (64, 64, 64) if tiny else (M, N, K)
    if zeros:
        a = torch.zeros(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.zeros(k, n, device="cuda", dtype=torch.bfloat16)
    else:
        a = torch.randn(m, k, device="cuda", dtype=torch.float32, generator=gen).to(torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.float32, generator=gen).to(torch.bfloat16)
    c = torch.empty(m * n, device="cuda", dtype=torch.bfloat16)
    return a, b, c


def _launcher(kind, p, ctas, bufs, t=None):
    a, b, c = bufs
    kw = dict(**_consts(p), num_warps=p[3], num_stages=p[4])
    args = (M, N, K, K, 1, N, 1, N, 1)
    if kind == "stamped":
        return lambda: stamped_kernel[(ctas,)](a, b, c, t, *args, **kw)
    return lambda: persistent_kernel[(ctas,)](a, b, c, *args, **kw)


def _compile_worker(job):
    kind, p = job
    t = time.time()
    try:
        if CPU:
            k = compile_cpu(kind, p)
            import tempfile
            cub = os.path.join(tempfile.gettempdir(), f"gclock_{kind}_{'_'.join(map(str, p))}.cubin")
            open(cub, "wb").write(k.asm["cubin"])
            tool = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
            sass = subprocess.run([tool, "-sass", cub], capture_output=True, text=True).stdout
            open(os.path.join(OUT, f"{kind}_{'x'.join(map(str, p))}.sass"), "w").write(sass)
            return job, "ok", time.time() - t, f"shared {k.metadata.shared}"
        import torch
        bufs = _bufs(tiny=True)
        tt = torch.zeros(8 * 132, device="cuda", dtype=torch.int64)
        a, b, c = bufs
        kw = dict(**_consts(p), num_warps=p[3], num_stages=p[4])
        args = (64, 64, 64, 64, 1, 64, 1, 64, 1)
        if kind == "stamped":
            k = stamped_kernel.warmup(a, b, c, tt, *args, **kw, grid=(1,))
        else:
            k = persistent_kernel.warmup(a, b, c, *args, **kw, grid=(1,))
        k._init_handles()
        return job, "ok", time.time() - t, f"regs {k.n_regs} spills {k.n_spills} shared {k.metadata.shared}"
    except Exception as e:
        return job, "error", time.time() - t, repr(e)[:300]


def measure(w, p, ctas, zeros):
    import torch
    from common import median_ms
    bm, bn, bk, warps, st = p
    row = dict(BM=bm, BN=bn, BK=bk, WARPS=warps, STAGES=st, ctas=ctas, data="zeros" if zeros else "randn")
    try:
        bufs = _bufs(zeros=zeros)
        tiles = -(-M // bm) * -(-N // bn)
        busiest = -(-tiles // ctas)
        trips = -(-K // bk)
        plain = _launcher("plain", p, ctas, bufs)
        plain_ms = median_ms(plain, warmup=5, rep=25)
        t = torch.zeros(8 * ctas, device="cuda", dtype=torch.int64)
        stamped = _launcher("stamped", p, ctas, bufs, t)
        stamped_ms = median_ms(stamped, warmup=5, rep=25)
        stamps = t.view(ctas, 8).cpu().tolist()
        ghz = [(s[3] - s[2]) / (s[1] - s[0]) for s in stamps if s[1] > s[0]]
        cycles = max(s[3] - s[2] for s in stamps)
        torch.cuda.synchronize()
        from common import SmiSampler
        with SmiSampler() as smi:
            end = time.time() + 0.4
            while time.time() < end:
                for _ in range(max(1, int(2.0 / max(plain_ms, 0.01)))):
                    plain()
                torch.cuda.synchronize()
        mhz, watt = smi.medians()
        row.update(plain_ms=round(plain_ms, 4), stamped_ms=round(stamped_ms, 4),
                   clock_ghz=round(statistics.median(ghz), 4), clock_min=round(min(ghz), 4),
                   clock_max=round(max(ghz), 4), sms_used=len({s[4] for s in stamps}), busiest_tiles=busiest,
                   ns_per_trip=round(plain_ms * 1e6 / (busiest * trips), 2),
                   flop_per_cycle_per_sm=round(2 * bm * bn * bk * busiest * trips / cycles, 1),
                   smi_sm_mhz=mhz, smi_power_w=watt, smi_samples=len(smi.samples), status="ok")
    except Exception as e:
        row.update(status="error: " + repr(e)[:160].replace("\n", " "))
        log(traceback.format_exc()[-400:])
    w.writerow(row)
    log(row)


def main():
    import multiprocessing as mp
    jobs = [(kind, p) for p in TILES for kind in ("plain", "stamped")]
    nproc = max(1, min(len(jobs), (os.cpu_count() or 4) - 2, 14))
    log(f"compiling {len(jobs)} kernels in {nproc} processes", "(cpu, sm_90)" if CPU else "")
    with mp.get_context("spawn").Pool(nproc) as pool:
        for job, st, dt, info in pool.imap_unordered(_compile_worker, jobs):
            log(job, st, f"{dt:.1f}s", info)
    if CPU:
        return
    import torch
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    log("device", torch.cuda.get_device_name(0), "torch", torch.__version__, "triton", triton.__version__)
    q = ["nvidia-smi", "--query-gpu=clocks.sm,clocks.mem,power.draw,power.limit,temperature.gpu", "--format=csv"]
    log(subprocess.run(q, capture_output=True, text=True, timeout=20).stdout.strip())
    cols = ["BM", "BN", "BK", "WARPS", "STAGES", "ctas", "data", "plain_ms", "stamped_ms", "clock_ghz", "clock_min",
            "clock_max", "sms_used", "busiest_tiles", "ns_per_trip", "flop_per_cycle_per_sm", "smi_sm_mhz",
            "smi_power_w", "smi_samples", "status"]
    with open(os.path.join(OUT, "gemm_clock.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        for p in TILES:
            for ctas in SMS:
                for zeros in ((False, True) if p in ZEROS else (False,)):
                    if time.time() - T0 > DEADLINE_S:
                        log("deadline: stopping")
                        return
                    measure(w, p, ctas, zeros)
                    f.flush()
    log(subprocess.run(q, capture_output=True, text=True, timeout=20).stdout.strip())
    log("done")


if __name__ == "__main__":
    main()
