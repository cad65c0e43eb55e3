"""The rate at which an SM starts CTAs: a floor under a batch of short CTAs.

The block scheduler starts a kernel's CTAs on an SM one after another, at most one every
``launch.cta_interval`` (the time between two CTA launches on one SM). A CTA that does little
work (a row kernel's CTA of one warp and a few elements a thread) is over before the next
one could start, so the r CTAs an SM holds cannot complete faster than r launches:

    batch >= r x cta_interval

Below this floor the row model (tfx.analysis.row_body) would let r short CTAs finish in the
time of their memory pipe or their chain alone, however short those are.

Measured on the H200 (calibration/h200/measured/cta_cost, bench/h200/measure_cta_cost.py):
empty CTAs of 1, 2, 4, 8 and 16 warps add 78.0-80.5 ns per CTA per SM between a launch of
132 x 64 and one of 132 x 256 CTAs (median 79.3 ns; 32 warps 89.2 ns), the same as the
launch rate of calibration/h200/measured/launch.csv (0.60 ns a CTA device-wide, 79.4 ns per
SM); row kernels of 1-2 warps and 2-8 elements a thread (softmax, rmsnorm, copy bodies) add
79.5-80.7 ns however much smaller their own work: they run at the launch rate. Source for
the mechanism: the CUDA C++ Programming Guide, "Hardware Implementation" (the blocks of a grid
are enumerated and distributed to the multiprocessors with available execution capacity; as
blocks terminate, new blocks are launched on the vacated multiprocessors).
"""

from __future__ import annotations

from typing import Any

from tfx.analysis.numbers import emax, is_array
from tfx.hw.units import format_counted_verb


def interval_ns(m) -> float | None:
    """ns between two CTA launches on one SM (the profile's ``launch.cta_interval``), or None
    where the profile states none (then no floor)."""
    if m.kind != "gpu":
        return None
    return m.profile.get("launch.cta_interval", None)


def floor_ns(r, m) -> Any:
    """ns r CTAs on one SM take at least: r launches at the SM's launch interval; 0 where the
    profile states no interval."""
    gap = interval_ns(m)
    if gap is None:
        return 0
    return r * gap


def bound(batch_ns, r, m) -> Any:
    """``batch_ns`` raised to the launch floor of r CTAs (``floor_ns``)."""
    return emax(batch_ns, floor_ns(r, m))


def binds(batch_ns, r, m) -> bool:
    """Whether the launch floor sets the batch (scalars only: the breakdown line)."""
    if is_array(batch_ns, r):
        return False
    floor = floor_ns(r, m)
    return bool(floor) and float(floor) >= float(batch_ns)


def describe(r, m, fmt) -> str:
    """The breakdown's words for a batch the launch rate sets, with values."""
    gap = interval_ns(m)
    return (f"the SM starts a CTA at most every {fmt(float(gap))}: {format_counted_verb(r, 'CTA', 'take')} at least "
            f"{r} x {fmt(float(gap))} = {fmt(float(floor_ns(r, m)))}, bound by the CTA launch rate")
