"""The one unit policy, by quantity and by metric name.

- bytes: decimal prefixes (``1.50 MB``), as bandwidths are quoted, so bytes divided by
  a bandwidth on screen give the time on screen (``tfx.hw.units.format_bytes``);
- times: ns, us, ms, s (``format_time_ns``);
- work: flop with decimal prefixes (``137.44 Gflop``); special-function evaluations
  likewise (``2.10 Mop``);
- allocation sizes (a CTA's shared memory, occupancy budgets): exact bytes
  (``98,304 B``), as ptxas reports them: a budget off by 4 bytes matters;
- ratios: percent with one decimal;
- arithmetic intensity: flop per byte, three significant figures (``63.0 flop/B``);
- counts: whole numbers with thousands separators;
- inside a formula of the predicted time's breakdown (written by tfx.analysis with the same
  low-level helpers, ``tfx.hw.units``): times as above, bytes and rates to four significant
  digits (``24.58 KB / 128.7 GB/s = 190.96 ns``; ``formula_bytes``, ``formula_rate``); a rate
  the analysis holds in B/ns is shown as a bandwidth (1 B/ns = 1 GB/s), never as ``B/ns``;
- durations of tfx's own jobs (an execution budget): ``21 s``, ``10 min`` (``format_duration_s``).

JSON never goes through here: it carries raw numbers with the unit in the key name
(``predicted_ns``, ``memory.peak.smem`` in bytes).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from tfx.hw.units import (format_bandwidth, format_bytes, format_count, format_exact_bytes, format_intensity, format_parameter_count, format_percent,
                          format_percent_change, format_percent_value, format_counted, format_counted_verb, format_flops, format_prefixed_count,
                          format_frequency, format_plain, format_quantity, format_significant, format_time_compact, format_time_ns, format_times)

__all__ = ["with_knobs", "compiled_as", "within_pct", "num", "ns", "ns_compact", "ctas_per_sm", "counted", "nbytes", "bandwidth", "flop", "ops", "count", "percent", "ratio_pct",
           "allocation", "parameter_count", "intensity", "metric", "fact", "fact_value", "row_value", "general", "pct_change", "times", "format_bandwidth", "format_bytes",
           "format_count", "format_exact_bytes", "format_flops", "format_frequency", "format_time_ns"]


def with_knobs(knobs) -> str:
    """The knobs applied to a profile, as a header names them after the profile's name:
    ``{"memory.l2.bandwidth": "x2"}`` -> ``" with memory.l2.bandwidth=x2"``; '' for none."""
    return f" with {', '.join(f'{k}={v}' for k, v in knobs.items())}" if knobs else ""


def machine_counts(profile_name: str, units) -> str:
    """The machine's counts a kernel named, after its parameters, and whose they are:
    ``"sip", {"units(cube)": 8, "units(pe)": 64}`` -> ``"; sip's units(cube)=8, units(pe)=64"``;
    '' for none (analyze's and simulate's parameters line, diff's sides, tfx run)."""
    if not units:
        return ""
    return f"; {profile_name}'s " + ", ".join(f"{k}={v}" for k, v in units.items())


def compiled_as(codegen: str | None) -> str:
    """The code generator a header names after the profile (and its knobs): ``"triton"`` ->
    ``", compiled as triton"``; '' for None (a tiled profile: its own tool chain's kernels).
    Every surface that prices a kernel names it so (tfx.analysis.codegen): the ranking and the
    times are that code generator's."""
    return f", compiled as {codegen}" if codegen else ""


def timed_as(l2_clear: bool) -> str:
    """``, timed after an L2 clear`` where the analysis priced its launches as a harness that
    clears the L2 before each times them (analyze's l2_clear, tfx.analysis.launch_handoff.
    L2_CLEAR_CONDITION, imported only then: the explorer's start stays light); '' otherwise."""
    if not l2_clear:
        return ""
    from tfx.analysis.launch_handoff import L2_CLEAR_CONDITION
    return f", {L2_CLEAR_CONDITION}"


def within_pct(v: Any) -> str:
    """A relative band or gap to one decimal of a percent: ``0.018336`` -> ``"1.8%"`` (``ratio_pct``)."""
    return ratio_pct(v)


def num(v: Any) -> float:
    """A result's number (int, Fraction, numpy scalar) as a float; NaN for anything else."""
    if isinstance(v, Fraction):
        return float(v)
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def ns(v: Any, significant: int | None = None) -> str:
    return format_time_ns(num(v), significant)


def ns_compact(v: Any) -> str:
    """A time in the fewest cells, for an axis label: three significant digits, no space
    (``3084.2`` -> ``"3.08us"``, ``512`` -> ``"512ns"``)."""
    return format_time_compact(num(v))


def ctas_per_sm(n: Any) -> str:
    """Resident CTAs per SM as every surface writes them: ``1`` -> ``"1 CTA/SM"``, ``2`` ->
    ``"2 CTAs/SM"`` (tfx.analysis.occupancy's summary, the explorer's header)."""
    return format_counted(int(num(n)), "CTA/SM", "CTAs/SM")


def counted(v: Any, noun: str, plural: str | None = None) -> str:
    """A count and its noun, singular at exactly one (tfx.hw.units.format_counted): ``1, "trip"``
    -> ``"1 trip"``, ``1024, "position"`` -> ``"1,024 positions"``."""
    return format_counted(num(v), noun, plural)


def counted_verb(v: Any, noun: str, verb: str, plural: str | None = None) -> str:
    """A count, its noun and the verb that follows, agreeing with it
    (tfx.hw.units.format_counted_verb): ``1, "CTA/SM", "need", "CTAs/SM"`` -> ``"1 CTA/SM needs"``."""
    return format_counted_verb(num(v), noun, verb, plural)


def nbytes(v: Any, significant: int | None = None) -> str:
    return format_bytes(num(v), significant)


def allocation(v: Any) -> str:
    """An allocation size in exact bytes, as compilers report and occupancy budgets need them
    (a CTA's shared memory, a register file): ``98304`` -> ``"98,304 B"``."""
    return format_exact_bytes(int(num(v)))


def parameter_count(v: Any) -> str:
    """A model's parameter count as model cards write it, three significant figures with a
    thousand-step suffix (B for billion): ``8030261248`` -> ``"8.03B"``, ``950`` -> ``"950"``."""
    return format_parameter_count(num(v))


def bandwidth(v: Any, significant: int | None = None) -> str:
    return format_bandwidth(num(v), significant)


def _prefixed(x: float, unit: str) -> str:
    return format_prefixed_count(x, unit)


def flop(v: Any) -> str:
    """Floating-point operations: ``137438953472`` -> ``"137.44 Gflop"``."""
    return _prefixed(num(v), "flop")


def ops(v: Any) -> str:
    """Special-function evaluations (exp, rsqrt, ...): ``2097152`` -> ``"2.10 Mop"``."""
    return _prefixed(num(v), "op")


def count(v: Any) -> str:
    return format_count(num(v))


def percent(v: Any) -> str:
    """A value already in percent: ``37.5`` -> ``"37.5%"``."""
    return format_percent_value(num(v))


def ratio_pct(v: Any) -> str:
    """A ratio in [0, 1] as percent: ``0.375`` -> ``"37.5%"`` (tfx.hw.units.format_percent)."""
    return format_percent(num(v))


def intensity(v: Any) -> str:
    """Arithmetic intensity, flop per byte, to three significant figures with thousands
    separators past them: ``63.0157`` -> ``"63.0 flop/B"``, ``4096`` -> ``"4,096 flop/B"``."""
    return format_intensity(num(v))


def general(v: Any, digits: int = 4) -> str:
    """A dimensionless value (a tensor element, an error, a tolerance) to ``digits``
    significant digits, exponent when needed: ``0.000123456`` -> ``"0.0001235"``."""
    return format_significant(num(v), digits)


def times(v: Any) -> str:
    """A factor: ``2.4`` -> ``"2.40x"``."""
    return format_times(num(v))


def metric(name: str, v: Any) -> str:
    """A metric of ``Analysis.metrics`` (or its JSON) for people, by its dotted name."""
    if isinstance(v, str) or v is None or isinstance(v, bool):
        return str(v)
    if name.endswith("_ns") or "_ns." in name or name.endswith(".ns"):
        return ns(v)
    if name.endswith("_pct"):
        return percent(v)
    if name.endswith("ratio"):
        return ratio_pct(v)
    if name.startswith("memory.") and not name.endswith("_fits"):
        return nbytes(v)
    if name.startswith(("compute-cost.special.", "compute-cost.compare.", "compute-cost.select.")):
        return ops(v)
    if name.startswith("compute-cost."):
        return flop(v)
    return count(v)


def fact(f) -> str:
    """A profile fact (``tfx.hw`` Fact) for people; ``unavailable`` when not stated."""
    if not f.available:
        return "unavailable"
    return format_quantity(f.value, f.unit)


def fact_value(f) -> str:
    """A profile fact's value in a table whose unit column names the unit (``tfx hw show``):
    bytes, bandwidths, times, frequencies and throughputs with their prefixed unit
    (``4.80 TB/s``), anything else as a plain count (``132``)."""
    if f.unit in ("B", "B/s", "ns", "Hz", "flop/s"):
        return format_quantity(f.value, f.unit)
    return format_plain(f.value)


def row_value(v: Any, unit: str) -> str:
    """A cell of a comparison row with the row's unit (``tfx.model.compare``: ``ns``, ``B``,
    ``count``): ``-`` for a missing value, times and bytes with prefixes, counts whole, any
    other unit as the plain number (``%g``)."""
    if v is None:
        return "-"
    if unit == "ns":
        return ns(v)
    if unit == "B":
        return nbytes(v)
    if unit == "count":
        return count(v)
    return format_significant(v, 6) if isinstance(v, float) else str(v)


def pct_change(old: Any, new: Any) -> str:
    """`` (+12.5%)``: the relative change from ``old`` to ``new``; '' when ``old`` is 0."""
    a, b = num(old), num(new)
    if a == 0 or math.isnan(a) or math.isnan(b):
        return ""
    return f" ({format_percent_change((b - a) / a)})"


def near_tie_sentence(tie, shown: int | None = None) -> str:
    """The near-tie sentence of every surface (tfx explore's text and JSON, the Explore pane)
    for a ``tfx.explore.near_tie.NearTie``; ``shown``: rows the top table lists.

    The gap and the band are percents to one decimal; where the two would print the same
    (a gap of 1.84% against the 1.83% band), both get two decimals so the line does not read
    "1.8% ahead ... outside the 1.8%"."""
    band = within_pct(tie.band)
    if tie.tied:
        more = (f" ({shown} listed: a top of {tie.configs} lists them all)"
                if shown is not None and shown < tie.configs else "")
        return (f"near tie: top {tie.configs} within {band} of the best, the re-timing noise: "
                f"measure them (their order is noise){more}")
    if tie.alone:
        if tie.others:
            return ("the only feasible configuration of its problem shape and hardware point: nothing to "
                    "rank it against")
        return "one feasible configuration"
    if tie.next_gap is None:       # the best takes 0 ns: any slower one is infinitely far behind
        return f"top pick ahead of the next (it takes 0 ns): outside the {band} re-timing noise"
    gap = within_pct(tie.next_gap)
    if gap == band:
        gap, band = format_percent(num(tie.next_gap), 2), format_percent(num(tie.band), 2)
    return f"top pick {gap} ahead of the next: outside the {band} re-timing noise"


def unmeasured_sentence(values, marked: bool = False, checked: tuple | None = None) -> str:
    """The line under a top table (tfx explore's text and JSON, the Explore pane) whose first pick sets values no
    campaign timed, for a list of ``tfx.analysis.coverage.Unmeasured``; ``marked``: some listed row sets such
    values (its rank carries a ``?``), said even where the first pick sets none; ``checked``: (rank, slower by)
    of the fastest listed row whose values were all timed (tfx.explore.explore.best_checked). '' for neither."""
    from tfx.analysis.coverage import sentence
    if values:
        line = sentence(values, "the top pick's ") + (" (? marks each such row)" if marked else "")
        if checked is not None:
            line += f"; the fastest row of timed values, #{checked[0]}, is {gap_percent(checked[1])} slower"
        return line
    if marked:
        return "? marks a row with values tfx's campaigns never timed for this kernel: its rank is unchecked"
    return ""


def rank_marks(entry: dict) -> str:
    """A listed row's marks: ``≈`` where the row is in the near tie, ``?`` where it sets values no campaign
    timed, ``†`` where it spills registers (a frontier row outside the top table has these alone)."""
    return (f"{'≈' if entry.get('near_tie') else ''}{'?' if entry.get('unmeasured') else ''}"
            f"{'†' if entry.get('spilled_registers') else ''}")


def rank_cell(i: int, entry: dict) -> str:
    """A top table's rank and its marks (``rank_marks``; tfx explore's text, the Explore pane)."""
    return f"{i}{rank_marks(entry)}"


def gap_percent(gap) -> str:
    """How much slower a row is than the first, as the lines under a top table say it: a gap under 0.1% to two
    decimals (0.02%), as the near tie's two-decimal case ("0.0% slower" says nothing)."""
    return format_percent(num(gap), 2) if num(gap) < 0.001 else format_percent(num(gap))


def spilling_sentence(first_spills: bool, best: tuple | None) -> str:
    """The line under a top table (tfx explore's text and JSON, the Explore pane) where a listed row spills
    registers (its rank carries a ``†``): its excess is priced as local-memory traffic; ``best``: (rank,
    slower by) of the fastest listed row that does not spill, where the first pick spills
    (tfx.explore.explore.best_unspilled). A fact, not advice: over the H200 campaigns a spilling first
    pick ran faster than the fastest non-spilling pick in 52 of the 57 attention shapes where it was first
    (bench/spill_first_policy.py: mean regret 0.6% against 7.6% causal, 0.4% against 8.7% full), though
    spilling rows' times are priced less surely (median |error| 1.4-2.7x the rest's)."""
    line = "† spills registers: its excess is priced as local-memory traffic"
    if first_spills:
        line += (f"; the fastest row that does not spill, #{best[0]}, is predicted {gap_percent(best[1])} slower"
                 if best is not None else "; every listed row spills")
    return line


def top_picks_sentence(picks) -> str:
    """The advice line under a top table (tfx explore's text and JSON, the Explore pane) for a
    ``tfx.explore.top_picks.TopPicks``: how many to time, and the measured ranking error that
    says why. "At least": a near tie of more configurations asks for all of them."""
    first = format_percent(picks.first_pick_regret)
    if picks.count == 2:
        return f"time both: in tfx's {picks.device} campaigns the first pick ran up to {first} behind the fastest"
    return (f"time at least the top {picks.count}: in tfx's {picks.device} campaigns the first pick ran up to {first} "
            f"behind the fastest, the best of the top {picks.count} within {format_percent(picks.top_picks_regret)}")
