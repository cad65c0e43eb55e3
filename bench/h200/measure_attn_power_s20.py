#!/usr/bin/env python3
"""H200: the power-limited clock of the issue-15 flash-attention tiles, by configuration, by which
operands carry random bits, and over time from an idle start (issue 15, session 20, attn20).

Usage (on the device machine, from the repository root; ~70-100 s):
    PYTHONUNBUFFERED=1 APOW_DEADLINE_S=95 python3 bench/h200/measure_attn_power_s20.py OUTDIR

Why: calibration/h200/measured/attn_s19/power (measure_attn_power_s19.py) showed that on random
data the B8 H32 S4096 D128 launches run at nvidia-smi SM clocks of 1,710-1,860 MHz against
1,965-1,980 on zeros, and that the random / zeros time ratio equals the clock ratio (64 x 64 w4
s3 1.164 against 1,972.5 / 1,710 = 1.153; 128 x 64 w8 s4 1.055 against 1.065); the same tiles at B1
(0.56 ms launches, do_bench's 25 ms window) ran unthrottled, while B1 back to back for 400 ms
throttled as B8 did. Four tiles do not say which activity sets the clock (the tensor flop rate
alone does not order them: 64 x 64 w4 s3 and 128 x 64 w8 s4 run within 3% of one tensor rate
on zeros, at 1,710 and 1,860 MHz), nor how long a sustained load takes to reach it. Here:

  * 18 tiles (D = 128 and D = 64) spanning the tensor rate, the shared-memory operand bytes per
    flop ((BLOCK_M + 2 BLOCK_N) / (2 BLOCK_M BLOCK_N)), the L2 -> SM bytes per flop (1 / BLOCK_M),
    the trips per flop (1 / (BLOCK_M BLOCK_N)) and the resident warps;
  * data modes: random (q, k, v ~ N(0, 1)), zeros, and on the first six tiles `qk` (V zeros: QK^T
    and the softmax toggle, PV multiplies zeros) and `v` (K zeros: every score 0, P constant, PV
    toggles with V);
  * for each (tile, mode), after 0.4 s idle: the campaigns' protocol (256 MB L2 clear, then the
    launch, CUDA events around the launch) repeated for 400 ms, each launch's ms and its start
    time since the first (a trajectory: when the throttle starts and where it settles);
    nvidia-smi sampled every ~20 ms beside it (clocks.sm, power.draw.instant, power.limit,
    clocks_event_reasons.sw_power_cap / hw_slowdown / sw_thermal_slowdown, temperature.gpu).

Shapes: full attention B1 H32 S4096 at D = 128 (~0.56 ms), B2 H32 S4096 at D = 64 (~0.6 ms): the
per-CTA work of the campaigns' long launches in launches short enough for a trajectory.
Writes summary.csv (one row per tile and mode: early / do_bench-window / late medians, onset,
smi medians), traj.csv.gz (every launch), smi.csv.gz (every sample), by_length.csv (Part B, run
first: 64 x 64 w4 s3 and 128 x 64 w8 s4 at B1..B16 H32 S4096 D128, 0.56..9 ms, random and zeros,
timed as measure_accuracy.py's bench() times the campaigns: how long a launch must be before the
limit's clock shows), log.txt. No row starts after
APOW_DEADLINE_S seconds; a failing row is written with its status.
"""
import csv
import gzip
import math
import multiprocessing as mp
import os
import statistics
import subprocess
import sys
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
T0 = time.time()
OUT = sys.argv[1] if len(sys.argv) > 1 else "."
DEADLINE_S = float(os.environ.get("APOW_DEADLINE_S", "95"))
TRAJ_S = float(os.environ.get("APOW_TRAJ_S", "0.4"))
IDLE_S = float(os.environ.get("APOW_IDLE_S", "0.4"))
LOG2E = 1.4426950408889634

