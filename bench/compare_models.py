#!/usr/bin/env python3
"""Two model trees against the issue-15 campaigns, rankings first: the gate a model change passes before it lands.

Usage: python3 bench/compare_models.py BASE_TREE CANDIDATE_TREE [--only FAMILIES] [--runs RUNS] [--hw h200_sxm|h100_sxm]

Each tree (a checkout or a git worktree of this repository) prices every row of the base tree's
calibration/h200/measured/issue15/run*/ campaigns (the same rows for both; with --hw h100_sxm the H100's,
calibration/h100/measured/issue15, on its own profile) with its own tfx (one process a tree, the two in parallel), as
bench/accuracy.py --measured-only --split all --hw HW does per campaign, and the report compares them per family:
- campaigns better / worse / mixed on their figures (median |error| by 0.3 points, min Spearman by 0.02, max regret
  by 0.5 points: a campaign is better where every figure that moved moved the right way);
- the shapes of one campaign that fail a "done when" clause (Spearman under 0.85, regret over 10%, a spilling
  configuration ranked first where a non-spilling one is faster), before and after, and which ones changed side;
- the pooled figures over all campaigns (median over shapes of the median |error|, min Spearman, max regret);
- the reference tables bench/accuracy.py prints before the campaigns (copy, the Triton GEMM and attention
  reference, cuBLAS, SDPA: each tree's median |error| over its own rows), issue 15's other clause: "the existing
  figures do not get worse". A table whose median grows by more than 0.3 points is named. The tables are the
  H200's: with --hw h100_sxm there are none.
The rankings line says whether the candidate's rankings are better, worse, mixed or the same, counting the families
with more clause failures than before and those with fewer: worse where some have more and none fewer, better the
other way round, mixed where both, the same where neither; the last line whether the reference figures held.

The sessions of issue 15 judged every candidate this way by hand (docs/analysis.md's "figures both ways");
FAMILIES and RUNS are comma lists (gemm_fp8,gemm_bf16; run40,run44). A tree that is not a checkout of this
repository, or a flag that is not one of these, is one line and exit 2.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

SPEARMAN_MIN, REGRET_MAX = 0.85, 0.10          # issue 15's "done when" (tfx.analysis.verdict)
# the issue 15 campaigns of each device that measured some, by the profile that prices them (bench/accuracy.py's)
DEVICE_DATA = {"h200_sxm": Path("calibration/h200/measured/issue15"), "h100_sxm": Path("calibration/h100/measured/issue15")}
MOVE = (0.003, 0.02, 0.005)                    # a figure moved: median |error|, Spearman, regret (fractions)


def usage(msg: str) -> None:
    print(f"compare_models: {msg}", file=sys.stderr)
    sys.exit(2)


# ------------------------------------------------------------------ the worker: one tree's figures
def tree_figures(data: Path, only=None, runs=None, hw="h200_sxm") -> dict:
    """{"runs": {run: {family: {shape: [median |error|, Spearman or None, regret, spilling first wrongly]}}}, "pooled":
    {family: {shape: [...]}}} priced by the tfx this process imports (the tree's: ``main`` runs it with the tree on
    PYTHONPATH) over the campaigns under ``data`` (the base tree's issue15/ folder for both trees: the same rows), on the
    profile ``hw`` (the device that measured them)."""
    from tfx.analysis.measured import Predictor, figures, read_measurements
    base = data
    rows_by_run: dict = {}
    for path in sorted(base.glob("run*/*.csv")):
        run = path.parent.name
        if "retime" in path.name or (runs and run not in runs):
            continue
        rows_by_run.setdefault(run, []).extend(r for r in read_measurements(path) if not only or r.family in only)
    predictor = Predictor(hw)
    out: dict = {"runs": {}, "pooled": {}}
    pooled: dict = {}
    for run, rows in rows_by_run.items():
        groups: dict = {}
        for c in predictor.compare(rows):
            groups.setdefault((c.row.family, c.row.shape), []).append(c)
            pooled.setdefault((c.row.family, c.row.shape), []).append(c)
        out["runs"][run] = _figures_by_family(groups, figures)
    out["pooled"] = _figures_by_family(pooled, figures)
    out["reference"] = reference_figures(Path.cwd()) if hw == "h200_sxm" else {}
    return out


# bench/accuracy.py's reference tables, by the name the report gives each, and the function that prices its rows
REFERENCE_TABLES = (("copy", "copy_rows"), ("Triton GEMM", "triton_rows"), ("cuBLAS", "library_rows"),
                    ("SDPA", "attention_rows"), ("Triton attention", "triton_attention_rows"))


def reference_figures(tree: Path) -> dict:
    """{table: median |error|} of bench/accuracy.py's reference tables as the tree's own accuracy.py prices its own
    rows (the H200's calibration/h200 tables: bandwidth.csv, gemm_triton.csv, gemm_library.csv, attention*.csv);
    {} where the tree's accuracy.py has none of them."""
    import importlib.util
    path = tree / "bench" / "accuracy.py"
    if not path.is_file():
        return {}
    spec = importlib.util.spec_from_file_location("tree_accuracy", path)
    acc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(acc)
    from tfx.hw import load_profile
    profile = load_profile("h200_sxm")
    out = {}
    for table, fn in REFERENCE_TABLES:
        rows = getattr(acc, fn, None)
        if rows is None:
            continue
        errs = [abs(pred - meas) / meas for _, pred, meas in rows(profile)]
        if errs:
            out[table] = statistics.median(errs)
    return out


def _figures_by_family(groups: dict, figures) -> dict:
    out: dict = {}
    for (family, shape), rows in groups.items():
        g = figures(family, shape, rows)
        out.setdefault(family, {})[shape] = [g.median_abs_error, g.spearman, g.regret, bool(g.spill_ranked_first_wrongly)]
    return out


# ------------------------------------------------------------------ the comparison (pure: tests/test_compare_models.py)
def family_figures(shapes: dict) -> tuple:
    """(median over shapes of the median |error|, min Spearman, max regret) of one family's shapes."""
    meds = [v[0] for v in shapes.values()]
    sps = [v[1] for v in shapes.values() if v[1] is not None]
    return statistics.median(meds), (min(sps) if sps else None), max(v[2] for v in shapes.values())


def failures(shapes: dict) -> set:
    """The (shape, clause) pairs that fail issue 15's "done when" among one family's shapes."""
    out = set()
    for shape, (_, sp, regret, spill_first) in shapes.items():
        if sp is not None and sp < SPEARMAN_MIN:
            out.add((shape, "spearman"))
        if regret > REGRET_MAX:
            out.add((shape, "regret"))
        if spill_first:
            out.add((shape, "spilling first"))
    return out


def campaign_move(a: tuple, b: tuple) -> str:
    """"better", "worse", "mixed" or "" (nothing moved) of one campaign's family figures ``a`` -> ``b``."""
    (ma, sa, ra), (mb, sb, rb) = a, b
    sa = -1.0 if sa is None else sa
    sb = -1.0 if sb is None else sb
    better = (mb < ma - MOVE[0]) + (sb > sa + MOVE[1]) + (rb < ra - MOVE[2])
    worse = (mb > ma + MOVE[0]) + (sb < sa - MOVE[1]) + (rb > ra + MOVE[2])
    if not better and not worse:
        return ""
    return "better" if not worse else "worse" if not better else "mixed"


def compare(base: dict, cand: dict) -> tuple[list[str], str]:
    """The report's lines and its verdict ("better", "worse", "mixed" or "same") for two trees' figures."""
    lines = []
    more = fewer = 0
    families = sorted(base["pooled"])
    for family in families:
        moves = {"better": [], "worse": [], "mixed": []}
        lost, won = [], []
        for run in sorted(base["runs"], key=lambda r: (len(r), r)):
            a = base["runs"][run].get(family)
            b = cand["runs"].get(run, {}).get(family)
            if not a or not b:
                continue
            m = campaign_move(family_figures(a), family_figures(b))
            if m:
                moves[m].append(run)
            fa, fb = failures(a), failures(b)
            lost += [f"{run} {s} ({c})" for s, c in sorted(fb - fa)]
            won += [f"{run} {s} ({c})" for s, c in sorted(fa - fb)]
        more += bool(len(lost) > len(won))
        fewer += bool(len(won) > len(lost))
        pa = family_figures(base["pooled"][family])
        pb = family_figures(cand["pooled"][family]) if cand["pooled"].get(family) else None

        def fmt(f):
            return "none" if f is None else f"{f[0] * 100:.1f}% / {'-' if f[1] is None else f'{f[1]:+.2f}'} / {f[2] * 100:.1f}%"
        lines.append(f"{family}: pooled {fmt(pa)} -> {fmt(pb)}; campaigns better {len(moves['better'])}, "
                     f"worse {len(moves['worse'])}, mixed {len(moves['mixed'])}; clause failures "
                     f"+{len(lost)} -{len(won)}")
        for label, items in (("  newly failing", lost), ("  newly passing", won)):
            if items:
                lines.append(f"{label}: " + "; ".join(items))
    verdict = "worse" if more else "better" if fewer else "same"
    if more and fewer:
        verdict = "mixed"
    lines.append(f"rankings: {verdict} (families with more clause failures {more}, with fewer {fewer})")
    lines += reference_lines(base.get("reference", {}), cand.get("reference", {}))
    return lines, verdict


def reference_lines(base: dict, cand: dict) -> list[str]:
    """The reference tables' medians base -> candidate and whether any got worse by more than MOVE[0] (0.3 points):
    issue 15's "the existing figures do not get worse"; [] where neither tree priced them."""
    tables = [t for t, _ in REFERENCE_TABLES if t in base and t in cand]
    if not tables:
        return []
    moved = ", ".join(f"{t} {base[t] * 100:.1f} -> {cand[t] * 100:.1f}%" for t in tables)
    worse = [t for t in tables if cand[t] > base[t] + MOVE[0]]
    better = [t for t in tables if cand[t] < base[t] - MOVE[0]]
    held = ("worse: " + ", ".join(worse) if worse else
            "held (better: " + ", ".join(better) + ")" if better else "held")
    return [f"reference (median |error|): {moved}", f"existing figures: {held}"]


# ------------------------------------------------------------------ the command
def main(argv: list[str]) -> int:
    if "--figures" in argv:          # the worker, run by main below with the tree on PYTHONPATH
        i = argv.index("--figures")
        data = Path(argv[i + 1])
        only = argv[argv.index("--only") + 1].split(",") if "--only" in argv else None
        runs = argv[argv.index("--runs") + 1].split(",") if "--runs" in argv else None
        hw = argv[argv.index("--hw") + 1] if "--hw" in argv else "h200_sxm"
        print(json.dumps(tree_figures(data, only, runs, hw)))
        return 0
    args, opts = [], {}
    it = iter(argv)
    for a in it:
        if a in ("--only", "--runs", "--hw"):
            value = next(it, None)
            if not value:
                usage(f"{a} expects " + ("a profile (h200_sxm, h100_sxm)" if a == "--hw" else "a comma list"))
            opts[a] = value
        elif a.startswith("-"):
            usage(f"unknown flag {a!r}; expected BASE_TREE CANDIDATE_TREE [--only FAMILIES] [--runs RUNS] [--hw HW]")
        else:
            args.append(a)
    if len(args) != 2:
        usage("expected BASE_TREE CANDIDATE_TREE [--only FAMILIES] [--runs RUNS] [--hw HW]")
    hw = opts.get("--hw", "h200_sxm")
    if hw not in DEVICE_DATA:
        usage(f"--hw {hw!r}: no issue 15 campaigns measured on it (measured: {', '.join(DEVICE_DATA)})")
    trees = [Path(a).resolve() for a in args]
    for t in trees:
        if not (t / "tfx" / "__init__.py").is_file() or not (t / DEVICE_DATA[hw]).is_dir():
            usage(f"{t}: not a checkout of this repository (expected tfx/ and {DEVICE_DATA[hw]}/)")
    extra = [x for k, v in opts.items() for x in (k, v)]
    data = trees[0] / DEVICE_DATA[hw]     # both trees price the base tree's rows
    procs = [subprocess.Popen([sys.executable, __file__, "--figures", str(data)] + extra, cwd=t, stdout=subprocess.PIPE,
                              env={**os.environ, "PYTHONPATH": str(t)}, text=True) for t in trees]
    figs = []
    for t, p in zip(trees, procs):
        out, _ = p.communicate()
        if p.returncode:
            usage(f"{t}: pricing its campaigns failed (exit {p.returncode})")
        figs.append(json.loads(out))
    lines, _ = compare(*figs)
    print(f"{trees[0]} -> {trees[1]}" + "".join(f" {k} {v}" for k, v in opts.items()))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
