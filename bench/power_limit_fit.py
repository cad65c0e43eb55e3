#!/usr/bin/env python3
"""Fit power.tensor_share_at_limit and power.l2_traffic_power (tfx.analysis.power_limit) on the
flash-attention power microbenchmark, and check them on the GEMM clocks (CPU, no GPU).

    PYTHONPATH=$PWD python3 bench/power_limit_fit.py [calibration/h200/measured/attn_s19/power/attn_power.csv ...]

For each random-data row of the measurement (measure_attn_power_s19.py / _s20.py): the launch's
dynamic power over the limit at clock.core follows from the clock nvidia-smi reads under it and
the clock of the same launch on zeros (whose bits do not toggle: the limit does not bind),
P = (f_zeros / f_random)^a, a = compute.tensor.power_clock_exponent; the model's own busy shares
of the launch at clock.core (tfx.analysis.power_limit.launch: tensor cores busy, the L2 traffic
over memory.l2.bandwidth) are what P is linear in, P = (tensor_busy + k x l2_busy) / s. Least
squares through the origin for 1/s and k/s; prints each row's P measured and fitted and the
clock the fit gives. The compiled registers and shared memory of each tile are those of the
issue-15 campaigns' rows of the same configuration (calibration/h200/measured/issue15).
"""
import csv
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tfx.analysis import power_limit  # noqa: E402
from tfx.analysis.analyze import analyze  # noqa: E402
from tfx.hw import load_profile  # noqa: E402
from tfx.lang import parse_file  # noqa: E402

A = 3.0


def compiled_resources():
    """(D, BLOCK_M, BLOCK_N, WARPS, STAGES) -> (regs, smem) from the campaigns' attention rows."""
    out = {}
    for path in sorted(Path("calibration/h200/measured/issue15").glob("run*/attention.csv")):
        for row in csv.DictReader(open(path)):
            if row.get("spills") not in ("0", None, ""):
                continue
            key = tuple(int(row[k]) for k in ("D", "BLOCK_M", "BLOCK_N", "WARPS", "STAGES"))
            out.setdefault(key, (int(row["regs"]), int(row["smem_bytes"])))
    return out


def compile_on_cpu(key):
    """(regs, shared bytes) of the campaigns' kernel at ``key`` compiled for sm_90a on the CPU
    (Triton 3.6.0, as bench/h200/compile_attn_sass.py), or None without Triton."""
    try:
        import re
        import subprocess
        import tempfile
        sys.path.insert(0, str(Path(__file__).resolve().parent / "h200"))
        import triton
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource
        from triton_kernels import flash_fwd_kernel
    except Exception:  # noqa: BLE001
        return None
    D, bm, bn, w, st = key
    names = flash_fwd_kernel.arg_names
    sig = {"Q": "*bf16", "K": "*bf16", "V": "*bf16", "O": "*bf16", "LSE": "*fp32", "qk_scale": "fp32", "S": "i32"}
    attrs = {(i,): [["tt.divisibility", 16]] for i in range(5)}
    attrs[(names.index("S"),)] = [["tt.divisibility", 16]]
    k = triton.compile(ASTSource(fn=flash_fwd_kernel, signature={n: sig.get(n, "constexpr") for n in names},
                                 constexprs=dict(D=D, BLOCK_M=bm, BLOCK_N=bn, CAUSAL=False), attrs=attrs),
                       target=GPUTarget("cuda", 90, 32), options=dict(num_warps=w, num_stages=st))
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(k.asm["cubin"])
        f.flush()
        tool = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
        usage = subprocess.run([str(tool), "-res-usage", f.name], capture_output=True, text=True).stdout
    return int(re.search(r"REG:(\d+)", usage).group(1)), int(k.metadata.shared)


def busy(mod, prof, params, regs, smem):
    seen = []
    real = power_limit.launch

    def spy(m, t, b, p, body, **kw):
        pc = real(m, t, b, p, body, **kw)
        seen.append(pc)
        return pc
    power_limit.launch = spy
    try:
        analyze(mod, None, prof, params, resources={"regs": regs, "smem": smem, "spills": 0}, check=False)
    finally:
        power_limit.launch = real
    pc = seen[0]
    return float(pc.tensor_busy), float(pc.l2_busy)


def main(paths):
    prof = load_profile("h200_sxm")
    mod = parse_file("kernels/flash_attention.tile")
    res = compiled_resources()
    rows = []
    for path in paths:
        recs = list(csv.DictReader(open(path)))
        for r in recs:
            if r.get("data", r.get("mode")) != "random" or r.get("status") != "ok" or r.get("causal", "0") != "0":
                continue
            key = tuple(int(r[k]) for k in ("D", "BLOCK_M", "BLOCK_N", "WARPS", "STAGES"))
            twin = [z for z in recs if z.get("data", z.get("mode")) == "zeros" and z.get("B") == r.get("B")
                    and tuple(int(z[k]) for k in ("D", "BLOCK_M", "BLOCK_N", "WARPS", "STAGES")) == key]
            f_rand = float(r.get("smi_sm_mhz") or r.get("smi_mhz_late"))
            f_zero = float(twin[0].get("smi_sm_mhz") or twin[0].get("smi_mhz_late")) if twin else 1980.0
            if key not in res:
                res[key] = compile_on_cpu(key)
            if res[key] is None:
                print("no compiled resources for", key)
                continue
            params = dict(B=int(r["B"]), H=int(r["H"]), S=int(r["S"]), D=key[0], BLOCK_M=key[1], BLOCK_N=key[2],
                          WARPS=key[3], STAGES=key[4])
            t, b = busy(mod, prof, params, *res[key])
            rows.append((path, params, t, b, (f_zero / f_rand) ** A, f_rand, f_zero))
    # least squares P = c1 t + c2 b
    stt = sum(t * t for _, _, t, b, *_ in rows)
    sbb = sum(b * b for _, _, t, b, *_ in rows)
    stb = sum(t * b for _, _, t, b, *_ in rows)
    spt = sum(p * t for _, _, t, b, p, *_ in rows)
    spb = sum(p * b for _, _, t, b, p, *_ in rows)
    det = stt * sbb - stb * stb
    c1 = (spt * sbb - spb * stb) / det
    c2 = (spb * stt - spt * stb) / det
    print(f"fit over {len(rows)} rows: P = {c1:.4f} tensor_busy + {c2:.4f} l2_busy; "
          f"tensor_share_at_limit = 1/{c1:.4f} = {1 / c1:.4f}, l2_traffic_power = {c2:.4f}/{c1:.4f} = {c2 / c1:.4f}")
    for path, p, t, b, pm, fr, fz in rows:
        pf = c1 * t + c2 * b
        fc = fz * min(1, max(pf, 1) ** (-1 / A))
        print(f"  B{p['B']} D{p['D']} {p['BLOCK_M']}x{p['BLOCK_N']} w{p['WARPS']} s{p['STAGES']}: tensor {t:.3f} l2 {b:.3f} "
              f"P measured {pm:.3f} fitted {pf:.3f}; clock {fr:.0f} MHz measured, {fc:.0f} fitted")


if __name__ == "__main__":
    main(sys.argv[1:] or ["calibration/h200/measured/attn_s19/power/attn_power.csv"])
