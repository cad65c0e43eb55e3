"""Issue 15's "done when" over one family's shapes: the verdict every surface renders.

One result object per family (``FamilyVerdict``, built by ``family_verdicts`` from
``tfx.analysis.measured.summarize``'s groups and their compared rows), rendered to text by
``format_verdict`` (the lines ``bench/accuracy.py --measured-only`` and ``tfx validate`` print
under a family's shape table) and to JSON by ``FamilyVerdict.to_json`` (``tfx validate --json``'s
``families``):

    => FAMILY: median over shapes of median |error| X%, signed Y%; min Spearman Z; max regret R%
       (best of the top 3: T%); spilling ranked first wrongly in N shapes
       within one campaign: max regret ... (campaign shape), best of the top 3 ... (campaign shape),
       min Spearman ... (campaign shape)
       done when: median ok, Spearman >= 0.85 ..., regret <= 10% ..., no spilling first ...
       non-spilling rows: N, median |error| X%, signed Y%
       spilling rows: N, median |error| X%, signed Y%
       spilling first picks: N shapes; the first non-spilling pick ran faster in A, slower in B; mean regret
       R% (the spilling pick) against U%

(each on one line; the last only where a shape's first pick spills beside a row that does not; "within one campaign" only where the rows pool several campaigns).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path

from tfx.hw.units import (format_correlation, format_counted, format_percent, format_percent_change,
                          format_plain)

# Issue 15 ("rankings you can trust"), its "done when", per family of kernels: the median over
# its shapes of each shape's median |error| at most 15%, Spearman's rank correlation of predicted
# vs measured at least 0.85 in every shape, the configuration ranked first within 10% of the best
# measured (regret), and no spilling configuration ranked first where a non-spilling one is
# faster. Targets the issue sets, not figures fitted to anything.
MAX_MEDIAN_ABS_ERROR = 0.15
MIN_SPEARMAN = 0.85
MAX_REGRET = 0.10
#: shapes a "done when" clause names; the pooled tables of bench/accuracy.py have a hundred and more
NAMED_MISSES = 5


def top_picks() -> int:
    """tfx.analysis.measured.TOP_PICKS, imported where a verdict (or tfx explore's advice,
    tfx.explore.top_picks) is rendered: `tfx validate`'s parser imports this module for ``done_when``
    at every command's start, and measured's import is not free."""
    from tfx.analysis.measured import TOP_PICKS
    return TOP_PICKS


def done_when() -> str:
    """The criteria in words, for a command's help: from the constants above."""
    return (f"median |error| <= {format_percent(MAX_MEDIAN_ABS_ERROR, decimals=0)}, Spearman >= "
            f"{format_plain(MIN_SPEARMAN)} in every shape, regret <= {format_percent(MAX_REGRET, decimals=0)}, "
            "no spilling configuration ranked first where a non-spilling one is faster")


@dataclass(frozen=True)
class Criterion:
    """One clause of the "done when": which shapes miss it (the median's clause is over the
    family's shapes together: it names none, ``value`` holds the median)."""

    key: str                      # the JSON key
    label: str                    # the text's name of the clause
    threshold: float
    shapes: int                   # shapes judged
    missing: tuple[str, ...] = ()
    value: float | None = None    # the median clause's median over shapes
    unranked: tuple[str, ...] = ()   # the Spearman clause: shapes without a rank correlation
    passed_: bool | None = None   # the median clause's verdict (the others: no shape missing)

    @property
    def passed(self) -> bool:
        return not self.missing if self.passed_ is None else self.passed_

    def to_json(self) -> dict:
        out = {"threshold": self.threshold, "passed": self.passed}
        if self.value is not None:
            out["value"] = self.value
        else:
            out["shapes"] = self.shapes
            out["missing"] = list(self.missing)
        if self.key == "spearman":
            out["unranked"] = list(self.unranked)
        return out


@dataclass(frozen=True)
class RowPart:
    """The family's non-spilling or spilling rows pooled (not per shape)."""

    name: str                     # "non-spilling" | "spilling"
    rows: int
    median_abs_error: float
    median_error: float

    def to_json(self) -> dict:
        return {"rows": self.rows, "median_abs_error": self.median_abs_error, "median_error": self.median_error}


