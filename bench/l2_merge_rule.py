#!/usr/bin/env python3
"""Which co-copiers' copies merge before the L2 slices? Every launch of the stored Nsight sets that count
the slices' sectors (calibration/h200/measured/l2_groupm_s14, _s16, _s17b, _s17t, _s18, _s19, _s23 and
persist_ncu_s21) against structural rules: the CTAs that run side by side in the first wave and copy
the same tile (the same pid_m: A's; the same pid_n: B's) send one copy to the slices (docs/analysis.md,
"A side-by-side merge rule against every stored Nsight launch (session 23, merge23)").

- copies: (BM x BK + BK x BN) x bytes x K / BK x CTAs (what the SMs receive: l1tex__m_xbar2l1tex_read
  sectors x 32 B equals it in every launch that counts it);
- merged: 1 - lts__t_sectors_srcunit_tex_op_read x 32 B / copies;
- the launch order: Triton's group-M order (pid_m fastest inside a group of GROUP_M rows; GROUP_M 1
  row-major), a persistent walk's tiles t = sm, sm + CTAS, ... row-major;
- where a position runs: the first wave's SM of position p is the stored dispatch order (cta_timeline_s18
  2560x8192x8192 64x256x64 G8, 132 distinct SMs: (128, 129), (130, 131), (124, 125), ..., pair after pair
  across the SM blocks of bench/cta_timeline_pairs.py), the k-th slot of an SM at position p + 132 k;
  CTAs an SM: the model's occupancy (occupancy.blocks_per_sm) with the campaigns' compiled registers and
  shared memory where a campaign measured the configuration (as bench/l2_groupm_compare.py);
- the rules, each the first wave's (W = min(CTAs, 132 x CTAs an SM) positions) copies less the distinct
  tiles of each group, over the copies: `pair` the TPC pair of one slot (positions 2k, 2k + 1: all its
  shared tile merges; l2_reuse.pair_merged_share gives the same, at one half of the shared tile),
  `sm` one SM's slots, `tpc` both SMs' slots, `block` one SM block (a GPC's worth of TPCs), `wave` the
  whole first wave (every co-copier in step).

Usage: python3 bench/l2_merge_rule.py [--no-model] (--no-model: CTAs an SM from shared memory alone)"""
import csv
import glob
import gzip
import os
import statistics
import sys
from typing import NamedTuple

HERE = "calibration/h200/measured"
KEYS = ("M", "N", "K", "BM", "BN", "BK", "WARPS", "STAGES")
# the share of a persistent walk's pairs (CTAs 2j, 2j + 1) on one TPC where it runs fewer CTAs than SMs
# (persist_walk_s20's smids, as hw_profiles/h200_sxm.toml walk_pair_merged_share's source counts them)
ON_ONE_TPC = {114: 48 / 57, 78: 9 / 39}
FAMILY = {"gemm": "gemm_bf16", "gemm_fp8": "gemm_fp8", "persistent": "persistent_gemm"}


def block(smid):
    """bench/cta_timeline_pairs.block: the SM blocks the first wave's dispatch walks pair by pair."""
    if smid < 64:
        return smid // 16
    if smid < 120:
        return 4 + (smid - 64) // 14
    return 8


def dispatch_order():
    rows = list(csv.DictReader(gzip.open(f"{HERE}/cta_timeline_s18/timeline_2560x8192x8192_64x256x64_w4_s5_g8.csv.gz", "rt")))
    rows.sort(key=lambda r: int(r["pid"]))
    order = [int(r["smid"]) for r in rows[:132]]
    assert len(set(order)) == 132
    return order