# (D, BLOCK_M, BLOCK_N, WARPS, STAGES); the first six also get the `qk` and `v` modes
CFGS = [
    (128, 64, 64, 4, 3), (128, 64, 64, 4, 2), (128, 128, 64, 8, 4), (128, 128, 32, 8, 3),
    (64, 64, 64, 4, 3), (64, 128, 64, 8, 4),
    (128, 64, 32, 4, 3), (128, 64, 32, 4, 4), (128, 128, 32, 4, 3), (128, 128, 64, 8, 2),
    (128, 128, 128, 8, 2), (128, 64, 64, 8, 3), (128, 64, 128, 4, 3), (128, 128, 64, 4, 3),
    (128, 64, 32, 8, 3),
    (64, 128, 128, 4, 2), (64, 64, 32, 4, 4), (64, 128, 32, 8, 3),
]
SHAPE = {128: (1, 32, 4096), 64: (2, 32, 4096)}
# Part B: the same launch 1..16x longer under the campaigns' protocol (B1..B16 H32 S4096 D128)
LEN_CFGS = [(128, 64, 64, 4, 3), (128, 128, 64, 8, 4)]
SMI_FIELDS = ["clocks.sm", "power.draw.instant", "power.limit", "clocks_event_reasons.sw_power_cap",
              "clocks_event_reasons.hw_slowdown", "clocks_event_reasons.sw_thermal_slowdown", "temperature.gpu"]

LOG = []     # opened in main(): the spawned compile workers import this file too


def log(*a):
    line = f"[{time.time() - T0:6.1f}s] " + " ".join(str(x) for x in a)
    print(line, flush=True)
    for f in LOG:
        f.write(line + "\n")
        f.flush()


def bufs(D, mode, gen=None):
    import torch
    B, H, S = SHAPE[D]
    shape = (B * H, S, D)

    def rnd():
        return torch.randn(shape, device="cuda", dtype=torch.float32, generator=gen).to(torch.bfloat16)

    def zer():
        return torch.zeros(shape, device="cuda", dtype=torch.bfloat16)
    q = rnd() if mode in ("random", "qk", "v") else zer()
    k = rnd() if mode in ("random", "qk") else zer()
    v = rnd() if mode in ("random", "v") else zer()
    o = torch.empty(shape, device="cuda", dtype=torch.bfloat16)
    lse = torch.empty((B * H, S), device="cuda", dtype=torch.float32)
    return q, k, v, o, lse


def compile_job(cfg):
    t = time.time()
    try:
        import triton
        from triton_kernels import flash_fwd_kernel
        D, bm, bn, w, st = cfg
        q, k, v, o, lse = bufs(D, "zeros")
        B, H, S = SHAPE[D]
        flash_fwd_kernel.warmup(q, k, v, o, lse, 0.1, S, D=D, BLOCK_M=bm, BLOCK_N=bn, CAUSAL=False,
                                grid=(triton.cdiv(S, bm), B * H), num_warps=w, num_stages=st)
        return cfg, round(time.time() - t, 1), ""
    except Exception as e:  # noqa: BLE001
        return cfg, round(time.time() - t, 1), repr(e)[:300]


def probe_smi_fields():
    """The SMI_FIELDS this driver answers (an unknown field fails the whole query); the older
    clocks_throttle_reasons.* names stand in for clocks_event_reasons.*, power.draw for .instant."""
    alt = {"power.draw.instant": "power.draw"}
    keep = []
    for f in SMI_FIELDS:
        for name in (f, alt.get(f, f.replace("clocks_event_reasons", "clocks_throttle_reasons"))):
            try:
                r = subprocess.run(["nvidia-smi", "--query-gpu=" + name, "--format=csv,noheader,nounits"],
                                   capture_output=True, text=True, timeout=5)
                if r.returncode == 0 and r.stdout.strip() and "not a valid" not in r.stdout.lower():
                    keep.append(name)
                    break
            except Exception:  # noqa: BLE001
                pass
        else:
            keep.append(None)
    return keep


def smi_sampler(stop, samples, t_ref):
    query = "--query-gpu=" + ",".join(f for f in SMI_FIELDS if f)
    while not stop.is_set():
        try:
            out = subprocess.run(["nvidia-smi", query, "--format=csv,noheader,nounits"], capture_output=True,
                                 text=True, timeout=2).stdout.strip().splitlines()[0]
            vals = iter(x.strip() for x in out.split(","))
            samples.append([round((time.time() - t_ref[0]) * 1e3, 1)] + [next(vals) if f else "" for f in SMI_FIELDS])
        except Exception:  # noqa: BLE001
            pass
        time.sleep(0.015)


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def num(x):
    try:
        return float(x)
    except ValueError:
        return float("nan")


