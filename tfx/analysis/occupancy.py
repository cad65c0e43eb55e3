"""How many CTAs of a kernel fit on one SM, what limits them, and what a hint needs.

The rules are those of CUDA's occupancy calculator (``cuda_occupancy.h``, the
logic behind ``cudaOccupancyMaxActiveBlocksPerMultiprocessor``) with the
partitioned-global-caching and cache-config options left at their defaults:

* warps: a CTA occupies ``ceil(threads / threads_per_warp)`` warp slots; the SM
  has ``max_warps_per_sm`` of them (never more than ``max_threads_per_sm / 32``).
* blocks: at most ``max_blocks_per_sm`` CTAs, whatever their size.
* registers: allocated per warp, ``ceil(regs * 32 / reg_alloc_unit) * reg_alloc_unit``.
  The register file is split between ``warp_alloc_granularity`` sub-partitions
  (4 on every GPU since Pascal), so the warps an SM can hold is
  ``floor(regs_per_sm / per_warp)`` rounded *down* to a multiple of that
  granularity. A single CTA must also pass the hardware's per-CTA check,
  which assumes its warps are spread over all sub-partitions:
  ``per_warp * roundup(warps_per_cta, granularity) <= regs_per_block``.
* shared memory: every CTA also takes ``reserved_smem_per_block`` bytes (1 KiB on
  sm_80 and later, for the runtime's own use), and the total is rounded up to
  ``smem_alloc_unit``: ``ceil((static + dynamic + reserved) / unit) * unit``.
  The static plus dynamic part may not exceed ``smem_per_block_optin``.
* zero registers, or a zero shared-memory allocation, do not limit at all.

The result is the minimum over those limits. Besides the CUDA limits we report a
"threads" limit, ``max_threads_per_sm // threads``: it is never smaller than the
warps limit, so it never changes the answer, but when the two tie (the thread
count is a whole number of warps) "threads" is the name users expect; when the
warps limit alone is smaller, rounding the CTA up to whole warps cost a CTA.

Ties are named in the order of ``LIMITERS``; ``Occupancy.limiters`` lists them all.
``blocks_per_sm_array`` is the same computation over numpy arrays, for sweeps.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import TYPE_CHECKING, Any

from tfx.analysis.numbers import emin
from tfx.arrays import is_integer
from tfx.errors import TfxError
from tfx.hw.units import format_counted as counted
from tfx.hw.units import format_counted_verb as counted_verb
from tfx.hw.units import format_exact_bytes
from tfx.hw.units import verb_for
from tfx.hw.units import format_count, format_percent_value

if TYPE_CHECKING:
    import numpy as np

#: Limits in the order ties are named; a limiter code from ``blocks_per_sm_array``
#: indexes ``LIMITER_NAMES`` (which ends with "infeasible").
LIMITERS: tuple[str, ...] = ("threads", "warps", "blocks", "registers", "shared memory")
INFEASIBLE = "infeasible"
LIMITER_NAMES: tuple[str, ...] = LIMITERS + (INFEASIBLE,)
INFEASIBLE_CODE = len(LIMITERS)

RESOURCE_ORIGINS = ("declared", "imported", "estimated", "cli")


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _round_up(a: int, b: int) -> int:
    return _ceil_div(a, b) * b


@dataclass(frozen=True)
class OccupancyLimits:
    """Per-SM and per-CTA limits of one GPU, the ``occupancy.*`` facts of a profile."""

    threads_per_warp: int
    max_threads_per_sm: int
    max_warps_per_sm: int
    max_blocks_per_sm: int
    max_threads_per_block: int
    regs_per_sm: int
    regs_per_block: int
    max_regs_per_thread: int
    reg_alloc_unit: int
    warp_alloc_granularity: int
    smem_per_sm: int
    smem_per_block_optin: int
    smem_alloc_unit: int
    reserved_smem_per_block: int

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not is_integer(value):
                raise TfxError(f"occupancy limit {f.name} must be an integer, got {value!r}")
            # Only the reserved shared memory may be zero (GPUs before sm_80 reserve none).
            lowest = 0 if f.name == "reserved_smem_per_block" else 1
            if value < lowest:
                raise TfxError(f"occupancy limit {f.name} must be >= {lowest}, got {value}")
        if self.max_threads_per_sm < self.threads_per_warp:  # else no warp slot: every ratio divides by 0
            raise TfxError(f"occupancy limit max_threads_per_sm ({self.max_threads_per_sm}) is below "
                           f"threads_per_warp ({self.threads_per_warp}): an SM would hold no warp")

    @classmethod
    def from_profile(cls, profile: Any) -> "OccupancyLimits":
        """Read every ``occupancy.<field>`` fact of a ``tfx.hw`` profile."""
        where_prefix = str(getattr(profile, "source_path", None) or getattr(profile, "name", "profile"))
        values = {}
        for f in fields(cls):
            path = f"occupancy.{f.name}"
            value = profile.value(path)  # raises TfxError naming the fact if missing
            if float(value) != int(value):
                raise TfxError(f"{path} must be a whole number, got {value}",
                               where=f"{where_prefix}:{path}")
            values[f.name] = int(value)
        try:
            return cls(**values)
        except TfxError as err:
            raise TfxError(err.message, where=where_prefix) from None

    @property
    def warps_per_sm(self) -> int:
        """Warp slots per SM: CUDA derives them from max threads; a profile may say fewer."""
        return min(self.max_warps_per_sm, self.max_threads_per_sm // self.threads_per_warp)

    def to_json(self) -> dict[str, int]:
        return {k: int(v) for k, v in asdict(self).items()}


@dataclass(frozen=True)
class Resources:
    """What one CTA of a kernel uses. ``origin`` says where the numbers came from."""

    threads: int
    regs_per_thread: int
    smem_dynamic: int
    smem_static: int = 0
    origin: str = "declared"
    local_bytes: int = 0

    def __post_init__(self) -> None:
        for name, lowest in (("threads", 1), ("regs_per_thread", 0), ("smem_dynamic", 0),
                             ("smem_static", 0), ("local_bytes", 0)):
            value = getattr(self, name)
            if not is_integer(value):
                raise TfxError(f"{name} must be an integer, got {value!r}")
            if value < lowest:
                raise TfxError(f"{name} must be >= {lowest}, got {value}")
        if self.origin not in RESOURCE_ORIGINS:
            raise TfxError(f"resource origin {self.origin!r} is not one of {', '.join(RESOURCE_ORIGINS)}")

    @property
    def smem_per_cta(self) -> int:
        """Static plus dynamic shared memory, what the kernel asks for (no reservation)."""
        return self.smem_static + self.smem_dynamic

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Requirement:
    """What one limit needs so that ``ctas`` CTAs fit, against what the kernel uses.

    ``budget`` is the largest per-CTA amount (threads, registers per thread, or
    bytes of static+dynamic shared memory) that lets this limit hold ``ctas`` CTAs
    with everything else unchanged; None when no amount does (``ctas`` is above the
    hardware's CTA maximum, or more warps than the SM has).
    """

    limit: str
    ctas: int
    budget: int | None
    used: int
    unit: str
    sentence: str

    @property
    def met(self) -> bool:
        return self.budget is not None and self.used <= self.budget

    @property
    def excess(self) -> int | None:
        """How much the kernel must give up under this limit (0 when it already fits)."""
        return None if self.budget is None else max(self.used - self.budget, 0)

    def to_json(self) -> dict[str, Any]:
        return {"limit": self.limit, "ctas": self.ctas, "budget": self.budget,
                "used": self.used, "unit": self.unit, "met": self.met,
                "excess": self.excess, "sentence": self.sentence}


@dataclass(frozen=True)
class HintBudget:
    """The per-CTA budget that would let ``hint`` CTAs share an SM.

    Each maximum holds the other resources at their current values:
    ``max_threads_per_cta`` (thread, warp and register limits, at the current
    registers per thread), ``max_regs_per_thread`` (at the current threads) and
    ``max_smem_per_cta`` (static + dynamic bytes). ``blockers`` are the limits
    that now allow fewer than ``hint`` CTAs.
    """

    hint: int
    max_threads_per_cta: int | None
    max_regs_per_thread: int | None
    max_smem_per_cta: int | None
    blockers: tuple[str, ...]
    reachable: bool                   # False: no smaller CTA meets the hint on this GPU
    sentence: str

    def to_json(self) -> dict[str, Any]:
        return {"hint": self.hint, "max_threads_per_cta": self.max_threads_per_cta,
                "max_regs_per_thread": self.max_regs_per_thread,
                "max_smem_per_cta": self.max_smem_per_cta,
                "blockers": list(self.blockers), "reachable": self.reachable,
                "sentence": self.sentence}


@dataclass(frozen=True)
class Occupancy:
    """The occupancy of one kernel configuration on one GPU; every surface renders this."""

    limits: OccupancyLimits
    resources: Resources
    blocks_per_sm: int
    limiter: str                      # one of LIMITER_NAMES
    limiters: tuple[str, ...]         # every limit tied at blocks_per_sm (empty if infeasible)
    reason: str | None                # why not even one CTA fits, when infeasible
    limit_blocks: dict[str, int | None]  # CTAs each limit allows; None = not limited
    warps_per_cta: int
    regs_per_warp_alloc: int          # registers the SM allocates per warp
    smem_per_cta_alloc: int           # bytes the SM allocates per CTA, reservation included
    active_warps: int
    occupancy_pct: float              # active warps / warp slots per SM
    hint: int | None
    hint_met: bool | None             # None when there is no hint
    next_cta: dict[str, Requirement]  # per limit: what one CTA more than it allows needs
    hint_budget: HintBudget | None    # when a hint is given and not met

    @property
    def feasible(self) -> bool:
        return self.limiter != INFEASIBLE

    def summary(self) -> str:
        """One line: how many CTAs fit and what limits them."""
        if not self.feasible:
            return f"0 CTAs/SM: {self.reason}"
        return (f"{counted(self.blocks_per_sm, 'CTA/SM', 'CTAs/SM')} ({self.active_warps} of "
                f"{self.limits.warps_per_sm} warps, {format_percent_value(self.occupancy_pct)}), "
                f"limited by {_and_list(self.limiters)}")

    def explanation(self) -> list[str]:
        """The summary, then what each binding limit needs for one more CTA, then the hint."""
        lines = [self.summary()]
        for name in self.limiters:
            lines.append(self.next_cta[name].sentence)
        if self.hint is not None:
            if self.hint_met:
                lines.append(f"occupancy={self.hint} is met")
            elif self.hint_budget is not None:
                lines.append(self.hint_budget.sentence)
        return lines

    def to_json(self) -> dict[str, Any]:
        return {
            "blocks_per_sm": self.blocks_per_sm,
            "limiter": self.limiter,
            "limiters": list(self.limiters),
            "reason": self.reason,
            "active_warps": self.active_warps,
            "max_warps_per_sm": self.limits.warps_per_sm,
            "occupancy_pct": self.occupancy_pct,
            "hint": self.hint,
            "hint_met": self.hint_met,
            "budget": self.hint_budget.to_json() if self.hint_budget else None,
            "limit_blocks": dict(self.limit_blocks),
            "warps_per_cta": self.warps_per_cta,
            "regs_per_warp_alloc": self.regs_per_warp_alloc,
            "smem_per_cta_alloc": self.smem_per_cta_alloc,
            "next_cta": {k: v.to_json() for k, v in self.next_cta.items()},
            "resources": self.resources.to_json(),
            # what the SM has (tfx occupancy's 'SM has' column and its reserved shared memory a CTA)
            "limits": self.limits.to_json(),
            "summary": self.summary(),
        }


# --------------------------------------------------------------------------- rules

def regs_per_warp_alloc(limits: OccupancyLimits, regs_per_thread: int) -> int:
    """Registers the SM allocates to one warp: a warp's worth, rounded up to the unit."""
    return _round_up(regs_per_thread * limits.threads_per_warp, limits.reg_alloc_unit)


def smem_per_cta_alloc(limits: OccupancyLimits, smem_static: int, smem_dynamic: int) -> int:
    """Bytes of shared memory one CTA takes from the SM, the runtime's reservation included."""
    return _round_up(smem_static + smem_dynamic + limits.reserved_smem_per_block,
                     limits.smem_alloc_unit)


def _warps_by_registers(limits: OccupancyLimits, per_warp: int) -> int:
    """Warps the register file holds: per sub-partition, so rounded down to the granularity."""
    warps = limits.regs_per_sm // per_warp
    return warps // limits.warp_alloc_granularity * limits.warp_alloc_granularity


def _registers_fit_one_cta(limits: OccupancyLimits, per_warp: int, warps_per_cta: int) -> bool:
    # The hardware check assumes the CTA's warps land on every sub-partition at once.
    assumed = per_warp * _round_up(warps_per_cta, limits.warp_alloc_granularity)
    return assumed <= limits.regs_per_block and per_warp * warps_per_cta <= limits.regs_per_block


def _infeasible_reason(limits: OccupancyLimits, res: Resources, warps_per_cta: int,
                       per_warp: int) -> str | None:
    if res.threads > limits.max_threads_per_block:
        return (f"{format_count(res.threads)} threads per CTA exceed the maximum of "
                f"{format_count(limits.max_threads_per_block)}")
    if res.regs_per_thread > limits.max_regs_per_thread:
        return (f"{format_count(res.regs_per_thread)} registers per thread exceed the maximum of "
                f"{format_count(limits.max_regs_per_thread)}")
    if not _registers_fit_one_cta(limits, per_warp, warps_per_cta):
        needed = per_warp * _round_up(warps_per_cta, limits.warp_alloc_granularity)
        return (f"one CTA of {format_count(res.threads)} threads at {format_count(res.regs_per_thread)} registers needs "
                f"{format_count(needed)} registers; a CTA may have {format_count(limits.regs_per_block)}")
    if res.smem_per_cta > limits.smem_per_block_optin:
        return (f"{format_exact_bytes(res.smem_per_cta)} of shared memory per CTA exceed the opt-in maximum "
                f"of {format_exact_bytes(limits.smem_per_block_optin)}")
    return None


def _limit_blocks(limits: OccupancyLimits, res: Resources, warps_per_cta: int,
                  per_warp: int, smem_alloc: int) -> dict[str, int | None]:
    return {
        "threads": limits.max_threads_per_sm // res.threads,
        "warps": limits.warps_per_sm // warps_per_cta,
        "blocks": limits.max_blocks_per_sm,
        "registers": (_warps_by_registers(limits, per_warp) // warps_per_cta
                      if per_warp > 0 else None),
        "shared memory": limits.smem_per_sm // smem_alloc if smem_alloc > 0 else None,
    }


# --------------------------------------------------------------------------- budgets

def max_threads_for(limits: OccupancyLimits, regs_per_thread: int, ctas: int) -> int | None:
    """Most threads per CTA with which ``ctas`` CTAs fit the thread, warp and register
    limits at ``regs_per_thread`` (shared memory does not depend on threads). None if none."""
    tpw = limits.threads_per_warp
    most = min(limits.max_threads_per_sm // ctas, limits.max_threads_per_block)
    warps = limits.warps_per_sm // ctas
    per_warp = regs_per_warp_alloc(limits, regs_per_thread)
    if per_warp > 0:
        warps = min(warps, _warps_by_registers(limits, per_warp) // ctas)
        g = limits.warp_alloc_granularity
        # Largest warp count that passes the per-CTA check (warps rounded up to g).
        warps = min(warps, (limits.regs_per_block // per_warp) // g * g)
    most = min(most, warps * tpw)
    return most if most >= 1 else None


def _regs_that_fit(limits: OccupancyLimits, threads: Any, ctas: Any) -> Any:
    """Most registers per thread with which ``ctas`` CTAs of ``threads`` threads fit the
    register file, at most the ISA's ``max_regs_per_thread`` (ints or numpy arrays)."""
    g = limits.warp_alloc_granularity
    warps_per_cta = _ceil_div(threads, limits.threads_per_warp)
    # The SM holds a multiple of g warps, so it must hold ``needed`` warps.
    needed = _round_up(ctas * warps_per_cta, g)
    per_warp_max = emin(limits.regs_per_sm // needed,
                        limits.regs_per_block // _round_up(warps_per_cta, g))
    per_warp_max = per_warp_max // limits.reg_alloc_unit * limits.reg_alloc_unit
    return emin(per_warp_max // limits.threads_per_warp, limits.max_regs_per_thread)


def max_regs_for(limits: OccupancyLimits, threads: int, ctas: int) -> int | None:
    """Most registers per thread with which ``ctas`` CTAs of ``threads`` threads fit the
    register file. None if even one register per thread is too many."""
    regs = _regs_that_fit(limits, threads, ctas)
    return regs if regs >= 1 else None


def thread_register_cap(limits: OccupancyLimits, threads: Any) -> Any:
    """The most registers the compiler may give a thread of a CTA of ``threads`` threads: one CTA
    must fit the register file (``max_regs_for(limits, threads, 1)``), and never more than the
    ISA's ``max_regs_per_thread``. Triton declares the CTA size to ptxas (``.maxntid``), which then
    keeps every thread under this cap and spills the rest (the CUDA C++ Programming Guide,
    "Launch Bounds"): on an H200 a 512-thread CTA gets 128 (65,536 / 16 warps), a 1,024-thread one
    64, 256 threads or fewer 255 (the issue-15 campaigns: the 16-warp rmsnorm and softmax rows
    whose rows do not fit compile to exactly 128 registers and spill). Ints or numpy arrays
    (explore's sweeps of the warps)."""
    return _regs_that_fit(limits, threads, 1)


def max_smem_for(limits: OccupancyLimits, ctas: int) -> int | None:
    """Most static+dynamic shared-memory bytes per CTA with which ``ctas`` CTAs fit.
    None if the reservation alone is too much."""
    unit = limits.smem_alloc_unit
    per_cta_alloc = (limits.smem_per_sm // ctas) // unit * unit
    most = min(per_cta_alloc - limits.reserved_smem_per_block, limits.smem_per_block_optin)
    return most if most >= 0 else None


def _ctas(n: int, verb: str = "") -> str:
    """``n`` CTAs and the verb that follows them, agreeing (tfx.hw.units.format_counted_verb):
    ``(1, "need")`` -> ``"1 CTA needs"``, ``(3, "need")`` -> ``"3 CTAs need"``."""
    return counted_verb(n, "CTA", verb) if verb else counted(n, "CTA")


def requirement(limits: OccupancyLimits, res: Resources, limit: str, ctas: int) -> Requirement:
    """What ``limit`` alone needs for ``ctas`` CTAs per SM, against what ``res`` uses."""
    tpw = limits.threads_per_warp
    if limit == "threads":
        budget = min(limits.max_threads_per_sm // ctas, limits.max_threads_per_block)
        budget = budget if budget >= 1 else None
        used, unit = res.threads, "threads"
        what = "threads per CTA"
        sentence = (f"{_ctas(ctas, 'need')} at most {format_count(budget)} {what}; this kernel uses {format_count(used)}"
                    if budget else f"{_ctas(ctas, 'exceed')} the SM's {format_count(limits.max_threads_per_sm)} threads")
    elif limit == "warps":
        warps = limits.warps_per_sm // ctas
        budget = warps * tpw if warps >= 1 else None
        used, unit = res.threads, "threads"
        used_warps = _ceil_div(res.threads, tpw)
        sentence = (f"{_ctas(ctas, 'need')} at most {counted(warps, 'warp')} ({counted(budget, 'thread')}) per CTA; "
                    f"this kernel uses {used_warps} ({counted(res.threads, 'thread')})"
                    if budget else f"{_ctas(ctas, 'exceed')} the SM's {limits.warps_per_sm} warps")
    elif limit == "blocks":
        budget = None if ctas > limits.max_blocks_per_sm else limits.max_blocks_per_sm
        used, unit = ctas, "CTAs"
        sentence = (f"{_ctas(ctas, 'exceed')} the hardware maximum of "
                    f"{counted(limits.max_blocks_per_sm, 'CTA')} per SM, whatever their size"
                    if budget is None else
                    f"{_ctas(ctas, 'are')} within the hardware maximum of {limits.max_blocks_per_sm}")
    elif limit == "registers":
        budget = max_regs_for(limits, res.threads, ctas)
        used, unit = res.regs_per_thread, "registers/thread"
        sentence = (f"{_ctas(ctas, 'need')} at most {budget} registers per thread; "
                    f"this kernel uses {used}" if budget else
                    f"{_ctas(ctas)} of {format_count(res.threads)} threads {verb_for(ctas, 'do')} not fit the register file "
                    f"even at one register per thread")
    elif limit == "shared memory":
        budget = max_smem_for(limits, ctas)
        used, unit = res.smem_per_cta, "B"
        sentence = (f"{_ctas(ctas, 'need')} at most {format_exact_bytes(budget)} of shared memory per CTA; "
                    f"this kernel uses {format_exact_bytes(used)}" if budget is not None else
                    f"{_ctas(ctas, 'do')} not fit: the {format_exact_bytes(limits.reserved_smem_per_block)} reserved "
                    f"per CTA alone exceed {format_exact_bytes(limits.smem_per_sm)}")
    else:  # pragma: no cover - internal misuse
        raise ValueError(f"unknown limit {limit!r}")
    return Requirement(limit, ctas, budget, used, unit, sentence)


def hint_budget(limits: OccupancyLimits, res: Resources, hint: int,
                limit_blocks: dict[str, int | None] | None = None) -> HintBudget:
    """The per-CTA budget that lets ``hint`` CTAs share an SM, naming what blocks it now."""
    if limit_blocks is None:
        limit_blocks = compute_occupancy(limits, res).limit_blocks
    blockers = tuple(n for n in LIMITERS
                     if limit_blocks[n] is not None and limit_blocks[n] < hint)
    threads_max = max_threads_for(limits, res.regs_per_thread, hint)
    regs_max = max_regs_for(limits, res.threads, hint)
    smem_max = max_smem_for(limits, hint)

    # One clause per blocking resource. Registers are per thread, so when no
    # register count is low enough a smaller CTA is the remaining way out.
    clauses: list[str] = []
    threads_clause = (f"at most {format_count(threads_max)} threads per CTA (uses {format_count(res.threads)})"
                      if threads_max is not None else None)
    reachable = hint <= limits.max_blocks_per_sm
    if "threads" in blockers or "warps" in blockers:
        reachable &= threads_clause is not None
        clauses.append(threads_clause or "")
    if "registers" in blockers:
        if regs_max is not None:
            clauses.append(f"at most {regs_max} registers per thread "
                           f"(uses {res.regs_per_thread})")
        elif threads_clause is not None:
            if threads_clause not in clauses:
                clauses.append(threads_clause)
        else:
            reachable = False
    if "shared memory" in blockers:
        reachable &= smem_max is not None
        if smem_max is not None:
            clauses.append(f"at most {format_exact_bytes(smem_max)} of shared memory per CTA "
                           f"(uses {format_exact_bytes(res.smem_per_cta)})")

    if not blockers:
        sentence = f"occupancy={hint} is met"
    elif hint > limits.max_blocks_per_sm:
        sentence = (f"occupancy={hint} is unattainable on this GPU: an SM holds at most "
                    f"{counted(limits.max_blocks_per_sm, 'CTA')}")
    elif not reachable:
        sentence = (f"occupancy={hint} is unattainable on this GPU whatever the CTA's size "
                    f"(limited by {_and_list(blockers)})")
    else:
        sentence = (f"occupancy={hint} is unattainable as compiled (limited by "
                    f"{_and_list(blockers)}); {_ctas(hint, 'need')} "
                    + " and ".join(c for c in clauses if c))
    return HintBudget(hint, threads_max, regs_max, smem_max, blockers, reachable, sentence)


def _and_list(items: tuple[str, ...] | list[str]) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


# --------------------------------------------------------------------------- entry points

def compute_occupancy(limits: OccupancyLimits, resources: Resources,
                      hint: int | None = None) -> Occupancy:
    """CTAs per SM for ``resources`` on ``limits``, exactly as
    ``cudaOccupancyMaxActiveBlocksPerMultiprocessor`` counts them, with the limiter,
    what each limit needs for one more CTA and, for an unmet ``hint``, the budget."""
    if hint is not None and (not is_integer(hint)
                             or hint < 1):
        raise TfxError(f"occupancy hint must be a whole number >= 1, got {hint!r}")
    res = resources
    warps_per_cta = _ceil_div(res.threads, limits.threads_per_warp)
    per_warp = regs_per_warp_alloc(limits, res.regs_per_thread)
    smem_alloc = smem_per_cta_alloc(limits, res.smem_static, res.smem_dynamic)
    counts = _limit_blocks(limits, res, warps_per_cta, per_warp, smem_alloc)
    reason = _infeasible_reason(limits, res, warps_per_cta, per_warp)
    blocks = min(c for c in counts.values() if c is not None)
    if reason is None and blocks == 0:
        zero = [n for n in LIMITERS if counts[n] == 0]
        reason = f"not even one CTA fits the SM's {_and_list(zero)}"
    if reason is not None:
        blocks, limiter, tied = 0, INFEASIBLE, ()
    else:
        tied = tuple(n for n in LIMITERS if counts[n] == blocks)
        limiter = tied[0]
    next_cta = {n: requirement(limits, res, n, counts[n] + 1)
                for n in LIMITERS if counts[n] is not None}
    active_warps = blocks * warps_per_cta
    hint_met = None if hint is None else blocks >= hint
    budget = hint_budget(limits, res, hint, counts) if hint is not None and not hint_met else None
    return Occupancy(
        limits=limits, resources=res, blocks_per_sm=blocks, limiter=limiter, limiters=tied,
        reason=reason, limit_blocks=counts, warps_per_cta=warps_per_cta,
        regs_per_warp_alloc=per_warp, smem_per_cta_alloc=smem_alloc,
        active_warps=active_warps,
        occupancy_pct=100.0 * active_warps / limits.warps_per_sm,
        hint=hint, hint_met=hint_met, next_cta=next_cta, hint_budget=budget,
    )


def blocks_per_sm_array(limits: OccupancyLimits, threads: Any, regs: Any,
                        smem_dynamic: Any, smem_static: Any = 0) -> tuple[np.ndarray, np.ndarray]:
    """``compute_occupancy`` over arrays (broadcast together): returns CTAs per SM (int64)
    and limiter codes (int8, indexes ``LIMITER_NAMES``), equal elementwise to the scalar path."""
    import numpy as np
    t, r, sd, ss = np.broadcast_arrays(*(np.asarray(a) for a in (threads, regs, smem_dynamic, smem_static)))
    arrays = {}
    for name, a in (("threads", t), ("regs", r), ("smem_dynamic", sd), ("smem_static", ss)):
        if a.size and not np.issubdtype(a.dtype, np.integer):
            if not np.issubdtype(a.dtype, np.floating) or not np.all(np.floor(a) == a):
                raise TfxError(f"{name} must hold whole numbers")
        a = a.astype(np.int64, copy=False)
        lowest = 1 if name == "threads" else 0
        bad = np.flatnonzero(a.ravel() < lowest)
        if bad.size:
            i = int(bad[0])
            raise TfxError(f"{name}[{i}] = {a.ravel()[i]} must be >= {lowest}")
        arrays[name] = a
    t, r, sd, ss = arrays["threads"], arrays["regs"], arrays["smem_dynamic"], arrays["smem_static"]
    L = limits
    g = L.warp_alloc_granularity
    warps_per_cta = -(-t // L.threads_per_warp)
    per_warp = -(-(r * L.threads_per_warp) // L.reg_alloc_unit) * L.reg_alloc_unit
    smem_alloc = -(-(ss + sd + L.reserved_smem_per_block) // L.smem_alloc_unit) * L.smem_alloc_unit
    # "Not limited" must lose every minimum; any count above max_blocks_per_sm does.
    unlimited = np.int64(L.max_blocks_per_sm + 1)
    by_regs = (L.regs_per_sm // np.maximum(per_warp, 1)) // g * g // warps_per_cta
    by_smem = L.smem_per_sm // np.maximum(smem_alloc, 1)
    counts = np.stack(np.broadcast_arrays(
        L.max_threads_per_sm // t,
        L.warps_per_sm // warps_per_cta,
        np.int64(L.max_blocks_per_sm),
        np.where(per_warp > 0, by_regs, unlimited),
        np.where(smem_alloc > 0, by_smem, unlimited),
    ))
    # argmin picks the first minimum: ties are named in LIMITERS order, as in the scalar path.
    codes = np.argmin(counts, axis=0).astype(np.int8)
    blocks = np.take_along_axis(counts, codes[None].astype(np.intp), axis=0)[0].astype(np.int64)
    infeasible = ((t > L.max_threads_per_block)
                  | (r > L.max_regs_per_thread)
                  | (per_warp * (-(-warps_per_cta // g) * g) > L.regs_per_block)
                  | (per_warp * warps_per_cta > L.regs_per_block)
                  | (ss + sd > L.smem_per_block_optin)
                  | (blocks == 0))
    blocks = np.where(infeasible, 0, blocks)
    codes = np.where(infeasible, np.int8(INFEASIBLE_CODE), codes).astype(np.int8)
    return blocks, codes
