#!/usr/bin/env python3
"""The campaigns' row kernels at every tile of one N, timed on all of an H100's SMs and again with some SMs held idle
(an H200's DRAM share a SM on the H100's own SMs; bench/h200/sm_blocker.py).

Usage (on the device machine; about two minutes at N = 1024):
    PYTHONUNBUFFERED=1 python3 bench/h200/measure_rows_blocked.py OUTDIR [--block-sms 40] [--n 1024]

Why (docs/analysis.md, "The H200's DRAM share on an H100's SMs"): no H200 has been lent since session 37, and the
open rankings are the row kernels' at N = 1024, whose order on the H200 the H100 does not show (every tile runs at
its copy rate there). Held to 92 SMs the H100 gives each about the H200's 32.1 B/ns: a 92-SM H100 is a part the
model prices with its own profile (`--knob hierarchy.sm.count=92`), so these rows test the row model where the
H200's order lives, on hardware that is lent.

Each (family, BLOCK_M, WARPS) of bench/h200/triton_kernels.py's softmax and rmsnorm (BLOCK_M and WARPS 1-16) is
compiled and launched once on all SMs (its registers, spills, shared memory and CTAs a SM), timed by do_bench on all
SMs, then every one of them (and a copy of the same bytes) once more inside the block with CUDA events (median of 5
after a warm-up). X is about 1 GB (M = 2^29 / N rows), Y as much.

Writes OUTDIR/rows.csv in the issue-15 campaigns' columns (kernel, profile, measured_ms: the blocked time; family,
shape; `note`: block_sms, ms_all (all SMs), copy_ms_blocked, copy_ms_all as name=value words, so that tfx validate
reads the file), OUTDIR/log.txt and, where SMs were held,
OUTDIR/hw.toml: the device's profile with its SM count less the held ones (`base = "h100_sxm"`), the part the blocked
times were measured on. Their rows leave `profile` empty, so `tfx validate OUTDIR/rows.csv --hw OUTDIR/hw.toml` prices
them on it; with nothing held the rows name the device's own profile.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

TILES = (1, 2, 4, 8, 16)


def main(out, block_sms, n):
    import torch
    import triton
    import sm_blocker
    from common import Campaign, write_rows
    from triton_kernels import rmsnorm_kernel, softmax_kernel
    run = Campaign(nvsmi_fields="name,clocks.sm,clocks.max.sm,clocks.mem,power.draw")
    run.open(out, "log.txt")
    log = run.log
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    log("torch", torch.__version__, "triton", triton.__version__, "device", torch.cuda.get_device_name(0), "sms", sms,
        "held", block_sms, "N", n)
    run.nvsmi()
    device_profile = "h200_sxm" if "H200" in torch.cuda.get_device_name(0) else "h100_sxm"
    if block_sms:
        held = f"{block_sms} of its {sms} SMs held idle by spinning CTAs (bench/h200/sm_blocker.py)"
        with open(os.path.join(out, "hw.toml"), "w") as f:
            f.write(f'base = "{device_profile}"\nkind = "gpu"\ndescription = "{device_profile}, {held}"\n\n'
                    f'[hierarchy.sm]\ncount = {{ value = {sms - block_sms}, unit = "count", origin = "measured", '
                    f'source = "{held}" }}\n')
    m = 2 ** 29 // n
    g = torch.Generator(device="cuda")
    g.manual_seed(40)
    X = torch.randn(m, n, device="cuda", generator=g).to(torch.bfloat16)
    Y = torch.empty_like(X)
    W = torch.randn(n, device="cuda", generator=g).to(torch.bfloat16)
    rows, launches = [], []
    for fam, kern in (("softmax", softmax_kernel), ("rmsnorm", rmsnorm_kernel)):
        args = (X, W, Y, m, n, 1.0 / n, 1e-6) if fam == "rmsnorm" else (X, Y, m, n)
        for bm in TILES:
            for warps in TILES:
                kw = dict(BLOCK_M=bm, BLOCK_N=n, num_warps=warps, num_stages=1)
                grid = (triton.cdiv(m, bm),)
                row = {"kernel": f"kernels/{fam}.tile", "profile": "" if block_sms else device_profile, "M": m,
                       "N": n, "BLOCK_M": bm,
                       "WARPS": warps, "family": fam, "shape": f"{m}x{n}", "block_sms": block_sms}
                try:
                    k = kern[grid](*args, **kw)
                    torch.cuda.synchronize()
                    row.update(regs=k.n_regs, spills=k.n_spills, smem_bytes=k.metadata.shared,
                               blocks_per_sm=run.occupancy(k, 32 * warps, k.metadata.shared))
                    fn = (lambda kern=kern, grid=grid, args=args, kw=kw: kern[grid](*args, **kw))
                    row["ms_all"] = float(triton.testing.do_bench(fn, warmup=5, rep=40, return_mode="median"))
                    launches.append((row, fn))
                except Exception as e:    # a tile that does not compile or launch leaves the others
                    row["error"] = repr(e)[:200]
                    log(fam, bm, warps, "failed:", row["error"])
                rows.append(row)
                log(fam, n, (bm, warps), "regs", row.get("regs"), "sp", row.get("spills"), "occ",
                    row.get("blocks_per_sm"), "ms all SMs", round(row.get("ms_all", 0), 4))
    copy = (lambda: Y.copy_(X))
    copy_all = float(triton.testing.do_bench(copy, warmup=5, rep=40, return_mode="median"))
    try:
        # the copy before and after the tiles: the faster of the two is the reference
        times = sm_blocker.time_held(block_sms, [copy] + [fn for _, fn in launches] + [copy], log)
        copy_blocked = min(times[0], times[-1])
        for (row, _), t in zip(launches, times[1:-1]):
            row["measured_ms"] = t
    except Exception as e:
        log("blocked pass failed:", repr(e)[:300])
        copy_blocked = None
    for row in rows:
        row.update(copy_ms_all=copy_all, copy_ms_blocked=copy_blocked, status="ok" if "measured_ms" in row else "")
        if "measured_ms" in row:
            log(row["family"], (row["BLOCK_M"], row["WARPS"]), "blocked", round(row["measured_ms"], 4), "over copy",
                round(row["measured_ms"] / copy_blocked, 4) if copy_blocked else "-")
    write_rows(os.path.join(out, "rows.csv"), [validate_row(row) for row in rows])
    run.nvsmi()
    log(f"done in {run.elapsed():.0f}s")


# tfx validate's columns (tfx.analysis.measured); the held SMs, the all-SM time and the copies' ride in `note`
COLUMNS = ["kernel", "profile", "measured_ms", "M", "N", "BLOCK_M", "WARPS", "regs", "spills", "smem_bytes",
           "blocks_per_sm", "family", "shape", "status", "note", "error"]
NOTED = ("block_sms", "ms_all", "copy_ms_all", "copy_ms_blocked")


def validate_row(row: dict) -> dict:
    """One row in `tfx validate`'s format: its columns, and NOTED as `name=value` words in `note` (a column validate
    reads as an annotation; session 41 found the first run's extra columns refused)."""
    out = {c: row.get(c, "") for c in COLUMNS}
    out["note"] = " ".join(f"{k}={row[k]}" for k in NOTED if row.get(k, "") not in ("", None))
    return out


if __name__ == "__main__":
    argv = sys.argv[1:]

    def opt(name, default):
        if name in argv:
            i = argv.index(name)
            value = argv[i + 1]
            del argv[i:i + 2]
            return int(value)
        return default
    block = opt("--block-sms", 40)
    n = opt("--n", 1024)
    main(argv[0] if argv else "rows_blocked_out", block, n)
