"""Where a wgmma k-loop's copies leave: clock stamps around the compiled trip of the campaigns' Triton GEMM
(docs/analysis.md, "Copy behind the mma": the 2-stage 128x256 rows run 15-30% under the model's mma + round-trip sum,
and a stamp placed from Triton lands after the trip's copies, so the stamps go into its PTX).

    python3 bench/h200/copy_issue_stamps.py build OUTDIR [SET]   # CPU (triton 3.6.0): PTX, stamped PTX, cubins, SASS
    python3 bench/h200/copy_issue_stamps.py run OUTDIR           # a GPU: the stamped and plain cubins, CSV to stdout

SET: `base` (default, CONFIGS: session 48's first set) or `tall` (TALL: the 4-warp and deeper tiles the first set
lacks: 256-row tiles on one warpgroup, 4 stages).

`build` compiles bench/h200/triton_kernels.py's matmul_kernel (the campaigns' GEMM) per configuration for sm_90 and
inserts five %clock reads (32-bit) into its k-loop's PTX: t0 at the loop header, t1 after the copies' wait and the barrier
(cp.async.wait_group; bar.sync: the trip's tiles are in shared memory), t2 after wgmma.commit_group (the trip's HGMMAs
issued), t3 after wgmma.wait_group (the previous trip's mma done) and its bar.sync, t4 after the last
cp.async.commit_group (the next copies issued). Each thread sums t1-t0, t2-t1, t3-t2, t4-t3 and t0'-t4 (to the next
header) over its trips in registers; after the loop the first thread of each warpgroup stores its sums, its trip count
and the global timer at loop entry and exit (8 int64 per warpgroup) into the unused global-scratch parameter (param 9),
which `run` passes as a buffer. ptxas (Triton's) makes the cubin; the SASS is kept to check where the CS2R reads land.
`run` loads each cubin with the driver (ctypes, cuModuleLoadData) and launches it on the same grid as Triton would,
times the stamped and plain kernels with CUDA events, and prints one row per configuration and shape: the mean
cycles of each phase a trip (over every warpgroup of every CTA), the cycles a trip, the SM clock (cycles over the
global timer), the ns a trip, and the plain and stamped launches' ms.
"""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# (BM, BN, BK, WARPS, STAGES): the 2-stage tiles whose campaign rows run under the sum, their 256x128 twins (within
# -6..+8%), and 3-stage controls
CONFIGS = [(128, 256, 64, 8, 2), (256, 128, 64, 8, 2), (128, 256, 128, 8, 2), (256, 128, 128, 8, 2),
           (128, 128, 64, 8, 2), (128, 128, 64, 4, 2), (128, 256, 32, 8, 2), (128, 256, 64, 8, 3),
           (256, 128, 64, 8, 3), (64, 256, 64, 8, 2), (64, 256, 64, 4, 3), (64, 256, 64, 8, 3)]
# the second set: one warpgroup over 128-256 rows (the 2-stage 256x64 rows the campaigns price fast once the copies
# leave early), narrow 4-warp tiles, and 4 stages
TALL = [(256, 64, 128, 4, 2), (256, 64, 64, 4, 2), (128, 64, 128, 4, 2), (64, 128, 128, 4, 2), (128, 128, 128, 4, 2),
        (64, 64, 64, 4, 2), (256, 64, 64, 4, 4), (128, 256, 64, 8, 4), (256, 128, 64, 8, 4), (128, 128, 64, 4, 3)]
SETS = {"base": CONFIGS, "tall": TALL}
SHAPES = [(8192, 8192, 8192), (4096, 4096, 4096)]
PHASES = ("wait", "issue", "mma_wait", "copies", "rest")


def tag(c):
    return "{}x{}x{}_w{}_s{}".format(*c)


def compile_plain(c):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton_kernels import matmul_kernel as kern
    bm, bn, bk, w, s = c
    names = kern.arg_names
    consts = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, CACHE="", stride_ak=1, stride_bn=1, stride_cn=1)
    sig = {k: ('constexpr' if k in consts else ('*bf16' if k.endswith('ptr') else 'i32')) for k in names}
    attrs = {(names.index(k),): [["tt.divisibility", 16]]
             for k in ('a_ptr', 'b_ptr', 'c_ptr', 'M', 'N', 'K', 'stride_am', 'stride_bk', 'stride_cm')}
    k = triton.compile(ASTSource(fn=kern, signature=sig, constexprs=consts, attrs=attrs),
                       target=GPUTarget('cuda', 90, 32), options=dict(num_warps=w, num_stages=s))
    return k.asm["ptx"], k.metadata.shared


