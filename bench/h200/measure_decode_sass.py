#!/usr/bin/env python3
"""What one trip of the split-KV decode kernel's KV loop issues: its SASS for sm_90, counted.

Usage (no GPU needed; pip install triton==3.6.0, the version of the issue-15 and decode_trip
runs, whose own ptxas and cuobjdump compile for sm_90):
    python3 bench/h200/measure_decode_sass.py OUTDIR

No kernel is run or timed. The script compiles bench/h200/triton_kernels.py's
decode_split_kernel (kernels/gqa_decode.tile launch 1, the kernel of the issue-15 gqa_decode
rows, launched as bench/h200/measure_accuracy.py launches it: GP = 16, D = 128) at every
BLOCK_N x WARPS x STAGES of those rows and of calibration/h200/measured/decode_trip, with the
JIT's specialization given by hand as bench/h200/measure_spill_sass.py --cpu does (pointers
and the ints SKV, SPLIT_LEN, multiples of 16: tt.divisibility 16; SPLITS, HKV, G are
do_not_specialize, so one binary serves every SPLITS and shape). cuobjdump -res-usage's REG
must equal the measured registers (the check that it is the measured binary).

It then reads the KV loop's body (the backward branch whose span holds the HMMAs: one trip)
with each instruction's control bits (sm_90 128-bit encoding, bits 105-125 of the second word:
stall cycles 4 bits, yield 1, write scoreboard 3, read scoreboard 3, wait mask 6, reuse 4) and
counts per trip and warp: instructions by class, the compiler's stall cycles (its own static
schedule of the fixed-latency instructions), the scoreboard waits, and the instructions of the
chain's kinds (LDGSTS, LDGDEPBAR/DEPBAR, BAR, LDSM, HMMA, SHFL, MUFU.EX2, FMNMX, F2FP).

Writes decode_sass.csv (one row per configuration), log.txt and sass.tar.gz (each kernel's
full SASS `*.sass`, its loop body with decoded control bits `*.loop.txt`, its `*.ttgir`).
"""
import csv
import multiprocessing as mp
import os
import re
import subprocess
import sys
import tarfile
import time

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
os.environ.setdefault("TRITON_CACHE_DIR", "/tmp/tfx_triton_cache_decode_sass")
GP, D = 16, 128
CONFIGS = [(bn, w, s) for bn in (32, 64, 128) for w in (2, 4, 8) for s in (1, 2, 3)]
INSN = re.compile(r"\s+/\*([0-9a-f]{4,})\*/\s+(.*?);\s*/\* (0x[0-9a-f]{16}) \*/")
HI = re.compile(r"^\s+/\* (0x[0-9a-f]{16}) \*/\s*$")

# instruction classes counted per trip (first match wins; the opcode without predicate)
CLASSES = [
    ("ldgsts", r"^LDGSTS"), ("depbar", r"^(LDGDEPBAR|DEPBAR)"), ("bar", r"^BAR"),
    ("ldsm", r"^LDSM"), ("lds", r"^LDS"), ("sts", r"^STS"), ("hmma", r"^HMMA"), ("shfl", r"^SHFL"),
    ("mufu", r"^MUFU"), ("fmnmx", r"^FMNMX"), ("fp_arith", r"^(FADD|FMUL|FFMA|FSEL|FSETP|FSET)"),
    ("cvt", r"^(F2FP|F2F|I2F|F2I)"), ("int_addr", r"^(IMAD|IADD|LEA|SHF|LOP|ISETP|IMNMX|SEL|MOV|PRMT|IABS|ULDC|"
                                        r"UIADD|UIMAD|ULEA|USHF|ULOP|UMOV|UISETP|USEL|UPRMT|S2R|S2UR|CS2R|R2UR|PLOP|P2R|R2P)"),
    ("branch", r"^(BRA|BSYNC|BSSY|WARPSYNC|EXIT|NOP|YIELD)"),
]


def control(hi):
    """Decoded control bits of one sm_90 instruction's second 64-bit word."""
    c = hi >> 41
    return dict(stall=c & 0xF, yld=(c >> 4) & 1, wr=(c >> 5) & 7, rd=(c >> 8) & 7, wait=(c >> 11) & 0x3F,
                reuse=(c >> 17) & 0xF)


def parse(sass):
    """[(offset, text, control)] of the SASS, the text without predicate guard kept as is."""
    out, lines = [], sass.splitlines()
    for i, ln in enumerate(lines):
        m = INSN.match(ln)
        if m and i + 1 < len(lines):
            h = HI.match(lines[i + 1])
            if h:
                out.append((int(m.group(1), 16), m.group(2).strip(), control(int(h.group(1), 16))))
    return out


