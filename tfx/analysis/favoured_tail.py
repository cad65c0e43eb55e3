"""The favoured SMs' early tail: a decode launch of one full wave and a tail whose first wave
is bound by its DRAM share (docs/analysis.md, section 8, "The favoured SMs' early tail").

Measured (calibration/h200/measured/decode_timeline_s17 and decode_timeline_s20, per-CTA SM and
start / end on the global timer, the campaigns' split-KV decode kernel; read with
bench/decode_timeline_favoured.py): in every pipelined launch of 1.29 waves whose first wave
streams DRAM at its share (seven launches, 3 and 6 CTAs a SM, 2 to 8 warps, 2 and 3 stages,
BLOCK_N 32 to 128), the same 24 SMs (two whole blocks of SM ids; 24 = two GPCs of 6 TPCs
beside six of 9, the whitepaper's 8 GPCs and 66 TPCs) each draw 1.25-1.35x the DRAM rate of
one of the other 108 (median 1.30), end their first wave at 0.74-0.80 of the others' time,
and take the first tail CTAs, r each (every one of their slots), while the others take the
rest one or two a SM when their own first wave ends. The packed SMs' r tail CTAs then run at
their SM's own rate (DRAM no longer saturated) and end the launch: run26 B4 SKV131072 SPLITS16
BLOCK_N64 8 warps 3 stages ends at 588 us where its others' tail CTAs end by 522. The one-stage
launches (decode_timeline_s14, s20's run26 one-stage twin) and the launches whose trip is bound
by the SM's own demand (s17's 8-warp BLOCK_N 32 2-stage wave at 4 a SM) have no such SMs: their
first waves end within a few us on every SM.

The model: a favoured SM draws kappa = 1 / ``others_rate_ratio`` x an other SM's rate; together the
SMs draw the device's rate R: n a + (N - n) b = R with a = kappa b gives a = R / U, where
U = (N - n + kappa n) / kappa SMs share R evenly (``view_units``: 107 on the H200). The
launch's first wave priced on U SMs' view is the favoured SMs' first wave (``t_f``); where it
is not shorter than the first wave on N SMs by at least half of what the share alone would
give (``runs_ahead``: the wave is bound by the SM's own demand, not the share), nothing moves.
Else the favoured SMs take r_f = min(r, ceil(t / n)) tail CTAs each (``tail_per_sm``); those
run at the favoured share while the others finish their first wave (until t_1) and at their
own rate after (priced as the tail's CTAs draw), and the launch ends no earlier than
t_f + that tail (``end_ns``). Works on numpy arrays of parameter values (sweeps)."""

from __future__ import annotations

from typing import Any, NamedTuple

from tfx.analysis.numbers import cdiv, emax, emin, is_array, where
from tfx.hw.units import format_counted, format_plain, format_time_ns as T


class Favoured(NamedTuple):
    units: int            # n: the SMs that draw more (memory.<dram>.favoured_units)
    share: float          # kappa: their rate over an other SM's, 1 / memory.<dram>.others_rate_ratio


def facts(m) -> Favoured | None:
    """The profile's favoured SMs, or None where it states none (or off a GPU)."""
    if m.kind != "gpu" or m.dram is None:
        return None
    n = m.profile.get(f"memory.{m.dram}.favoured_units", None)
    o = m.profile.get(f"memory.{m.dram}.others_rate_ratio", None)
    if n is None or o is None or n <= 0 or n >= m.units or o >= 1:
        return None
    return Favoured(int(n), 1 / float(o))


def view_units(units, f: Favoured) -> int:
    """The SMs U whose even share of the device's rate is a favoured SM's rate:
    n a + (N - n) b = R, a = kappa b  =>  a = kappa R / (N - n + kappa n) = R / U,
    U = (N - n + kappa n) / kappa, rounded to whole SMs."""
    return int(round((units - f.units + f.share * f.units) / f.share))


def runs_ahead(t_f, t_1, view, units) -> Any:
    """Whether the favoured SMs end their first wave ahead: the wave priced on ``view`` SMs
    (``t_f``) is shorter than on ``units`` (``t_1``) by at least half of the share's own ratio,
    t_1 - t_f >= (1 - view / units) t_1 / 2 (a wave bound by its share is view / units of t_1;
    one bound by the SM's own demand does not move)."""
    return (t_1 - t_f) >= (1 - view / units) * t_1 / 2


def tail_per_sm(tail, resident, f: Favoured) -> Any:
    """CTAs each favoured SM takes of a tail of ``tail``: the first slots to free are theirs,
    min(r, ceil(t / n))."""
    return emin(resident, cdiv(tail, f.units)) if is_array(tail, resident) else min(resident, cdiv(tail, f.units))


def end_ns(t_f, t_1, p_share, p_own) -> Any:
    """When a favoured SM ends its tail: it starts at ``t_f``; until the others end their first
    wave (``t_1``) it runs at the favoured share (the whole tail would take ``p_share``), after
    that at its own rate (``p_own``): l = min(max(t_1 - t_f, 0), p_share),
    t_f + l + (1 - l / p_share) x p_own."""
    lead = emin(emax(t_1 - t_f, 0), p_share)
    return t_f + lead + (1 - lead / p_share) * p_own


def describe(f: Favoured, view, r_f, t_f, t_1, p_share, p_own, end, past) -> str:
    """The `favoured tail` term's line (scalars)."""
    return (f"{format_counted(f.units, 'SM')} draw {format_plain(f.share)}x another SM's DRAM share (a share of the "
            f"device's rate on {format_counted(view, 'SM')}), end their first wave at {T(float(t_f))} against "
            f"{T(float(t_1))} and take {format_counted(int(r_f), 'tail CTA')} each: at their share until "
            f"{T(float(t_1))}, then at their own rate ({T(float(p_share))} and {T(float(p_own))} for the whole "
            f"tail), ending at {T(float(end))}, {T(float(past))} past the waves and tail "
            f"(calibration/h200/measured/decode_timeline_s20)")