@dataclass(frozen=True)
class CampaignWorst:
    """The worst shape within one campaign (rows grouped by their CSV's folder and shape): a
    pooled shape ranks rows from several campaigns, timed on different days, together, so its
    max regret can be a pick across campaigns. None fields: no group of two rows or more (or,
    for Spearman, none with a rank correlation)."""

    max_regret: float | None = None
    max_regret_campaign: str | None = None
    max_regret_shape: str | None = None
    min_spearman: float | None = None
    min_spearman_campaign: str | None = None
    min_spearman_shape: str | None = None
    max_top_picks_regret: float | None = None
    max_top_picks_regret_campaign: str | None = None
    max_top_picks_regret_shape: str | None = None

    def to_json(self) -> dict:
        return {"max_regret": self.max_regret, "max_regret_campaign": self.max_regret_campaign,
                "max_regret_shape": self.max_regret_shape, "min_spearman": self.min_spearman,
                "min_spearman_campaign": self.min_spearman_campaign, "min_spearman_shape": self.min_spearman_shape,
                "max_top_picks_regret": self.max_top_picks_regret,
                "max_top_picks_regret_campaign": self.max_top_picks_regret_campaign,
                "max_top_picks_regret_shape": self.max_top_picks_regret_shape}


@dataclass(frozen=True)
class SpillFirst:
    """Over the family's shapes whose top-ranked row spills and that have a row that does not: whether skipping the
    spilling pick for the non-spilling one ranked first (GroupFigures.unspilled_pick) would have picked faster. The
    "no spilling first" clause counts the shapes where it would; this counts both ways, and the mean regrets."""

    shapes: int
    unspilled_faster: int         # shapes where the non-spilling pick ran faster than the spilling first pick
    unspilled_slower: int
    mean_regret: float            # of the spilling first picks
    mean_unspilled_regret: float  # of the non-spilling picks

    def to_json(self) -> dict:
        return {"shapes": self.shapes, "unspilled_faster": self.unspilled_faster,
                "unspilled_slower": self.unspilled_slower, "mean_regret": self.mean_regret,
                "mean_unspilled_regret": self.mean_unspilled_regret}


def spill_first(figs) -> SpillFirst | None:
    """SpillFirst over ``figs`` (GroupFigures); None where no shape's top-ranked row spills beside a row that does not."""
    both = [g for g in figs if g.unspilled_pick is not None]
    if not both:
        return None
    faster = sum(g.unspilled_pick.row.measured_ms < g.top.row.measured_ms for g in both)
    slower = sum(g.unspilled_pick.row.measured_ms > g.top.row.measured_ms for g in both)
    return SpillFirst(len(both), faster, slower, statistics.fmean(g.regret for g in both),
                      statistics.fmean(g.unspilled_regret for g in both))


@dataclass(frozen=True)
class FamilyVerdict:
    """One family's figures over its shapes and issue 15's verdict on them."""

    family: str
    groups: tuple                 # its GroupFigures, one a shape, in the table's order
    rows: int
    median_abs_error: float       # median over shapes of each shape's median |error|
    median_error: float           # median over shapes of each shape's signed median
    min_spearman: float | None
    max_regret: float
    max_top_picks_regret: float   # the worst shape's best of the TOP_PICKS ranked first
    spilling_first_wrongly: int   # shapes where a spilling row ranked first and a non-spilling one is faster
    criteria: tuple[Criterion, ...]
    parts: tuple[RowPart, ...] = ()
    within_campaign: CampaignWorst | None = None   # None: not asked (one campaign)
    spill_first: SpillFirst | None = None          # None: no shape's first pick spills beside one that does not

    @property
    def done(self) -> bool:
        return all(c.passed for c in self.criteria)

    def to_json(self) -> dict:
        out = {"family": self.family, "shapes": len(self.groups), "rows": self.rows,
               "median_abs_error": self.median_abs_error, "median_error": self.median_error,
               "min_spearman": self.min_spearman, "max_regret": self.max_regret,
               "top_picks": top_picks(), "max_top_picks_regret": self.max_top_picks_regret,
               "spilling_first_wrongly": self.spilling_first_wrongly, "done": self.done,
               "criteria": {c.key: c.to_json() for c in self.criteria}}
        for p in self.parts:
            out[p.name.replace("-", "_") + "_rows"] = p.to_json()
        if self.within_campaign is not None:
            out["within_one_campaign"] = self.within_campaign.to_json()
        out["spilling_first_picks"] = None if self.spill_first is None else self.spill_first.to_json()
        return out