def opcode(text):
    return re.sub(r"^@!?U?P\w+\s+", "", text).split()[0]


def loop_span(lines):
    """(start, end) offsets of the KV loop: the backward branch whose span holds the most HMMAs."""
    best, best_n = None, -1
    for at, text, _ in lines:
        mb = re.search(r"\bBRA\b.*?(0x[0-9a-f]+)", text)
        if mb and int(mb.group(1), 16) < at:
            lo = int(mb.group(1), 16)
            n = sum(1 for a, t, _ in lines if lo <= a <= at and "HMMA" in t)
            if n > best_n:
                best, best_n = (lo, at), n
    return best


def classify(op):
    for name, pat in CLASSES:
        if re.match(pat, op):
            return name
    return "other"


def summary(body):
    """Per-trip counts of one warp's loop body."""
    c = {"insns": len(body), "stall_cycles": 0, "waits": 0, "yields": 0}
    for name, _ in CLASSES + [("other", "")]:
        c[name] = 0
    others = {}
    for _, text, ctl in body:
        op = opcode(text)
        k = classify(op)
        c[k] += 1
        if k == "other":
            others[op.split(".")[0]] = others.get(op.split(".")[0], 0) + 1
        c["stall_cycles"] += ctl["stall"]
        c["waits"] += 1 if ctl["wait"] else 0
        c["yields"] += 1 if ctl["yld"] == 0 else 0
    c["mufu_ex2"] = sum(1 for _, t, _ in body if "MUFU.EX2" in t)
    c["other_ops"] = " ".join(f"{k}:{v}" for k, v in sorted(others.items()))
    return c


# cycles from issue to a variable-latency result (the scoreboard release) for the one-warp schedule:
# hw_profiles/h200_sxm.toml instruction_latency (calibration/h200/measured/latency/instr_latency.csv):
# ld.shared 23 (ldmatrix taken as it), shfl.sync 24, ex2 17, bar.sync 20 (4 warps back to back);
# any other scoreboarded result (a register read by LDGSTS/STS, I2F...) 4, as an fma
LATENCY = dict(LDSM=23, LDS=23, SHFL=24, MUFU=17, BAR=20, OTHER=4)
SMEM_READ_BYTES = {"LDSM.16.M88.4": 512, "LDSM.16.MT88.4": 512, "LDSM.16.M88.2": 256, "LDSM.16.MT88.2": 256,
                   "LDSM.16.M88": 128, "LDS": 128, "LDS.64": 256, "LDS.128": 512}


def warp_schedule(body, trips=3):
    """Cycles of one trip of ONE warp issuing the body in order, alone on its sub-partition: each
    instruction waits for the scoreboards of its wait mask, then the next issues after its
    stall count (the compiler's static schedule of the fixed-latency results); a scoreboarded
    result is ready LATENCY cycles after issue; BAR.SYNC holds the warp bar.sync cycles (all
    warps arriving together). Steady state: the mean of trips 2..trips."""
    t, ready, starts = 0, [0] * 6, []
    for _ in range(trips):
        starts.append(t)
        for _, text, ctl in body:
            for b in range(6):
                if ctl["wait"] >> b & 1:
                    t = max(t, ready[b])
            op = opcode(text)
            kind = next((k for k in ("LDSM", "LDS", "SHFL", "MUFU") if op.startswith(k)), "OTHER")
            if ctl["wr"] != 7:
                ready[ctl["wr"]] = max(ready[ctl["wr"]], t if op.startswith("LDGDEPBAR") else t + LATENCY[kind])
            if ctl["rd"] != 7:
                ready[ctl["rd"]] = max(ready[ctl["rd"]], t + LATENCY["OTHER"])
            t += max(ctl["stall"], LATENCY["BAR"]) if op.startswith("BAR") else ctl["stall"]
    return (t - starts[1]) / (trips - 1)


def smem_read_bytes(body):
    """Shared-memory bytes one warp reads a trip (ldmatrix x4 = 32 lanes x 16 B, lds 32 x 4 B)."""
    return sum(SMEM_READ_BYTES.get(opcode(tx).replace(".U32", ""), 0) for _, tx, _ in body
               if not tx.startswith("@!PT"))


def cuobjdump_path():
    import triton
    tool = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
    return tool if os.path.exists(tool) else "cuobjdump"


