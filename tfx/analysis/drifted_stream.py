"""Streaming CTAs after the first wave: their prologues overlap (docs/analysis.md, section 8,
"drifted streaming waves").

A launch's waves are priced as batches of r CTAs per SM in lock step: every CTA of the batch
loads its inputs (one memory latency), fills its pipeline (the first tile's latency and its
bytes at the SM's share of DRAM), runs its trips, stores, and the next batch starts. That is
what the first wave does: the launch starts its CTAs together, so they all wait for their first
tiles at once while the DRAM has nothing else to serve. The CTAs that follow start as slots
free, at the times the earlier ones end, which the first wave's queue at the DRAM has spread
(its SMs got their first tiles one after another), so from the second wave on an SM's CTAs are
at different points of their lives and the SMs are at different points of theirs: while one
CTA waits for its first tile or computes its last trip, the others' tiles stream (the same
argument as tfx.analysis.row_body's overlapping waves, there for loop-free row bodies; Hong and
Kim, ISCA 2009: memory periods of different warps overlap, a warp's own do not). A drifted
batch of r CTAs then takes the longer of

    throughput  the busiest engine over the r CTAs' summed demand (their K/V tiles and
                stores at the SM's share of DRAM, their chains on the tensor and SIMT
                stations), the waves' engines;
    life        one CTA's own path: each load outside the loop its latency, the loop's
                first tiles one latency, then each trip the longer of its round of the r
                CTAs' chains (tfx.analysis.decode_trip.round_ns) and its pipeline's round
                trip over S-1 tiles in flight (tfx.analysis.decode_trip.round_trip_ns) -
                the lock-step trip without its bytes at the share, which the throughput
                holds;

instead of their sum phase by phase. Which launches: a CTA body whose loop is a streaming
serial trip (split-KV decode's KV loop: tfx.analysis.decode_trip.trip_chain applies) with at
least 2 stages (an unpipelined trip's round already waits its own load), on more CTAs than
slots. The first wave stays in lock step, and so does the last wave (the launch waits for its
CTAs' whole lives; nothing after them overlaps their prologues).

Why it matters: a CTA of few trips (SPLITS x BLOCK_N close to SKV: 1-4 trips) spends as long
in its prologue as in its trips, so lock step prices it up to 1.7x its time. Measured
(calibration/h200/measured/issue15 decode.csv, ms_split, the split launch alone): B32 HQ64
SKV4096 SPLITS 8 BLOCK_N 128 3 stages, 2,048 CTAs one a SM (15.5 waves, 4 trips each), 145 us;
lock step 187.4 us (its batch 11.73 us: 0.7 us of q, 2.74 us of fill, 4 x 2.04 us of tiles at
the share), drifted 8.32 us a batch (the four tiles and the stores at the share, over a life of
7.78 us): 139.5 us (tests/test_drifted_stream.py works it by hand).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from tfx.analysis import row_body
from tfx.analysis.numbers import emax, is_array, where
from tfx.hw.units import format_counted


class Drift(NamedTuple):
    """One batch of r CTAs priced both ways (ns; arrays elementwise)."""

    lock_step: Any                # the batch as the first wave runs it (tfx.analysis.performance)
    throughput: Any               # the busiest engine over the r CTAs' summed demand
    life: Any                     # one CTA's own path (module docstring)
    applies: Any                  # a streaming serial trip of 2+ stages in the body (bool / bool array)

    @property
    def drifted(self) -> Any:
        """ns of a drifted batch: max(throughput, life) where it applies, else the lock step."""
        d = emax(self.throughput, self.life)
        if is_array(d, self.applies, self.lock_step):
            return where(self.applies, d, self.lock_step)
        return d if self.applies else self.lock_step

    def batch(self, positions, slots) -> Any:
        """ns of a batch after the first wave: drifted where the launch has more CTAs than
        slots, else in lock step (every CTA starts together)."""
        if is_array(positions, slots, self.drifted, self.lock_step):
            return where(positions > slots, self.drifted, self.lock_step)
        return self.drifted if positions > slots else self.lock_step


def loop_life_ns(latency, trips, own_round, pipeline_round) -> Any:
    """One CTA's own path through a pipelined streaming loop: its first tiles' latency, then
    each of its ``trips`` the longer of ``own_round`` (the round of the resident CTAs' chains and
    every engine but the copy engine's share) and ``pipeline_round`` (the copies' round trip
    over the S-1 tiles in flight)."""
    return latency + trips * emax(own_round, pipeline_round)


def waves_ns(full_waves, first_ns, drift: Drift, positions, slots) -> Any:
    """ns of a launch's full waves: the first in lock step (``first_ns``), the other
    ``full_waves - 1`` drifted where there are more CTAs than slots and the body streams
    (``Drift.drifted``), else in lock step (``drift.lock_step``); 0 without a full wave."""
    return row_body.waves_ns(full_waves, first_ns, drift.batch(positions, slots))


def applies(drift: Drift | None, full_waves, positions, slots) -> bool:
    """Whether the drifted batch sets some wave's price (scalars only: the breakdown line)."""
    if drift is None or is_array(drift.applies, drift.life, drift.throughput, full_waves, positions, slots):
        return False
    return bool(drift.applies) and positions > slots and full_waves >= 2


def describe(drift: Drift, full_waves, fmt) -> str:
    """The breakdown's line: the lock-step batch, the drifted one and what it saves, with values."""
    d = float(drift.drifted)
    lock = float(drift.lock_step)
    bound = "the engines' throughput" if float(drift.throughput) >= float(drift.life) else "one CTA's life"
    return (f"after the first wave the CTAs start as slots free and drift apart: a CTA's prologue (its loads' "
            f"latency, its pipeline's first tiles) overlaps the other CTAs' streams, so a batch takes "
            f"max(throughput {fmt(float(drift.throughput))}, one CTA's life {fmt(float(drift.life))}) = {fmt(d)} "
            f"({bound}), not {fmt(lock)} in lock step: {format_counted(full_waves - 1, 'wave')} x {fmt(lock - d)} = "
            f"{fmt((full_waves - 1) * (lock - d))} less")