def criteria(figs, o=None) -> tuple[Criterion, ...]:
    """The four clauses over one family's shapes (GroupFigures); ``o``: their ``overall``, where
    the caller has it."""
    if o is None:
        from tfx.analysis.measured import overall
        o = overall(figs)
    n = len(figs)
    median = Criterion("median_abs_error", "median", MAX_MEDIAN_ABS_ERROR, n, value=o["median_abs_error"],
                       passed_=o["median_abs_error"] <= MAX_MEDIAN_ABS_ERROR)
    low = tuple(g.shape for g in figs if g.spearman is not None and g.spearman < MIN_SPEARMAN)
    unranked = tuple(g.shape for g in figs if g.spearman is None)
    spearman = Criterion("spearman", f"Spearman >= {format_plain(MIN_SPEARMAN)}", MIN_SPEARMAN, n, low,
                         unranked=unranked)
    regret = Criterion("regret", f"regret <= {format_percent(MAX_REGRET, decimals=0)}", MAX_REGRET, n,
                       tuple(g.shape for g in figs if g.regret > MAX_REGRET))
    spilled = Criterion("no_spilling_first", "no spilling first", 0, n,
                        tuple(g.shape for g in figs if g.spill_ranked_first_wrongly))
    return (median, spearman, regret, spilled)


def within_campaign(compared) -> CampaignWorst:
    """Groups ``compared`` (Compared rows) by (campaign folder, shape), as ``bench/accuracy.py
    --runs`` would take one campaign at a time, and keeps the worst regret and Spearman."""
    from tfx.analysis.measured import figures
    groups: dict = {}
    for c in compared:
        groups.setdefault((Path(c.row.where.file).parent.name, c.row.shape), []).append(c)
    figs = [(run, figures(rows[0].row.family, shape, rows)) for (run, shape), rows in groups.items()
            if len(rows) > 1]
    if not figs:
        return CampaignWorst()
    run_r, worst = max(figs, key=lambda rf: rf[1].regret)
    run_t, worst_top = max(figs, key=lambda rf: rf[1].top_picks_regret)
    top = dict(max_top_picks_regret=worst_top.top_picks_regret, max_top_picks_regret_campaign=run_t,
               max_top_picks_regret_shape=worst_top.shape)
    sp = [(run, g) for run, g in figs if g.spearman is not None]
    if not sp:
        return CampaignWorst(worst.regret, run_r, worst.shape, **top)
    run_s, low = min(sp, key=lambda rf: rf[1].spearman)
    return CampaignWorst(worst.regret, run_r, worst.shape, low.spearman, run_s, low.shape, **top)


def row_parts(compared) -> tuple[RowPart, ...]:
    """The non-spilling and the spilling rows of ``compared`` apart (either left out where it has none)."""
    out = []
    for name, part in (("non-spilling", [c for c in compared if not c.spilling]),
                       ("spilling", [c for c in compared if c.spilling])):
        if part:
            out.append(RowPart(name, len(part), statistics.median(abs(c.error) for c in part),
                               statistics.median(c.error for c in part)))
    return tuple(out)


def family_verdict(family: str, figs, compared=None, campaigns: bool = False) -> FamilyVerdict:
    """The verdict on one family's shapes ``figs`` (GroupFigures); ``compared``: its rows, for the
    spilling split (and, with ``campaigns``, the worst shape within one campaign)."""
    from tfx.analysis.measured import overall
    o = overall(figs)
    rows = list(compared or ())
    return FamilyVerdict(family, tuple(figs), o["rows"], o["median_abs_error"], o["median_error"],
                         o["min_spearman"], o["max_regret"], o["max_top_picks_regret"], o["spilling_first_wrongly"],
                         criteria(figs, o),
                         row_parts(rows), within_campaign(rows) if campaigns else None, spill_first(figs))


