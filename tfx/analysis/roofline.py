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
l2          every request that crosses the cache (all gmem traffic) over the most
            the SMs can receive: their L2 read ports together, at least the cache's
            sustained bandwidth (``l2_request_peak``)
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

The attainable roofline (``attainable_ns``) prices the same work at the rates the profile says
a long run sustains, the ones the prediction's engines use: each compute unit at its
``compute.<unit>.efficiency[_<dtype>]`` of peak (a tensor core's power-limited clock), the vector
unit's elementwise work at half of that besides (its peak counts an FMA as two flops a
lane-cycle; an elementwise op or a reduction step does one) and DRAM at the fraction of its datasheet bandwidth its traffic's mix sustains (``_dram_efficiency``:
a copy's ``memory.<dram>.efficiency`` where half the bytes are writes, ``read_efficiency``
where none are: a read-only stream has no bus turnarounds), the L2's requests at its stated
``bandwidth`` (``"l2 below peak (64.8%)"`` against the ports); the other levels at their stated
bandwidth. Its excess over ``ideal_ns`` is the first part of the prediction's gap the breakdown
names (tfx.analysis.roofline_gap), split by what lowers each rate (``attainable_terms``) and
summed up by ``attainable_note``: ``"dram below peak (88.3%)"``, ``"vector below peak (50.0%: one
flop a lane-cycle)"``, ``"compute below peak"`` where several do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from tfx.analysis.numbers import ceil_int, decimal_value, emax, emin, is_array, ns_at_rate, ratio
from tfx.errors import TfxError
from tfx.hw.units import format_percent
from tfx.ir.ops import work_engine
from tfx.ir.types import DTYPES

# Every name a bound can have, on every surface: the roofline's levels and units, then the
# prediction's and the simulator's schedule terms.
BOUNDS = ("dram", "l2", "smem", "rmem", "link", "tensor", "vector", "special",
          "latency", "launch", "dispatch")
COMPUTE_UNITS = ("tensor", "vector", "special")


# the dtype whose rate a vector/special unit computes another at (rate_dtype)
_RATE_DTYPES = {"fp8e4m3": "f16", "fp8e5m2": "f16", "fp4e2m1": "f16", "tf32": "f32", "int8": "int32",
                "int4": "int32", "bool": "int32"}


def rate_dtype(dtype: str) -> str:
    """The dtype whose rate a vector/special unit computes ``dtype`` at: narrow floats at the
    f16/bf16 rate, ints at the int32 rate (tensor cores have a rate per dtype)."""
    return _RATE_DTYPES.get(dtype, dtype)


