"""What the speed scripts of bench/ share (each runs as ``python3 bench/x.py``, which puts
this folder first on sys.path)."""

from __future__ import annotations

import statistics
import time


def median_ms(fn, repeats: int) -> float:
    """Median wall milliseconds of ``repeats`` calls of fn, after one call that warms imports
    and caches (profile TOML, parsed modules)."""
    fn()
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(samples)
