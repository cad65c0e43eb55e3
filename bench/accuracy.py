"""Predicted vs measured on the H200 calibration set: error per row and the median.

Rows: calibration/h200/bandwidth.csv (copy), calibration/h200/measured/gemm_triton.csv
(Triton tiled GEMM configurations, the gemm.tile schedule; resources from the compiled
kernels: threads, registers, shared memory), and calibration/h200/gemm_library.csv
(cuBLAS vs the best gemm.tile configuration the model finds); and, per family and shape,
the issue 15 truth in calibration/h200/measured/issue15/ (Triton-tiled versions of the shipped
kernels at random configurations with their compiled registers, spills and shared memory):
median |error|, signed median error, Spearman rank correlation, the regret of the configuration
ranked first and of the best of the three ranked first (`top3`), with the spilling rows apart.
Figures are on the held-out rows unless --split says.

    python3 bench/accuracy.py [--rows N] [--split heldout|tune|all] [--only families]
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tfx.analysis.analyze import analyze  # noqa: E402
from tfx.hw import load_profile  # noqa: E402
from tfx.lang import parse_file  # noqa: E402
from tfx.errors import TfxError  # noqa: E402

CAL = ROOT / "calibration" / "h200"
# each bundled profile's own measurements: the issue 15 campaigns that ran on that device
DEVICE_CALIBRATION = {"h200_sxm": CAL, "h100_sxm": ROOT / "calibration" / "h100"}
# Every row here was timed by triton.testing.do_bench (bench/h200/common.py), right after its
# 256 MB L2 clear: every analysis prices that condition (analyze's l2_clear; the measured
# families through tfx.analysis.measured.Predictor, whose default it is).


def copy_rows(profile):
    m = parse_file(ROOT / "kernels" / "copy.tile")
    out = []
    for r in csv.DictReader(open(CAL / "bandwidth.csv")):
        if r["op"] != "copy" or int(r["bytes_per_buffer"]) < 16 << 20:
            continue
        n = int(r["bytes_per_buffer"]) // 2
        a = analyze(m, None, profile, {"N": n}, l2_clear=True)
        out.append((f"copy {int(r['bytes_per_buffer']) >> 20} MiB", float(a.metrics["performance.predicted_ns"]) / 1e6,
                    float(r["ms"])))
    return out


def triton_rows(profile, limit=None):
    m = parse_file(ROOT / "kernels" / "gemm.tile")
    out = []
    for r in csv.DictReader(open(CAL / "measured" / "gemm_triton.csv")):
        if r["impl"] != "triton_tutorial" or r["status"] != "ok" or r["run"] != "1":
            continue
        p = {k: int(r[k]) for k in ("M", "N", "K", "BM", "BN", "BK", "WARPS", "STAGES", "GROUP_M")}
        res = {"threads": 32 * p["WARPS"], "regs": int(r["n_regs"]), "smem": int(r["shared_bytes"]),
               "spills": int(r["n_spills"])}
        a = analyze(m, None, profile, p, resources=res, l2_clear=True)
        label = "{M}x{N}x{K} {BM}x{BN}x{BK} w{WARPS} s{STAGES} g{GROUP_M}".format(**p)
        if int(r["n_spills"]):
            label += f" spills={r['n_spills']}"
        out.append((label, float(a.metrics["performance.predicted_ns"]) / 1e6, float(r["ms"])))
        if limit and len(out) >= limit:
            break
    return out


def library_rows(profile):
    """The best configuration of gemm.tile the model finds vs cuBLAS, bf16 shapes, analysed as
    cuBLAS compiles a GEMM (codegen cutlass: TMA copies, hand-pipelined wgmma; tfx.analysis.codegen)."""
    m = parse_file(ROOT / "kernels" / "gemm.tile")
    out = []
    grid = [(bm, bn, bk, w, s) for bm in (64, 128, 256) for bn in (64, 128, 256) for bk in (32, 64, 128)
            for w in (4, 8) for s in (2, 3, 4, 5)]
    for r in csv.DictReader(open(CAL / "gemm_library.csv")):
        if r["dtype"] != "bf16":
            continue
        M, N, K = int(r["M"]), int(r["N"]), int(r["K"])
        best = None
        for bm, bn, bk, w, s in grid:
            a = analyze(m, None, profile, {"M": M, "N": N, "K": K, "BM": bm, "BN": bn, "BK": bk,
                                           "WARPS": w, "STAGES": s}, check=False, codegen="cutlass",
                                           l2_clear=True)
            if a.occupancy is None or not a.occupancy.feasible:
                continue
            t = float(a.metrics["performance.predicted_ns"])
            if best is None or t < best[0]:
                best = (t, (bm, bn, bk, w, s))
        out.append((f"cuBLAS {M}x{N}x{K} (best {best[1]})", best[0] / 1e6, float(r["ms"])))
    return out


def attention_rows(profile):
    """flash_prefill.tile vs SDPA's FlashAttention-2 backend; gqa_decode.tile vs a split-KV
    Triton kernel with the same number of splits (measured/attention.csv)."""
    prefill = parse_file(ROOT / "kernels" / "flash_prefill.tile")
    decode = parse_file(ROOT / "kernels" / "gqa_decode.tile")
    out = []
    for r in csv.DictReader(open(CAL / "measured" / "attention.csv")):
        if r["status"] != "ok":
            continue
        B, HQ, HKV, D = int(r["B"]), int(r["HQ"]), int(r["HKV"]), int(r["D"])
        if r["kind"] == "prefill" and r["impl"] == "sdpa_flash" and r["causal"] == "1":
            S = int(r["SQ"])
            a = analyze(prefill, None, profile, {"B": B, "H": HQ, "S": S, "D": D}, l2_clear=True)
            out.append((f"prefill causal B{B} H{HQ} S{S} D{D}", float(a.metrics["performance.predicted_ns"]) / 1e6,
                        float(r["ms"])))
        elif r["kind"] == "decode" and r["impl"] == "triton_splitkv":
            SKV, splits = int(r["SKV"]), int(r["nsplit"])
            a = analyze(decode, None, profile, {"B": B, "HQ": HQ, "HKV": HKV, "SKV": SKV, "D": D,
                                                "SPLITS": splits}, l2_clear=True)
            out.append((f"decode B{B} {HQ}/{HKV} SKV{SKV} splits{splits}",
                        float(a.metrics["performance.predicted_ns"]) / 1e6, float(r["ms"])))
    return out


def triton_attention_rows(profile):
    """flash_prefill.tile and gqa_decode.tile vs Triton kernels with the same schedule and
    parameters (measured/attention_triton_prefill.csv, attention_triton_decode.csv), with the
    compiled kernels' resources (threads, registers, shared memory)."""
    prefill = parse_file(ROOT / "kernels" / "flash_prefill.tile")
    decode = parse_file(ROOT / "kernels" / "gqa_decode.tile")
    out = []
    for r in csv.DictReader(open(CAL / "measured" / "attention_triton_prefill.csv")):
        if r["impl"] == "sdpa_default" or r["status"] != "ok":
            continue
        p = {k: int(r[k]) for k in ("B", "H", "S", "D", "BLOCK_M", "BLOCK_N", "WARPS", "STAGES")}
        res = {"threads": 32 * p["WARPS"], "regs": int(r["n_regs"]), "smem": int(r["shared_bytes"]),
               "spills": int(r["n_spills"])}
        a = analyze(prefill, None, profile, p, resources=res, l2_clear=True)
        label = "prefill B{B} H{H} S{S} D{D} {BLOCK_M}x{BLOCK_N} w{WARPS} s{STAGES}".format(**p)
        out.append((label, float(a.metrics["performance.predicted_ns"]) / 1e6, float(r["ms"])))
    for r in csv.DictReader(open(CAL / "measured" / "attention_triton_decode.csv")):
        if r["impl"] == "sdpa_default" or r["status"] != "ok":
            continue
        p = {k: int(r[k]) for k in ("B", "HQ", "HKV", "SKV", "D", "SPLITS", "BLOCK_N", "WARPS", "STAGES")}
        # the split kernel's compiled resources, as for the prefill rows above: without them the
        # model's register estimate (37 a thread at BLOCK_N 32, 8 warps; 56-241 compiled) seats
        # more CTAs a SM than run (6 vs 4), and the round of the co-resident CTAs is priced wrong
        res = {"threads": 32 * p["WARPS"], "regs": int(r["n_regs"]), "smem": int(r["shared_bytes"]),
               "spills": int(r["n_spills"])}
        a = analyze(decode, None, profile, p, resources=res, l2_clear=True)
        label = "decode B{B} {HQ}/{HKV} SKV{SKV} sp{SPLITS} n{BLOCK_N} w{WARPS} s{STAGES}".format(**p)
        out.append((label, float(a.metrics["performance.predicted_ns"]) / 1e6, float(r["ms_total"])))
    return out