def stamp(ptx):
    """The PTX with the five clock reads and the stores (see the module's docstring)."""
    lines = ptx.split("\n")
    head = next(i for i, l in enumerate(lines) if "Inner Loop Header" in l)
    end = next(i for i in range(head, len(lines)) if re.match(r"\s*@%p\d+ bra\s+\$L__BB0_\d+;", lines[i]))
    loop_label = lines[head].split(":")[0]
    assert loop_label in lines[end], (lines[head], lines[end])
    body = list(range(head + 1, end))
    first_bar = next(i for i in body if "bar.sync" in lines[i])
    commit = next(i for i in body if "wgmma.commit_group" in lines[i])
    wait = next(i for i in body if "wgmma.wait_group" in lines[i])
    second_bar = next(i for i in body if i > wait and "bar.sync" in lines[i])
    last_copy = max(i for i in body if "cp.async.commit_group" in lines[i])
    assert head < first_bar < commit < wait < second_bar < last_copy < end

    # 32-bit clock and sums (a loop's cycles fit): half the registers of 64-bit ones, so the stamps add fewer
    def clk(n):
        return f"\tmov.u32 \t%skt{n}, %clock;"

    def acc(a, b, slot):
        return [f"\tsub.s32 \t%skd, %skt{b}, %skt{a};", f"\tadd.s32 \t%sks{slot}, %sks{slot}, %skd;"]

    ins = {head: [clk(0),
                  "\tsub.s32 \t%skd, %skt0, %skt4;", "\t@!%skfirst add.s32 \t%sks4, %sks4, %skd;",
                  "\tsetp.ne.s32 \t%skfirst, 1, 1;", "\tadd.s32 \t%sks5, %sks5, 1;"],
           first_bar: [clk(1)] + acc(0, 1, 0), commit: [clk(2)] + acc(1, 2, 1),
           second_bar: [clk(3)] + acc(2, 3, 2), last_copy: [clk(4)] + acc(3, 4, 3)}
    out = []
    for i, l in enumerate(lines):
        out.append(l)
        if i in ins:
            out.extend(ins[i])
    text = "\n".join(out)
    decl = ("\t.reg .b32 \t%skt<5>;\n\t.reg .b32 \t%sks<6>;\n\t.reg .b32 \t%skd;\n\t.reg .b64 \t%skg<2>;\n"
            "\t.reg .b64 \t%skp;\n\t.reg .b64 \t%skq;\n\t.reg .b64 \t%skx;\n\t.reg .b32 \t%skr<4>;\n"
            "\t.reg .pred \t%skfirst;\n\t.reg .pred \t%skw;\n")
    init = ("".join(f"\tmov.u32 \t%sks{j}, 0;\n" for j in range(6)) + "\tmov.u32 \t%skt4, 0;\n"
            "\tsetp.eq.s32 \t%skfirst, 1, 1;\n\tmov.u64 \t%skg0, %globaltimer;\n")
    # the declarations and the zeroed sums right after the first ld.param (the entry block dominates the loop)
    first_ld = text.index("\tld.param")
    text = text[:first_ld] + decl + init + text[first_ld:]
    return text


def stamped(ptx, warps):
    text = stamp(ptx)
    groups = max(warps // 4, 1)
    store = ("\tmov.u64 \t%skg1, %globaltimer;\n"
             "\tmov.u32 \t%skr0, %tid.x;\n\tand.b32 \t%skr1, %skr0, 127;\n\tsetp.eq.s32 \t%skw, %skr1, 0;\n"
             "\tshr.u32 \t%skr1, %skr0, 7;\n\tmov.u32 \t%skr3, %ctaid.x;\n"
             f"\tmad.lo.s32 \t%skr3, %skr3, {groups}, %skr1;\n"
             "\tmul.wide.u32 \t%skp, %skr3, 64;\n\tld.param.b64 \t%skq, [matmul_kernel_param_9];\n"
             "\tadd.s64 \t%skp, %skp, %skq;\n"
             + "".join(f"\tcvt.u64.u32 \t%skx, %sks{j};\n\t@%skw st.global.b64 \t[%skp+{8 * j}], %skx;\n"
                       for j in range(6))
             + "\t@%skw st.global.b64 \t[%skp+48], %skg0;\n\t@%skw st.global.b64 \t[%skp+56], %skg1;\n")
    # after the loop: the crit-edge block ($L__BB0_3) follows the loop's branch
    after = re.search(r"\n\$L__BB0_\d+:\s*// %\._crit_edge\n", text)
    if after is None:
        raise SystemExit("no loop exit block")
    return text[:after.end()] + store + text[after.end():]


def build(outdir, which="base"):
    os.makedirs(outdir, exist_ok=True)
    import triton
    ptxas = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "ptxas")
    cuobjdump = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
    meta = {}
    for c in SETS[which]:
        ptx, shared = compile_plain(c)
        t = tag(c)
        for kind, text in (("plain", ptx), ("stamped", stamped(ptx, c[3]))):
            p = os.path.join(outdir, f"{t}_{kind}.ptx")
            open(p, "w").write(text)
            cub = p.replace(".ptx", ".cubin")
            r = subprocess.run([ptxas, "-arch=sm_90a", "-v", "-o", cub, p], capture_output=True, text=True)
            if r.returncode:
                raise SystemExit(f"{t} {kind}: ptxas failed\n{r.stderr[-3000:]}")
            regs = int(re.search(r"Used (\d+) registers", r.stderr).group(1))
            spill = re.search(r"(\d+) bytes spill stores", r.stderr)
            sass = subprocess.run([cuobjdump, "-sass", cub], capture_output=True, text=True).stdout
            open(cub.replace(".cubin", ".sass"), "w").write(sass)
            meta[f"{t}_{kind}"] = dict(config=c, shared=shared, regs=regs, spill_stores=int(spill.group(1)) if spill else 0)
            print(t, kind, "regs", regs, "spill", meta[f"{t}_{kind}"]["spill_stores"], "shared", shared, flush=True)
    json.dump(meta, open(os.path.join(outdir, "meta.json"), "w"), indent=1)


