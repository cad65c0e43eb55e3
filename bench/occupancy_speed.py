"""Rows per second of the occupancy CSV path: scalar ``compute_occupancy`` per row
against the vectorized ``blocks_per_sm_array``, on 100k random configurations.

    python bench/occupancy_speed.py [ROWS]

Both timings include what ``tfx occupancy --csv`` does around the model: parsing
the CSV text and writing the annotated rows back as CSV. The scalar path is timed
on a sample (it is ~100x slower) and reported per row. The last figure is the
command itself (``tfx occupancy --hw h200_sxm --csv FILE``, in process, output to a
buffer): the speed tests/test_occupancy_cli.py does not time, only checks is vectorised.
"""

from __future__ import annotations

import contextlib
import csv
import io
import sys
import tempfile
import time

from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

from tfx.analysis.occupancy import (  # noqa: E402
    LIMITER_NAMES, OccupancyLimits, Resources, blocks_per_sm_array, compute_occupancy,
)

H200 = OccupancyLimits(32, 2048, 64, 32, 1024, 65536, 65536, 255, 256, 4,
                       233472, 232448, 128, 1024)


def make_csv(rows: int, seed: int = 0) -> str:
    rng = np.random.default_rng(seed)
    data = np.column_stack([rng.integers(1, 1025, rows), rng.integers(0, 256, rows),
                            rng.integers(0, 232449, rows)])
    return "threads,regs,smem\n" + "\n".join(f"{t},{r},{s}" for t, r, s in data) + "\n"


def vectorized(text: str) -> str:
    reader = csv.reader(io.StringIO(text))
    header = next(reader)
    rows = list(reader)
    cols = [np.array([int(row[i]) for row in rows], dtype=np.int64) for i in range(3)]
    blocks, codes = blocks_per_sm_array(H200, *cols)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header + ["blocks_per_sm", "limiter"])
    names = [LIMITER_NAMES[c] for c in codes.tolist()]
    writer.writerows(row + [b, n] for row, b, n in zip(rows, blocks.tolist(), names))
    return out.getvalue()


def scalar(text: str) -> str:
    reader = csv.reader(io.StringIO(text))
    header = next(reader)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header + ["blocks_per_sm", "limiter"])
    for row in reader:
        o = compute_occupancy(H200, Resources(int(row[0]), int(row[1]), int(row[2])))
        writer.writerow(row + [o.blocks_per_sm, o.limiter])
    return out.getvalue()


def command_rate(text: str, rows: int) -> float:
    """Rows per second of ``tfx occupancy --csv`` on the bundled H200 profile."""
    from tfx.cli.main import main as tfx_main

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "configs.csv"
        path.write_text(text)
        sink = io.StringIO()
        start = time.perf_counter()
        with contextlib.redirect_stdout(sink):
            rc = tfx_main(["occupancy", "--hw", "h200_sxm", "--csv", str(path)])
        elapsed = time.perf_counter() - start
    assert rc == 0 and sink.getvalue().count("\n") == rows + 1
    return rows / elapsed


def rate(fn, text: str, rows: int) -> float:
    start = time.perf_counter()
    fn(text)
    return rows / (time.perf_counter() - start)


def main() -> None:
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    text = make_csv(rows)
    sample_rows = min(rows, 10_000)
    sample = make_csv(sample_rows)
    # Same answers on the sample before timing anything.
    assert scalar(sample) == vectorized(sample)
    v = rate(vectorized, text, rows)
    s = rate(scalar, sample, sample_rows)
    print(f"vectorized: {v:>12,.0f} rows/s  ({rows:,} rows, parse + model + write)")
    print(f"scalar:     {s:>12,.0f} rows/s  ({sample_rows:,}-row sample)")
    print(f"speed-up:   {v / s:>12.1f}x")
    c = command_rate(text, rows)
    print(f"tfx occupancy --csv: {c:>12,.0f} rows/s  ({rows:,} rows, {rows / c:.2f} s)")


if __name__ == "__main__":
    main()
