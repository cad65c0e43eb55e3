"""The serialized fragment chain of a warp-mma GEMM trip (docs/analysis.md, section 8,
"Fragment chain of a warp-mma trip").

A warp issues its instructions in order. Where ptxas loads a warp's mma fragments into the
registers an earlier mma still reads, each ldmatrix waits for that mma to issue, and the mma
for its ldmatrix: the trip becomes a chain of ldmatrix and mma latencies, however few mmas it
issues. Triton 3.6.0 at 2 warps, BK = 32 and 3+ stages loads every n-tile's B fragment into one
register quad (``LDSM.16.MT88.4 R56 -> HMMA R16, R48, R56, R16 -> HMMA R16, R44, R58, R16 ->
LDSM.16.MT88.4 R56``, calibration/h200/measured/stream_depth): bf16 16x128x32 on 2 warps is
8 links of (ldmatrix + mma) latency a trip, 8 x (34 + 24) = 464 cycles, against 16 x 6 = 96
cycles of mma issue.

Which tiles chain how is the compiler's choice, so it is a table by tile configuration
(``CHAIN``: tfx/analysis/triton_fragment_chain.py, written by bench/h200/fragment_chain.py
from the k-loop SASS of every multi-stage bf16 warp-mma configuration of the issue-15 space):
(BM, BN, BK, warps, stages) -> the ldmatrix and mma latencies on one warp's critical path a
trip, walked in issue order over three trips. Only configurations whose chain outlasts their
mma issue are listed; anything else, and a code generator whose threads do not copy the tiles
(TMA: cutlass), has no chain (0).

The chain is each warp's own time a trip at the least (``chain_ns``: the counts times the
profile's instruction_latency.ldmatrix and mma_sync, at the SM's clock under warp mma), a
delay of the warp-mma trip (tfx.analysis.warp_trip) that other CTAs' warps fill.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from tfx.analysis.numbers import is_array
from tfx.hw.units import formula_frequency
from tfx.hw.units import format_plain


class Chain(NamedTuple):
    """One warp's serialized fragment chain a trip."""

    ldsm: Any            # ldmatrix latencies on the critical path
    mma: Any             # mma latencies on it
    ldsm_cycles: float   # instruction_latency.ldmatrix
    mma_cycles: float    # instruction_latency.mma_sync
    ghz: float           # the SM's clock under warp mma
    ns: Any              # (ldsm x ldsm_cycles + mma x mma_cycles) / ghz


def _packed(bm, bn, bk, warps, stages):
    """One integer per configuration (each field below 512: the tile sides, warps and stages)."""
    return (((bm * 512 + bn) * 512 + bk) * 512 + warps) * 512 + stages


_SORTED: dict = {}


def _sorted_table(table):
    """(sorted packed keys, their ldmatrix counts, their mma counts) of ``table``, built once."""
    got = _SORTED.get(id(table))
    if got is None or got[0] is not table:
        import numpy as np
        items = sorted((_packed(*k), v) for k, v in table.items())
        keys = np.array([k for k, _ in items], dtype=np.int64)
        ld = np.array([v[0] for _, v in items] + [0], dtype=float)
        mma = np.array([v[1] for _, v in items] + [0], dtype=float)
        got = _SORTED[id(table)] = (table, keys, ld, mma)
    return got[1:]


def counts(shape, warps, stages, bits=16, b_k_major=False, table=None) -> tuple:
    """(ldmatrix, mma) latencies on a trip's chain for a dot of ``shape`` (BM, BN, BK) on
    ``warps`` warps at ``stages`` stages: the table's entry, (0, 0) where it has none or the
    operands are not 16-bit with B [K, N] (arrays elementwise: a sorted-key search, no loop
    over configurations, for explore's sweeps)."""
    if table is None:
        from tfx.analysis.triton_fragment_chain import CHAIN as table
    bm, bn, bk = shape
    if int(bits) != 16 or b_k_major:
        return 0, 0
    if is_array(bm, bn, bk, warps, stages):
        import numpy as np
        keys, ld, mma = _sorted_table(table)
        want = _packed(*(np.asarray(v, dtype=np.int64) for v in (bm, bn, bk, warps, stages)))
        at = np.searchsorted(keys, want)
        at = np.where((at < len(keys)) & (keys[np.minimum(at, len(keys) - 1)] == want), at, len(keys))
        return ld[at], mma[at]
    return table.get((int(bm), int(bn), int(bk), int(warps), int(stages)), (0, 0))


def facts(m) -> tuple | None:
    """(ldmatrix cycles, mma_sync cycles) from the profile's instruction latencies, or None where
    it states either not (the chain is then not priced)."""
    ld = m.profile.get("instruction_latency.ldmatrix", None)
    mma = m.profile.get("instruction_latency.mma_sync", None)
    return None if ld is None or mma is None else (ld, mma)


def chain(n_ldsm, n_mma, ldsm_cycles, mma_cycles, ghz) -> Chain:
    """The chain's time: (n_ldsm x ldsm_cycles + n_mma x mma_cycles) / ghz ns (arrays elementwise)."""
    return Chain(n_ldsm, n_mma, ldsm_cycles, mma_cycles, ghz, (n_ldsm * ldsm_cycles + n_mma * mma_cycles) / ghz)


def describe(c: Chain, fmt) -> str:
    """The warp-mma trip's clause (scalars)."""
    return (f"; each warp's fragments chain (ptxas loads them into registers an earlier mma still reads: "
            f"tfx.analysis.fragment_chain): {format_plain(c.ldsm)} ldmatrix x {format_plain(c.ldsm_cycles)} + "
            f"{format_plain(c.mma)} mma x {format_plain(c.mma_cycles)} cycles = "
            f"{format_plain(c.ldsm * c.ldsm_cycles + c.mma * c.mma_cycles)} cycles / {formula_frequency(c.ghz)} = "
            f"{fmt(c.ns)} a trip, its own time at the least")


__all__ = ["Chain", "counts", "facts", "chain", "describe"]
