"""The last round of a persistent kernel (docs/analysis.md, section 8, "last round").

A persistent GEMM launches ``CTAS`` CTAs that stay resident and walk the output tiles
round-robin (kernels/persistent_gemm.tile: ``loop t = sm to TILES step CTAS``). Position ``sm``
runs ``cdiv(TILES - sm, CTAS)`` tiles: the first ``TILES mod CTAS`` positions one more than the
others. The counted trips of that loop are their mean, ``TILES / CTAS`` (31.03 for 4,096 tiles
on 132 CTAs), but the launch ends when the longest position ends: ``floor(TILES / CTAS)`` full
rounds with every CTA running, then a last round in which only the ``TILES mod CTAS`` CTAs with
the extra tile run (Triton's persistent matmul tutorial and CUTLASS's tile schedulers walk
tiles this way; the partial last round is the wave quantization the persistent grid moves
from CTAs to tiles, not removes).

The last round's tile is not priced at the full machine's rate: its CTAs draw L2 and DRAM
with ``TILES mod CTAS`` SMs pulling, not ``CTAS``. A bandwidth-bound tile runs faster alone, a
latency-bound one (one CTA per SM waiting its round trips) about as fast. So the launch takes

    floor(TILES / CTAS) x tile(CTAS active) + [TILES mod CTAS > 0] x tile(TILES mod CTAS active)

against the mean CTA's ``TILES / CTAS x tile(CTAS active)`` that the waves price; the term is
the difference. ``tile(n active)`` is the loop's ns in one CTA over its mean trips, from the
same batch pricing (tfx.analysis.performance) run with n CTAs on the SMs.

tfx.analysis.uneven_tail leaves such loops out (a CTA bound by the shared bandwidth speeds up
as the others end); this term prices exactly that speed-up. Only launches of one wave or less
(the persistent case: every CTA resident from the start); scalars and numpy arrays alike.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from tfx.analysis.numbers import emax, is_array, ratio, where
from tfx.hw.units import format_counted as counted, verb_for
from tfx.hw.units import format_count, format_significant


class Rounds(NamedTuple):
    """A round-robin loop over the CTAs' mesh coordinate."""

    loop_id: str
    line: int | None
    var: str                      # the mesh coordinate the loop starts at
    ctas: Any                     # the mesh's extent (= the loop's step)
    fewest: Any                   # trips of the last position (floor(TILES / CTAS) when uneven)
    mean: Any                     # mean trips over the positions (the counted trips)
    extra: Any                    # positions that run one trip more (TILES mod CTAS)
    loop_var: str | None = None   # the loop's variable (t): position sm runs t = sm + i x ctas
    tiles: Any = None             # the positions the loop walks over all CTAs (TILES)


def _cdiv(a, b):
    if is_array(a, b):
        import numpy as np
        return np.maximum(-((-np.asarray(a)) // b), 0)
    return max(-((-a) // b), 0)


def find(unit_node, env) -> Rounds | None:
    """The loop of one CTA's body (not inside another loop) that starts at the mesh
    coordinate and steps by the mesh's extent (``loop t = sm to TILES step CTAS``), or None.
    Its positions run ``fewest`` or ``fewest + 1`` trips."""
    mesh = unit_node.region
    coords = tuple(getattr(mesh, "coords", ()) or ())
    if len(coords) != 1:
        return None
    (var,) = coords
    try:
        n = mesh.extents[0].evaluate(env)
    except Exception:
        return None

    for c in unit_node.children:
        if c.kind != "loop" or c.region is None:
            continue
        lp = c.region
        if lp.trip.kind == "runtime" or lp.start.free_names() != {var} or var in lp.stop.free_names():
            continue
        try:
            step = lp.step.evaluate(env)
            start_last = lp.start.evaluate({**env, var: n - 1})
            stop = lp.stop.evaluate(env)
        except Exception:
            continue
        same = (step == n).all() if is_array(step, n) else step == n
        if not same:
            continue
        fewest = _cdiv(stop - start_last, step)
        mean = c.trips
        # positions with one trip more: (mean - fewest) x CTAs, an integer up to rounding
        extra = (mean - fewest) * n
        if is_array(extra):
            import numpy as np
            extra = np.rint(extra)
        else:
            extra = round(float(extra))
        return Rounds(c.id, c.line, var, n, fewest, mean, extra, lp.var, fewest * n + extra)
    return None


def tile_ns(rounds: Rounds, loop_ns: dict) -> Any:
    """One trip (tile) of the loop in one CTA: its ns in the batch over its mean trips."""
    ns = loop_ns.get(rounds.loop_id, 0)
    if is_array(ns, rounds.mean):
        return where(rounds.mean > 0, ns / emax(rounds.mean, 1e-300), 0)
    return ratio(ns, rounds.mean) if rounds.mean else 0


def extra_ns(rounds: Rounds, tile_full, tile_last) -> Any:
    """ns the longest position adds over the mean one: the full rounds and the last round's
    tile at its own rate, less the mean trips at the full rate (module docstring)."""
    has_last = rounds.extra > 0
    longest = rounds.fewest * tile_full + where(has_last, tile_last, 0)
    return longest - rounds.mean * tile_full


def detail(rounds: Rounds, tile_full, tile_last, fmt) -> str:
    """The breakdown's line (scalars)."""
    extra = int(rounds.extra)
    ctas = int(rounds.ctas)
    fewest = int(rounds.fewest)
    tiles = fewest * ctas + extra
    longest = fewest * tile_full + (tile_last if extra else 0)
    mean = float(rounds.mean)
    if not extra:
        return (f"line {rounds.line}: {counted(tiles, 'tile')} on {counted(ctas, 'CTA')} "
                f"{verb_for(tiles, 'are')} {counted(fewest, 'full round')}: every CTA runs "
                f"{counted(fewest, 'tile')} of {fmt(tile_full)}")
    # extra > 0: tiles > ctas >= 2 (tiles mod 1 is 0), so 'tiles' and 'CTAs' are plural here
    return (f"line {rounds.line}: {format_count(tiles)} tiles on {ctas} CTAs are {counted(fewest, 'full round')} and a last round "
            f"of {counted(extra, 'tile')} ({format_count(tiles)} mod {ctas}): the longest CTA runs {fewest} x {fmt(tile_full)} "
            f"(all {ctas} CTAs pulling) + 1 x {fmt(tile_last)} (only {extra} pulling) = {fmt(longest)}, "
            f"against the mean CTA's {format_significant(mean, 4)} x {fmt(tile_full)} = {fmt(mean * tile_full)}")
