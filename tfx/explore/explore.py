"""``explore``: sweep a kernel's parameters and a profile's knobs; frontier, top-k, sensitivity."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping

import numpy as np

from tfx.errors import TfxError, argument_error
from tfx.explore.evaluate import (COLUMNS, OBJECTIVES, ChunkResult, Context, build_checks,
                                  shape_names, tie_group,
                                  evaluate_chunk, onchip_key, onchip_label, unit_noun)
from tfx.explore.near_tie import NearTie, near_tie
from tfx.explore.pareto import pareto_front, top_k
from tfx.explore.top_picks import TopPicks, advice
from tfx.explore.space import DEFAULT_CHUNK, Chunk, Space, build_space
from tfx.ir.bind import bind, profile_dependent
from tfx.ir.nodes import Kernel, Module


@dataclass
class ExploreResult:
    kernel: str
    file: str
    profile: str
    space: Space
    fixed: dict
    objectives: tuple
    configs: int
    feasible: int
    infeasible: dict                 # reason -> count (only reasons that occurred)
    seconds: float
    pareto: list                     # config dicts
    top: list                        # config dicts, by predicted time
    sensitivity: dict | None = None
    scheduler: str = "in-process"
    chunks: int = 0
    columns: dict | None = None      # full flat columns (COLUMNS + "code"), when kept
    reasons: list = field(default_factory=list)   # all checks' reasons, code i+1 -> reasons[i]
    knobs: dict = field(default_factory=dict)     # --knob overrides applied to the profile, path -> text
    # the code generator every configuration was priced as (tfx.analysis.codegen): triton or
    # cutlass on a GPU, None on a tiled profile (its own tool chain)
    codegen: str | None = None
    # how many of the fastest configurations lie within the re-timing noise of the best
    # (tfx.explore.near_tie); None when none is feasible
    near_tie: NearTie | None = None
    # how many of the top configurations to time, with the model's measured ranking error that
    # says why (tfx.explore.top_picks); None where no campaign speaks for the code generator
    top_picks: TopPicks | None = None
    # the top pick's tile-parameter values no campaign of the device timed for this bundled kernel
    # (tfx.analysis.coverage): its rank is unchecked there; [] where every value was timed, or for a
    # kernel, code generator or tiled profile no campaign measured
    unmeasured: list = field(default_factory=list)
    # the on-chip memory column's header (tfx.explore.evaluate.onchip_label: smem/CTA, tcm/PE) and
    # whether the registers and CTAs an SM mean anything (a GPU's; a tiled profile's unit runs one)
    onchip_label: str = "smem/CTA"
    occupancy: bool = True
    # the rows' key for that column (evaluate.onchip_key: smem_per_cta, tcm_per_pe); a tiled
    # profile's rows have no regs_per_thread or blocks_per_sm
    onchip_key: str = "smem_per_cta"
    # the configuration the user is looking at (the kernel's defaults under --set and --knob):
    # its analysis's headline (tfx.analysis.analyze.HEADLINE_METRICS) and the sweep's own row
    # of it (``current_configuration``); None where not computed
    current: dict | None = None

    @property
    def marked(self) -> bool:
        """Whether a row of the top table or the frontier sets values no campaign timed (its ``unmeasured``)."""
        return any(e.get("unmeasured") for e in (*self.top, *self.pareto))

    @property
    def best_checked(self) -> tuple | None:
        """Where the top pick sets values no campaign timed: (rank, slower by) of the fastest row of the top table
        whose values all were timed (``best_checked``); None otherwise."""
        return best_checked(self.top) if self.unmeasured else None

    @property
    def spilling(self) -> bool:
        """Whether a row of the top table or the frontier spills registers (its ``spilled_registers``)."""
        return any(e.get("spilled_registers") for e in (*self.top, *self.pareto))

    @property
    def first_spills(self) -> bool:
        """Whether the top pick spills registers."""
        return bool(self.top and self.top[0].get("spilled_registers"))

    @property
    def best_unspilled(self) -> tuple | None:
        """Where the top pick spills: (rank, slower by) of the fastest row of the top table that does not
        (``best_unspilled``); None otherwise, or where every row spills."""
        return best_unspilled(self.top) if self.first_spills else None

    @property
    def configs_per_second(self) -> float:
        return self.configs / self.seconds if self.seconds > 0 else float("inf")

    def to_json(self) -> dict:
        out = {
            "tool": "tfx", "command": "explore", "kernel": self.kernel, "file": self.file,
            "profile": self.profile, "knobs": dict(self.knobs), "codegen": self.codegen,
            "fixed": dict(self.fixed), "space": self.space.to_json(),
            "objectives": list(self.objectives),
            "configs": self.configs, "feasible": self.feasible, "infeasible": dict(self.infeasible),
            "seconds": round(self.seconds, 6), "configs_per_second": round(self.configs_per_second, 1),
            "scheduler": self.scheduler, "chunks": self.chunks,
            "onchip": {"label": self.onchip_label, "key": self.onchip_key},
            "pareto": self.pareto, "top": self.top,
            "near_tie": None if self.near_tie is None else self.near_tie.to_json(len(self.top)),
            "top_picks": None if self.top_picks is None else self.top_picks.to_json(),
            "unmeasured": self._unmeasured_json(),
            "spilling": self._spilling_json(),
            "current": self.current,
        }
        if self.sensitivity is not None:
            out["sensitivity"] = self.sensitivity
        return out

    def _unmeasured_json(self) -> dict | None:
        """JSON's ``unmeasured``: the top pick's unchecked values, the fastest row of timed values and the line
        under the table; None where no row sets such values."""
        marked = self.marked
        if not (self.unmeasured or marked):
            return None
        from tfx.present.formatting import unmeasured_sentence
        checked = self.best_checked
        return {"values": [u.to_json() for u in self.unmeasured],
                "best_checked": None if checked is None else {"rank": checked[0], "slower": checked[1]},
                "summary": unmeasured_sentence(self.unmeasured, marked, checked)}

    @property
    def spilling_summary(self) -> str:
        """The line under the top table where a listed row spills (tfx explore's text and JSON, the Explore
        pane: tfx.present.formatting.spilling_sentence); '' where none does."""
        if not self.spilling:
            return ""
        from tfx.present.formatting import spilling_sentence
        return spilling_sentence(self.first_spills, self.best_unspilled)

    def _spilling_json(self) -> dict | None:
        """JSON's ``spilling``: the fastest row that does not spill where the top pick does, and the line under
        the table; None where no listed row spills."""
        if not self.spilling:
            return None
        best = self.best_unspilled
        return {"best_unspilled": None if best is None else {"rank": best[0], "slower": best[1]},
                "summary": self.spilling_summary}

    def config(self, index: int) -> dict:
        """One configuration by flat index: params, knobs, and (when columns were kept) its values."""
        params, knob = self.space.decode(index)
        d = {"index": int(index), "params": params, "knobs": self.space.knob_combos[knob]}
        if self.columns is not None:
            row = np.array([self.columns[c][index] for c in COLUMNS])
            d.update(_values(row, self.objectives, self.onchip_key, self.occupancy))
            code = int(self.columns["code"][index])
            d["feasible"] = code == 0
            if code:
                d["reason"] = self.reasons[code - 1]
        return d


def _plain(x: float):
    x = float(x)
    return int(x) if x.is_integer() and abs(x) < 2**53 else x


def value_columns(onchip: str = "smem_per_cta", occupancy: bool = True) -> list[tuple[str, str]]:
    """A configuration's values in order, as (its key in the JSON rows and the CSV, its column of
    ``COLUMNS``): its on-chip bytes under ``onchip`` (evaluate.onchip_key), its registers and CTAs
    an SM only where ``occupancy`` (a GPU: a tiled unit runs one position)."""
    return [("predicted_ns", "time"), (onchip, "smem"),
            *((("regs_per_thread", "regs"), ("blocks_per_sm", "blocks")) if occupancy else ()),
            ("dram_bytes", "traffic"), ("cost", "cost"),
            *((("spilled_registers", "spills"),) if occupancy else ())]


def _values(row, objectives, onchip: str = "smem_per_cta", occupancy: bool = True) -> dict:
    """One configuration's values by name (``value_columns``), its objectives first."""
    vals = dict(zip(COLUMNS, row))
    out = {"objectives": {o: _plain(vals[o]) for o in objectives}}
    out.update((key, _plain(vals[col])) for key, col in value_columns(onchip, occupancy))
    return out


