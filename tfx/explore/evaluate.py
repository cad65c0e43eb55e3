"""Evaluating one chunk of the design space: one vectorized ``analyze`` call, the feasibility
checks, and the chunk's local top-k and Pareto frontier.

The chunk's swept parameters are broadcast arrays (``Space.grid``); every other
parameter is a one-element array too, so the analysis runs entirely on arrays and
never mixes exact Fractions with them. Metrics come back with partial shapes
(a footprint of A depends on M and K only) and are broadcast to the chunk's grid
and flattened in C order, which is the flat index order of the space.

Feasibility: each configuration gets the first failing check in a fixed order
(``Check`` list, built once per kernel), so per-reason counts add up to the
infeasible total. The checks, in order:

1. ``tile S < 1 (T)``: a window of tensor T is less than one element wide (a --sweep may
   step outside a declared domain on purpose, but BM = 0 or -64 is no tile: it was priced,
   ranked feasible and warned of by numpy's division by zero); then ``tile S > E (T)``: a
   window of tensor T is S elements wide on an axis of E elements (a tile larger than the
   problem), for every static window size;
2. ``STAGES > trips of loop k``: a pipelined loop has more stages than trips;
3. GPU resources, as the CUDA occupancy calculator refuses a launch:
   ``threads per CTA > max_threads_per_block``, ``smem per CTA > opt-in limit`` (registers
   never: a thread is capped where one CTA fits the register file and spills the rest); on a tiled accelerator, ``peak L per U > capacity``
   for an on-chip level L of the executing unit U;
4. ``occupancy 0``: no CTA fits on an SM.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tfx.analysis.analyze import analyze
from tfx.analysis.occupancy import OccupancyLimits
from tfx.explore.near_tie import near_times
from tfx.explore.pareto import pareto_front, top_k
from tfx.explore.space import Chunk, Space
from tfx.ir.expr import to_text
from tfx.ir.nodes import Op, Window, walk

#: Per-configuration columns every chunk computes (objectives are chosen among them).
# "spills": the 4-byte words a thread keeps in local memory, as the analysis prices them (estimated, or
# declared); 0 on a tiled profile. Not an objective: the top table marks the rows that spill.
COLUMNS = ("time", "smem", "regs", "traffic", "blocks", "cost", "spills")
OBJECTIVES = {
    "time": "predicted time, ns",
    "smem": "shared memory (on-chip scratch) per CTA, bytes",
    "regs": "registers per thread (estimated or declared)",
    "traffic": "DRAM bytes moved (reads + writes, before L2 reuse)",
    "cost": "hardware cost proxy: product of the swept knobs' factors",
}


@dataclass(frozen=True)
class Check:
    kind: str            # empty | window | stages | threads | regs | smem | capacity | occupancy
    reason: str
    data: Any = None


def build_checks(module, kernel, profile) -> list[Check]:
    checks: list[Check] = []
    seen: set[str] = set()
    info = module.info[kernel.name]
    tensors = {t.name: t for t in kernel.tensors}

    def add(c: Check):
        if c.reason not in seen:
            seen.add(c.reason)
            checks.append(c)
        else:  # same text, another place: merge its data
            i = next(i for i, x in enumerate(checks) if x.reason == c.reason)
            checks[i] = Check(c.kind, c.reason, checks[i].data + c.data)

    swept_windows = []       # (window, axis size, the tensor's dimension) of every non-constant size
    for s in walk(kernel.body):
        if not isinstance(s, Op):
            continue
        windows = [o for o in s.operands if isinstance(o, Window)]
        if s.target is not None:
            windows.append(s.target)
        for w in windows:
            t = tensors.get(w.tensor)
            if t is None:
                continue
            for a, dim in zip(w.axes, t.type.shape):
                if a.kind != "range" or a.size is None or (a.size.free_names() & info.index_names):
                    continue
                if a.size.is_const() and dim.is_const():
                    continue
                swept_windows.append((w, a.size, dim))
    for w, size, dim in swept_windows:
        if not size.is_const():
            add(Check("empty", f"tile {to_text(size)} < 1 ({w.tensor})", (size,)))
    for w, size, dim in swept_windows:
        add(Check("window", f"tile {to_text(size)} > {to_text(dim)} ({w.tensor})", ((size, dim),)))
    for s in walk(kernel.body):
        if type(s).__name__ == "LoopRegion" and s.stages is not None and not s.stages.is_const():
            add(Check("stages", f"{to_text(s.stages)} > trips of loop {s.var}", (s,)))
    if profile.kind == "gpu":
        checks.append(Check("threads", "threads per CTA > max_threads_per_block"))
        # no register check: a thread's registers are capped where one CTA fits the file
        # (occupancy.thread_register_cap), the rest spills, as analyze prices it
        checks.append(Check("smem", "smem per CTA > opt-in limit"))
        checks.append(Check("occupancy", "occupancy 0 (no CTA fits an SM)"))
    else:
        unit = _unit_level(profile)
        for name, lvl in profile.memory_levels().items():
            if lvl.scope == unit and lvl.capacity:
                checks.append(Check("capacity", f"peak {name} per {unit} > capacity", (name, lvl.aliases)))
    return checks


def onchip_levels(profile) -> list[str]:
    """The memory levels of the executing unit (a CTA's level on a GPU, else the deepest of the
    hierarchy: sip's PE) that have a capacity: the on-chip memory a configuration's ``smem``
    column measures off a GPU (its peak over them)."""
    unit = _unit_level(profile)
    return [n for n, l in profile.memory_levels().items() if l.scope == unit and l.capacity]


def onchip_label(profile) -> str:
    """The header of a configuration's on-chip memory column, by the profile's own names:
    ``smem/CTA`` on a GPU, the executing unit's on-chip level per unit elsewhere (sip:
    ``tcm/PE``), as ``cols["smem"]`` measures it."""
    if profile.kind == "gpu":
        return "smem/CTA"
    onchip = onchip_levels(profile)
    return f"{onchip[0] if onchip else 'on-chip'}/{unit_noun(profile)}"


def unit_noun(profile) -> str:
    """The executing unit as the profile names it (sip: ``PE``); a GPU's is the CTA (its
    ``_unit_level`` is the SM a CTA runs on)."""
    if profile.kind == "gpu":
        return "CTA"
    from tfx.hw.units import level_noun
    return level_noun(_unit_level(profile))


def onchip_key(profile) -> str:
    """The JSON and CSV name of a configuration's on-chip memory column: its header's words
    (``onchip_label``) as a key: ``smem_per_cta`` on a GPU, ``tcm_per_pe`` on sip."""
    return onchip_label(profile).lower().replace("/", "_per_").replace("-", "_")


def _unit_level(profile) -> str:
    meshes = profile.mesh_levels()
    if "cta" in meshes:
        return meshes["cta"]
    levels = profile.hierarchy_levels()
    return levels[-1] if levels else "device"


@dataclass
class Context:
    """Everything a chunk task needs (pickled once per worker with Dask)."""

    module: Any
    kernel_name: str
    space: Space
    fixed: dict                      # parameter -> int, passed as one-element arrays
    profiles: list                   # one Profile per knob combination
    costs: list                      # cost proxy per knob combination
    objectives: tuple
    top: int
    keep: bool = False
    checks: list = field(default_factory=list)
    keep_metrics: bool = False       # also keep every analysis metric, as "metric:<name>" columns
    codegen: str | None = None       # the code generator priced (tfx.analysis.codegen; None: codegen.DEFAULT)
    # flat index of the current configuration (the defaults under --set): the chunk holding it
    # keeps its row (ChunkResult.watched, explore's ``current.sweep``); None: not in the space
    watch: int | None = None


@dataclass
class ChunkResult:
    start: int
    size: int
    counts: np.ndarray               # [feasible, reason 0, reason 1, ...]
    top_idx: np.ndarray
    top_rows: np.ndarray             # len(top_idx) x len(COLUMNS)
    pareto_idx: np.ndarray
    pareto_rows: np.ndarray
    columns: dict | None = None      # COLUMNS + "code", flat, when keep
    # feasible times near the best (near_tie), per alternative group: (knob index, the problem
    # shape's values) -> near_times; only configurations of one group are alternatives to each other
    near: dict = field(default_factory=dict)
    # (COLUMNS values, feasibility code) of Context.watch, where this chunk holds it
    watched: tuple | None = None


def evaluate_chunk(ctx: Context, chunk: Chunk) -> ChunkResult:
    cols, codes = evaluate_columns(ctx, chunk)
    n = chunk.size
    counts = np.bincount(codes, minlength=len(ctx.checks) + 1)[: len(ctx.checks) + 1]
    feas = np.flatnonzero(codes == 0)
    table = np.stack([cols[c] for c in COLUMNS], axis=1)
    obj_cols = [COLUMNS.index(o) for o in ctx.objectives]
    ti = top_k(cols["time"][feas], ctx.top, tiebreak=feas)
    top_local = feas[ti]
    pi = pareto_front(table[feas][:, obj_cols]) if feas.size else np.zeros(0, dtype=np.int64)
    pareto_local = feas[pi]
    watched = None
    if ctx.watch is not None and chunk.start <= ctx.watch < chunk.start + n:
        # a chunk's configurations are the flat indices start .. start + size - 1, in order
        local = ctx.watch - chunk.start
        watched = (tuple(float(cols[c][local]) for c in COLUMNS), int(codes[local]))
    return ChunkResult(
        start=chunk.start, size=n, counts=counts,
        top_idx=top_local + chunk.start, top_rows=table[top_local],
        pareto_idx=pareto_local + chunk.start, pareto_rows=table[pareto_local],
        columns=({**cols, "code": codes} if ctx.keep else None), near=_near_groups(ctx, chunk, feas, cols["time"]),
        watched=watched)


def shape_names(ctx: Context) -> list[str]:
    """The swept parameters that size the problem (``--all-params``, or ``--sweep M=...``)."""
    shapes = ctx.module.kernel(ctx.kernel_name).shape_parameters()
    return [n for n in ctx.space.names if n in shapes]


def tie_group(knob: int, params: dict, shapes: list[str]) -> tuple:
    """The alternative group of a configuration: its knob point and its problem shape. Two
    hardware points or two problem sizes are not alternatives a person picks between."""
    return (int(knob), *(int(params[n]) for n in shapes))


def _near_groups(ctx: Context, chunk: Chunk, feas: np.ndarray, time: np.ndarray) -> dict:
    """near_times of the chunk's feasible times, per alternative group (one chunk holds one
    knob point, but may hold several problem shapes)."""
    shapes = shape_names(ctx)
    t = time[feas]
    if not feas.size:
        return {}
    if not shapes:
        return {(int(chunk.knob),): near_times(t)}
    params, _ = ctx.space.decode_many(feas + chunk.start)
    keys = np.stack([params[n] for n in shapes], axis=1)
    return {(chunk.knob, *key): times for key, times in grouped_near_times(keys, t)}


def grouped_near_times(keys: np.ndarray, t: np.ndarray) -> list:
    """(row of ``keys`` as ints, near_times of its times in ``t``) per distinct row, in the rows'
    lexicographic order (np.unique(keys, axis=0)'s). Each row is one integer, its columns' ranks
    in mixed radix, so one sort of integers groups them where np.unique's sort of whole rows took
    3 of a 1,555,200-configuration sweep's 7 cpu s (bench/explore_speed.py); near_times sorts
    what it keeps, so the order inside a group does not matter."""
    code = np.zeros(len(keys), dtype=np.int64)
    for col in keys.T:
        values, rank = np.unique(col, return_inverse=True)
        code = code * len(values) + rank.reshape(-1)
    _, first, inverse = np.unique(code, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    order = np.argsort(inverse, kind="stable")
    bounds = np.searchsorted(inverse[order], np.arange(1, len(first)))
    return [(tuple(int(v) for v in keys[i]), near_times(part)) for i, part in zip(first, np.split(t[order], bounds))]


def chunk_params(ctx: Context, chunk: Chunk) -> tuple[dict, tuple]:
    grid, shape = ctx.space.grid(chunk)
    ones = (1,) * len(shape)
    params = {k: np.full(ones, v, dtype=np.int64) for k, v in ctx.fixed.items()}
    params.update(grid)
    return params, shape


def evaluate_columns(ctx: Context, chunk: Chunk) -> tuple[dict, np.ndarray]:
    """Flat per-configuration COLUMNS and feasibility codes (0 = feasible, i+1 = check i failed)."""
    params, shape = chunk_params(ctx, chunk)
    profile = ctx.profiles[chunk.knob]
    kernel = ctx.module.kernel(ctx.kernel_name)
    # one vectorized analysis prices the chunk's infeasible configurations beside the rest (a
    # tile of 0 elements divides by zero); their codes set them apart, so numpy's warnings of
    # them are noise on stderr
    with np.errstate(divide="ignore", invalid="ignore"):
        a = analyze(ctx.module, kernel, profile, params=params, check=False, codegen=ctx.codegen)
    m = a.metrics

    def flat(x, dtype=np.float64):
        return np.broadcast_to(np.asarray(x, dtype=dtype), shape).reshape(-1)

    cols: dict[str, np.ndarray] = {}
    cols["time"] = flat(m["performance.predicted_ns"])
    res = _resources(a, kernel, profile)
    if profile.kind == "gpu" and res is not None:
        smem = np.asarray(res["smem"]) + np.asarray(res.get("static_smem", 0))
        cols["smem"] = flat(smem)
        cols["regs"] = flat(res["regs"])
        cols["blocks"] = flat(m.get("occupancy.blocks_per_sm", 0))
        cols["spills"] = flat(m.get("occupancy.spilled_registers", 0))
    else:
        onchip = onchip_levels(profile)
        peak = 0
        for lvl, p in a.peaks.items():
            name = profile.memory_level(lvl).name if _known_level(profile, lvl) else lvl
            if name in onchip:
                peak = np.maximum(peak, np.asarray(p.bytes, dtype=np.float64))
        cols["smem"] = flat(peak)
        cols["regs"] = np.zeros(chunk.size)
        cols["blocks"] = np.ones(chunk.size)
        cols["spills"] = np.zeros(chunk.size)
    dram = _dram_level(profile)
    traffic = 0
    for key, v in m.items():
        parts = key.split(".")
        if (len(parts) == 5 and parts[0] == "memory" and parts[1] == "traffic" and parts[3] == "total"
                and parts[4] in ("read", "write") and _known_level(profile, parts[2])
                and profile.memory_level(parts[2]).name == dram):
            traffic = traffic + np.asarray(v, dtype=np.float64)
    cols["traffic"] = flat(traffic)
    cols["cost"] = np.full(chunk.size, float(ctx.costs[chunk.knob]))
    codes = _codes(ctx, a, profile, shape, res)
    if ctx.keep_metrics:
        for key, v in m.items():
            if isinstance(v, (np.ndarray, int, float)) and not isinstance(v, bool):
                cols[f"metric:{key}"] = flat(v)
    return cols, codes.reshape(-1)


def _resources(a, kernel, profile) -> dict | None:
    """threads/regs/smem per CTA as the analysis prices them (attrs, else estimates from the peaks),
    for analyses whose vector mode does not return them."""
    if profile.kind != "gpu":
        return None
    env = a.params

    def attr(name, default):
        at = kernel.attr(name)
        return at.value.evaluate(env) if at is not None else default

    out = {"threads": attr("threads", 128), "static_smem": attr("static_smem", 0)}
    # the registers a thread is priced at, as analyze prices and reports them
    # (RegisterEstimate.priced: a declared count up to the cap one CTA of its threads leaves it,
    # else the estimate's allocation): rmsnorm's N = 16,384 read 305 here beside analyze's
    # '255 regs' and its 'about 305 registers/thread needed'
    given = attr("regs", None)
    out["regs"] = np.asarray(a.registers.priced(given) if a.registers is not None else given, dtype=np.float64)
    out["smem"] = attr("smem", None)
    if out["smem"] is None:
        out["smem"] = np.ceil(np.asarray(a.peaks["smem"].bytes, dtype=np.float64)) if "smem" in a.peaks else 0
    return out


def _known_level(profile, name: str) -> bool:
    try:
        profile.memory_level(name)
        return True
    except Exception:
        return False


def _dram_level(profile) -> str | None:
    levels = profile.memory_levels()
    cache = next((l for l in levels.values() if l.caches), None)
    if cache is not None:
        return cache.caches
    unit = _unit_level(profile)
    return next((n for n, l in levels.items() if l.bandwidth is not None and l.scope in ("device", unit)), None)


def _codes(ctx: Context, a, profile, shape, res) -> np.ndarray:
    codes = np.zeros(shape, dtype=np.uint8 if len(ctx.checks) < 255 else np.uint16)
    env = a.params
    loops = {}
    for node in a.root.walk():
        if node.kind == "loop":
            loops.setdefault(id(node.region), []).append(node)
    limits = OccupancyLimits.from_profile(profile) if profile.kind == "gpu" else None
    for i, c in enumerate(ctx.checks):
        cond = None
        if c.kind == "empty":
            for size in c.data:
                x = np.asarray(size.evaluate(env)) < 1
                cond = x if cond is None else cond | x
        elif c.kind == "window":
            for size, dim in c.data:
                x = np.asarray(size.evaluate(env)) > np.asarray(dim.evaluate(env))
                cond = x if cond is None else cond | x
        elif c.kind == "stages":
            for region in c.data:
                for node in loops.get(id(region), ()):
                    x = np.asarray(node.stages) > np.asarray(node.trips)
                    cond = x if cond is None else cond | x
        elif c.kind in ("threads", "smem") and res is not None:
            L = limits
            if c.kind == "threads":
                cond = np.asarray(res["threads"], dtype=np.int64) > L.max_threads_per_block
            else:
                sm = np.asarray(res["smem"]) + np.asarray(res.get("static_smem", 0))
                cond = sm > L.smem_per_block_optin
        elif c.kind == "occupancy":
            cond = np.asarray(a.metrics.get("occupancy.blocks_per_sm", 1)) == 0
        elif c.kind == "capacity":
            name, aliases = c.data
            cap = profile.memory_level(name).capacity
            for lvl, p in a.peaks.items():
                if lvl == name or lvl in aliases:
                    x = np.asarray(p.bytes, dtype=np.float64) > cap
                    cond = x if cond is None else cond | x
        if cond is None:
            continue
        cond = np.broadcast_to(cond, shape)
        codes = np.where((codes == 0) & cond, i + 1, codes).astype(codes.dtype)
    return codes
