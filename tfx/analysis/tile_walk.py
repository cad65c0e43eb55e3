"""L2 reuse of a persistent kernel's tile walk (docs/analysis.md, "L2 reuse of a tile walk").

A persistent GEMM's CTAs stay resident and walk the output tiles round-robin
(kernels/persistent_gemm.tile: ``loop t = sm to TILES step CTAS``, tfx.analysis.persistent_rounds):
CTA ``sm`` runs tiles ``t = sm + i x CTAS``. Its loads depend on the mesh coordinate only
through ``t`` (``A[t / TILES_N * BM : BM, ...]``, ``B[..., t % TILES_N * BN : BN]``), so the
mesh's own order says nothing about which CTAs share a tile. The loop does: in round ``i`` the
W resident CTAs run the W consecutive tiles ``iW .. iW + W - 1`` (Triton's persistent matmul
tutorial and CUTLASS's persistent tile schedulers walk the tiles so), the same W consecutive
positions of a row-major grid that a wave of a two-dimensional mesh covers
(tfx.analysis.l2_reuse). How a load's tile follows ``t`` gives its index:

* ``t % P`` (B's column, P = TILES_N): an index that advances every tile and wraps every P
  tiles. W consecutive tiles hold ``min(W, P)`` distinct values (W consecutive integers have
  min(W, P) residues mod P);
* ``t / P`` (A's row): an index that advances every P tiles. Round i starts at ``o = iW mod P``
  into a row and covers ``ceil((o + W) / P)`` rows; o takes the multiples of d = gcd(W, P)
  below P equally often over the rounds, and the mean over them is exactly
  ``(W + P - d) / P`` (Hermite's identity: the sum over j = 0..n-1 of ceil((j + W/d) / n),
  n = P / d, is W/d + n - 1), at most the grid's ``ceil(TILES / P)`` rows;
* both, or ``t`` itself: every tile of the round is its own (``W`` distinct).

Within a round only the first read of each distinct tile goes to DRAM; across rounds the
index's value recurs as it does for a mesh's waves (``l2_reuse.cross_wave_share``: the column
``P`` tiles back, the row the previous round ended in), and the previous round's tile is still
in L2 only when that round's whole loop of distinct bytes, its LRU stack distance (Mattson et
al. 1970), fits the L2 room. For B of a wide GEMM it does not: a strip of B (K x BN x 2 B) is
read again only after the other P - 1 strips streamed through. Closed form; numpy arrays of
parameter values elementwise (sweeps).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from tfx.analysis.numbers import cdiv, emin, is_array
from tfx.hw.units import format_count, format_counted, format_percent, formula_bytes
from tfx.ir.expr import BinOp, Call, Expr, Name, Neg, Read
from tfx.ir.nodes import Window


class WalkIndex(NamedTuple):
    """How a load's window follows the walk's variable."""

    kind: str                     # "fast" (t % P), "slow" (t / P) or "each" (every tile its own)
    period: Any                   # P (None for "each")
    text: str                     # the index as written: "t % TILES_N"


def _uses(expr: Expr | None, var: str, out: list) -> None:
    """Append (operator, divisor expression) for each place ``var`` occurs in ``expr``:
    ("/", P) or ("%", P) where it is the left operand of a floor division or modulo by an
    expression free of ``var``, ("", None) anywhere else."""
    if expr is None:
        return
    if isinstance(expr, BinOp):
        if expr.op in ("/", "%") and isinstance(expr.lhs, Name) and expr.lhs.name == var \
                and var not in expr.rhs.free_names():
            out.append((expr.op, expr.rhs))
            return
        _uses(expr.lhs, var, out)
        _uses(expr.rhs, var, out)
    elif isinstance(expr, Name):
        if expr.name == var:
            out.append(("", None))
    elif isinstance(expr, Neg):
        _uses(expr.operand, var, out)
    elif isinstance(expr, Call):
        for a in expr.args:
            _uses(a, var, out)
    elif isinstance(expr, Read):
        for a in expr.indices:
            _uses(a, var, out)


def walk_index(windows: list[Window], var: str, env) -> WalkIndex | None:
    """The index of ``var`` (the walk's loop variable) that the windows' tiles follow, or None
    where they do not read ``var``. Every use ``var / P`` with one P: "slow"; every use
    ``var % P``: "fast"; anything else (both, or ``var`` itself): "each"."""
    from tfx.ir.expr import to_text
    uses: list = []
    for w in windows:
        for a in w.axes:
            for part in (a.offset, a.size, a.stride):
                _uses(part, var, uses)
    if not uses:
        return None
    ops = {op for op, _ in uses}
    divisors = {p for _, p in uses}
    if len(ops) == 1 and len(divisors) == 1 and "" not in ops:
        (op,), (p,) = ops, divisors
        try:
            period = p.evaluate(env)
        except Exception:           # a divisor of other loop variables: not a fixed period
            return WalkIndex("each", None, var)
        return WalkIndex("slow" if op == "/" else "fast", period, f"{var} {op} {to_text(p)}")
    return WalkIndex("each", None, var)


def _gcd(a, b):
    if is_array(a, b):
        import numpy as np
        return np.gcd(np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64))
    import math
    return math.gcd(int(a), int(b))


def slow_distinct(W, period, tiles) -> Any:
    """Mean distinct values of an index that advances every ``period`` tiles over a round of W
    consecutive tiles: (W + P - gcd(W, P)) / P, at most the walk's ceil(tiles / P) values
    (module docstring). 132 tiles on rows of 112: d = 4, (132 + 112 - 4) / 112 = 2.14 rows."""
    d = _gcd(W, period)
    mean = (W + period - d) / period
    return emin(mean, cdiv(tiles, period))


def slow_visits(total, W, period) -> Any:
    """Exact (wave, value) pairs of an index that advances every ``period`` positions over a
    launch of ``total`` positions walked in waves (rounds) of W consecutive positions: F = total
    // W full waves and a last one of total - F W. Wave i covers positions iW .. iW + W - 1,
    values floor(iW / P) .. floor((iW + W - 1) / P); floor((iW + W - 1) / P) = floor((i + 1) W / P)
    less 1 where P divides (i + 1) W, so the full waves' sum telescopes to
    F + floor(F W / P) - #{i <= F: P | i W} = F + floor(F W / P) - floor(F d / P), d = gcd(W, P)
    (P | i W exactly when P / d divides i); the last wave adds floor((total - 1) / P) -
    floor(F W / P) + 1. Over many waves it is (W + P - d) / P a wave (``slow_distinct``).
    A 2 x 224 grid in waves of 264: F = 1, d = 8: 1 + 1 - 0 = 2 rows, the last 184 positions
    1 more: 3."""
    F = total // W
    rest = total - F * W
    d = _gcd(W, period)
    full = F + (F * W) // period - (F * d) // period
    last = (total - 1) // period - (F * W) // period + 1
    if is_array(rest, last):
        import numpy as np
        return full + np.where(np.asarray(rest) > 0, last, 0)
    return full + (last if rest > 0 else 0)


def fast_visits(total, W, period) -> Any:
    """Exact (wave, value) pairs of an index that advances every position and wraps every
    ``period`` over a launch of ``total`` positions in waves of W: each full wave reads
    min(W, P) values, the last (total - F W) positions min(total - F W, P)."""
    F = total // W
    return F * emin(W, period) + emin(total - F * W, period)


def distinct(index: WalkIndex, W, tiles) -> Any:
    """Distinct tiles of a load over a round of W consecutive tiles of the walk."""
    if index.kind == "fast":
        return emin(W, index.period)
    if index.kind == "slow":
        return slow_distinct(W, index.period, tiles)
    return W


def launch_share(index: WalkIndex, W, tiles) -> Any:
    """The share of the walk's tile reads that are a round's first read of their tile, exact over
    the whole walk (its full rounds and the last, shorter one): visits / tiles."""
    from tfx.analysis.numbers import ratio
    if index.kind == "each":
        return 1
    visits = (fast_visits if index.kind == "fast" else slow_visits)(tiles, W, index.period)
    return ratio(visits, tiles) if not is_array(visits, tiles) else visits / tiles


def describe(line, tensor: str, index: WalkIndex, W, tiles) -> str:
    """The breakdown's clause for one load of the walk (scalars)."""
    W, tiles = int(W), int(tiles)
    if index.kind == "fast":
        P = int(index.period)
        n = min(W, P)
        F, rest = tiles // W, tiles % W
        visits = int(fast_visits(tiles, W, P))
        return (f"line {line}: {tensor} follows {index.text} (wraps every {format_counted(P, 'tile')}): a round of "
                f"{format_counted(W, 'consecutive tile')} reads min({W}, {format_count(P)}) = {format_counted(n, 'distinct tile')}, {format_count(n)} / {W} = "
                f"{format_percent(n / W)} of its reads from DRAM; {_over_walk(F, rest, tiles)}: "
                f"({format_count(F)} x {format_count(n)}{f' + {format_count(min(rest, P))}' if rest else ''}) / {format_count(tiles)} = "
                f"{format_percent(visits / tiles)}")
    if index.kind == "slow":
        P = int(index.period)
        d = int(_gcd(W, P))
        mean = (W + P - d) / P
        rows = -(-tiles // P)
        n = float(slow_distinct(W, P, tiles))
        cap = "" if n == mean else f", at most the walk's {format_count(rows)}"
        F, rest = tiles // W, tiles % W
        visits = int(slow_visits(tiles, W, P))
        return (f"line {line}: {tensor} follows {index.text} (advances every {format_counted(P, 'tile')}): a round of "
                f"{format_counted(W, 'consecutive tile')} starts a multiple of gcd({W}, {format_count(P)}) = {format_counted(d, 'tile')} into a value and spans "
                f"({W} + {format_count(P)} - {d}) / {format_count(P)} = {format_count(mean)} values on average{cap}: {format_count(n)} distinct tiles, "
                f"{format_count(n)} / {W} = {format_percent(n / W)} of its reads from DRAM; {_over_walk(F, rest, tiles)}: "
                f"{format_counted(visits, 'value')} / {format_count(tiles)} = {format_percent(visits / tiles)}")
    return (f"line {line}: {tensor} follows {index.text} itself: each of a round's {format_counted(W, 'tile')} is its own, "
            f"every read from DRAM")


def _over_walk(F, rest, tiles) -> str:
    """The clause naming the walk's rounds for the exact count (slow_visits / fast_visits)."""
    last = f" and a last one of {format_counted(rest, 'tile')}" if rest else ""
    return f"counted over the walk's {format_counted(F, 'full round')}{last}"


def header(rounds, W) -> str:
    """The breakdown's first clause: the round a wave is (scalars)."""
    return (f"line {rounds.line}: CTA {rounds.var} walks {rounds.loop_var} = {rounds.var} + i x "
            f"{int(rounds.ctas)}: the {int(W)} resident CTAs run {int(W)} consecutive tiles of the "
            f"{format_count(int(rounds.tiles))} a round, and only the first read of a tile in a round goes to DRAM")


def describe_walk(info) -> list[str]:
    """Lines for the breakdown (the ``l2 tile walk`` term) from ``l2_reuse.wave_reuse``'s entry
    of one launch: the round, then per load of the walk its distinct tiles a round and the
    share of its reads that go to DRAM once the previous round's tiles are counted (the ``l2
    across waves`` lines say which of those stay). Scalars only."""
    walk = info.walk
    if walk is None:
        return []
    rounds, W, walked = walk
    if is_array(W, rounds.tiles) or any(is_array(index.period) for _, _, index in walked.values()):
        return []
    window, capacity = info.window or (0, None)
    if capacity is not None and not is_array(window) and window > capacity:
        return [header(rounds, W) + f"; but the round's tiles ({formula_bytes(window)}) do not fit the "
                f"L2's {formula_bytes(capacity)}: every read goes to DRAM"]
    out = [header(rounds, W)]
    cross = info.cross
    for op, (line, tensor, index) in walked.items():
        text = describe(line, tensor, index, W, rounds.tiles)
        kept = cross.get(op, 0)
        miss = info.get(op)
        if kept and miss is not None:
            text += (f"; x (1 - {format_percent(kept)} the previous round left in L2) = "
                     f"{format_percent(miss)}")
        out.append(text)
    return out