def knob_cost(base, profile, canonical_paths) -> float:
    """The hardware cost proxy of a knob combination: the product over swept knobs of
    new value / base value (x2 on a bandwidth costs 2; x0.5 saves half)."""
    cost = 1.0
    for path in canonical_paths:
        old, new = base.value(path), profile.value(path)
        cost *= float(new) / float(old) if old else 1.0
    return cost


def _fixed_params(module, kernel: Kernel, space: Space, fixed: Mapping[str, int], profile) -> dict:
    """Values of every unswept parameter that does not derive from a swept one, or from the
    machine (units(sm): a knob sweep's profiles differ), as ints."""
    env = bind(module, kernel, dict(fixed), profile=profile)
    depends = set(space.names) | profile_dependent(kernel, fixed)
    out = {}
    for p in kernel.params:
        if p.name in space.names:
            continue
        if p.name in fixed:
            out[p.name] = int(fixed[p.name])
        elif p.name in depends or p.default.free_names() & depends:
            depends.add(p.name)         # recomputed from the swept values (or the machine) by bind
        else:
            out[p.name] = int(env[p.name])
    return out


def explore(module: Module, kernel: Kernel | str | None, profile,
            sweeps: Mapping[str, list[int]] | None = None,
            knob_sweeps: Mapping[str, list[str]] | None = None,
            objectives: tuple[str, ...] | list[str] | None = None, top: int = 10, *,
            fixed: Mapping[str, int] | None = None, sensitivity: bool = False,
            scheduler: Any = None, chunk_size: int = DEFAULT_CHUNK, keep_columns: bool = False,
            keep_metrics: bool = False,
            progress: Callable[[int, int], None] | None = None,
            codegen: str | None = None) -> ExploreResult:
    """Evaluate every configuration of the space and summarize it.

    ``sweeps``: parameter -> values; None sweeps every declared domain (except ``fixed``).
    ``knob_sweeps``: knob path (suffixes and aliases accepted) -> knob values (``x2``, ``3.2TB/s``).
    ``keep_columns``: keep every configuration's COLUMNS and feasibility code (``result.columns``,
    flat, indexed like the space); ``keep_metrics``: also every analysis metric.
    ``objectives``: minimized, among ``OBJECTIVES``; None means ("time", "smem"), or
    ("time", "cost") when knobs are swept. ``scheduler``: a ``dask.distributed`` scheduler
    address or Client, None for in-process. ``progress(done, total)`` is called per chunk.
    ``codegen``: the code generator every configuration is priced as (tfx.analysis.codegen;
    None: the default); refused on a profile it cannot compile for.
    """
    from tfx.analysis import codegen as codegens
    codegens.check_profile(codegen, profile)
    t0 = time.perf_counter()
    if not isinstance(kernel, Kernel):
        kernel = module.kernel(kernel)
    fixed = dict(fixed or {})
    # Refuses unknown names; then the kernel under its defaults (and --set) must pass what
    # `tfx check` checks: 64-bit values, sane domain sizes, no zero divisor or zero-trip loop.
    from tfx.ir.bind import check_shapes
    check_shapes(module, kernel, bind(module, kernel, fixed, profile=profile))
    # ... and its levels must be the profile's, as tfx analyze refuses them (the kernel's line):
    # a GPU kernel on sip was refused at 'sip.toml:hierarchy: ... 'cta' is not a hierarchy level'
    # by the occupancy checks, blaming the profile for the kernel's mesh
    from tfx.ir.levels import check_levels
    check_levels(module, kernel, profile)
    if objectives is None:
        objectives = ("time", "cost") if knob_sweeps else ("time", "smem")
    objectives = tuple(objectives)
    for o in objectives:
        if o not in OBJECTIVES:
            raise argument_error("--objective", f"expected one of {', '.join(OBJECTIVES)}", found=o)
    if len(set(objectives)) != len(objectives) or not objectives:
        raise argument_error("--objective", "expected distinct objectives, at least one")
    if "regs" in objectives and profile.kind != "gpu":
        # a tiled profile's unit has no registers a thread: every row's regs is 0, a frontier of one
        mine = ", ".join(o for o in OBJECTIVES if o != "regs")
        raise argument_error("--objective", f"expected one of {mine} on {profile.name} (its "
                                            f"{unit_noun(profile)} has no registers a thread)", found="regs")
    if top < 0:
        raise argument_error("--top", "expected a count >= 0", found=str(top))
    space = build_space(kernel, sweeps, fixed, knob_sweeps, profile)
    profiles, costs = [], []
    for combo in space.knob_combos:
        prof = profile.with_knobs(combo, "--knob-sweep") if combo else profile
        profiles.append(prof)
        costs.append(knob_cost(profile, prof, space.knob_canonical))
    checks = build_checks(module, kernel, profile)
    ctx = Context(module=module, kernel_name=kernel.name, space=space,
                  fixed=_fixed_params(module, kernel, space, fixed, profile), profiles=profiles, costs=costs,
                  objectives=objectives, top=top, keep=keep_columns or keep_metrics, checks=checks,
                  keep_metrics=keep_metrics, codegen=codegen,
                  watch=current_index(module, kernel, space, fixed, profile))
    chunks = space.chunks(chunk_size)
    results = run_chunks(ctx, chunks, scheduler, progress)
    res = _merge(ctx, results, chunks, space, kernel, module, profile, fixed, scheduler)
    res.current = current_configuration(ctx, module, kernel, profile, fixed, results)
    if sensitivity:
        if res.top:
            base_params = {**fixed, **res.top[0]["params"]}
            base_knobs = res.top[0]["knobs"]
        else:
            base_params, base_knobs = dict(fixed), {}
        from tfx.explore.sensitivity import sensitivity as sens
        res.sensitivity = sens(module, kernel, profile.with_knobs(base_knobs) if base_knobs else profile,
                               base_params, base_knobs=base_knobs, codegen=codegen)
    res.seconds = time.perf_counter() - t0
    return res