def campaign_rows(hw="h200_sxm", split="heldout", runs=None):
    """(campaign folder, MeasuredRow) of every issue 15 row measured on ``hw``'s device
    (DEVICE_CALIBRATION), in file order: ``split`` "heldout", "tune" or "all"; ``runs`` the
    campaign folders to keep (None: every one). The re-timed copies (``*retime*``) are left out."""
    from tfx.analysis.measured import read_measurements
    out = []
    for path in sorted((DEVICE_CALIBRATION[hw] / "measured" / "issue15").glob("run*/*.csv")):
        if "retime" in path.name or (runs and path.parent.name not in runs):
            continue
        out += [(path.parent.name, r) for r in read_measurements(path)
                if split == "all" or r.notes.get("split") == split]
    return out


def measured_families(split="heldout", only=None, runs=None, local_bytes=False, estimated_regs=False,
                      hw="h200_sxm", estimated_smem=False):
    """Per family and shape on the issue 15 truth (tfx.analysis.measured: the figures
    `tfx validate` prints). ``local_bytes``: the spilling row kernels take their compiled
    LDL + STL bytes (bench/row_local_bytes.py) as the ``local_bytes`` resource.
    ``estimated_regs``: each row is priced with the model's register estimate and the spills
    it implies (tfx.analysis.analyze, docs/analysis.md section 6) instead of the compiled
    ``regs`` and ``spills``, as `tfx analyze`, `tfx explore` and the TUI price a kernel nobody
    compiled; the compiled shared memory is kept. Rows are still reported as spilling by their
    compiled count. ``estimated_smem``: the shared memory estimated as well (section 5's peak,
    Triton's pipeline buffers: tfx.analysis.smem_buffers), every resource as `tfx explore` has it. ``hw``: the device whose campaigns are read (DEVICE_CALIBRATION); each row is
    priced on its own ``profile`` column, which names that device's profile."""
    from tfx.analysis.measured import Predictor, format_table, summarize
    if hw not in DEVICE_CALIBRATION:
        raise TfxError(f"no issue 15 campaigns measured on {hw!r} (measured: {', '.join(DEVICE_CALIBRATION)})",
                       where="--hw")
    where_measured = DEVICE_CALIBRATION[hw] / "measured" / "issue15"
    rows = [r for _, r in campaign_rows(hw, split, runs) if not only or r.family in only]
    if local_bytes:
        sys.path.insert(0, str(ROOT / "bench"))
        from row_local_bytes import Missing, with_local_bytes
        try:
            rows = with_local_bytes(rows)
        except Missing as e:
            print(str(e), file=sys.stderr)
            sys.exit(2)
    predictor = Predictor(hw)
    if estimated_regs or estimated_smem:
        from dataclasses import replace
        dropped = dict(regs=None, spills=None, **({"smem_bytes": None} if estimated_smem else {}))
        compared = [replace(c, row=r) for c, r in
                    zip(predictor.compare([replace(r, **dropped) for r in rows]), rows)]
        compared = [replace(c, spilling=c.row.spilling) for c in compared]
    else:
        compared = predictor.compare(rows)
    from tfx.analysis.verdict import family_verdicts, format_verdict
    # the "done when" and the figures under each family's table (tfx.analysis.verdict, as tfx
    # validate prints them); the worst shape within one campaign where the rows pool several
    verdicts = family_verdicts(summarize(compared, predictor), compared, campaigns=runs is None or len(runs) > 1)
    where = ", ".join(runs) if runs else "all runs"
    print(f"\nissue 15 truth per family and shape ({split} rows of {where}; {where_measured.relative_to(ROOT)}"
          + ("; the row kernels' compiled local bytes, bench/row_local_bytes.py" if local_bytes else "")
          + ("; priced with the estimated registers, spills and shared memory, not the compiled ones"
             if estimated_smem else
             "; priced with the estimated registers and spills, not the compiled ones" if estimated_regs else "")
          + ")")
    for v in verdicts:
        print(format_table(list(v.groups)))
        print("\n".join(format_verdict(v)))
    # a row under its roofline (the least time the peak rates allow) is a wrong input, not a model
    # error: the count is 0 on every stored campaign (bench/roofline_bound_check.py lists any)
    faster = sum(c.faster_than_roofline for c in compared)
    print(f"\nrows measured faster than their roofline: {faster} of {len(compared)}")
    if split == "all" and not only and not runs and not estimated_regs and not estimated_smem and not local_bytes:
        print(explore_advice_check(verdicts, hw))
    graph_summaries(compared)
    return {v.family: list(v.groups) for v in verdicts}