def run(outdir):
    import ctypes
    import torch
    print("# " + torch.cuda.get_device_name(0), flush=True)
    meta = json.load(open(os.path.join(outdir, "meta.json")))
    torch.cuda.init()
    torch.empty(1, device="cuda")
    cu = ctypes.CDLL("libcuda.so.1")

    def check(r, what):
        if r != 0:
            raise RuntimeError(f"{what}: CUresult {r}")

    print("config,M,N,K,kind,regs,ms,trips," + ",".join(f"{p}_cyc" for p in PHASES) + ",trip_cyc,clock_ghz,trip_ns",
          flush=True)
    for key, m in meta.items():
        c = tuple(m["config"])
        bm, bn, bk, w, s = c
        mod = ctypes.c_void_p()
        data = open(os.path.join(outdir, key + ".cubin"), "rb").read()
        check(cu.cuModuleLoadData(ctypes.byref(mod), data), "load")
        fn = ctypes.c_void_p()
        check(cu.cuModuleGetFunction(ctypes.byref(fn), mod, b"matmul_kernel"), "function")
        check(cu.cuFuncSetAttribute(fn, 8, ctypes.c_int(m["shared"])), "smem attribute")
        for M, N, K in SHAPES:
            a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
            b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
            cc = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
            grid = -(-M // bm) * -(-N // bn)
            groups = max(w // 4, 1)
            scratch = torch.zeros(grid * groups * 8, device="cuda", dtype=torch.int64)
            vals = [ctypes.c_uint64(a.data_ptr()), ctypes.c_uint64(b.data_ptr()), ctypes.c_uint64(cc.data_ptr()),
                    ctypes.c_int32(M), ctypes.c_int32(N), ctypes.c_int32(K), ctypes.c_int32(K), ctypes.c_int32(N),
                    ctypes.c_int32(N), ctypes.c_uint64(scratch.data_ptr()), ctypes.c_uint64(0)]
            params = (ctypes.c_void_p * len(vals))(*[ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in vals])

            def launch():
                check(cu.cuLaunchKernel(fn, grid, 1, 1, 32 * w, 1, 1, m["shared"], None, params, None), "launch")

            for _ in range(3):
                launch()
            torch.cuda.synchronize()
            if key.endswith("_plain"):
                ref = (a.float() @ b.float())
                err = (cc.float() - ref).abs().max().item() / ref.abs().max().item()
                if err > 2e-2:
                    print(f"# {key} {M}x{N}x{K}: relative error {err:.3g}", flush=True)
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            times = []
            for _ in range(10):
                torch.cuda.synchronize()
                e0.record(); launch(); e1.record(); torch.cuda.synchronize()
                times.append(e0.elapsed_time(e1))
            ms = sorted(times)[len(times) // 2]
            row = [tag(c), M, N, K, key.rsplit("_", 1)[1], m["regs"], f"{ms:.5f}"]
            if key.endswith("_stamped"):
                st = scratch.view(-1, 8).cpu().tolist()
                trips = sum(r[5] for r in st)
                ph = [sum(r[j] for r in st) / max(trips, 1) for j in range(5)]
                # the 'rest' phase sums t0' - t4 over trips after the first: its mean over those
                ph[4] = sum(r[4] for r in st) / max(sum(r[5] - 1 for r in st), 1)
                cyc = sum(ph)
                # the SM clock: a record's loop cycles over its global-timer span (kernel entry to loop exit)
                ghz = sum(sum(r[0:5]) / (r[7] - r[6]) for r in st if r[7] > r[6]) / len(st)
                row += [f"{trips / len(st):.1f}"] + [f"{x:.1f}" for x in ph] + [f"{cyc:.1f}", f"{ghz:.3f}",
                                                                               f"{cyc / ghz if ghz else 0:.1f}"]
            print(",".join(str(x) for x in row), flush=True)
            del a, b, cc, scratch
        cu.cuModuleUnload(mod)


if __name__ == "__main__":
    {"build": build, "run": run}[sys.argv[1]](*sys.argv[2:])