def current_index(module, kernel: Kernel, space: Space, fixed: Mapping[str, int], profile) -> int | None:
    """Flat index of the current configuration (the kernel's defaults under ``fixed``) in
    ``space``; None where a swept parameter's value is not among its values, or knobs are swept
    (the unswept profile is not one of their points)."""
    if space.knob_paths:
        return None
    env = bind(module, kernel, dict(fixed), profile=profile)
    try:
        pos = [int(np.flatnonzero(v == int(env[n]))[0]) for n, v in zip(space.names, space.values)]
    except (IndexError, KeyError, TypeError, ValueError):
        return None
    return int(np.ravel_multi_index(pos, space.sizes)) if pos else 0


def current_configuration(ctx: Context, module, kernel: Kernel, profile, fixed: Mapping[str, int],
                          results: list[ChunkResult]) -> dict:
    """The configuration the user is looking at, as ``tfx analyze`` with the same --set and
    --knob prices it: its ``parameters``, ``knobs``, the analysis's headline
    (Analysis.headline_metrics: predicted time and bound, roofline and bound, CTAs per SM and
    limiter, peak memory), and ``sweep``: the same configuration's row as the sweep priced it
    (the chunk holding ``ctx.watch`` kept it: predicted_ns, smem_per_cta, regs_per_thread,
    blocks_per_sm, dram_bytes, feasible), with its flat ``index``; ``sweep`` and ``index`` are
    None where the configuration is not in the space (a --sweep leaving its value out, or a
    --knob-sweep). ``error``: the analysis's refusal, where it refuses the defaults."""
    from tfx.analysis.analyze import analyze
    from tfx.analysis.numbers import to_plain
    try:
        a = analyze(module, kernel, profile, params=dict(fixed), codegen=ctx.codegen)
    except TfxError as err:
        return {"parameters": dict(fixed), "knobs": dict(profile.knobs), "error": err.headline(),
                "index": None, "sweep": None}
    # 'parameters' as tfx analyze names them: every parameter of the analysis (a sweep row's
    # 'params' holds the swept ones only)
    out = {"parameters": {k: to_plain(v) for k, v in a.params.items()}, "knobs": dict(profile.knobs),
           # the machine's counts the kernel named, as tfx analyze --json gives them
           **({"units": {k: to_plain(v) for k, v in a.units.items()}} if a.units else {}),
           **a.headline_metrics(), "index": None, "sweep": None}
    watched = next((r.watched for r in results if r.watched is not None), None)
    if watched is None:
        return out
    values, code = watched
    row = _values(np.array(values), ctx.objectives, onchip_key(profile), profile.kind == "gpu")
    del row["objectives"], row["cost"]
    row["feasible"] = code == 0
    if code:
        row["reason"] = ctx.checks[code - 1].reason
    out.update(index=ctx.watch, sweep=row)
    return out


