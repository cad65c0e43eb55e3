#!/usr/bin/env python3
"""Issue 18: NVLink collectives and tensor-parallel steps on 2, 4 and 8 H200s of one host.

Usage (on a multi-GPU device machine; one call measures everything):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_multigpu.py OUTDIR [--gpus 2,4,8] [--quick]
then copy OUTDIR to calibration/h200/measured/multigpu/ and run
    python3 bench/model_multigpu.py calibration/h200/measured/multigpu

The script spawns one process per GPU (torch.multiprocessing, NCCL through torch.distributed)
for each GPU count in --gpus that the machine has. NVLink multicast stays off, as the machine
requires: NCCL_NVLS_ENABLE=0 and TORCH_SYMM_MEM_DISABLE_MULTICAST=1 are set before anything
touches CUDA, and written to env.txt.

Writes, flushing each row as it is measured (rank 0 writes; a partial run keeps its rows):
    collectives.csv  collective, gpus, bytes, iters, median_us, p10_us, p90_us, algbw_gbps, busbw_gbps
                     all_reduce, all_gather, reduce_scatter, all_to_all; 4 KiB .. 1 GiB in powers of 4
                     (and 2 at the small end). ``bytes`` follows nccl-tests: the all-reduce buffer, the
                     all-gather output, the reduce-scatter input, the all-to-all buffer of one rank.
                     algbw = bytes / time; busbw = algbw x 2(n-1)/n (all-reduce), x (n-1)/n (others).
                     Time per call: CUDA events around each call, median of ``iters`` after warm-up.
    tp_steps.csv     model, gpus, mode, batch, ctx, layers, status, median_us, p10_us, p90_us, replays
                     A Llama-3.1-8B- or 70B-shaped decoder layer stack with random bf16 weights,
                     tensor-parallel as Megatron does it: column-parallel q/k/v and gate/up, row-parallel
                     o and down, one all-reduce after each; plain PyTorch ops (RMSNorm by hand, RoPE as
                     x*cos + rotate_half(x)*sin, index_copy_ into the KV cache, SDPA), the structure of
                     tfx's ``pytorch-graph`` runtime. Decode at batch 1, 8, 32 and context 1K-32K; prefill
                     at 2K and 8K tokens. Each step is captured once in a CUDA graph and replayed; the time
                     is the median of the replays (CUDA events). ``layers`` is the stack depth measured
                     (not the model's full depth, so 32K contexts fit); status is ok, oom or skipped.
    topo.txt         nvidia-smi topo -m
    env.txt          versions, GPU names, the NCCL/multicast environment
"""
import argparse
import csv
import math
import os
import statistics
import subprocess
import sys
import time

# before torch / CUDA / NCCL are touched, in this process and every spawned one
os.environ["NCCL_NVLS_ENABLE"] = "0"
os.environ["TORCH_SYMM_MEM_DISABLE_MULTICAST"] = "1"

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all")
SIZES = [4096 * 2 ** i for i in range(0, 19, 2)] + [4096 * 2, 4096 * 8, 4096 * 32]   # 4 KiB .. 1 GiB
SIZES = sorted(set(SIZES))

SHAPES = {  # Llama 3.1 config.json shapes
    "llama3.1-8b": dict(hidden=4096, heads=32, kv_heads=8, head_dim=128, ffn=14336, layers=32),
    "llama3.1-70b": dict(hidden=8192, heads=64, kv_heads=8, head_dim=128, ffn=28672, layers=80),
}
STACK_LAYERS = {"llama3.1-8b": 8, "llama3.1-70b": 4}      # layers measured (a stack, not the model)
DECODE = [(b, c) for b in (1, 8, 32) for c in (1024, 4096, 16384, 32768)]
PREFILL = [2048, 8192]

COLLECTIVE_COLS = ["collective", "gpus", "bytes", "iters", "median_us", "p10_us", "p90_us", "algbw_gbps",
                   "busbw_gbps"]
STEP_COLS = ["model", "gpus", "mode", "batch", "ctx", "layers", "status", "median_us", "p10_us", "p90_us",
             "replays"]


def bus_factor(collective: str, n: int) -> float:
    """nccl-tests' bus-bandwidth factor: what each link carries relative to ``bytes``."""
    return 2 * (n - 1) / n if collective == "all_reduce" else (n - 1) / n


class Rows:
    """A CSV written row by row (flushed), by rank 0 only."""

    def __init__(self, path, cols, write):
        self.cols, self.write = cols, write
        if write:
            new = not os.path.exists(path)
            self.f = open(path, "a", newline="")
            self.w = csv.DictWriter(self.f, fieldnames=cols)
            if new:
                self.w.writeheader()

    def row(self, **kw):
        if self.write:
            self.w.writerow({c: kw.get(c, "") for c in self.cols})
            self.f.flush()