def tile_of(p, g0, g1, G):
    """(pid_m, pid_n) of launch position p: Triton's group-M order; G <= 1 row-major."""
    if G <= 1:
        return p // g1, p % g1
    width = G * g1
    first = (p // width) * G
    rows = min(g0 - first, G)
    return first + (p % width) % rows, (p % width) // rows


def rule_shares(g0, g1, G, a, b, W, order):
    """Per rule, 1 - the groups' distinct tiles' bytes / the first wave's copies."""
    def group(level, p):
        q, slot = p % 132, p // 132
        sm = order[q]
        return {"pair": (q // 2, slot), "sm": sm, "tpc": sm // 2, "block": block(sm), "wave": 0}[level]
    out = {}
    for level in ("pair", "sm", "tpc", "block", "wave"):
        groups = {}
        for p in range(W):
            m, n = tile_of(p, g0, g1, G)
            g = groups.setdefault(group(level, p), [set(), set(), 0])
            g[0].add(m)
            g[1].add(n)
            g[2] += 1
        copies = sum(g[2] for g in groups.values()) * (a + b)
        distinct = sum(len(g[0]) * a + len(g[1]) * b for g in groups.values())
        out[level] = 1 - distinct / copies
    return out


def compiled_resources():
    found = {}
    for path in sorted(glob.glob(f"{HERE}/issue15/run*/*.csv")):
        for c in csv.DictReader(open(path)):
            if c.get("regs") and c.get("smem_bytes") and c.get("family") in FAMILY.values() and c.get("status") == "ok":
                key = (c["family"],) + tuple(int(c[k]) for k in KEYS)
                found.setdefault(key, dict(regs=int(c["regs"]), spills=int(c["spills"] or 0), smem=int(c["smem_bytes"])))
    return found


def launches():
    for path in sorted(glob.glob(f"{HERE}/l2_groupm_s*/l2_groupm.csv")):
        for r in csv.DictReader(open(path)):
            if r.get("status") != "ok" or not r.get("lts__t_sectors_srcunit_tex_op_read"):
                continue
            yield os.path.basename(os.path.dirname(path))[9:], r["kernel"], r, float(r["lts__t_sectors_srcunit_tex_op_read"]) * 32
    for r in csv.DictReader(open(f"{HERE}/persist_ncu_s21/ncu_persist_s19.csv")):
        if r.get("status") == "ok":
            r = dict(r, GROUP_M="1")
            yield "pn21", "persistent", r, float(r["lts__t_sectors_srcunit_tex_op_read"].replace(",", "").split()[0]) * 32


class Launch(NamedTuple):
    """One stored launch's geometry for the merge rules: tile grid (g0 x g1), A and B tile bytes a step,
    the copies every CTA asks for (bytes), CTAs an SM (c) and the first wave's CTAs (W), and its name."""
    M: int
    N: int
    K: int
    BM: int
    BN: int
    BK: int
    WARPS: int
    STAGES: int
    G: int
    g0: int
    g1: int
    a: int
    b: int
    copies: int
    c: int
    W: int
    name: str


def model_context():
    """(analyze, profile, kernel modules, compiled resources) for ``launch_geometry``'s CTAs an SM."""
    from tfx.analysis.analyze import analyze
    from tfx.hw import load_profile
    from tfx.lang import parse_file
    mods = {k: parse_file(f"kernels/{'persistent_gemm' if k == 'persistent' else k}.tile") for k in FAMILY}
    return analyze, load_profile("h200_sxm"), mods, compiled_resources()


def launch_geometry(kernel, r, ctx=None, ctas_per_sm=None) -> Launch:
    """A stored launch's ``Launch``: CTAs an SM from the model's occupancy with the compiled resources where
    ``ctx`` (``model_context``) is given, else from shared memory alone; ``ctas_per_sm`` overrides both."""
    M, N, K, BM, BN, BK, WARPS, STAGES = (int(r[k]) for k in KEYS)
    G = int(r["GROUP_M"])
    size = 1 if kernel == "gemm_fp8" else 2
    g0, g1 = -(-M // BM), -(-N // BN)
    a, b = BM * BK * size, BN * BK * size
    copies = (a + b) * (-(-K // BK)) * g0 * g1
    if kernel == "persistent":
        c, W = 1, min(int(r["NUM_SMS"]), g0 * g1)
    else:
        if ctas_per_sm is not None:
            c = ctas_per_sm
        elif ctx is not None:
            analyze, prof, mods, compiled = ctx
            p = {k: int(r[k]) for k in KEYS}
            p["GROUP_M"] = G
            res = compiled.get((FAMILY[kernel],) + tuple(p[k] for k in KEYS))
            c = int(analyze(mods[kernel], None, prof, p, resources=res, check=False).metrics["occupancy.blocks_per_sm"])
        else:
            c = max(1, 233472 // (STAGES * (a + b) + 1024))
        W = min(g0 * g1, 132 * c)
    name = (f"{'fp8 ' if kernel == 'gemm_fp8' else 'pers ' if kernel == 'persistent' else ''}{M}x{N}x{K} "
            f"{BM}x{BN}x{BK} w{WARPS} s{STAGES} " + (f"p{r['NUM_SMS']}" if kernel == "persistent" else f"G{G}"))
    return Launch(M, N, K, BM, BN, BK, WARPS, STAGES, G, g0, g1, a, b, copies, c, W, name)


def main():
    ctx = model_context() if "--no-model" not in sys.argv else None
    order = dispatch_order()
    levels = ("pair", "sm", "tpc", "block", "wave")
    errs = {k: [] for k in levels}
    print(f"{'set':5s} {'launch':45s} {'c':>2s} {'waves':>5s} {'merged':>6s} " + " ".join(f"{k:>6s}" for k in levels))
    for tag, kernel, r, served in launches():
        x = launch_geometry(kernel, r, ctx)
        shares = rule_shares(x.g0, x.g1, x.G, x.a, x.b, x.W, order)
        note = " "
        if kernel == "persistent" and int(r["NUM_SMS"]) in ON_ONE_TPC:
            # a walk on 114 / 78 CTAs: only some of its pairs share a TPC (persist_walk_s20's smids);
            # the wider groups keep the 132-CTA order (no stored order for these)
            shares["pair"] *= ON_ONE_TPC[int(r["NUM_SMS"])]
            note = "*"
        merged = 1 - served / x.copies
        for k in levels:
            errs[k].append(abs(shares[k] - merged))
        print(f"{tag:5s} {x.name:44s}{note} {x.c:2d} {x.g0 * x.g1 / x.W:5.1f} {merged:6.3f} "
              + " ".join(f"{shares[k]:6.3f}" for k in levels))
    n = len(errs["pair"])
    print(f"{n} launches; |rule - measured|: " + "; ".join(
        f"{k} median {statistics.median(v):.3f}, max {max(v):.3f}, within 0.05 {sum(e <= 0.05 for e in v)}" for k, v in errs.items()))


if __name__ == "__main__":
    main()