def compile_cpu(bn, w, s):
    """decode_split_kernel for sm_90 with no GPU: the compiled kernel."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton_kernels import decode_split_kernel as kern
    names = kern.arg_names
    sig = {"Q": "*bf16", "Kc": "*bf16", "Vc": "*bf16", "OP": "*fp32", "MLP": "*fp32", "qk_scale": "fp32",
           "SKV": "i32", "SPLIT_LEN": "i32", "SPLITS": "i32", "HKV": "i32", "G": "i32"}
    consts = dict(GP=GP, D=D, BLOCK_N=bn)
    sig = {k: sig.get(k, "constexpr") for k in names}
    attrs = {(names.index(k),): [["tt.divisibility", 16]] for k in ("Q", "Kc", "Vc", "OP", "MLP", "SKV", "SPLIT_LEN")}
    return triton.compile(ASTSource(fn=kern, signature=sig, constexprs=consts, attrs=attrs),
                          target=GPUTarget("cuda", 90, 32), options=dict(num_warps=w, num_stages=s))


def worker(cfg):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    bn, w, s = cfg
    name = f"decode_split_bn{bn}_w{w}_s{s}"
    t = time.time()
    try:
        k = compile_cpu(bn, w, s)
        cub = os.path.join("/tmp", name + ".cubin")
        with open(cub, "wb") as f:
            f.write(k.asm["cubin"])
        usage = subprocess.run([cuobjdump_path(), "-res-usage", cub], capture_output=True, text=True,
                               timeout=60).stdout
        sass = subprocess.run([cuobjdump_path(), "-sass", cub], capture_output=True, text=True, timeout=120).stdout
        lines = parse(sass)
        lo, hi = loop_span(lines) or (1, 0)
        body = [x for x in lines if lo <= x[0] <= hi]
        c = summary(body)
        c["warp_schedule_cycles"] = round(warp_schedule(body), 1)
        c["smem_read_bytes_per_warp"] = smem_read_bytes(body)
        text = "\n".join(f"/*{a:04x}*/ S{ctl['stall']:>2} {'Y' if ctl['yld'] == 0 else ' '} "
                         f"W{ctl['wr'] if ctl['wr'] != 7 else '-'} R{ctl['rd'] if ctl['rd'] != 7 else '-'} "
                         f"wait{ctl['wait']:06b}  {tx}" for a, tx, ctl in body)
        row = dict(kernel=name, BLOCK_N=bn, WARPS=w, STAGES=s,
                   regs=int(re.search(r"REG:(\d+)", usage).group(1)),
                   spills=int(re.search(r"STACK:(\d+)", usage).group(1)) // 4, shared=k.metadata.shared,
                   loop_lo=f"{lo:#x}", loop_hi=f"{hi:#x}", **c, compile_s=round(time.time() - t, 1), error="")
        return row, sass, text, k.asm.get("ttgir", "")
    except Exception as exc:  # noqa: BLE001
        return dict(kernel=name, BLOCK_N=bn, WARPS=w, STAGES=s, error=repr(exc)[:400]), "", "", ""


def main():
    os.makedirs(OUT, exist_ok=True)
    logf = open(os.path.join(OUT, "log.txt"), "w")

    def log(*a):
        s = " ".join(str(x) for x in a)
        print(s, flush=True)
        logf.write(s + "\n")
        logf.flush()
    import triton
    log("triton", triton.__version__, "compiled for sm_90 without a GPU")
    t0 = time.time()
    rows = []
    tar = tarfile.open(os.path.join(OUT, "sass.tar.gz"), "w:gz")
    procs = int(os.environ.get("SASS_PROCS", "2"))
    with mp.get_context("spawn").Pool(procs) as pool:
        for row, sass, text, ttgir in pool.imap(worker, CONFIGS, chunksize=1):
            log(row)
            rows.append(row)
            for suffix, body in ((".sass", sass), (".loop.txt", text), (".ttgir", ttgir)):
                if body:
                    p = os.path.join("/tmp", row["kernel"] + suffix)
                    with open(p, "w") as f:
                        f.write(body)
                    tar.add(p, arcname=row["kernel"] + suffix)
    tar.close()
    cols = []
    for r in rows:
        cols += [k for k in r if k not in cols]
    with open(os.path.join(OUT, "decode_sass.csv"), "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=cols)
        wr.writeheader()
        wr.writerows(rows)
    log(f"done in {time.time() - t0:.1f}s, {len(rows)} kernels")


if __name__ == "__main__":
    main()