def unit_conversions(profile, src: str, dst: str):
    """Conversion instructions per element a cast from ``src`` to ``dst`` runs on the special-function
    unit (the GPU's XU, which also converts types), or None where the profile states none for this
    pair and the cast is vector work: ``compute.special.int_to_float`` for an integer source and a
    float result (I2F), ``compute.special.fp8_to_bf16`` for fp8 to bf16 (F2F.BF16.F16 after the
    paired fp8 -> f16 conversion, PTX's only fp8 destination on sm_90)."""
    s, d = DTYPES.get(src), DTYPES.get(dst)
    if s is None or d is None or not d.is_float:
        return None
    if s.family == "int":
        key = "compute.special.int_to_float"
    elif src in ("fp8e4m3", "fp8e5m2") and dst == "bf16":
        key = "compute.special.fp8_to_bf16"
    else:
        return None
    return profile.get(key, None)


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
    # the same work at the profile's sustained fractions of peak (module docstring); its note
    # names what lowers it: "tensor below peak (74.0%)", "dram below peak (88.3%)" (None: nothing)
    attainable_ns: Any = 0
    attainable_note: str | None = None
    # its excess over ideal_ns by what lowers the rate, largest first: [(note, ns)] (one compute
    # unit's below-peak fraction each, or DRAM's); [] for a sweep or where nothing does
    attainable_terms: list = field(default_factory=list)
    dram_rate: Any = None     # B/s DRAM sustains for this traffic's mix (datasheet x _dram_efficiency)

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
                "attainable_ns": to_plain(self.attainable_ns), "attainable_note": self.attainable_note,
                "attainable_terms": [{"name": n, "ns": to_plain(ns)} for n, ns in self.attainable_terms],
                "dram_rate_bytes_per_s": to_plain(self.dram_rate) if self.dram_rate is not None else None,
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
    by_unit_att: dict[str, Any] = {}        # the same at the sustained fraction of peak
    below: dict[str, Any] = {}              # what lowers the rate (its name) -> ns past peak
    flops = 0
    for (kind, dtype, unit), v in totals.items():
        if kind != "flops":
            continue
        flops = flops + v
        as_mma = unit == "tensor"
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
        at_peak = ns_at_rate(v, peak)
        by_unit[unit] = by_unit.get(unit, 0) + at_peak
        eff = profile.sustained_efficiency(unit, dt)
        # the vector unit's peak counts an FMA as 2 flops a lane-cycle; an elementwise op or a
        # reduction step does 1 (the prediction's engines price it so: performance.op_demand)
        lane = unit == "vector" and not as_mma
        fraction = ratio(decimal_value(eff), 2) if lane else eff
        att = at_peak if fraction == 1 else ratio(at_peak, decimal_value(fraction))
        by_unit_att[unit] = by_unit_att.get(unit, 0) + att
        if fraction != 1 and (is_array(v) or v):
            why = (f"{unit} below peak ({format_percent(float(fraction))}: one flop a lane-cycle)" if lane
                   else f"{unit} below peak ({format_percent(float(fraction))})")
            below[why] = below.get(why, 0) + (att - at_peak)
    levels = profile.memory_levels()
    cache = next((l for l in levels.values() if l.caches), None)
    dram_eff: Any = 1
    l2_eff: Any = 1
    dram_rate: Any = None
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
        if role == "dram":          # behind the cache or not (sip's hbm)
            dram_eff = _dram_efficiency(profile, name, moved, totals.get(("traffic", lvl, "write"), 0))
            dram_rate = bw * dram_eff
        if cache is not None and cache.caches == name:
            # A footprint that is an upper bound (gathered rows) can exceed what is moved.
            compulsory = emin(footprint_bytes, moved) if footprint_bytes is not None else moved
            by_level["dram"], moved_at["dram"] = ns_at_rate(compulsory, bw), compulsory
            if cache.bandwidth:
                # the roof is the most the SMs can receive (their L2 read ports), which requests
                # that coalesce before the slices reach past the sustained rate the prediction's
                # engine prices (l2_request_peak); that rate is the attainable roofline's
                peak = l2_request_peak(profile, cache.bandwidth)
                by_level["l2"], moved_at["l2"] = ns_at_rate(moved, peak), moved
                l2_eff = ratio(cache.bandwidth, peak)
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
    _attain(r, by_unit_att, by_level, dram_eff, below, l2_eff)
    r.dram_rate = dram_rate
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


def l2_request_peak(profile, sustained: float) -> float:
    """B/s of L2 requests the roofline's l2 term takes: the SMs' L2 read ports together
    (``pipeline.sm_load_bandwidth_per_cycle`` x SMs x clock) where the profile states the port, at
    least the cache's sustained ``bandwidth`` (the prediction's rate); that rate alone where it
    states none. Why not the sustained rate: requests for one sector that SMs send together
    coalesce before the L2 slices (Nsight's L2 Request Coalescer), so the SMs receive past the
    rate the slices serve; 14 stored H200 launches received 11.0-13.8 TB/s of requests against the
    11 TB/s stated (calibration/h200/measured/l2_groupm_s14-s50: 2560x8192x8192 64x256x64 G8,
    6.71 GB in 512 us), a roof they beat would not be a bound. *Worked example* (H200): 132 SMs x
    65 B/cycle x 1.98 GHz = 16.99 TB/s."""
    port = profile.get("pipeline.sm_load_bandwidth_per_cycle", None)
    if port is None:
        return sustained
    try:
        sms = profile.units_of(profile.compute_scope("tensor"))
    except TfxError:
        return sustained
    return max(sustained, float(port) * sms * profile.clock_hz)