def main():
    os.makedirs(OUT, exist_ok=True)
    LOG.append(open(os.path.join(OUT, "log.txt"), "w"))
    import torch
    import triton
    from triton_kernels import flash_fwd_kernel
    log("device", torch.cuda.get_device_name(0), "torch", torch.__version__, "triton", triton.__version__)
    SMI_FIELDS[:] = probe_smi_fields()
    log("nvidia-smi fields", SMI_FIELDS)
    with mp.get_context("spawn").Pool(min(len(CFGS), max(1, (os.cpu_count() or 4) - 2))) as pool:
        for cfg, secs, err in pool.imap_unordered(compile_job, CFGS):
            log("compiled", cfg, secs, "s", err)
    flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda")
    fields = ["D", "B", "H", "S", "BLOCK_M", "BLOCK_N", "WARPS", "STAGES", "mode", "launches", "early_ms", "dobench_ms",
              "late_ms", "late_over_early", "onset_ms", "smi_mhz_early", "smi_mhz_late", "smi_power_late_w",
              "power_limit_w", "sw_power_cap_share", "hw_slowdown_share", "temp_late_c", "status"]
    rows = []
    lens = []
    traj = gzip.open(os.path.join(OUT, "traj.csv.gz"), "wt")
    traj.write("D,BLOCK_M,BLOCK_N,WARPS,STAGES,mode,i,t_ms,ms\n")
    smi = gzip.open(os.path.join(OUT, "smi.csv.gz"), "wt")
    smi.write("D,BLOCK_M,BLOCK_N,WARPS,STAGES,mode,t_ms," + ",".join(f or "absent" for f in SMI_FIELDS) + "\n")
    # ---- Part B: the campaigns' protocol (measure_accuracy.py's bench(): do_bench 25 ms, then
    # 10 x ms for launches over 2.5 ms) by launch length: B = 1..16 at D = 128, random and zeros
    for cfg in LEN_CFGS:
        D, bm, bn, w, st = cfg
        for B in (1, 2, 4, 8, 16):
            for mode in ("random", "zeros"):
                H, S = 32, 4096
                row = dict(D=D, B=B, H=H, S=S, BLOCK_M=bm, BLOCK_N=bn, WARPS=w, STAGES=st, mode=mode, status="ok")
                if time.time() - T0 > DEADLINE_S:
                    row["status"] = "skipped (deadline)"
                    lens.append(row)
                    continue
                try:
                    gen = torch.Generator(device="cuda")
                    gen.manual_seed(20)
                    shape = (B * H, S, D)
                    mk = (lambda: torch.randn(shape, device="cuda", dtype=torch.float32, generator=gen).to(torch.bfloat16)) \
                        if mode == "random" else (lambda: torch.zeros(shape, device="cuda", dtype=torch.bfloat16))
                    q, k, v = mk(), mk(), mk()
                    o = torch.empty(shape, device="cuda", dtype=torch.bfloat16)
                    lse = torch.empty((B * H, S), device="cuda", dtype=torch.float32)
                    grid = (triton.cdiv(S, bm), B * H)

                    def fn():
                        flash_fwd_kernel[grid](q, k, v, o, lse, LOG2E / math.sqrt(D), S, D=D, BLOCK_M=bm, BLOCK_N=bn,
                                               CAUSAL=False, num_warps=w, num_stages=st)
                    fn()
                    torch.cuda.synchronize()
                    time.sleep(IDLE_S)
                    ms = triton.testing.do_bench(fn, warmup=5, rep=25)
                    row["dobench25_ms"] = round(ms, 5)
                    if ms > 2.5:
                        ms = triton.testing.do_bench(fn, warmup=5, rep=10 * ms)
                    row["bench_ms"] = round(ms, 5)
                    del q, k, v, o, lse
                except Exception as e:  # noqa: BLE001
                    row["status"] = f"error {type(e).__name__}: {str(e)[:120]}"
                    log(traceback.format_exc())
                log(row)
                lens.append(row)
    with open(os.path.join(OUT, "by_length.csv"), "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=["D", "B", "H", "S", "BLOCK_M", "BLOCK_N", "WARPS", "STAGES", "mode",
                                           "dobench25_ms", "bench_ms", "status"])
        wr.writeheader()
        for r in lens:
            wr.writerow(r)
    for n_cfg, cfg in enumerate(CFGS):
        D, bm, bn, w, st = cfg
        B, H, S = SHAPE[D]
        modes = ["random", "zeros"] + (["qk", "v"] if n_cfg < 6 else [])
        for mode in modes:
            row = dict(D=D, B=B, H=H, S=S, BLOCK_M=bm, BLOCK_N=bn, WARPS=w, STAGES=st, mode=mode, status="ok")
            if time.time() - T0 > DEADLINE_S:
                row["status"] = "skipped (deadline)"
                rows.append(row)
                continue
            try:
                gen = torch.Generator(device="cuda")
                gen.manual_seed(20)
                q, k, v, o, lse = bufs(D, mode, gen)
                grid = (triton.cdiv(S, bm), B * H)

                def fn():
                    flash_fwd_kernel[grid](q, k, v, o, lse, LOG2E / math.sqrt(D), S, D=D, BLOCK_M=bm, BLOCK_N=bn,
                                           CAUSAL=False, num_warps=w, num_stages=st)
                fn()
                torch.cuda.synchronize()
                time.sleep(IDLE_S)
                samples, stop, t_ref = [], threading.Event(), [time.time()]
                th = threading.Thread(target=smi_sampler, args=(stop, samples, t_ref))
                th.start()
                n = 0
                evs = []
                t_ref[0] = time.time()
                first = torch.cuda.Event(enable_timing=True)
                first.record()
                while time.time() - t_ref[0] < TRAJ_S and n < 4000:
                    flush.zero_()
                    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    a.record()
                    fn()
                    b.record()
                    evs.append((a, b))
                    n += 1
                    if n % 64 == 0:       # keep the host at most ~64 launches ahead
                        evs[-32][1].synchronize()
                torch.cuda.synchronize()
                stop.set()
                th.join()
                ts = [first.elapsed_time(a) for a, _ in evs]
                ms = [a.elapsed_time(b) for a, b in evs]
                for i, (t, x) in enumerate(zip(ts, ms)):
                    traj.write(f"{D},{bm},{bn},{w},{st},{mode},{i},{t:.3f},{x:.5f}\n")
                for s in samples:
                    smi.write(f"{D},{bm},{bn},{w},{st},{mode}," + ",".join(str(x) for x in s) + "\n")
                early = [x for t, x in zip(ts, ms) if t < 10] or ms[:5]
                window = [x for t, x in zip(ts, ms) if 5 <= t < 30]
                late = [x for t, x in zip(ts, ms) if t >= TRAJ_S * 1e3 - 120]
                row.update(launches=n, early_ms=round(med(early), 5), dobench_ms=round(med(window), 5),
                           late_ms=round(med(late), 5), late_over_early=round(med(late) / med(early), 4))
                # onset: the first launch after which a rolling median of 9 stays above early x 1.02
                roll = [med(ms[max(0, i - 4):i + 5]) for i in range(len(ms))]
                onset = next((ts[i] for i in range(len(ms)) if all(r > med(early) * 1.02 for r in roll[i:i + 20])),
                             float("nan"))
                row["onset_ms"] = round(onset, 1)
                e_s = [s for s in samples if s[0] < 15]
                l_s = [s for s in samples if s[0] >= TRAJ_S * 1e3 - 150]
                row["smi_mhz_early"] = med([num(s[1]) for s in e_s])
                row["smi_mhz_late"] = med([num(s[1]) for s in l_s])
                row["smi_power_late_w"] = med([num(s[2]) for s in l_s])
                row["power_limit_w"] = med([num(s[3]) for s in l_s])
                row["sw_power_cap_share"] = round(statistics.mean([s[4].lower() == "active" for s in l_s]), 3) if l_s else ""
                row["hw_slowdown_share"] = round(statistics.mean([s[5].lower() == "active" for s in l_s]), 3) if l_s else ""
                row["temp_late_c"] = med([num(s[7]) for s in l_s])
                del q, k, v, o, lse
            except Exception as e:  # noqa: BLE001
                row["status"] = f"error {type(e).__name__}: {str(e)[:120]}"
                log(traceback.format_exc())
            log(row)
            rows.append(row)
    traj.close()
    smi.close()
    with open(os.path.join(OUT, "summary.csv"), "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=fields)
        wr.writeheader()
        for r in rows:
            wr.writerow(r)
    log("total", round(time.time() - T0, 1), "s")


if __name__ == "__main__":
    main()