def explore_advice_check(verdicts, hw) -> str:
    """Whether the figures `tfx explore` quotes under its top table for a profile of ``hw``'s device
    (tfx.explore.top_picks.CAMPAIGNS: the worst first pick and the worst best of the top three within one
    campaign, over every family) are this run's: "current", or "stale" with the figures to put there after
    a model change; a device the module quotes no figures of says so."""
    from tfx.explore import top_picks
    from tfx.hw.units import format_percent
    quoted = top_picks.CAMPAIGNS.get(hw)
    if quoted is None:
        return f"\ntfx explore's advice (tfx.explore.top_picks) quotes no campaign of {hw}"
    worst = [v.within_campaign for v in verdicts if v.within_campaign is not None]
    first = max(w.max_regret for w in worst if w.max_regret is not None)
    best3 = max(w.max_top_picks_regret for w in worst if w.max_top_picks_regret is not None)
    pairs = ((first, quoted.first_pick_regret), (best3, quoted.top_picks_regret))
    same = all(format_percent(a) == format_percent(b) for a, b in pairs)
    state = "current" if same else f"STALE: set tfx.explore.top_picks.CAMPAIGNS[{hw!r}] to these figures"
    return (f"\ntfx explore's advice for {quoted.device} profiles (tfx.explore.top_picks): the first pick up to "
            f"{format_percent(first)} behind the best within one campaign, the best of the top {top_picks.top_picks()} "
            f"within {format_percent(best3)}; it quotes {format_percent(pairs[0][1])} and "
            f"{format_percent(pairs[1][1])}: {state}")