def run_chunks(ctx: Context, chunks: list[Chunk], scheduler=None, progress=None) -> list[ChunkResult]:
    total = sum(c.size for c in chunks)
    done = 0
    out: list[ChunkResult] = []
    if scheduler is None:
        for c in chunks:
            out.append(evaluate_chunk(ctx, c))
            done += c.size
            if progress:
                progress(done, total)
        return out
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise argument_error("--scheduler", "needs dask.distributed: pip install 'tfx[dask]'") from None
    own = not isinstance(scheduler, Client)
    try:
        client = Client(scheduler) if own else scheduler
    except Exception as exc:  # OSError, TimeoutError: an address nobody answers
        raise TfxError(f"cannot reach the Dask scheduler {scheduler}: {exc}", where="--scheduler") from None
    try:
        [shared] = client.scatter([ctx], broadcast=True)
        futures = [client.submit(evaluate_chunk, shared, c, pure=False) for c in chunks]
        for fut in as_completed(futures):
            r = fut.result()
            out.append(r)
            done += r.size
            if progress:
                progress(done, total)
    finally:
        if own:
            client.close()
    return out


def _merge(ctx, results, chunks, space, kernel, module, profile, fixed, scheduler) -> ExploreResult:
    results = sorted(results, key=lambda r: r.start)
    counts = np.zeros(len(ctx.checks) + 1, dtype=np.int64)
    for r in results:
        counts += r.counts
    infeasible = {c.reason: int(n) for c, n in zip(ctx.checks, counts[1:]) if n}
    obj_cols = [COLUMNS.index(o) for o in ctx.objectives]
    width = len(COLUMNS)

    def cat(attr, rows):
        idx = np.concatenate([getattr(r, attr) for r in results]) if results else np.zeros(0, np.int64)
        tab = np.concatenate([getattr(r, rows) for r in results]) if results else np.zeros((0, width))
        return idx.astype(np.int64), tab.reshape(-1, width)

    t_idx, t_rows = cat("top_idx", "top_rows")
    sel = top_k(t_rows[:, 0], ctx.top, tiebreak=t_idx) if len(t_idx) else np.zeros(0, np.int64)
    onchip, occupancy = onchip_key(profile), profile.kind == "gpu"
    top = [_entry(space, int(t_idx[i]), t_rows[i], ctx.objectives, onchip, occupancy) for i in sel]

    p_idx, p_rows = cat("pareto_idx", "pareto_rows")
    front = pareto_front(p_rows[:, obj_cols]) if len(p_idx) else np.zeros(0, np.int64)
    keys = [p_idx[front]] + [p_rows[front, c] for c in reversed(obj_cols)]
    front = front[np.lexsort(keys)]
    pareto = [_entry(space, int(p_idx[i]), p_rows[i], ctx.objectives, onchip, occupancy) for i in front]

    # The tie is counted among the alternatives to the best configuration: those on its knob
    # point and problem shape (a --knob-sweep hardware point or an --all-params problem size is
    # not a configuration a person picks instead of it).
    shapes = shape_names(ctx)
    groups: dict = {}
    for r in results:
        for key, times in r.near.items():
            groups.setdefault(key, []).append(times)
    if top:
        params, knob = space.decode(top[0]["index"])
        group = tie_group(knob, params, shapes)
    else:
        group = min(groups, key=lambda k: min(float(t.min()) for t in groups[k]), default=None)
    tie = near_tie(np.concatenate(groups[group]) if group in groups else np.zeros(0))
    if tie is not None and tie.alone and int(counts[0]) > 1:
        # the others are other problem shapes or hardware points, not alternatives to it
        tie = replace(tie, others=True)
    for e in top:
        # each row of the top table says whether it is in the near tie (tfx.explore.near_tie)
        params, knob = space.decode(e["index"])
        e["near_tie"] = bool(tie is not None and tie.tied and e["predicted_ns"] <= tie.slowest_ns
                             and tie_group(knob, params, shapes) == group)
    from tfx.analysis import codegen as codegens
    priced_as = codegens.priced_name(ctx.codegen, profile)
    off = _mark_unmeasured(module, kernel, profile, fixed, top, pareto, priced_as)
    columns = None
    if ctx.keep:
        columns = {k: np.concatenate([r.columns[k] for r in results]) for k in results[0].columns}
    sched = "in-process" if scheduler is None else f"dask {scheduler if isinstance(scheduler, str) else 'client'}"
    return ExploreResult(
        kernel=kernel.name, file=module.filename, profile=profile.name, space=space, fixed=dict(fixed),
        objectives=ctx.objectives, configs=int(counts.sum()), feasible=int(counts[0]),
        infeasible=infeasible, seconds=0.0, pareto=pareto, top=top, scheduler=sched,
        chunks=len(chunks), columns=columns, reasons=[c.reason for c in ctx.checks],
        knobs=dict(profile.knobs), codegen=priced_as,
        near_tie=tie, top_picks=advice(priced_as, 1 if tie is not None and tie.alone else int(counts[0]),
                                       profile.name),
        onchip_label=onchip_label(profile), occupancy=occupancy, onchip_key=onchip, unmeasured=off)


