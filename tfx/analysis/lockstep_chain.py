"""The compute chain of a straight CTA body whose CTAs run in lock step.

A launch of one wave or less, the first full wave of a longer one and its last partial
wave start their CTAs together: they all load, then all compute, then all store
(tfx.analysis.row_body: "The first wave"). Op by op each phase is priced at the r
resident CTAs' engine demand. The compute phase is also one CTA's serial path: its threads
feed the reductions element after element (``row_body.element_chain_ns``) and the
reductions run their shuffle and barrier chain (``row_body.reduction_chain_ns``, or the
CTA's shuffles at the SM's unit where longer: ``row_body.shuffle_issue_ns``), and no
number of CTAs on the SM shortens that path. So the phase lasts the longer of the r CTAs'
compute issue and one CTA's compute chain; the op-by-op sum holds the issue, and the chain's
excess over it is added:

    excess = max(0, reduce + issue_1 + element excess - issue_r)

The compute phase also lasts at least the time its warps take to issue their instructions
(``row_body.issue_floor_ns``, where the compiled binary's count is known): a warp scheduler
issues one warp instruction a cycle, and the flops the vector and SFU engines price are a
part of what a warp issues (the setup's addresses and masks, the bf16 unpacking, the
reductions' shuffles, shared-memory partials and barriers are the rest: softmax [1, 4096] on
16 warps issues 185 instructions a warp for 8 row elements a thread). So

    excess = max(0, chain, issue floor) - issue_r   (clipped at 0)

Measured (calibration/h200/measured/ncu_rows_s16, docs/analysis.md 8 (w)): the lock-step CTAs
of a one-wave launch are active for their load phase plus their scheduler's issue (0.92-1.01 of
the sum where a scheduler holds 8 or more warps), not the longer of the two.

issue_1 the vector, SFU, dispatch and shared-memory time of one CTA, issue_r the same over
the r CTAs, the element excess row_body's ``element chain`` part: over the phases a reduce
closes, the sum of max(0, the chain feeding that reduce - its phase's issue). Measured (calibration/h200/measured/row_cta, one wave of 132 CTAs, one a SM:
``python3 bench/row_cta_multi.py --one-wave``): softmax N = 16384 at 32, 64 and 128 values
a thread (1 row, 16, 8, 4 warps) takes 7.62, 8.35 and 10.34 us where the op-by-op sum gives
6.61 us for all three; the overlapped batches (``row_body.batch``) already price this chain.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from tfx.analysis.numbers import emax
from tfx.hw.units import format_count, format_counted

# the engines of a CTA's compute phase (not its loads', stores' or local memory's)
COMPUTE_ENGINES = ("tensor", "smem", "vector", "special", "dispatch", "link")


class LockStep(NamedTuple):
    """One lock-step batch's compute phase: one CTA's chain against the r CTAs' issue."""

    issue_one: Any        # one CTA's compute engines (vector, SFU, dispatch, ...), ns
    element_excess: Any   # the element chain beyond that issue (row_body's ``element chain`` part)
    reduce: Any           # the reductions' shuffle and barrier chain
    chain: Any            # issue_one + element_excess + reduce
    issue: Any            # the r CTAs' compute engines, ns
    excess: Any           # max(0, chain - issue, floor - issue): what the op-by-op sum lacks
    floor: Any = 0        # the busiest scheduler's instruction issue (row_body.issue_floor_ns), ns
    instructions: Any = 0  # the compiled binary's warp instructions a warp (0: not known)
    sched_warps: Any = 0  # warps on the busiest scheduler


def lock_step(chain_parts: dict, engines: dict, floor=0, instructions=0, sched_warps=0) -> LockStep:
    """The compute phase of a lock-step batch: ``chain_parts`` of row_body.BodyTime (one CTA's
    engines plus ``reduce`` and ``element chain``), ``engines`` the batch's engine ns over its
    r CTAs; ``floor`` the busiest scheduler's issue of the compiled instructions
    (row_body.issue_floor_ns: ``sched_warps`` warps x ``instructions`` each; 0 where not known)."""
    issue_one = 0
    issue = 0
    for name in COMPUTE_ENGINES:
        issue_one = issue_one + chain_parts.get(name, 0)
        issue = issue + engines.get(name, 0)
    element = chain_parts.get("element chain", 0)
    reduce = chain_parts.get("reduce", 0)
    chain = issue_one + element + reduce
    return LockStep(issue_one, element, reduce, chain, issue, emax(emax(chain, floor) - issue, 0),
                    floor, instructions, sched_warps)


def describe(step: LockStep, r, which: str, fmt) -> str:
    """The breakdown line: the lock-step compute phase with its values."""
    ctas = format_counted(r, "CTA")
    line = (f"{which}'s CTAs compute together: one CTA's chain, issue {fmt(float(step.issue_one))} + element "
            f"chain beyond it {fmt(float(step.element_excess))} + reductions {fmt(float(step.reduce))} = "
            f"{fmt(float(step.chain))}")
    if float(step.floor) > float(step.chain):
        line += (f"; their warps issue {format_count(float(step.instructions))} instructions each (the compiled "
                 f"binary), {format_counted(int(step.sched_warps), 'warp')} on the busiest scheduler at one a "
                 f"cycle: {format_count(float(step.sched_warps * step.instructions))} cycles = {fmt(float(step.floor))}")
    return (f"{line}, against the compute issue of {ctas} per SM {fmt(float(step.issue))}: "
            f"+{fmt(float(step.excess))} a lock-step batch")
