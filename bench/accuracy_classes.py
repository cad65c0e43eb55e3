"""Per-configuration classes of the issue 15 truth: every row's signed error, grouped by the
parameters that decide its compiled code (tile, warps, stages), over all campaigns and shapes.

bench/accuracy.py judges a family per shape; a missing mechanism usually shows as a class of
configurations that is off the same way on every shape (2-stage persistent rows too slow,
1-stage small-M rows too fast). This prints, per class: its rows, the median signed error, the
median |error|, and each row as `runN:shape:error` (an `S` after the shape marks a spilling
row), classes ordered by their median signed error.

    python3 bench/accuracy_classes.py --only persistent_gemm [--by STAGES,WARPS] [--runs run7]
                                      [--spilling] [--min-rows 2] [--relative] [--max-m 128] [--hw h100_sxm]

--by: comma-separated parameters (default: every parameter the family's rows vary except the
shape's); --spilling keeps the spilling rows (left out by default: their error is the spill
pricing's, a class of its own). --relative takes each row's error less the median error of its
campaign's shape (over the rows kept): an offset every configuration of a shape shares does not
change its ranking, so what is left is what turns the ranks (session 41: rmsnorm's two-round
binaries sit 3-15 points above their shapes, decode's classes within 1.3). --max-m keeps the rows whose M is at most
this (the small-M GEMMs: `--only gemm_bf16 --by K --max-m 128`, their error by K). --hw h100_sxm reads the
H100's campaigns (calibration/h100/measured/issue15) and prices them on its profile.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tfx.analysis.measured import Predictor, read_measurements  # noqa: E402

# the campaigns of each device, priced on its profile (bench/accuracy.py's DEVICE_CALIBRATION)
ISSUE15 = {"h200_sxm": ROOT / "calibration" / "h200" / "measured" / "issue15",
           "h100_sxm": ROOT / "calibration" / "h100" / "measured" / "issue15"}
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


def signed_error(c) -> float:
    """A row's signed error, (predicted - measured) / measured."""
    return c.error


def relative_errors(compared, spilling=False):
    """A function giving each row its signed error less the median signed error of the rows of its
    campaign and shape (``run`` and ``shape`` notes) that are kept (spilling rows only with
    ``spilling``): what is left once the shape's shared offset, which does not change its ranking,
    is taken out."""
    by_shape: dict = {}
    for c in compared:
        if c.spilling and not spilling:
            continue
        by_shape.setdefault((c.row.notes.get("run"), c.row.notes.get("shape")), []).append(c.error)
    medians = {k: statistics.median(v) for k, v in by_shape.items()}
    return lambda c: c.error - medians.get((c.row.notes.get("run"), c.row.notes.get("shape")), 0.0)


def classes(compared, keys, spilling=False, error=signed_error) -> list[tuple[tuple, list]]:
    """(class key, its rows) for the compared rows (tfx.analysis.measured.Compared), the key the
    rows' values of ``keys`` (None where a row lacks one); spilling rows only with ``spilling``.
    Ordered by the class's median ``error`` (the signed error, or ``relative_errors``), then by key."""
    groups: dict = {}
    for c in compared:
        if c.spilling and not spilling:
            continue
        groups.setdefault(tuple(c.row.params.get(k) for k in keys), []).append(c)
    return sorted(groups.items(), key=lambda kv: (statistics.median(error(c) for c in kv[1]),
                                                 tuple(str(v) for v in kv[0])))


def class_name(keys, key) -> str:
    return " ".join(f"{k}={v}" for k, v in zip(keys, key))


def format_class(keys, key, rows, width=40, error=signed_error) -> str:
    errs = [error(c) for c in rows]
    name = class_name(keys, key)
    where = " ".join(f"{c.row.notes.get('run', '?')}:{c.row.notes.get('shape', '?')}"
                     f"{'S' if c.spilling else ''}:{e * 100:+.0f}%" for c, e in zip(rows, errs))
    return (f"  {name:<{width}} {len(rows):>4} {statistics.median(errs) * 100:>+7.1f}% "
            f"{statistics.median(abs(e) for e in errs) * 100:>7.1f}%   {where}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", required=True, help="comma-separated families of the issue 15 truth")
    ap.add_argument("--by", default=None, help="comma-separated parameters naming a class")
    ap.add_argument("--runs", default=None, help="comma-separated campaigns (run1,run7); default all")
    ap.add_argument("--spilling", action="store_true", help="keep the spilling rows")
    ap.add_argument("--min-rows", type=int, default=1, help="print classes of at least this many rows")
    ap.add_argument("--relative", action="store_true",
                    help="each row's error less its campaign shape's median: what turns the ranks")
    ap.add_argument("--max-m", type=int, default=None, help="only rows whose M is at most this (the small-M GEMMs)")
    ap.add_argument("--hw", default="h200_sxm", choices=sorted(ISSUE15),
                    help="whose campaigns, priced on that profile (default h200_sxm)")
    args = ap.parse_args(argv)
    where = ISSUE15[args.hw]
    families = set(args.only.split(","))
    runs = set(args.runs.split(",")) if args.runs else None
    rows = []
    for path in sorted(where.glob("run*/*.csv")):
        if "retime" in path.name or (runs and path.parent.name not in runs):
            continue
        for r in read_measurements(path):
            if r.family in families and (args.max_m is None or r.params.get("M", 0) <= args.max_m):
                r.notes["run"] = path.parent.name
                rows.append(r)
    if not rows:
        print(f"no rows of {args.only} in {where}", file=sys.stderr)
        return 2
    compared = Predictor(args.hw).compare(rows)
    for family in sorted(families):
        part = [c for c in compared if c.row.family == family]
        if not part:
            continue
        keys = class_keys(part, args.by.split(",") if args.by else None)
        error = relative_errors(part, args.spilling) if args.relative else signed_error
        print(f"\n{family}: signed error (predicted - measured) / measured"
              f"{' less its campaign shape median' if args.relative else ''} per class of "
              f"{', '.join(keys)}{'' if args.spilling else ', non-spilling rows'}")
        shown = [(key, m) for key, m in classes(part, keys, args.spilling, error) if len(m) >= args.min_rows]
        width = max([len("class")] + [len(class_name(keys, key)) for key, _ in shown])
        print(f"  {'class':<{width}} {'rows':>4} {'med err':>8} {'med|err|':>8}   rows (run:shape:error)")
        for key, members in shown:
            print(format_class(keys, key, members, width, error))
    return 0


if __name__ == "__main__":
    sys.exit(main())