def family_verdicts(figs, compared, campaigns: bool = False) -> list[FamilyVerdict]:
    """One verdict a family of ``figs`` (summarize's groups), families in first-seen order, each
    with its groups in theirs."""
    by_family: dict = {}
    for g in figs:
        by_family.setdefault(g.family, []).append(g)
    return [family_verdict(f, gs, [c for c in compared if c.row.family == f], campaigns)
            for f, gs in by_family.items()]


# ---------------------------------------------------------------------------------- text
def summary_line(v: FamilyVerdict) -> str:
    sp = format_correlation(v.min_spearman) if v.min_spearman is not None else "-"
    return (f"  => {v.family}: median over shapes of median |error| {format_percent(v.median_abs_error)}, signed "
            f"{format_percent_change(v.median_error)}; min Spearman {sp}; max regret "
            f"{format_percent(v.max_regret)} (best of the top {top_picks()}: "
            f"{format_percent(v.max_top_picks_regret)}); "
            f"spilling ranked first wrongly in {format_counted(v.spilling_first_wrongly, 'shape')}")


def campaign_line(w: CampaignWorst) -> str:
    if w.max_regret is None:
        return "     within one campaign: -"
    low = ("-" if w.min_spearman is None else
           f"{format_correlation(w.min_spearman)} ({w.min_spearman_campaign} {w.min_spearman_shape})")
    return (f"     within one campaign: max regret {format_percent(w.max_regret)} "
            f"({w.max_regret_campaign} {w.max_regret_shape}), best of the top {top_picks()} "
            f"{format_percent(w.max_top_picks_regret)} ({w.max_top_picks_regret_campaign} "
            f"{w.max_top_picks_regret_shape}), min Spearman {low}")


def _named(shapes) -> str:
    return "; ".join(shapes[:NAMED_MISSES]) + (f"; {len(shapes) - NAMED_MISSES} more"
                                                if len(shapes) > NAMED_MISSES else "")


def clause_text(c: Criterion) -> str:
    """One clause: 'NAME ok', or the shapes that miss it (the first NAMED_MISSES named, the rest
    counted); the median's, its median against the threshold."""
    if c.value is not None:
        text = (f"{c.label} ok" if c.passed else
                f"{c.label} {format_percent(c.value)} > {format_percent(c.threshold, decimals=0)}")
    elif not c.missing:
        text = f"{c.label} ok"
    else:
        text = f"{c.label} missed in {len(c.missing)} of {c.shapes} ({_named(c.missing)})"
    if c.unranked:
        # a shape of under 3 rows (or one time throughout) has no rank correlation to judge
        text += f"; unranked in {len(c.unranked)} of {c.shapes} ({_named(c.unranked)})"
    return text


def criteria_line(v: FamilyVerdict) -> str:
    return "     done when: " + ", ".join(clause_text(c) for c in v.criteria)


def part_line(p: RowPart) -> str:
    return (f"     {p.name} rows: {p.rows}, median |error| {format_percent(p.median_abs_error)}, signed "
            f"{format_percent_change(p.median_error)}")


def spill_first_line(f: SpillFirst) -> str:
    return (f"     spilling first picks: {format_counted(f.shapes, 'shape')}; the first non-spilling pick ran faster in "
            f"{f.unspilled_faster}, slower in {f.unspilled_slower}; mean regret {format_percent(f.mean_regret)} "
            f"(the spilling pick) against {format_percent(f.mean_unspilled_regret)}")


def format_verdict(v: FamilyVerdict) -> list[str]:
    """The lines under a family's shape table: the summary, the worst shape within one campaign
    (where asked), the "done when", the non-spilling and spilling rows, and where a shape's first
    pick spills beside a row that does not, what skipping it would have picked."""
    lines = [summary_line(v)]
    if v.within_campaign is not None:
        lines.append(campaign_line(v.within_campaign))
    lines.append(criteria_line(v))
    lines += [part_line(p) for p in v.parts]
    if v.spill_first is not None:
        lines.append(spill_first_line(v.spill_first))
    return lines