def _percentiles(ts):
    ts = sorted(ts)
    return statistics.median(ts), ts[len(ts) // 10], ts[(len(ts) * 9) // 10]


def time_calls(torch, fn, iters, warmup=5):
    """Per-call times in us: CUDA events around each call, after ``warmup`` calls."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    for s, e in zip(starts, ends):
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) * 1e3 for s, e in zip(starts, ends)]


def collectives(torch, dist, rank, n, out, quick):
    dev = torch.device("cuda", rank)
    for name in COLLECTIVES:
        for nbytes in SIZES if not quick else SIZES[:4]:
            elems = nbytes // 2                                   # bf16
            if name == "all_reduce":
                buf = torch.randn(elems, device=dev, dtype=torch.bfloat16)
                fn = lambda: dist.all_reduce(buf)
            elif name == "all_gather":                            # bytes = the gathered output
                out_t = torch.empty(elems - elems % n, device=dev, dtype=torch.bfloat16)
                inp = torch.randn(out_t.numel() // n, device=dev, dtype=torch.bfloat16)
                fn = lambda: dist.all_gather_into_tensor(out_t, inp)
            elif name == "reduce_scatter":                        # bytes = the scattered input
                inp = torch.randn(elems - elems % n, device=dev, dtype=torch.bfloat16)
                out_t = torch.empty(inp.numel() // n, device=dev, dtype=torch.bfloat16)
                fn = lambda: dist.reduce_scatter_tensor(out_t, inp)
            else:                                                 # bytes = one rank's buffer
                inp = torch.randn(elems - elems % n, device=dev, dtype=torch.bfloat16)
                out_t = torch.empty_like(inp)
                fn = lambda: dist.all_to_all_single(out_t, inp)
            iters = 200 if nbytes <= 1 << 20 else (50 if nbytes <= 64 << 20 else 20)
            ts = time_calls(torch, fn, iters if not quick else 10)
            # every rank's median; the slowest rank is what the step waits for
            med = torch.tensor([statistics.median(ts)], device=dev)
            dist.all_reduce(med, op=dist.ReduceOp.MAX)
            m, p10, p90 = _percentiles(ts)
            m = float(med.item())
            alg = nbytes / (m * 1e-6) / 1e9
            out.row(collective=name, gpus=n, bytes=nbytes, iters=len(ts), median_us=f"{m:.3f}",
                    p10_us=f"{p10:.3f}", p90_us=f"{p90:.3f}", algbw_gbps=f"{alg:.3f}",
                    busbw_gbps=f"{alg * bus_factor(name, n):.3f}")
            del fn
            torch.cuda.empty_cache()


class TPStack:
    """One rank's shard of ``layers`` decoder layers (Megatron TP, plain PyTorch ops)."""

    def __init__(self, torch, cfg, layers, tp, batch, ctx, dev):
        import torch.nn.functional as F
        self.t, self.F, self.tp = torch, F, tp
        h, hd = cfg["hidden"], cfg["head_dim"]
        self.nq = cfg["heads"] // tp
        self.nkv = max(cfg["kv_heads"] // tp, 1)            # replicated when fewer KV heads than ranks
        self.hd, self.h = hd, h
        f = cfg["ffn"] // tp
        dt = torch.bfloat16

        def w(o, i):
            return torch.randn(o, i, device=dev, dtype=dt) * (1.0 / math.sqrt(i))
        self.layers = [dict(ln1=1 + 0.1 * torch.randn(h, device=dev, dtype=dt),
                            ln2=1 + 0.1 * torch.randn(h, device=dev, dtype=dt),
                            wq=w(self.nq * hd, h), wk=w(self.nkv * hd, h), wv=w(self.nkv * hd, h),
                            wo=w(h, self.nq * hd), wg=w(f, h), wu=w(f, h), wd=w(h, f)) for _ in range(layers)]
        self.kc = [torch.randn(batch, self.nkv, ctx, hd, device=dev, dtype=dt) for _ in range(layers)]
        self.vc = [torch.randn(batch, self.nkv, ctx, hd, device=dev, dtype=dt) for _ in range(layers)]
        inv = 1.0 / (500000.0 ** (torch.arange(0, hd, 2, device=dev, dtype=torch.float32) / hd))
        fr = torch.outer(torch.arange(ctx, device=dev, dtype=torch.float32), inv)
        emb = torch.cat([fr, fr], -1)
        self.cos, self.sin = emb.cos().to(dt), emb.sin().to(dt)

    @staticmethod
    def rmsnorm(torch, x, w, eps=1e-5):
        xf = x.float()
        return w * (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype)

    @staticmethod
    def rot(torch, x):
        x1, x2 = x.chunk(2, -1)
        return torch.cat((-x2, x1), -1)

    def step(self, x, pos, dist):
        """x: (B, T, h); pos: (T,) positions; decode when T == 1 (attends the whole cache)."""
        torch, F = self.t, self.F
        B, T, _ = x.shape
        cos = self.cos[pos].view(1, 1, T, self.hd)
        sin = self.sin[pos].view(1, 1, T, self.hd)
        for i, lay in enumerate(self.layers):
            hn = self.rmsnorm(torch, x, lay["ln1"])
            q = F.linear(hn, lay["wq"]).view(B, T, self.nq, self.hd).transpose(1, 2)
            k = F.linear(hn, lay["wk"]).view(B, T, self.nkv, self.hd).transpose(1, 2)
            v = F.linear(hn, lay["wv"]).view(B, T, self.nkv, self.hd).transpose(1, 2)
            q = q * cos + self.rot(torch, q) * sin
            k = k * cos + self.rot(torch, k) * sin
            if T == 1:
                self.kc[i].index_copy_(2, pos, k)
                self.vc[i].index_copy_(2, pos, v)
                a = F.scaled_dot_product_attention(q, self.kc[i], self.vc[i], enable_gqa=True)
            else:
                a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
            o = F.linear(a.transpose(1, 2).reshape(B, T, self.nq * self.hd), lay["wo"])
            if self.tp > 1:
                dist.all_reduce(o)
            x = x + o
            hn = self.rmsnorm(torch, x, lay["ln2"])
            d = F.linear(F.silu(F.linear(hn, lay["wg"])) * F.linear(hn, lay["wu"]), lay["wd"])
            if self.tp > 1:
                dist.all_reduce(d)
            x = x + d
        return x


def tp_steps(torch, dist, rank, n, out, quick):
    dev = torch.device("cuda", rank)
    cases = [("decode", b, c) for b, c in DECODE] + [("prefill", 1, s) for s in PREFILL]
    if quick:
        cases = [("decode", 1, 1024), ("prefill", 1, 2048)]
    for model, cfg in SHAPES.items():
        layers = STACK_LAYERS[model]
        for mode, batch, ctx in cases:
            row = dict(model=model, gpus=n, mode=mode, batch=batch, ctx=ctx, layers=layers)
            stack = None
            try:
                stack = TPStack(torch, cfg, layers, n, batch if mode == "decode" else 1, ctx, dev)
                T = 1 if mode == "decode" else ctx
                x = torch.randn(batch, T, cfg["hidden"], device=dev, dtype=torch.bfloat16)
                pos = (torch.tensor([ctx - 1], device=dev) if mode == "decode"
                       else torch.arange(ctx, device=dev))
                s = torch.cuda.Stream()
                s.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(s):                          # warm up outside the graph
                    for _ in range(3):
                        stack.step(x, pos, dist)
                torch.cuda.current_stream().wait_stream(s)
                g = torch.cuda.CUDAGraph()
                with torch.cuda.graph(g):
                    stack.step(x, pos, dist)
                replays = 20 if not quick else 5
                ts = time_calls(torch, g.replay, replays, warmup=3)
                med = torch.tensor([statistics.median(ts)], device=dev)
                dist.all_reduce(med, op=dist.ReduceOp.MAX)
                m, p10, p90 = _percentiles(ts)
                out.row(**row, status="ok", median_us=f"{float(med.item()):.3f}", p10_us=f"{p10:.3f}",
                        p90_us=f"{p90:.3f}", replays=replays)
                del g
            except torch.cuda.OutOfMemoryError:
                out.row(**row, status="oom")
            finally:
                del stack
                torch.cuda.empty_cache()
            dist.barrier()


def worker(rank, n, outdir, quick):
    import torch
    import torch.distributed as dist
    torch.cuda.set_device(rank)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(29500 + n))
    dist.init_process_group("nccl", rank=rank, world_size=n, device_id=torch.device("cuda", rank))
    try:
        write = rank == 0
        collectives(torch, dist, rank, n, Rows(os.path.join(outdir, "collectives.csv"), COLLECTIVE_COLS, write),
                    quick)
        tp_steps(torch, dist, rank, n, Rows(os.path.join(outdir, "tp_steps.csv"), STEP_COLS, write), quick)
    finally:
        dist.destroy_process_group()


def environment(outdir):
    import torch
    lines = [f"python {sys.version.split()[0]}", f"torch {torch.__version__}",
             f"cuda {torch.version.cuda}", f"nccl {'.'.join(map(str, torch.cuda.nccl.version()))}",
             f"NCCL_NVLS_ENABLE={os.environ['NCCL_NVLS_ENABLE']}",
             f"TORCH_SYMM_MEM_DISABLE_MULTICAST={os.environ['TORCH_SYMM_MEM_DISABLE_MULTICAST']}",
             f"gpus {torch.cuda.device_count()}"]
    lines += [f"gpu {i}: {torch.cuda.get_device_name(i)}" for i in range(torch.cuda.device_count())]
    with open(os.path.join(outdir, "env.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    try:
        topo = subprocess.run(["nvidia-smi", "topo", "-m"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        topo = f"nvidia-smi topo -m failed: {exc}\n"
    with open(os.path.join(outdir, "topo.txt"), "w") as f:
        f.write(topo)
    return torch.cuda.device_count()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("--gpus", default="2,4,8", help="GPU counts to measure (those the machine has)")
    ap.add_argument("--quick", action="store_true", help="a few sizes and steps: a smoke run")
    args = ap.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    have = environment(args.outdir)
    import torch.multiprocessing as mp
    for n in (int(x) for x in args.gpus.split(",")):
        if n > have:
            print(f"skipping {n} GPUs: the machine has {have}", flush=True)
            continue
        t0 = time.time()
        mp.spawn(worker, args=(n, args.outdir, args.quick), nprocs=n, join=True)
        print(f"{n} GPUs measured in {time.time() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
