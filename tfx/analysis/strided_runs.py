"""DRAM reads in short runs that no neighbouring CTA continues (docs/analysis.md, "strided runs").

HBM moves data in bursts out of an open DRAM page (row buffer): JEDEC JESD238 (HBM3) gives each
pseudo channel a 32-byte access (32 DQ x burst length 8) out of a 1 KiB page, and a page must
be activated before it is read and precharged before the bank opens another; so a read stream
that takes only a few bursts from each page it opens keeps the DRAM busy opening pages, not
moving data. Whether a k-loop's read does that is known from the IR: a tile whose rows are
short (``contiguous_runs``) reads each row's next piece one trip later, while the other CTAs
read other rows, when the offset of the window's contiguous (last) axis advances only with the
pipelined loop's trip (A[pm * BM : BM, k * BK : BK], fp8's BT[pn * BN : BN, k * BK : BK]); when
it advances with the CTA (B[k * BK : BK, pn * BN : BN]), CTA pn + 1's piece lies right after
CTA pn's and the machine reads each row whole.

Measured on this H200 (calibration/h200/measured/b_runs, bench/h200/measure_b_runs.py: the
small-M k-loop streaming B from DRAM on 132 SMs at equal bytes a trip): K-major pieces of 64 B
reach at best 2.12 TB/s (16 KiB a trip, 4 stages, 6.5 MB in flight; fp8 2.06), pieces of 32 B
1.88 TB/s, where row-major 64-B pieces whose neighbours touch reach 2.79 and 128-256-B pieces of
either layout 2.8-3.1 TB/s; on 1-16 SMs the piece makes no difference (the idle round trip does
not depend on it, and one SM's transfer does not either). So the piece costs DRAM busy time,
not SM time: a byte of such a read keeps the device's DRAM as busy as copy bandwidth / that rate
bytes of whole lines (``memory.<dram>.bandwidth_strided_runs``: runs of 64-127 B, 4.24 / 2.12 =
2.0; ``bandwidth_strided_sectors``: runs under 64 B, 2.25), in place of the short-run factor of
reads whose neighbours continue them (``tfx.analysis.memory_parallelism.short_run_factor``,
1.32). The loaded DRAM round trip's queue (``tfx.analysis.load_trip.loaded_round_trip_ns``:
base + slope x the bandwidth the SMs draw, its slope measured on whole-line k-loops up to the
copy bandwidth) counts those busy bytes: the queue grows with how busy the DRAM is, so 2.12 TB/s
of 64-B K-major pieces wait as long as 4.24 TB/s of whole lines. The trip's own transfer (the
SM's share, one SM's ceiling) keeps the short-run rate: pricing the whole tile at the strided
rate in each round trip (branch fp86-strided, a ceiling) made 2-stage trips 40% too slow.
"""

from __future__ import annotations

from typing import Any

from tfx.analysis.numbers import is_array
from tfx.hw.units import FORMULA_DIGITS, format_bandwidth, formula_bytes, formula_rate
from tfx.ir.nodes import LoopRegion, MeshRegion, walk

LINE_BYTES = 128          # a whole L2 line: runs of it or longer are not short
SECTORS_TWO = 64          # two 32-byte sectors: runs under it are one sector's worth


def index_names(kernel) -> tuple[frozenset, frozenset]:
    """(the pipelined loops' variables, every other mesh coordinate and loop variable) of a kernel."""
    staged, other = set(), set()
    for s in walk(kernel.body):
        if isinstance(s, LoopRegion):
            (staged if s.stages is not None else other).add(s.var)
        elif isinstance(s, MeshRegion):
            other.update(s.coords)
    return frozenset(staged), frozenset(other)


def advances_with_trip_only(window, staged, other) -> bool:
    """Whether the window's last (contiguous) axis moves with a pipelined loop's trip and with
    no CTA or outer-loop index: its pieces are not continued by a neighbouring CTA's."""
    last = window.axes[-1] if window.axes else None
    if last is None or last.kind != "range" or last.offset is None or last.stride is not None:
        return False
    names = last.offset.free_names()
    return bool(names & staged) and not names & other


def rate_bytes_per_s(m, run_bytes) -> Any:
    """The measured DRAM rate of isolated runs of ``run_bytes`` (None where the profile states no
    such fact or the runs are whole lines)."""
    rs = m.profile.get(f"memory.{m.dram}.bandwidth_strided_runs", None)
    sectors = m.profile.get(f"memory.{m.dram}.bandwidth_strided_sectors", rs)
    if rs is None or m.kind != "gpu":
        return None
    if is_array(run_bytes):
        import numpy as np
        rb = np.asarray(run_bytes)
        return np.where(rb < SECTORS_TWO, sectors, np.where(rb < LINE_BYTES, rs, np.nan))
    if run_bytes >= LINE_BYTES:
        return None
    return sectors if run_bytes < SECTORS_TWO else rs


def factor(m, window, dims, env, bits, staged, other, short_factor) -> Any:
    """DRAM time of the read over that of whole lines: copy bandwidth / the isolated-run rate
    where its runs are under a line and advance with the trip only; ``short_factor`` (the
    neighbour-continued short-run factor) otherwise."""
    if not advances_with_trip_only(window, staged, other):
        return short_factor
    from tfx.analysis.dma import contiguous_run_bytes
    run_bytes = contiguous_run_bytes(window, dims, env, bits)
    if run_bytes is None:
        return short_factor
    rate = rate_bytes_per_s(m, run_bytes)
    if rate is None:
        return short_factor
    slow = m.dram_bw_device / (rate / 1e9)
    if is_array(slow):
        import numpy as np
        return np.where(np.isnan(slow), short_factor, slow)
    return slow


def describe(m, dram_bytes, queue_bytes, line_rate_bytes) -> str | None:
    """A clause for the breakdown where the round trip's queue counts a trip's DRAM bytes at more
    than the short-run rate of neighbour-continued reads (some runs advance with the trip only);
    None otherwise."""
    rs = m.profile.get(f"memory.{m.dram}.bandwidth_strided_runs", None)
    if rs is None or not dram_bytes or queue_bytes <= max(dram_bytes, line_rate_bytes) * (1 + 1e-9):
        return None
    sec = m.profile.get(f"memory.{m.dram}.bandwidth_strided_sectors", rs)
    return (f"its reads in runs under 128 B that advance with the trip only (no neighbouring CTA continues "
            f"them) keep DRAM busy as at {format_bandwidth(rs, FORMULA_DIGITS)} (64-127 B) or {format_bandwidth(sec, FORMULA_DIGITS)} (under 64 B), "
            f"not {formula_rate(m.dram_bw_device)}: the round trip's queue counts its "
            f"{formula_bytes(dram_bytes)} of DRAM bytes as {formula_bytes(queue_bytes)} of whole lines")