def graph_summaries(compared):
    """The same figures against ``ms_graph`` where a CSV has it (run9 on: the launch(es) timed inside
    a CUDA graph with the L2 cleared before each as do_bench does, minus the clears alone;
    bench/h200/measure_accuracy.py graph_ms): a family whose figures are good here and bad against
    measured_ms is timed host-bound by do_bench, not mispredicted. Only the rows with ms_graph count
    (gemm and rows: those under 50 us), so a shape's figures may be over a subset; the family column
    reads ``<family>@graph`` so that a parser of the tables above tells the two apart.
    These rows are priced without their `launch` terms (launch.overhead: the host's time to launch a
    kernel, which a graph node does not pay; Compared.launch_ms) and with the timing condition's
    dirty-L2 write-back (tfx.analysis.launch_handoff.L2_CLEAR_CONDITION): the graph clears the L2
    before each launch as do_bench does, and the measured gap says the launch pays the write-back
    there too. measured_ms - ms_graph is 2.9-3.1 us (median) over the gemm_bf16 rows whether tfx
    prices a write-back of 0, about 4 or about 7 us (session 47; docs/analysis.md, "The timing
    condition"), where a graph difference that took the write-back out would widen the gap by it."""
    from dataclasses import replace

    from tfx.analysis.measured import Compared, figures, format_table
    from tfx.analysis.verdict import family_verdict, format_verdict
    by_family: dict = {}
    for c in compared:
        g = c.row.notes.get("ms_graph")
        if g:
            row = replace(c.row, measured_ms=float(g))
            in_graph = c.predicted_ms - c.launch_ms
            by_family.setdefault(c.row.family, []).append((Compared(row, in_graph, c.spilling, c.codegen),
                                                           c.row.measured_ms - float(g)))
    if not by_family:
        return
    print("\nthe same against ms_graph (the launches in a CUDA graph: no host launch cost), rows that have it")
    for family, pairs in by_family.items():
        groups: dict = {}
        for c, _ in pairs:
            groups.setdefault(c.row.shape, []).append(c)
        figs = [figures(f"{family}@graph", shape, rows) for shape, rows in groups.items()]
        print(format_table(figs))
        # the summary and "done when" as under the tables above (tfx.analysis.verdict, one renderer)
        print("\n".join(format_verdict(family_verdict(f"{family}@graph", figs, [c for c, _ in pairs]))))
        gap = sorted(d * 1e3 for _, d in pairs)
        print(f"     measured_ms - ms_graph over {len(pairs)} rows: median {statistics.median(gap):.1f} us, max "
              f"{gap[-1]:.1f} us (a few us: a stream launch against a graph node; tens: do_bench waited for the "
              f"host's launches)")


