"""The roofline: the least time any schedule needs, one term per level that can bind.

Every quantity a kernel (or one scope of it) moves or computes is priced at the
device's aggregate peak for it:

==========  ==============================================================
term        time
==========  ==============================================================
tensor      tensor-core flops over the tensor rate of their dtype
vector      elementwise/reduction flops over the vector rate (``rate_dtype``)
special     exp/rsqrt/... over the special-function rate
dram        the bytes DRAM must move at least once (the footprint of the tensors
            touched) over DRAM bandwidth: behind a cache, re-reads may hit
l2          every request that crosses the cache (all gmem traffic) over the
            cache's bandwidth
smem, ...   every other level: its bytes over its aggregate bandwidth
==========  ==============================================================

Compute terms add up (one SM issues tensor, vector and special work from the same
warps, so the compute roof is their sum); memory terms overlap (the memory roof is
the slowest level). The ideal time is the larger roof, and ``bound_by`` names the
one term that sets it: the largest memory level, or the largest compute unit.

Level names are canonical across profiles: ``dram`` for the memory the cache
caches (or the device memory without one; ``hbm`` on sip), ``l2`` for the cache,
``smem`` for a level aliased so (``tcm`` on sip), otherwise the level's own name.
The vocabulary of bounds (``BOUNDS``) is shared with the prediction and the
simulator, which add the terms a schedule pays on top of a roof.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from tfx.analysis.numbers import ceil_int, emax, emin, is_array, ns_at_rate
from tfx.errors import TfxError
from tfx.ir.ops import work_engine

# Every name a bound can have, on every surface: the roofline's levels and units, then the
# prediction's and the simulator's schedule terms.
BOUNDS = ("dram", "l2", "smem", "rmem", "link", "tensor", "vector", "special",
          "latency", "launch", "dispatch")
COMPUTE_UNITS = ("tensor", "vector", "special")


# the dtype whose rate a vector/special unit computes another at (rate_dtype)
_RATE_DTYPES = {"fp8e4m3": "f16", "fp8e5m2": "f16", "fp4e2m1": "f16", "tf32": "f32", "int8": "int32",
                "bool": "int32"}


def rate_dtype(dtype: str) -> str:
    """The dtype whose rate a vector/special unit computes ``dtype`` at: narrow floats at the
    f16/bf16 rate, ints at the int32 rate (tensor cores have a rate per dtype)."""
    return _RATE_DTYPES.get(dtype, dtype)


# Operand dtypes whose mma runs as CUDA-core / vector-unit FMAs where the profile states no
# tensor rate for them (an f32 GEMM on a GPU without an f32 tensor path, or on sip).
FMA_MMA_DTYPES = ("f32", "f64")


def mma_engine(profile, dtype: str) -> str:
    """The engine that runs an ``mma`` on ``dtype`` operands: ``tensor`` where the profile
    states a tensor rate for it; ``vector`` (fused multiply-adds at the vector unit's FMA
    rate: 2 flop per FMA, the vector table's own units) for f32/f64 where it does not."""
    if dtype in FMA_MMA_DTYPES and profile.get(f"compute.tensor.{dtype}") is None:
        return "vector"
    return "tensor"


def level_role(profile, level: str) -> str:
    """The canonical name of a memory level (or alias) of ``profile``: dram, l2, smem or its own."""
    try:
        lv = profile.memory_level(level)
    except TfxError:
        return level
    levels = profile.memory_levels()
    cache = next((l for l in levels.values() if l.caches), None)
    if lv.caches:
        return "l2"
    if cache is not None and cache.caches == lv.name:
        return "dram"
    names = {lv.name, *lv.aliases}
    for role in ("dram", "smem", "rmem"):
        if role in names:
            return role
    if cache is None and lv.capacity and lv.scope in ("device",) :
        return "dram"
    return lv.name


@dataclass
class Roofline:
    """One roofline: term name -> ns (``terms``), the roofs, and the term that binds."""

    terms: dict = field(default_factory=dict)     # ordered: compute units, then memory levels
    bytes: dict = field(default_factory=dict)     # memory term -> the bytes it prices
    flops: Any = 0                                # every flop counted (all units, all dtypes)
    memory_level: str | None = None               # the slowest memory term
    compute_ns: Any = 0
    memory_ns: Any = 0
    ideal_ns: Any = 0
    bound_by: str | None = None                   # None for a vector (sweep) roofline

    def intensity_level(self) -> str | None:
        """The level whose bytes arithmetic intensity counts (the Roofline chart's x axis):
        the slowest memory term (``memory_level``) where it moves bytes, else the level priced
        at the lowest bandwidth; None without priced bytes or for a sweep."""
        if is_array(self.ideal_ns):
            return None
        priced = {lvl: float(b) / float(self.terms[lvl]) for lvl, b in self.bytes.items()
                  if float(b) > 0 and float(self.terms.get(lvl, 0)) > 0}
        if not priced:
            return None
        if self.memory_level in priced:
            return self.memory_level
        return min(priced, key=lambda lvl: priced[lvl])

    def arithmetic_intensity(self) -> dict:
        """Memory term -> flop per byte moved at it (terms that move no byte are left out;
        a copy is 0 flop/B; {} for a sweep)."""
        if is_array(self.ideal_ns):
            return {}
        return {lvl: float(self.flops) / float(b) for lvl, b in self.bytes.items() if float(b) > 0}

    def peak_fractions(self) -> dict:
        """Term -> the fraction of its peak the scope runs at when it takes its roofline time:
        (its work / the ideal time) / its peak rate = the term's time over the ideal time. The
        binding term is 1; compute units share one SM's issue, so their fractions add up to
        compute_ns / ideal_ns. {} for a sweep or a scope with no time."""
        if is_array(self.ideal_ns) or not float(self.ideal_ns) > 0:
            return {}
        return {t: float(v) / float(self.ideal_ns) for t, v in self.terms.items()}

    def to_json(self) -> dict:
        from tfx.analysis.numbers import to_plain
        return {"terms_ns": {k: to_plain(v) for k, v in self.terms.items()},
                "bytes": {k: to_plain(v) for k, v in self.bytes.items()}, "flops": to_plain(self.flops),
                "compute_ns": to_plain(self.compute_ns), "memory_ns": to_plain(self.memory_ns),
                "ideal_ns": to_plain(self.ideal_ns), "bound_by": self.bound_by,
                "arithmetic_intensity_flop_per_byte": self.arithmetic_intensity(),
                "peak_fraction": self.peak_fractions()}


def roofline(totals: Mapping, profile, footprint_bytes=None) -> Roofline:
    """The roofline of counted totals (``ScopeNode.total``: ``("flops", dtype, unit)`` and
    ``("traffic", level, "read"|"write")`` keys) on ``profile``.

    ``footprint_bytes``: the unique bytes of the tensors touched, what DRAM must move at
    least once behind a cache (None: every gmem byte, as without a cache).
    A unit without a stated rate for a dtype is refused by name (never priced at zero).
    """
    by_unit: dict[str, Any] = {}
    flops = 0
    for (kind, dtype, unit), v in totals.items():
        if kind != "flops":
            continue
        flops = flops + v
        unit = work_engine(unit)               # compare/select work runs on the vector unit
        if unit == "tensor":
            unit = mma_engine(profile, dtype)   # f32 without a tensor path: FMAs
        dt = dtype if unit == "tensor" else rate_dtype(dtype)
        try:
            peak = profile.peak_flops_per_s(unit, dt)
        except TfxError:
            raise TfxError(f"profile {profile.name} states no {unit} rate for {dt}; "
                           "work without a stated rate is not priced at zero",
                           where=f"{profile.name}:compute.{unit}.{dt}") from None
        by_unit[unit] = by_unit.get(unit, 0) + ns_at_rate(v, peak)
    levels = profile.memory_levels()
    cache = next((l for l in levels.values() if l.caches), None)
    by_level: dict[str, Any] = {}
    moved_at: dict[str, Any] = {}
    for lvl in dict.fromkeys(a for (kind, a, _) in totals if kind == "traffic"):
        name = lvl if lvl in levels else next((n for n, l in levels.items() if lvl in l.aliases), None)
        if name is None or (levels[name].bandwidth is None and levels[name].bandwidth_per_cycle is None):
            continue          # a level without a stated bandwidth (registers) is not a roof
        try:
            bw = profile.memory_bandwidth(name, aggregate=True)
        except TfxError:
            continue
        moved = totals.get(("traffic", lvl, "read"), 0) + totals.get(("traffic", lvl, "write"), 0)
        role = level_role(profile, name)
        if cache is not None and cache.caches == name:
            # A footprint that is an upper bound (gathered rows) can exceed what is moved.
            compulsory = emin(footprint_bytes, moved) if footprint_bytes is not None else moved
            by_level["dram"], moved_at["dram"] = ns_at_rate(compulsory, bw), compulsory
            if cache.bandwidth:
                by_level["l2"], moved_at["l2"] = ns_at_rate(moved, cache.bandwidth), moved
        else:
            by_level[role] = by_level.get(role, 0) + ns_at_rate(moved, bw)
            moved_at[role] = moved_at.get(role, 0) + moved
    compute = 0
    for v in by_unit.values():
        compute = compute + v
    memory = 0
    for v in by_level.values():
        memory = emax(memory, v)
    terms = {u: ceil_int(by_unit[u]) for u in (*COMPUTE_UNITS, *sorted(set(by_unit) - set(COMPUTE_UNITS)))
             if u in by_unit}
    terms.update({k: ceil_int(v) for k, v in by_level.items()})
    r = Roofline(terms=terms, bytes=moved_at, flops=flops, compute_ns=ceil_int(compute),
                 memory_ns=ceil_int(memory))
    r.ideal_ns = emax(r.compute_ns, r.memory_ns)
    if not is_array(r.ideal_ns):
        if by_level:
            r.memory_level = max(by_level, key=lambda k: by_level[k])
        if by_level and r.memory_ns >= r.compute_ns:
            r.bound_by = max(by_level, key=lambda k: by_level[k])
        elif by_unit:
            r.bound_by = max(by_unit, key=lambda k: by_unit[k])
        elif by_level:
            r.bound_by = max(by_level, key=lambda k: by_level[k])
    return r
