#!/usr/bin/env python3
"""The tile-parameter values tfx's issue-15 campaigns timed, per bundled kernel and device: the table
tfx.analysis.coverage.MEASURED_VALUES holds, printed as Python from the campaigns themselves.

    python3 bench/campaign_coverage.py            # the table, to paste into tfx/explore/coverage.py
    python3 bench/campaign_coverage.py --check    # exit 1 (and the difference) where the module's table is stale

Read: calibration/<device>/measured/issue15/run*/*.csv (every row whatever its status: a configuration the
campaign compiled and launched), the kernel column's file, each parameter column the kernel declares that is not
the problem's shape (Kernel.shape_parameters: M, N, K, B, H, S, ...). tests/test_coverage.py runs --check's
comparison.
"""
from __future__ import annotations

import csv
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEVICES = {"h200_sxm": ROOT / "calibration/h200/measured/issue15",
           "h100_sxm": ROOT / "calibration/h100/measured/issue15"}


def measured_values() -> dict:
    """{profile: {kernel file name: {parameter: sorted tuple of values}}} from the campaigns."""
    from tfx.lang import parse_file
    out: dict = {}
    kernels: dict = {}
    for profile, folder in DEVICES.items():
        table: dict = {}
        for path in sorted(folder.glob("run*/*.csv")):
            if "retime" in path.name:
                continue
            with open(path, newline="") as f:
                for row in csv.DictReader(f):
                    name = Path(row.get("kernel") or "").name
                    if not name.endswith(".tile"):
                        continue
                    if name not in kernels:
                        k = parse_file(ROOT / "kernels" / name).kernel(None)
                        kernels[name] = [p.name for p in k.params if p.name not in k.shape_parameters()]
                    for p in kernels[name]:
                        if row.get(p, "") != "":
                            table.setdefault(name, {}).setdefault(p, set()).add(int(row[p]))
        out[profile] = {k: {p: tuple(sorted(v)) for p, v in sorted(d.items())} for k, d in sorted(table.items())}
    return out


def as_python(table: dict) -> str:
    """The table as Python: the first device's lists in full, another device's kernel whose lists are the first's
    named by reference (the H100's campaigns drew from the same lists)."""
    first = next(iter(table))
    lines = ["MEASURED_VALUES = {"]
    for profile, kernels in table.items():
        lines.append(f"    {profile!r}: {{")
        for name, params in kernels.items():
            if profile != first and table[first].get(name) == params:
                lines.append(f"        {name!r}: None,  # the {first} lists")
                continue
            body = ", ".join(f"{p!r}: {v!r}" for p, v in params.items())
            line = f"        {name!r}: {{{body}}},"
            if len(line) <= 116:
                lines.append(line)
                continue
            lines.append(f"        {name!r}: {{")
            lines.extend(f"            {p!r}: {v!r}," for p, v in params.items())
            lines.append("        },")
        lines.append("    },")
    lines.append("}")
    lines.append(f"# a None entry: the same lists as {first}'s")
    lines.append("MEASURED_VALUES = {profile: {name: MEASURED_VALUES[" + repr(first) + "][name] if lists is None "
                 "else lists")
    lines.append("                             for name, lists in kernels.items()}")
    lines.append("                   for profile, kernels in MEASURED_VALUES.items()}")
    return "\n".join(lines)


def main() -> int:
    table = measured_values()
    if "--check" in sys.argv[1:]:
        from tfx.analysis.coverage import MEASURED_VALUES
        if MEASURED_VALUES == table:
            print("tfx.analysis.coverage.MEASURED_VALUES matches the campaigns")
            return 0
        print("tfx.analysis.coverage.MEASURED_VALUES is stale; the campaigns give:\n" + as_python(table))
        return 1
    print(as_python(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
