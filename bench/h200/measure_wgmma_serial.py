#!/usr/bin/env python3
"""What a serialized warpgroup mma costs: one wgmma waited before the next is issued.

ptxas serializes a kernel's wgmma instructions when their accumulators do not fit the
registers ("(C7511) Potential Performance Loss: wgmma.mma_async instructions are serialized
due to insufficient register resources for the wgmma pipeline"): every HGMMA is followed by
`WARPGROUP.DEPBAR.LE gsb0, 0x0` (calibration/h200/measured/wgmma_serial/README.md: the
issue-15 flash-attention kernel at 128 x 128 on 4 warps, D = 128). This microbenchmark times
that pattern against the pipelined one, with nothing else in the loop: a hand-written PTX
kernel (one warpgroup, 128 threads, operands in static shared memory, contents irrelevant to
the timing) runs `iters` trips of

    wgmma.fence; G x wgmma.mma_async m64nNk16 (same accumulator); commit_group; wait_group 0

so G = 1 is the serialized chain and G = 8 the pipelined group of the attention trip. Per trip
ns from two loop lengths (launch and epilogue cancel), 132 x r CTAs (r per SM), SS (A and B
from shared memory) and RS (A from registers, attention's PV).

Usage (device machine):  PYTHONUNBUFFERED=1 python3 bench/h200/measure_wgmma_serial.py OUTDIR
Without a GPU (compile and SASS only):  python3 bench/h200/measure_wgmma_serial.py OUTDIR --cpu
Writes wgmma_serial.csv, log.txt and the SASS of one kernel (wgmma_serial_n128_g1_ss.sass).
"""
import csv
import os
import re
import subprocess
import sys
import time

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
CPU = "--cpu" in sys.argv
os.environ.setdefault("TRITON_CACHE_DIR", "/tmp/tfx_triton_cache_wgmma_serial")
DESC_BITS = 4611686293305294848    # Triton's descriptor bits for a 128-B swizzled bf16 tile (its PTX)


def ptx(n, g, rs):
    """PTX of the kernel: N columns, G wgmma per waited group, A from registers if rs."""
    acc = n // 2                        # f32 accumulator registers per thread: 64 x N / 128
    regs = ",".join(f"%f{i}" for i in range(acc))
    a = "{%a0,%a1,%a2,%a3}" if rs else "%rdA"
    kind = "f32.bf16.bf16"
    tail = "%p1, 1, 1, 1;" if rs else "%p1, 1, 1, 0, 1;"
    mma = f"\twgmma.mma_async.sync.aligned.m64n{n}k16.{kind} {{{regs}}}, {a}, %rdB, {tail}\n"
    zero = "".join(f"\tmov.f32 %f{i}, 0f00000000;\n" for i in range(acc))
    total = "".join(f"\tadd.f32 %s, %s, %f{i};\n" for i in range(acc))
    return f""".version 8.7
.target sm_90a
.address_size 64

.shared .align 1024 .b8 sbuf[32768];

.visible .entry wgmma_chain(
	.param .u64 .ptr .global .align 1 wgmma_chain_param_0,
	.param .u32 wgmma_chain_param_1,
	.param .u64 .ptr .global .align 1 wgmma_chain_param_2,
	.param .u64 .ptr .global .align 1 wgmma_chain_param_3
)
.reqntid 128
{{
	.reg .pred %p<4>;
	.reg .b32 %r<16>;
	.reg .b32 %a<4>;
	.reg .f32 %f<{acc}>;
	.reg .f32 %s;
	.reg .b64 %rd<16>;
	.reg .b64 %rdA;
	.reg .b64 %rdB;
	ld.param.b64 %rd1, [wgmma_chain_param_0];
	ld.param.b32 %r1, [wgmma_chain_param_1];
	mov.u32 %r2, %tid.x;
	mov.u32 %r3, sbuf;
	shr.u32 %r4, %r3, 4;
	and.b32 %r4, %r4, 16383;
	cvt.u64.u32 %rd2, %r4;
	or.b64 %rdA, %rd2, {DESC_BITS};
	add.u32 %r5, %r3, 16384;
	shr.u32 %r6, %r5, 4;
	and.b32 %r6, %r6, 16383;
	cvt.u64.u32 %rd3, %r6;
	or.b64 %rdB, %rd3, {DESC_BITS};
	mov.b32 %a0, 0;
	mov.b32 %a1, 0;
	mov.b32 %a2, 0;
	mov.b32 %a3, 0;
	setp.eq.u32 %p1, %r2, %r2;
{zero}	mov.u32 %r7, 0;
	setp.eq.u32 %p2, %r1, 0;
	@%p2 bra DONE;
LOOP:
	wgmma.fence.sync.aligned;
{mma * g}	wgmma.commit_group.sync.aligned;
	wgmma.wait_group.sync.aligned 0;
	add.u32 %r7, %r7, 1;
	setp.lt.u32 %p3, %r7, %r1;
	@%p3 bra LOOP;
DONE:
	mov.f32 %s, 0f00000000;
{total.replace('%s, %s', '%s, %s')}	mul.wide.u32 %rd4, %r2, 4;
	add.s64 %rd5, %rd1, %rd4;
	st.global.f32 [%rd5], %s;
	ret;
}}
"""