def _fastest_where(top: list, keep) -> tuple | None:
    """(1-based rank, predicted time over the first row's - 1) of the fastest row of ``top`` (the top table,
    fastest first) that ``keep`` accepts; None where it accepts none."""
    for i, e in enumerate(top):
        if keep(e):
            first = float(top[0]["predicted_ns"])
            return i + 1, (float(e["predicted_ns"]) / first - 1 if first else 0.0)
    return None


def best_unspilled(top: list) -> tuple | None:
    """``_fastest_where`` for the rows that spill no register (no ``spilled_registers``)."""
    return _fastest_where(top, lambda e: not e.get("spilled_registers"))


def best_checked(top: list) -> tuple | None:
    """(1-based rank, predicted time over the first row's - 1) of the fastest row of ``top`` (the top table, fastest
    first) that sets no value the campaigns never timed (no ``unmeasured``); None where every row sets one."""
    return _fastest_where(top, lambda e: not e.get("unmeasured"))


def _mark_unmeasured(module, kernel, profile, fixed, top, pareto, priced_as) -> list:
    """tfx.analysis.coverage.unmeasured of each row of ``top`` and ``pareto`` (the top table's and the frontier's),
    every parameter bound (its swept values, ``fixed``, the defaults), where the campaigns speak for the kernel and
    its code generator (Triton's, on a GPU): a row with any gets ``unmeasured``, their names; returns the top
    pick's list ([] with no top row)."""
    from tfx.analysis.coverage import MEASURED_CODEGEN, campaign_kernel, unmeasured
    entries = [*top, *pareto]
    campaign = campaign_kernel(module) if entries and priced_as == MEASURED_CODEGEN else None
    if campaign is None:
        return []
    # bound once; a row re-binds only where a default derives from a value it sets (65,536 rows: 1.2 s -> 0.1),
    # and a configuration in both tables is judged once
    base = bind(module, kernel, dict(fixed), profile=profile)
    swept = set(entries[0]["params"])
    derived = any(p.name not in swept and p.name not in fixed and p.default.free_names() & swept
                  for p in kernel.params)
    judged: dict = {}
    for e in entries:
        off = judged.get(e["index"])
        if off is None:
            row = {n: int(v) for n, v in e["params"].items()}
            env = bind(module, kernel, {**fixed, **row}, profile=profile) if derived else {**base, **row}
            off = judged[e["index"]] = unmeasured(campaign, {p.name: env[p.name] for p in kernel.params},
                                                  profile.name)
        if off:
            e["unmeasured"] = [u.param for u in off]
    return judged[top[0]["index"]] if top else []



def _entry(space: Space, index: int, row, objectives, onchip: str, occupancy: bool) -> dict:
    params, knob = space.decode(index)
    return {"index": index, "params": params, "knobs": space.knob_combos[knob],
            **_values(row, objectives, onchip, occupancy)}
