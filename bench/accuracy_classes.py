"""Per-configuration classes of the issue 15 truth: every row's signed error, grouped by the
parameters that decide its compiled code (tile, warps, stages), over all campaigns and shapes.

bench/accuracy.py judges a family per shape; a missing mechanism usually shows as a class of
configurations that is off the same way on every shape (2-stage persistent rows too slow,
1-stage small-M rows too fast). This prints, per class: its rows, the median signed error, the
median |error|, and each row as `runN:shape:error` (an `S` after the shape marks a spilling
row), classes ordered by their median signed error.

    python3 bench/accuracy_classes.py --only persistent_gemm [--by STAGES,WARPS] [--runs run7]
                                      [--spilling] [--min-rows 2]

--by: comma-separated parameters (default: every parameter the family's rows vary except the
shape's); --spilling keeps the spilling rows (left out by default: their error is the spill
pricing's, a class of its own).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tfx.analysis.measured import Predictor, read_measurements  # noqa: E402

ISSUE15 = ROOT / "calibration" / "h200" / "measured" / "issue15"
# parameters that size the problem, not the code (the `shape` annotation names them)
SHAPE_PARAMS = frozenset({"M", "N", "K", "B", "H", "HQ", "HKV", "S", "SKV", "D"})


def class_keys(compared, by=None) -> list[str]:
    """The parameters a class is named by: ``by`` when given, else every parameter of the rows
    that is not a problem size (SHAPE_PARAMS), in the first row's column order."""
    if by:
        return list(by)
    keys: list[str] = []
    for c in compared:
        for k in c.row.params:
            if k not in SHAPE_PARAMS and k not in keys:
                keys.append(k)
    return keys


def classes(compared, keys, spilling=False) -> list[tuple[tuple, list]]:
    """(class key, its rows) for the compared rows (tfx.analysis.measured.Compared), the key the
    rows' values of ``keys`` (None where a row lacks one); spilling rows only with ``spilling``.
    Ordered by the class's median signed error, then by key."""
    groups: dict = {}
    for c in compared:
        if c.spilling and not spilling:
            continue
        groups.setdefault(tuple(c.row.params.get(k) for k in keys), []).append(c)
    return sorted(groups.items(), key=lambda kv: (statistics.median(c.error for c in kv[1]),
                                                 tuple(str(v) for v in kv[0])))


def class_name(keys, key) -> str:
    return " ".join(f"{k}={v}" for k, v in zip(keys, key))


def format_class(keys, key, rows, width=40) -> str:
    errs = [c.error for c in rows]
    name = class_name(keys, key)
    where = " ".join(f"{c.row.notes.get('run', '?')}:{c.row.notes.get('shape', '?')}"
                     f"{'S' if c.spilling else ''}:{c.error * 100:+.0f}%" for c in rows)
    return (f"  {name:<{width}} {len(rows):>4} {statistics.median(errs) * 100:>+7.1f}% "
            f"{statistics.median(abs(e) for e in errs) * 100:>7.1f}%   {where}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", required=True, help="comma-separated families of the issue 15 truth")
    ap.add_argument("--by", default=None, help="comma-separated parameters naming a class")
    ap.add_argument("--runs", default=None, help="comma-separated campaigns (run1,run7); default all")
    ap.add_argument("--spilling", action="store_true", help="keep the spilling rows")
    ap.add_argument("--min-rows", type=int, default=1, help="print classes of at least this many rows")
    args = ap.parse_args(argv)
    families = set(args.only.split(","))
    runs = set(args.runs.split(",")) if args.runs else None
    rows = []
    for path in sorted(ISSUE15.glob("run*/*.csv")):
        if "retime" in path.name or (runs and path.parent.name not in runs):
            continue
        for r in read_measurements(path):
            if r.family in families:
                r.notes["run"] = path.parent.name
                rows.append(r)
    if not rows:
        print(f"no rows of {args.only} in {ISSUE15}", file=sys.stderr)
        return 2
    compared = Predictor("h200_sxm").compare(rows)
    for family in sorted(families):
        part = [c for c in compared if c.row.family == family]
        if not part:
            continue
        keys = class_keys(part, args.by.split(",") if args.by else None)
        print(f"\n{family}: signed error (predicted - measured) / measured per class of "
              f"{', '.join(keys)}{'' if args.spilling else ', non-spilling rows'}")
        shown = [(key, m) for key, m in classes(part, keys, args.spilling) if len(m) >= args.min_rows]
        width = max([len("class")] + [len(class_name(keys, key)) for key, _ in shown])
        print(f"  {'class':<{width}} {'rows':>4} {'med err':>8} {'med|err|':>8}   rows (run:shape:error)")
        for key, members in shown:
            print(format_class(keys, key, members, width))
    return 0


if __name__ == "__main__":
    sys.exit(main())