def _dram_efficiency(profile, level: str, moved, writes) -> Any:
    """The fraction of ``level``'s datasheet bandwidth the kernel's traffic there sustains.
    ``memory.<level>.efficiency`` is a copy's (half its bytes writes) and
    ``read_efficiency`` a read-only stream's (no bus turnarounds: calibration/h200/measured/
    latency_read_s16, 4,514 against 4,238 GB/s); between them the time a byte takes grows with
    the writes' share w of the bytes moved, linearly from the read-only stream's (w = 0) to the
    copy's (w >= 1/2): 1 / f = 1 / read + min(2 w, 1) (1 / copy - 1 / read). The copy's fraction
    where the profile states no read-only one; 1 where it states neither. Arrays elementwise."""
    eff = float(profile.get(f"memory.{level}.efficiency", 1.0) or 1.0)
    read = profile.get(f"memory.{level}.read_efficiency", None)
    if read is None:
        return eff
    read = float(read)
    if not is_array(moved, writes) and not moved:
        return eff
    w2 = emin(2 * ratio(writes, emax(moved, 1)), 1)
    return 1 / (1 / read + w2 * (1 / eff - 1 / read))


def _attain(r: Roofline, by_unit_att: dict, by_level: dict, dram_eff, below: dict, l2_eff=1) -> None:
    """``r.attainable_ns``, ``r.attainable_note`` and ``r.attainable_terms``: the roofline of the
    same work at the sustained fractions (compute units summed, memory levels overlapped, as
    ``roofline``). ``below``: each compute rate's name -> its work's ns past peak; where compute
    sets the attainable roofline its excess over ``ideal_ns`` is split among them, largest first,
    each at most what the excess leaves (all of each where compute sets the ideal too)."""
    compute = 0
    for v in by_unit_att.values():
        compute = compute + v
    memory = 0
    dram_att = l2_att = 0
    for k, v in by_level.items():
        eff = {"dram": dram_eff, "l2": l2_eff}.get(k, 1)
        att = v if not is_array(eff) and eff == 1 else ratio(v, eff)
        if k == "dram":
            dram_att = att
        elif k == "l2":
            l2_att = att
        memory = emax(memory, att)
    compute, memory = ceil_int(compute), ceil_int(memory)
    r.attainable_ns = emax(emax(compute, memory), r.ideal_ns)
    if is_array(r.attainable_ns) or not r.attainable_ns > r.ideal_ns:
        return
    excess = r.attainable_ns - r.ideal_ns
    if compute >= memory:
        named = sorted(((n, float(ns)) for n, ns in below.items() if float(ns) > 0), key=lambda kv: -kv[1])
        r.attainable_note = named[0][0] if len(named) == 1 else "compute below peak"
        left = float(excess)
        for name, ns in named:
            if left > 0:
                r.attainable_terms.append((name, min(ns, left)))
                left -= min(ns, left)
        if r.attainable_terms and 0 < left <= len(named):
            # the roofs are whole ns (ceil_int): their rounding goes to the last rate named
            last, ns = r.attainable_terms[-1]
            r.attainable_terms[-1] = (last, ns + left)
    elif ceil_int(dram_att) >= memory:
        r.attainable_note = f"dram below peak ({format_percent(dram_eff)})"
        r.attainable_terms.append((r.attainable_note, float(excess)))
    elif ceil_int(l2_att) >= memory:
        r.attainable_note = f"l2 below peak ({format_percent(l2_eff)})"
        r.attainable_terms.append((r.attainable_note, float(excess)))