def off_path_report(hw) -> None:
    """Tile classes no issue-15 campaign draws, timed apart (calibration/<device>/measured/attn_warp_s56, _s57, _s58:
    bench/h200/run_s56.sh, run_s57.sh, run_s58b.sh, flash attention on the warp mma beside warpgroup twins), each set
    by path: what tfx.analysis.coverage's note under tfx explore's top table warns of. Nothing where the device has
    no such set."""
    from tfx.analysis.measured import Predictor, read_measurements
    predictor = Predictor(hw)
    for path in sorted((DEVICE_CALIBRATION[hw] / "measured").glob("attn_warp_s*/attention.csv")):
        compared = predictor.compare(read_measurements(path))
        print("\noff the campaigns' lists: flash attention on the warp mma and its warpgroup twins "
              f"({path.relative_to(ROOT)})")
        for name, warp in (("warp mma (1-2 warps, or BLOCK_M 32)", True), ("warpgroup mma", False)):
            errs = [c.error for c in compared
                    if bool(c.row.params["WARPS"] % 4 or c.row.params["BLOCK_M"] % 64) == warp]
            if errs:
                print(f"  {name:<36} {len(errs):3} rows  median error {statistics.median(errs) * 100:+.1f}%  "
                      f"range {min(errs) * 100:+.1f}..{max(errs) * 100:+.1f}%")


def report(title, rows):
    print(f"\n{title}")
    print(f"  {'case':<52} {'predicted ms':>12} {'measured ms':>12} {'error':>8}")
    errs = []
    for label, pred, meas in rows:
        err = (pred - meas) / meas
        errs.append(abs(err))
        print(f"  {label:<52} {pred:12.4f} {meas:12.4f} {err * 100:+7.1f}%")
    if errs:
        print(f"  median |error| {statistics.median(errs) * 100:.1f}% over {len(errs)} rows")
    return errs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=None, help="limit the Triton rows")
    ap.add_argument("--hw", default="h200_sxm", help="the device whose measurements are read: h200_sxm (all "
                    "reports), h100_sxm (--measured-only: calibration/h100)")
    ap.add_argument("--split", default="heldout", choices=("heldout", "tune", "all"))
    ap.add_argument("--only", default=None, help="comma-separated families of the issue 15 truth")
    ap.add_argument("--measured-only", action="store_true", help="only the issue 15 families")
    ap.add_argument("--runs", default=None, help="comma-separated campaigns of the issue 15 truth (run1,run3); "
                    "default all")
    ap.add_argument("--estimated-regs", action="store_true", help="price the issue 15 rows with the model's "
                    "register estimate (and the spills it implies) instead of the compiled regs and spills, "
                    "as tfx analyze/explore do without a compile")
    ap.add_argument("--estimated-smem", action="store_true", help="as --estimated-regs, and the shared memory "
                    "estimated too: every resource as tfx explore prices a configuration nobody compiled")
    ap.add_argument("--local-bytes", action="store_true", help="the spilling row kernels' compiled LDL + STL "
                    "bytes as the local_bytes resource (calibration/h200/measured/row_spill_sass)")
    args = ap.parse_args()
    try:
        run(args)
    except TfxError as err:
        # a campaign row outside its kernel's domain, a malformed CSV: one line naming file:line:col
        print(f"accuracy: {err}", file=sys.stderr)
        sys.exit(2)


def run(args) -> None:
    if args.measured_only:
        measured_families(args.split, args.only.split(",") if args.only else None,
                          args.runs.split(",") if args.runs else None, args.local_bytes, args.estimated_regs,
                          args.hw, args.estimated_smem)
        if not (args.only or args.runs):
            off_path_report(args.hw)
        return
    if args.hw != "h200_sxm":
        # the reference rows (bandwidth.csv, gemm_triton.csv, the library and attention tables) were
        # measured on the H200: priced on another profile they would compare two machines
        raise TfxError(f"the reference measurements are the H200's (calibration/h200): {args.hw!r} only with "
                       f"--measured-only", where="--hw")
    profile = load_profile(args.hw)
    report("copy.tile vs torch copy (bandwidth.csv, >= 16 MiB)", copy_rows(profile))
    report("gemm.tile vs Triton tiled GEMM (measured/gemm_triton.csv)", triton_rows(profile, args.rows))
    report("best gemm.tile configuration vs cuBLAS (gemm_library.csv)", library_rows(profile))
    report("attention kernels vs measured attention (measured/attention.csv)", attention_rows(profile))
    report("attention kernels vs Triton kernels of the same schedule (measured/attention_triton_*.csv)",
           triton_attention_rows(profile))
    measured_families(args.split, args.only.split(",") if args.only else None)
    off_path_report(args.hw)


if __name__ == "__main__":
    main()
