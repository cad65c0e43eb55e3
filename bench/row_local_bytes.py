"""The compiled local traffic of the issue-15 row kernels as the ``local_bytes`` resource.

tfx takes a compiled kernel's LDL + STL bytes a thread (``local_bytes``: its SASS's local loads
and stores, each by its width) beside ``regs`` and ``spills``; where given, a row body's spill
line charges them instead of estimating them from the frame (tfx.analysis.row_spill,
docs/analysis.md section 8 (p)). The issue-15 campaigns record ``regs`` and ``spills`` only;
the SASS of every spilling rmsnorm and softmax configuration they measured was compiled on the
CPU with the campaigns' Triton (bench/h200/measure_row_spill_sass.py) into
calibration/h200/measured/row_spill_sass (row_spill_sass.csv, session12.csv). This joins the
two by (family, N, BLOCK_M, WARPS), checking that the compiled kernel has the measured row's
registers and spilled words:

    python3 bench/row_local_bytes.py calibration/h200/measured/issue15/run14/rows.csv > rows.csv

writes the CSV with a ``local_bytes`` column after ``smem_bytes`` (empty where the row does not
spill). A spilling row whose configuration was not compiled, or was compiled to other
registers, is refused with its file:line (exit 2): compile it first. ``bench/accuracy.py
--local-bytes`` uses the same join (``with_local_bytes``).
"""

from __future__ import annotations

import csv
import dataclasses
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SASS_DIR = ROOT / "calibration" / "h200" / "measured" / "row_spill_sass"
SASS_FILES = ("row_spill_sass.csv", "session12.csv")
FAMILIES = ("rmsnorm", "softmax")


def sass_table(folder: Path = SASS_DIR) -> dict:
    """(family, N, BLOCK_M, WARPS) -> (regs, spilled words, LDL + STL bytes a thread)."""
    out = {}
    for name in SASS_FILES:
        with open(folder / name, newline="") as f:
            for r in csv.DictReader(f):
                key = (r["family"], int(r["N"]), int(r["BLOCK_M"]), int(r["WARPS"]))
                out[key] = (int(r["regs"]), int(r["spills"]), int(r["LDL_bytes"]) + int(r["STL_bytes"]))
    return out


class Missing(Exception):
    """A spilling row without its compiled kernel in the table."""


def local_bytes(family, n, block_m, warps, regs, spills, table, where):
    """The LDL + STL bytes a thread of one measured configuration (None where it does not spill
    or is not a row kernel); raises Missing naming ``where`` when the table lacks it."""
    if family not in FAMILIES or not spills:
        return None
    got = table.get((family, n, block_m, warps))
    if got is None:
        raise Missing(f"{where}: {family} N={n} BLOCK_M={block_m} WARPS={warps} spills {spills} words but has no "
                      f"compiled SASS in {SASS_DIR.relative_to(ROOT)}: compile it with "
                      f"bench/h200/measure_row_spill_sass.py")
    if (got[0], got[1]) != (regs, spills):
        raise Missing(f"{where}: {family} N={n} BLOCK_M={block_m} WARPS={warps} measured at {regs} registers and "
                      f"{spills} spilled words, compiled at {got[0]} and {got[1]}: not the same binary")
    return got[2]


def with_local_bytes(rows, table=None):
    """MeasuredRows (tfx.analysis.measured) with ``local_bytes`` from the table."""
    table = sass_table() if table is None else table
    out = []
    for r in rows:
        lb = local_bytes(r.family, r.params.get("N"), r.params.get("BLOCK_M"), r.params.get("WARPS"), r.regs,
                         r.spills, table, r.where)
        out.append(dataclasses.replace(r, local_bytes=lb) if lb is not None else r)
    return out


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python3 bench/row_local_bytes.py ROWS.csv > OUT.csv", file=sys.stderr)
        return 2
    path = Path(argv[0])
    table = sass_table()
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            cols = list(reader.fieldnames or [])
            rows = list(reader)
    except OSError as e:
        print(f"{path}: {e.strerror}", file=sys.stderr)
        return 2
    if "smem_bytes" not in cols or "spills" not in cols:
        print(f"{path}:1: no 'spills' and 'smem_bytes' columns: not an issue-15 CSV", file=sys.stderr)
        return 2
    if "local_bytes" not in cols:
        cols.insert(cols.index("smem_bytes") + 1, "local_bytes")
    try:
        for line, r in enumerate(rows, start=2):
            lb = local_bytes(r.get("family", ""), int(r["N"] or 0), int(r["BLOCK_M"] or 0), int(r["WARPS"] or 0),
                             int(r["regs"] or 0), int(r["spills"] or 0), table, f"{path}:{line}") \
                if r.get("family") in FAMILIES else None
            r["local_bytes"] = "" if lb is None else str(lb)
    except Missing as e:
        print(str(e), file=sys.stderr)
        return 2
    except (KeyError, ValueError) as e:
        print(f"{path}:{line}: {e}", file=sys.stderr)
        return 2
    w = csv.DictWriter(sys.stdout, cols, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