def compile_kernel(n, g, rs):
    """Triton compiles a stand-in of the same signature and replaces its PTX by ours
    (ir_override: Triton 3.6 cannot start from a .ptx file itself); its launcher runs it."""
    import triton
    import triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    @triton.jit
    def wgmma_chain(out, iters):
        tl.store(out + tl.arange(0, 128), tl.zeros([128], tl.float32) + iters)
    path = f"/tmp/wgmma_serial_n{n}_g{g}_{'rs' if rs else 'ss'}.ptx"
    with open(path, "w") as f:
        f.write(ptx(n, g, rs))
    src = ASTSource(fn=wgmma_chain, signature={"out": "*fp32", "iters": "i32"}, constexprs={},
                    attrs={(0,): [["tt.divisibility", 16]]})
    opts = dict(num_warps=4, num_stages=1, ir_override=path)
    if CPU:
        return triton.compile(src, target=GPUTarget("cuda", 90, 32), options=opts)
    return triton.compile(src, options=opts)


def cuobjdump(k, name):
    import triton
    tool = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
    cub = f"/tmp/{name}.cubin"
    with open(cub, "wb") as f:
        f.write(k.asm["cubin"])
    sass = subprocess.run([tool if os.path.exists(tool) else "cuobjdump", "-sass", cub],
                          capture_output=True, text=True, timeout=60).stdout
    return sass


def regs_of(k, name):
    """Registers a thread as compiled (cuobjdump -res-usage REG)."""
    import triton
    tool = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
    usage = subprocess.run([tool if os.path.exists(tool) else "cuobjdump", "-res-usage", f"/tmp/{name}.cubin"],
                           capture_output=True, text=True, timeout=60).stdout
    m = re.search(r"REG:(\d+)", usage)
    return int(m.group(1)) if m else -1


def main():
    os.makedirs(OUT, exist_ok=True)
    logf = open(os.path.join(OUT, "log.txt"), "w")

    def log(*a):
        s = " ".join(str(x) for x in a)
        print(s, flush=True)
        logf.write(s + "\n")
        logf.flush()
    import triton
    rows = []
    if CPU:
        log("triton", triton.__version__, "compiled for sm_90a without a GPU (--cpu)")
    else:
        import torch
        log("torch", torch.__version__, "triton", triton.__version__, "gpu", torch.cuda.get_device_name(0),
            "clock", subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,clocks.max.sm", "--format=csv"],
                                    capture_output=True, text=True).stdout.replace("\n", " "))
        out = torch.zeros(128, device="cuda", dtype=torch.float32)
        sms = torch.cuda.get_device_properties(0).multi_processor_count
    t0 = time.time()
    for n in (128, 64):
        for rs in (0, 1):
            for g in (1, 2, 4, 8):
                name = f"wgmma_serial_n{n}_g{g}_{'rs' if rs else 'ss'}"
                k = compile_kernel(n, g, rs)
                sass = cuobjdump(k, name)
                hgmma = len(re.findall(r"HGMMA", sass))
                depbar = len(re.findall(r"WARPGROUP\.DEPBAR", sass))
                if n == 128 and g == 1 and rs == 0:
                    with open(os.path.join(OUT, name + ".sass"), "w") as f:
                        f.write(sass)
                row = dict(N=n, G=g, RS=rs, hgmma_in_sass=hgmma, depbar_in_sass=depbar, regs=regs_of(k, name))
                if not CPU:
                    for r in (1, 2, 4):
                        grid = (sms * r, 1, 1)

                        def timed(iters):
                            k[grid](out, iters)          # warm
                            torch.cuda.synchronize()
                            ts = []
                            for _ in range(7):
                                a = torch.cuda.Event(enable_timing=True)
                                b = torch.cuda.Event(enable_timing=True)
                                a.record()
                                k[grid](out, iters)
                                b.record()
                                torch.cuda.synchronize()
                                ts.append(a.elapsed_time(b))
                            ts.sort()
                            return ts[len(ts) // 2]
                        short, long_ = 512, 2560
                        t_s, t_l = timed(short), timed(long_)
                        ns = (t_l - t_s) * 1e6 / (long_ - short)
                        rows.append({**row, "r": r, "ns_per_trip": round(ns, 3),
                                     "ns_per_wgmma": round(ns / g, 3), "ms_short": round(t_s, 5),
                                     "ms_long": round(t_l, 5)})
                        log(rows[-1])
                else:
                    rows.append(row)
                    log(row)
                if time.time() - t0 > float(os.environ.get("WGMMA_BUDGET_S", "90")):
                    log("budget spent")
                    break
    cols = []
    for r in rows:
        cols += [c for c in r if c not in cols]
    with open(os.path.join(OUT, "wgmma_serial.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)
    log(f"done in {time.time() - t0:.1f}s")


if __name__ == "__main__":
    main()
