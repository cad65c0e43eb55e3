"""Parse speed of the shipped kernels: ms per parse (which includes verification).

    python bench/parse_speed.py [--repeats N] [--shapes]

Prints the median over N repeats for every kernels/*.tile; ``--shapes`` also
times binding the defaults and ``check_shapes``. Target: gemm.tile under 5 ms.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tfx.ir.bind import bind, check_shapes  # noqa: E402
from tfx.lang import parse_text  # noqa: E402
from timing import median_ms  # noqa: E402  (bench/timing.py)

TARGET_MS = {"gemm.tile": 5.0}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=50)
    ap.add_argument("--shapes", action="store_true", help="also time bind + check_shapes")
    args = ap.parse_args(argv)
    over = []
    header = f"{'kernel file':28s} {'lines':>5s} {'parse+verify ms':>16s}"
    if args.shapes:
        header += f" {'+shapes ms':>11s}"
    print(header)
    for path in sorted((ROOT / "kernels").glob("*.tile")):
        text = path.read_text()
        ms = median_ms(lambda: parse_text(text, path.name), args.repeats)
        row = f"{path.name:28s} {text.count(chr(10)):5d} {ms:16.3f}"
        if args.shapes:
            # a kernel that counts the machine (units(cube)) binds on the chip it names
            from tfx.hw.profile import shipped_profile_with
            from tfx.ir.bind import units_used
            m0 = parse_text(text, path.name)
            levels = {lvl for k in m0.kernels for lvl in units_used(m0, k)}
            hw = shipped_profile_with(levels) if levels else None

            def full():
                m = parse_text(text, path.name)
                for k in m.kernels:
                    check_shapes(m, k, bind(m, k, profile=hw))
            row += f" {median_ms(full, args.repeats):11.3f}"
        target = TARGET_MS.get(path.name)
        if target is not None:
            row += f"   (target < {target:g} ms: {'ok' if ms < target else 'MISSED'})"
            if ms >= target:
                over.append(path.name)
        print(row)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
