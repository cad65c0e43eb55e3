#!/usr/bin/env python3
"""Does a row tile's later load round cost time in the steady state? The same row kernel compiled in one and in two
dependent load rounds, at the same registers and CTAs a SM, timed on full launches.

Usage (on the device machine; about a minute):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_round_split.py OUTDIR [--block-sms N]
On the CPU (no GPU, no torch; Triton 3.6.0), each variant's compiled registers, spills, CTAs a SM and load rounds, to
check the pairs before a device call:
    python3 bench/h200/measure_round_split.py --sass

Why (docs/analysis.md, "The later load rounds at every CTA count"): on the H200 the softmax and rmsnorm tiles (8, 4) at
N = 1024 (five CTAs a SM, a two-round binary: 7 vectors, then 1) run at 1.13 x their DRAM time, (8, 8) (four CTAs, one
round) at 1.02-1.07, and the two-round binaries at three CTAs a SM with 32 KB tiles at 1.02-1.03. The model charges a
later round only to a CTA alone on its SM; charged at every CTA count it fixes softmax and breaks rmsnorm. ptxas's
register cap (`maxnreg`) moves where it issues the late vectors, so the same tile compiles to one or two rounds at the
same registers and CTAs a SM (Triton 3.6.0, sm_90, the campaigns' kernels of bench/h200/triton_kernels.py; from
`--sass` on the CPU):

    softmax (8, 4) at 1024    default 96 regs, 5 a SM, 11111112 | cap 120: 105, 4 a SM, 11111112
                              | cap 104: 104, 4 a SM, 11111111
    rmsnorm (8, 4) at 1024    default 96 regs, 5 a SM, 11111112 | cap 104: 104, 4 a SM, 11111111
    softmax (8, 2) at 1024    default 168 regs, 6 a SM, 1111112222222222 | cap 168: 168, 6 a SM, 1111111111111111
    softmax (8, 4) at 2048    default 168 regs, 3 a SM, 1111112222222222 | cap 168: 168, 3 a SM, 1111111111111111
                              | cap 200: 168, 3 a SM, 1111111111111122
    rmsnorm (8, 4) at 2048    default 168 regs, 3 a SM, 1111111222222222 | cap 200: 170, 2 a SM, one round
    softmax, rmsnorm (8, 8) at 1024, default (one round, 4 a SM): the reference that runs at its DRAM time

So softmax (8, 2) at 1024 and (8, 4) at 2048 each give one binary in two rounds and one in one at the same registers
and occupancy: their time ratio is the later round's cost at six and at three CTAs a SM. Each variant is launched
over about 1 GB of X (and as much Y) twice, in two interleaved passes (do_bench medians), beside a device-to-device
copy of the same bytes (torch's copy_) as the DRAM reference. The compiled rounds are read again on the device from
the launched binary (bench/h200/row_load_rounds.py on its SASS), so a different ptxas shows in the table.

With ``--block-sms N`` every variant and the copy are timed once more while N SMs are held idle (bench/h200/
sm_blocker.py): on an H100, N = 40 leaves 92 SMs, each with about the H200's DRAM share (2,958 GB/s / 92 = 32.2 B/ns
against 32.1), so the variants' chains meet the H200's DRAM time a CTA on the H100's SMs (CUDA events on a stream of
their own, the median of 5 after one warm-up: no device-wide sync while the SMs are held).

Writes OUTDIR/round_split.csv (one row a variant) and OUTDIR/log.txt.
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from row_sass_sim import x_vectors  # noqa: E402  (the row tile's 16-byte loads a thread issues)

# (family, N, BLOCK_M, WARPS, maxnreg or None for the campaigns' own compile)
VARIANTS = [
    ("softmax", 1024, 8, 4, None), ("softmax", 1024, 8, 4, 120), ("softmax", 1024, 8, 4, 104),
    ("rmsnorm", 1024, 8, 4, None), ("rmsnorm", 1024, 8, 4, 104),
    ("softmax", 1024, 8, 2, None), ("softmax", 1024, 8, 2, 168),
    ("softmax", 2048, 8, 4, None), ("softmax", 2048, 8, 4, 168), ("softmax", 2048, 8, 4, 200),
    ("rmsnorm", 2048, 8, 4, None), ("rmsnorm", 2048, 8, 4, 200),
    ("softmax", 1024, 8, 8, None), ("rmsnorm", 1024, 8, 8, None),
]
X_BYTES = 2 ** 30         # the launch's X (Y as much): many waves at every variant, as the campaigns' large-M shapes


def rounds_of(cubin_path: str, xv: int) -> str:
    """The load-round pattern of a compiled kernel's row tile (row_load_rounds.load_rounds on its SASS), from its
    cubin written out (measure_spill_sass.cubin_file)."""
    import row_load_rounds
    from measure_spill_sass import nvdisasm
    return "".join(map(str, row_load_rounds.load_rounds(nvdisasm(cubin_path), xv)))


def blocks_per_sm(regs, warps):
    """CTAs a SM the registers allow (sm_90: 64K registers in four sub-partitions of 16K, a warp's registers in
    units of 256, at most 64 warps and 32 CTAs); the kernels' shared memory (under 1 KB) limits none of them."""
    per_warp = -(-regs * 32 // 256) * 256
    warps_per_sub = 16384 // per_warp
    return min(warps_per_sub * 4 // warps, 64 // warps, 32)


def sass_main():
    """The CPU check: compile every variant as the device will (bench/h200/measure_row_spill_sass.build's signature,
    with the register cap) and print its registers, spills, CTAs a SM and load rounds."""
    import re
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from measure_spill_sass import cubin_file, cuobjdump_path
    from triton_kernels import rmsnorm_kernel, softmax_kernel
    tool = cuobjdump_path()
    print("family,N,BLOCK_M,WARPS,maxnreg,regs,spills,blocks_per_sm,pattern")
    for fam, n, bm, warps, cap in VARIANTS:
        kern = rmsnorm_kernel if fam == "rmsnorm" else softmax_kernel
        names = kern.arg_names
        sig = (dict(X="*bf16", W="*bf16", Y="*bf16", M="i32", N="i32", inv_n="fp32", eps="fp32") if fam == "rmsnorm"
               else dict(X="*bf16", Y="*bf16", M="i32", N="i32"))
        attrs = {(names.index(k),): [["tt.divisibility", 16]] for k in ("X", "W", "Y", "M", "N") if k in names}
        opts = dict(num_warps=warps, num_stages=1)
        if cap:
            opts["maxnreg"] = cap
        k = triton.compile(ASTSource(fn=kern, signature={k: sig.get(k, "constexpr") for k in names},
                                     constexprs=dict(BLOCK_M=bm, BLOCK_N=n), attrs=attrs),
                           target=GPUTarget("cuda", 90, 32), options=opts)
        with cubin_file(k.asm["cubin"]) as path:     # one file for both tools
            usage = subprocess.run([tool, "-res-usage", path], capture_output=True, text=True).stdout
            pattern = rounds_of(path, x_vectors(n, bm, warps))
        regs = int(re.search(r"REG:(\d+)", usage).group(1))
        spills = int(re.search(r"STACK:(\d+)", usage).group(1)) // 4
        print(fam, n, bm, warps, cap or "", regs, spills, blocks_per_sm(regs, warps), pattern, sep=",", flush=True)


def device_main(out, block_sms=0):
    import torch
    import triton
    from common import Campaign, write_rows
    from measure_spill_sass import cubin_file
    from triton_kernels import rmsnorm_kernel, softmax_kernel
    run = Campaign(nvsmi_fields="name,clocks.sm,clocks.max.sm,clocks.mem,power.draw")
    run.open(out, "log.txt")
    log = run.log
    log("torch", torch.__version__, "triton", triton.__version__, "device", torch.cuda.get_device_name(0))
    run.nvsmi()
    bf = torch.bfloat16
    g = torch.Generator(device="cuda")
    g.manual_seed(40)
    inputs, launches, rows = {}, [], []
    for fam, n, bm, warps, cap in VARIANTS:
        if n not in inputs:
            m = X_BYTES // (2 * n)
            X = torch.randn(m, n, device="cuda", generator=g).to(bf)
            inputs[n] = (m, X, torch.empty_like(X), torch.randn(n, device="cuda", generator=g).to(bf))
        m, X, Y, W = inputs[n]
        kern = rmsnorm_kernel if fam == "rmsnorm" else softmax_kernel
        args = (X, W, Y, m, n, 1.0 / n, 1e-6) if fam == "rmsnorm" else (X, Y, m, n)
        kw = dict(BLOCK_M=bm, BLOCK_N=n, num_warps=warps, num_stages=1)
        if cap:
            kw["maxnreg"] = cap
        grid = (triton.cdiv(m, bm),)
        row = {"family": fam, "N": n, "BLOCK_M": bm, "WARPS": warps, "maxnreg": cap or "", "M": m}
        try:
            k = kern[grid](*args, **kw)
            torch.cuda.synchronize()
            with cubin_file(k.asm["cubin"]) as path:
                pattern = rounds_of(path, x_vectors(n, bm, warps))
            row.update(regs=k.n_regs, spills=k.n_spills,
                       blocks_per_sm=run.occupancy(k, 32 * warps, k.metadata.shared),
                       rounds=max(int(c) for c in pattern), late=sum(c != "1" for c in pattern), pattern=pattern)
            launches.append((row, lambda kern=kern, grid=grid, args=args, kw=kw: kern[grid](*args, **kw)))
        except Exception as e:            # one variant's failure leaves the others
            row["error"] = repr(e)[:200]
            log(fam, n, bm, warps, cap, "failed:", row["error"])
        rows.append(row)
    copy_ms = {}
    for p in (1, 2):                       # two passes, the variants interleaved: drift shows as a pass difference
        for n, (m, X, Y, W) in inputs.items():
            copy_ms.setdefault(n, []).append(float(triton.testing.do_bench(
                lambda X=X, Y=Y: Y.copy_(X), warmup=5, rep=40, return_mode="median")))
        for row, fn in launches:
            row[f"ms_pass{p}"] = float(triton.testing.do_bench(fn, warmup=5, rep=40, return_mode="median"))
    if block_sms and launches:
        import sm_blocker
        copies = {n: (lambda X=X, Y=Y: Y.copy_(X)) for n, (m, X, Y, W) in inputs.items()}
        try:
            times = sm_blocker.time_held(block_sms, list(copies.values()) + [fn for _, fn in launches], log)
            blocked_copy = dict(zip(copies, times[:len(copies)]))
            for (row, _), t in zip(launches, times[len(copies):]):
                row["ms_blocked"] = t
            for row, _ in launches:
                row["block_sms"] = block_sms
                row["copy_ms_blocked"] = blocked_copy[row["N"]]
                row["over_copy_blocked"] = round(row["ms_blocked"] / blocked_copy[row["N"]], 4)
        except Exception as e:            # the unblocked table stands without it
            log("blocked pass failed:", repr(e)[:300])
    for row in rows:
        if "ms_pass1" in row:
            ref = min(copy_ms[row["N"]])
            row["copy_ms"] = ref
            row["over_copy"] = round(min(row["ms_pass1"], row["ms_pass2"]) / ref, 4)
            log(row["family"], row["N"], (row["BLOCK_M"], row["WARPS"]), "cap", row["maxnreg"] or "-", "regs",
                row["regs"], "sp", row["spills"], "occ", row["blocks_per_sm"], row["pattern"], "ms",
                round(row["ms_pass1"], 4), round(row["ms_pass2"], 4), "over copy", row["over_copy"],
                "blocked", row.get("over_copy_blocked", "-"))
    cols = ["family", "N", "BLOCK_M", "WARPS", "maxnreg", "M", "regs", "spills", "blocks_per_sm", "rounds", "late",
            "pattern", "ms_pass1", "ms_pass2", "copy_ms", "over_copy", "block_sms", "ms_blocked", "copy_ms_blocked",
            "over_copy_blocked", "error"]
    write_rows(os.path.join(out, "round_split.csv"), [{c: row.get(c, "") for c in cols} for row in rows])
    run.nvsmi()
    log(f"done in {run.elapsed():.0f}s")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--sass"]:
        sass_main()
    else:
        argv = sys.argv[1:]
        block = int(argv[argv.index("--block-sms") + 1]) if "--block-sms" in argv else 0
        if "--block-sms" in argv:
            del argv[argv.index("--block-sms"):argv.index("--block-sms") + 2]
        device_main(argv[0] if argv else "round_split_out", block)
