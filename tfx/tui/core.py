"""The explorer's headless core: no Textual here.

``Job`` is the plain data an edit produces (kernel file and text, profile,
knobs, parameters, occupancy hint, generation); ``run_job`` is the top-level,
picklable worker function the app sends to a ``ProcessPoolExecutor`` and
returns an ``Outcome`` (the ``Analysis``, which pickles, plus the analysis
with resources meeting the occupancy hint, or the TfxError's first line).
Everything the panes show is derived from an ``Analysis`` by the functions
below, so the panes and the tests agree on every number.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, fields, is_dataclass
from enum import Enum
from fractions import Fraction
from pathlib import Path
from typing import Any

from tfx.analysis.codegen import DEFAULT as DEFAULT_CODEGEN  # names only: imports no numpy
from tfx.errors import TfxError
from tfx.hw.units import format_percent_change
from tfx.present.analysis_report import scope_rows
from tfx.present import diff
from tfx.present import formatting as fmt
from tfx.present.formatting import allocation, num



# ---------------------------------------------------------------- jobs

@dataclass(frozen=True)
class Job:
    """One analysis request: plain data only, so it pickles to a worker process."""

    generation: int
    kernel_path: str
    kernel_text: str | None          # None: read kernel_path
    kernel_name: str | None
    profile: str                     # bundled name or path
    knobs: tuple = ()                # ((path, text), ...)
    params: tuple = ()               # ((name, int), ...)
    hint: int | None = None          # occupancy hint; None: the kernel's, else one more CTA
    later_hint: bool = False         # leave the occupancy-hint rerun to finish_hint
    codegen: str | None = None       # the code generator priced (tfx.analysis.codegen; None: the default)


@dataclass
class Outcome:
    generation: int
    analysis: Any = None             # tfx.analysis.analyze.Analysis
    hinted: Any = None               # Analysis with resources meeting the hint, or None
    hint: int | None = None
    hint_note: str = ""              # what the hinted analysis assumes, or why there is none
    error: str | None = None         # the TfxError's first line
    source_text: str = ""            # the kernel text analysed
    hint_pending: bool = False       # hint, hinted and hint_note wait for finish_hint
    hint_job: Any = None             # the Job finish_hint reruns (while hint_pending)
    profile_source: tuple = ()       # the job's (profile, knobs): its analyses' profile, loaded again

    def __reduce__(self):
        # the worker's outcome crosses to the app every keystroke: its module travels as the
        # text it was parsed from (which the app has parsed already) and its profile as its name
        # and knobs, not as ~1,000 and ~300 objects (_outcome_wire)
        return _outcome_from_wire, (_outcome_wire(self),)


_MODULE_CACHE: dict[tuple[str, str], Any] = {}
_PLACES: dict[tuple[str, str], "_Places"] = {}     # the same keys: each cached module's objects


def _parse(path: str, text: str):
    from tfx.lang import parse_text
    key = (path, text)
    mod = _MODULE_CACHE.get(key)
    if mod is None:
        mod = parse_text(text, path)
        if len(_MODULE_CACHE) > 16:
            _MODULE_CACHE.clear()
            _PLACES.clear()
        _MODULE_CACHE[key] = mod
    return mod


# ---------------------------------------------------------------- the outcome's trip to the app

class _Places:
    """Every object of a parsed module's graph (the module, its kernels, ops, expressions,
    source locations; not its verifier facts, ``Module.info``, which the parse rebuilds) in one
    fixed order: depth first through dataclass fields and tuples, as the parser built them, so
    the same text parsed in another process puts the same object at each place. ``key``: the
    (path, text) it was parsed from; ``ids``: id(object) -> place; ``types``: their classes
    (not the built-in ones, which a pickler writes without asking a dispatch table)."""

    LEAVES = (str, bytes, int, float, complex, type(None), Enum, Fraction)

    def __init__(self, key: tuple[str, str], module):
        self.key = key
        self.objects: list = []
        self.ids: dict[int, int] = {}
        stack = [module]
        while stack:
            obj = stack.pop()
            if isinstance(obj, self.LEAVES) or id(obj) in self.ids:
                continue
            self.ids[id(obj)] = len(self.objects)
            self.objects.append(obj)
            if is_dataclass(obj):
                stack.extend(reversed([getattr(obj, f.name) for f in fields(obj)
                                       if obj is not module or f.name != "info"]))
            elif isinstance(obj, tuple):
                stack.extend(reversed(obj))
        self.types = {type(o) for o in self.objects if type(o).__module__ != "builtins"}


def _places(key: tuple[str, str]) -> _Places:
    """The places of the module parsed from ``key`` (parsed here if this process has not yet)."""
    places = _PLACES.get(key)
    if places is None:
        places = _PLACES[key] = _Places(key, _parse(*key))
    return places


_last_load: tuple = (None, None)    # (key, its _Places) of the last place an unpickling asked


def _at_place(key: tuple[str, str], place: int):
    """The object at ``place`` of the module parsed from ``key`` in this process (unpickling).
    One load's key is one object: after its first ask it is matched by identity, not by its
    text once an object."""
    global _last_load
    last_key, places = _last_load
    if last_key is not key:
        places = _places(key)
        _last_load = (key, places)
    return places.objects[place]


_PROFILES: dict[tuple, tuple] = {}   # (profile, knobs) -> (its files, their stat stamps, the Profile)


def _stamps(files) -> tuple:
    return tuple((st.st_mtime_ns, st.st_size) for st in map(os.stat, files))


def _job_profile(profile: str, knobs: tuple):
    """A job's profile with its knobs applied (``load_profile(profile).with_knobs(knobs)``): the
    one loaded for an earlier job or outcome that named the same, while its files are unchanged
    (each keystroke reloaded it: ~1 ms, and the canonical paths, levels, unit counts and rates
    it works out at the first ask, ~2 ms an analysis of flash_prefill, were worked out again).
    A Profile never changes (knobs make a new one), so the analyses can share it."""
    key = (profile, knobs)
    got = _PROFILES.get(key)
    if got is not None:
        files, stamps, loaded = got
        try:
            if _stamps(files) == stamps:
                return loaded
        except OSError:             # a file gone: load_profile says so
            pass
    from tfx.hw import load_profile
    loaded = load_profile(profile).with_knobs(dict(knobs))
    files = loaded.source_files()
    if len(_PROFILES) > 16:
        _PROFILES.clear()
    _PROFILES[key] = (files, _stamps(files), loaded)
    return loaded


def _outcome_wire(out: Outcome) -> bytes:
    """The outcome pickled with each object of its analysis's module as its place in the module
    parsed from the same text (``_at_place``: the app parsed that text for the first analysis,
    ``first_analysis``, and finds it in its cache; a process that has not parses it once) and
    the analysis's profile as the job's profile name and knobs (``_job_profile``)."""
    import copyreg
    import io
    import pickle
    buf = io.BytesIO()
    pickler = pickle.Pickler(buf, pickle.HIGHEST_PROTOCOL)
    table = {}
    a = out.analysis
    key = None if a is None else (a.module.filename, out.source_text)
    if key is not None and _MODULE_CACHE.get(key) is a.module:
        places = _places(key)
        key, ids = places.key, places.ids     # one key object: the pickle writes the text once

        def by_place(obj):
            place = ids.get(id(obj))
            if place is None:                 # made by the analysis, not the parser
                return obj.__reduce_ex__(pickle.HIGHEST_PROTOCOL)
            return _at_place, (key, place)
        table = dict.fromkeys(places.types, by_place)
    if a is not None and out.profile_source:
        profile = a.profile

        def by_source(obj):
            if obj is not profile:
                return obj.__reduce_ex__(pickle.HIGHEST_PROTOCOL)
            return _job_profile, out.profile_source
        table[type(profile)] = by_source
    if table:
        pickler.dispatch_table = {**copyreg.dispatch_table, **table}
    pickler.dump(out.__dict__)
    return buf.getvalue()


def _outcome_from_wire(data: bytes) -> Outcome:
    import pickle
    out = Outcome.__new__(Outcome)
    out.__dict__.update(pickle.loads(data))
    return out


def warm_analysis() -> None:
    """Imported by the analysis worker once the first screen is up, so the first edit is fast."""
    import tfx.analysis.analyze  # noqa: F401
    import tfx.hw  # noqa: F401
    import tfx.lang  # noqa: F401


def warm_explore() -> None:
    """Imported by the sweep worker once the first screen is up, so the first sweep is fast."""
    import tfx.analysis.analyze  # noqa: F401
    import tfx.explore  # noqa: F401
    import tfx.lang  # noqa: F401  (the worker parses every job)


def run_check(job: tuple) -> dict:
    """The run-check action's job (c): ``(path, source text or None, kernel name or None,
    params[, units])`` -> ``tfx.execute.quick.quick_check``'s outcome (plain data; params a dict
    or (name, value) pairs; units the analysis's counts of the machine, ``units(sm)``). The
    text, when given, is what the explorer shows."""
    from tfx.execute.quick import quick_check
    from tfx.lang import parse_file, parse_text
    path, text, kernel_name, params, *rest = job
    units = dict(rest[0]) if rest and rest[0] else None
    try:
        module = parse_file(path) if text is None else parse_text(text, path)
    except TfxError as err:
        return {"kernel": kernel_name, "outputs": [], "pass": False, "error": err.headline(), "seconds": 0.0}
    return quick_check(module, kernel_name, dict(params or {}), units=units)


def run_job(job: Job) -> Outcome:
    """The worker: parse, load the profile, analyse; never raises for bad input."""
    out = Outcome(job.generation)
    try:
        from tfx.analysis.analyze import analyze
        text = job.kernel_text
        if text is None:
            from tfx.errors import read_text_file
            text = read_text_file(job.kernel_path)
        out.source_text = text
        module = _parse(job.kernel_path, text)
        profile = _job_profile(job.profile, job.knobs)
        out.profile_source = (job.profile, job.knobs)
        params = dict(job.params)
        a = analyze(module, job.kernel_name, profile, params=params,
                    occupancy_hint=job.hint, codegen=job.codegen)
        out.analysis = a
        if job.later_hint:
            out.hint_pending, out.hint_job = True, job
        else:
            _hinted(out, module, job, profile, params)
    except TfxError as err:
        out.error = err.headline()
    except (ArithmeticError, ValueError, KeyError, TypeError) as err:  # a model bug, not bad input
        out.error = f"error: analysis failed: {type(err).__name__}: {err}"
    return out


def finish_hint(out: Outcome, job: Job | None = None) -> None:
    """The occupancy-hint rerun ``run_job`` left for later (``job.later_hint``, default the
    outcome's own job: every analysis the explorer runs while the Roofline pane is not
    shown, and the first one, run in the app before its first frame): the Roofline pane's
    "At occupancy" lines, computed when that pane is drawn. The same values as run_job's
    own; a failure here is the note, since the analysis itself is shown already."""
    if not out.hint_pending:
        return
    job = out.hint_job if job is None else job
    out.hint_pending, out.hint_job = False, None
    try:
        # the module of the same text, parsed once in this process (cached): the analysis's own
        # would serve as well now that a module keeps its verifier facts through pickle
        module = _parse(job.kernel_path, out.source_text)
        profile = _job_profile(job.profile, job.knobs)
        _hinted(out, module, job, profile, dict(job.params))
    except TfxError as err:
        out.hint_note = f"not rerun: {err.headline()}"
    except (ArithmeticError, ValueError, KeyError, TypeError) as err:  # a model bug, not bad input
        out.hint_note = f"not rerun: {type(err).__name__}: {err}"


def _hinted(out: Outcome, module, job: Job, profile, params) -> None:
    """Rerun the analysis with resources that meet the occupancy hint, when that is possible."""
    from tfx.analysis.analyze import analyze
    a = out.analysis
    occ = a.occupancy
    if occ is None:
        out.hint_note = "no occupancy model for this hardware kind"
        return
    hint = occ.hint if occ.hint is not None else occ.blocks_per_sm + 1
    out.hint = hint
    if occ.hint is not None and occ.hint_met:
        out.hint_note = f"occupancy={hint} is met as compiled"
        return
    budget = occ.hint_budget
    if budget is None or occ.hint is None:
        # the budget for the hint: the occupancy of the same resources under it (what a whole
        # analysis with occupancy_hint=hint computed, and a prediction with it, thrown away)
        from tfx.analysis.occupancy import OccupancyLimits, compute_occupancy
        budget = compute_occupancy(OccupancyLimits.from_profile(profile), occ.resources, hint).hint_budget
    if budget is None or not budget.reachable:
        out.hint_note = (budget.sentence if budget is not None
                         else f"no budget lets {fmt.counted(hint, 'CTA')} share an SM")
        return
    if "threads" in budget.blockers:
        out.hint_note = (f"{fmt.counted_verb(hint, 'CTA/SM', 'need', 'CTAs/SM')} fewer threads per CTA, which changes the kernel; "
                         "not rerun")
        return
    res = {}
    parts = []
    if "registers" in budget.blockers and budget.max_regs_per_thread is not None:
        res["regs"] = int(budget.max_regs_per_thread)
        parts.append(f"{res['regs']} registers/thread (no spill assumed)")
    if "shared memory" in budget.blockers and budget.max_smem_per_cta is not None:
        res["smem"] = int(budget.max_smem_per_cta)
        parts.append(f"{allocation(res['smem'])} shared memory/CTA")
    out.hinted = analyze(module, job.kernel_name, profile, params=params,
                         resources=res, occupancy_hint=hint, codegen=job.codegen)
    out.hint_note = ("rerun with " + " and ".join(parts)) if parts else "rerun at the hint"


# ---------------------------------------------------------------- knobs

def nudge(fact, factor: float):
    """The fact's canonical value times ``factor`` (counts stay whole numbers, at least 1)."""
    v = fact.value * factor
    if fact.unit in ("count", "cycle", "flag"):
        return max(1, int(round(v)))
    return v


def knob_text(value) -> str:
    if isinstance(value, int):
        return str(value)
    return repr(float(value))


# ---------------------------------------------------------------- simulator / explorer adapters

@dataclass(frozen=True)
class Event:
    engine: str
    start_ns: float
    end_ns: float
    label: str = ""


@dataclass(frozen=True)
class SimJob:
    """The Timeline pane's simulation of one shown analysis (``generation``: the analysis's)."""

    generation: int
    analysis: Any                    # tfx.analysis.analyze.Analysis (it pickles)
    tiles: int | None = None         # trips simulated per loop (the rest extrapolated); None: as
                                     # `tfx simulate` does, capped at CAPPED_TILES when large


@dataclass
class SimOutcome:
    generation: int
    result: Any = None               # tfx.sim.SimResult
    error: str | None = None         # the TfxError's first line


def warm_simulate() -> None:
    """Imported by the simulation worker once the first screen is up."""
    import tfx.sim  # noqa: F401


# The Timeline pane simulates what `tfx simulate` does (every trip of every loop) unless that
# is estimated above this many work items (~30,000 a second on one core: about a second and a
# half, in the simulation worker); then CAPPED_TILES trips of each loop, the rest extrapolated,
# and the pane says so. It used to cap every simulation at 16 trips: gemm 4096^3 read 217.31 us
# in the pane and 214.50 us from `tfx simulate`, two simulated times for one configuration.
FULL_SIM_EVENTS = 50_000
CAPPED_TILES = 16


def simulation_tiles(analysis) -> int | None:
    """The trips per loop the Timeline pane simulates: None (all, as `tfx simulate`) when the
    estimate is within FULL_SIM_EVENTS, else CAPPED_TILES."""
    from tfx.sim.run import estimated_events
    return None if estimated_events(analysis) <= FULL_SIM_EVENTS else CAPPED_TILES


def run_simulation(job: SimJob) -> SimOutcome:
    """The worker: ``tfx.sim.simulate`` of the analysis; never raises for bad input."""
    out = SimOutcome(job.generation)
    try:
        from tfx.sim import simulate
        tiles = job.tiles if job.tiles is not None else simulation_tiles(job.analysis)
        out.result = simulate(job.analysis, tiles=tiles)
    except TfxError as err:
        out.error = err.headline()
    except (ArithmeticError, ValueError, KeyError, TypeError, MemoryError) as err:  # a model bug
        out.error = f"error: simulation failed: {type(err).__name__}: {err}"
    return out


# ---------------------------------------------------------------- the Explore pane's sweep

EXPLORE_LIMIT = 4_000_000    # configurations one sweep of the pane may evaluate (~2 s on one core)
EXPLORE_POINTS = 20_000      # distinct (time, smem) points sent back for the scatter


def shape_params(kernel) -> set[str]:
    """Parameters that size the problem (see ``Kernel.shape_parameters``)."""
    return kernel.shape_parameters()


def sweepable(kernel) -> list[str]:
    """Parameters with values to sweep (``param BM = 128 in {...}``, ``... sweep {...}``), in
    declaration order."""
    return [p.name for p in kernel.params if p.sweep_domain is not None]


def default_sweep(kernel) -> tuple[str, ...]:
    """The tile parameters: every declared domain except the problem's shape and a parameter
    the machine sizes (NUM_SMS = units(sm): it follows the profile's knobs), as tfx explore
    leaves them unswept (tfx.explore.space.build_space)."""
    from tfx.ir.bind import profile_dependent
    leave = shape_params(kernel) | profile_dependent(kernel)
    return tuple(n for n in sweepable(kernel) if n not in leave)


@dataclass(frozen=True)
class ExploreJob:
    """One sweep of the Explore pane: plain data, so it pickles to a worker process.

    ``sweep`` names the swept parameters (each over its declared domain); ``fixed``
    holds every other parameter the sweep must not move (the problem's shape at
    its current value, and the user's own settings). Equal jobs give equal results,
    so a job doubles as the key of what the pane shows.
    """

    kernel_path: str
    kernel_text: str
    kernel_name: str | None
    profile: str
    knobs: tuple = ()                # ((path, text), ...)
    sweep: tuple = ()                # parameter names
    fixed: tuple = ()                # ((name, int), ...)
    top: int = 10
    codegen: str | None = None       # every configuration priced as it compiles them (None: the default)


@dataclass
class ExploreOutcome:
    job: ExploreJob
    error: str | None = None
    configs: int = 0
    feasible: int = 0
    infeasible: dict = field(default_factory=dict)    # reason -> count
    seconds: float = 0.0
    top: list = field(default_factory=list)           # tfx.explore entries, fastest first
    pareto: list = field(default_factory=list)        # one entry per distinct frontier point
    pareto_configs: int = 0                           # frontier configurations, ties included
    points: Any = None                                # (n, 2) float array: (time ns, smem B), feasible
    points_total: int = 0                             # distinct feasible points before thinning
    codegen: str | None = None                        # ExploreResult.codegen (None: a tiled profile)
    near_tie: Any = None                              # ExploreResult.near_tie (tfx.explore.near_tie)
    top_picks: Any = None                             # ExploreResult.top_picks (tfx.explore.top_picks)
    unmeasured: list = field(default_factory=list)    # ExploreResult.unmeasured (tfx.analysis.coverage)
    best_checked: Any = None                          # ExploreResult.best_checked
    marked: bool = False                              # ExploreResult.marked: some row sets values no campaign timed
    spilling_summary: str = ""                        # ExploreResult.spilling_summary: the line where a row spills
    onchip_label: str = "smem/CTA"                    # ExploreResult.onchip_label (tcm/PE on a tiled profile)
    onchip_key: str = "smem_per_cta"                  # ExploreResult.onchip_key: the rows' key for it
    occupancy: bool = True                            # ExploreResult.occupancy (CTAs an SM mean something)


def explore_job(analysis, kernel_path: str, kernel_text: str, kernel_name: str | None,
                profile: str, knobs: dict, overrides: dict, sweep, top: int = 10,
                codegen: str | None = None) -> ExploreJob:
    """The sweep of ``sweep`` around ``analysis``: every other parameter with a domain, and
    every parameter the user set, stays at the value the analysis used."""
    kernel = analysis.kernel
    sweep = tuple(n for n in (p.name for p in kernel.params) if n in set(sweep))
    fixed = tuple((p.name, int(num(analysis.params[p.name]))) for p in kernel.params
                  if p.name not in sweep and (p.sweep_domain is not None or p.name in overrides)
                  and p.name in analysis.params)
    return ExploreJob(kernel_path, kernel_text, kernel_name or kernel.name, profile,
                      tuple(sorted(knobs.items())), sweep, fixed, top, codegen)


def explore_point(a) -> tuple[float, float] | None:
    """(predicted ns, shared memory per CTA) of one analysis, as ``tfx.explore`` measures a
    configuration: static + dynamic smem on a GPU, else the peak of the executing unit's
    on-chip memory."""
    try:
        t = num(a.metrics["performance.predicted_ns"])
        prof = a.profile
        r = a.resources
        if prof.kind == "gpu" and r is not None:
            return t, num(r.smem_dynamic + r.smem_static)
        from tfx.explore.evaluate import onchip_levels
        onchip = set(onchip_levels(prof))
        peak = 0.0
        for lvl, pk in a.peaks.items():
            name = _level_name(prof, lvl)
            if name in onchip:
                peak = max(peak, num(pk.bytes))
        return t, peak
    except (AttributeError, KeyError, TypeError, TfxError):
        return None


def _level_name(profile, level: str) -> str:
    try:
        return profile.memory_level(level).name
    except TfxError:
        return level


def run_explore(job: ExploreJob) -> ExploreOutcome:
    """The worker: ``tfx.explore.explore`` over ``job.sweep``; never raises for bad input."""
    out = ExploreOutcome(job)
    if not job.sweep:
        out.error = "no parameter is swept: choose some in the list (space toggles)"
        return out
    try:
        import numpy as np

        from tfx.explore import explore
        from tfx.explore.space import build_space, declared_sweeps
        module = _parse(job.kernel_path, job.kernel_text)
        kernel = module.kernel(job.kernel_name)
        profile = _job_profile(job.profile, job.knobs)
        fixed = dict(job.fixed)
        # the ticked parameters over their declared sweeps, a machine-sized one (NUM_SMS) too:
        # ticked, it is swept, as tfx explore --sweep NUM_SMS=... sweeps it
        sweeps = declared_sweeps(kernel, fixed, profile, names=job.sweep)
        size = build_space(kernel, sweeps, fixed, None, profile).size
        if size > EXPLORE_LIMIT:
            out.configs = size
            out.error = (f"{fmt.counted(size, 'configuration')}: more than the {fmt.count(EXPLORE_LIMIT)} this pane sweeps; "
                         "untick a parameter (or use tfx explore)")
            return out
        r = explore(module, kernel, profile, sweeps=sweeps, top=job.top, fixed=fixed, keep_columns=True,
                    codegen=job.codegen)
    except TfxError as err:
        out.error = err.headline()
        return out
    except (ArithmeticError, ValueError, KeyError, TypeError) as err:
        out.error = f"error: explore failed: {type(err).__name__}: {err}"
        return out
    out.configs, out.feasible, out.infeasible, out.seconds = r.configs, r.feasible, r.infeasible, r.seconds
    out.top = r.top
    out.codegen, out.near_tie, out.top_picks, out.unmeasured = r.codegen, r.near_tie, r.top_picks, r.unmeasured
    out.best_checked, out.marked, out.spilling_summary = r.best_checked, r.marked, r.spilling_summary
    out.onchip_label, out.onchip_key, out.occupancy = r.onchip_label, r.onchip_key, r.occupancy
    seen = set()
    for e in r.pareto:                      # ties share a point: one row per point
        key = (e["predicted_ns"], e[r.onchip_key])
        if key not in seen:
            seen.add(key)
            out.pareto.append(e)
    out.pareto_configs = len(r.pareto)
    ok = r.columns["code"] == 0
    pts = np.unique(np.stack([r.columns["time"][ok], r.columns["smem"][ok]], axis=1), axis=0)
    out.points_total = len(pts)
    if len(pts) > EXPLORE_POINTS:           # thin evenly; the frontier is drawn from out.pareto
        pts = pts[np.linspace(0, len(pts) - 1, EXPLORE_POINTS).astype(np.int64)]
    out.points = pts
    return out


# ---------------------------------------------------------------- the roofline chart

@dataclass
class RooflineChart:
    """What the Roofline pane's log-log chart draws, all derived from the analysis's own
    roofline terms so the chart and the text agree: each level's roof has the bandwidth
    ``bytes moved at that level / that level's memory time``, the flat roof is ``flops /
    compute time``; arithmetic intensity is flops per byte at the binding level."""

    peak: float                                   # flop/s, the flat roof
    roofs: list = field(default_factory=list)     # (level, bytes/s), fastest last
    level: str = ""                               # the level the x axis counts bytes at
    kernel: tuple | None = None                   # (flop/byte, achieved flop/s at the prediction)
    scopes: list = field(default_factory=list)    # (label, flop/byte, attainable flop/s)


def roofline_chart(a) -> RooflineChart | None:
    """The chart of one analysis from its rooflines (``Analysis.scope_roofline``), or None when
    there is nothing to draw (no flops, no bytes). Each memory term's roof is the bandwidth
    it was priced at (its bytes / its time), the flat roof the flops over the compute time;
    each scope's point sits at its own roofline time."""
    roof = a.scope_roofline.get(a.root.id)
    if roof is None:
        return None
    flops, compute_ns = num(roof.flops), num(roof.compute_ns)
    if flops <= 0 or not compute_ns > 0:
        return None
    roofs = []
    for level, moved in roof.bytes.items():
        ns = num(roof.terms.get(level, 0))
        if ns > 0 and num(moved) > 0:
            roofs.append((level, num(moved) / ns * 1e9))
    if not roofs:
        return None
    roofs.sort(key=lambda r: r[1])
    level = roof.intensity_level()       # the level the Traffic pane's intensity counts, too
    peak = flops / compute_ns * 1e9
    chart = RooflineChart(peak=peak, roofs=roofs, level=level)
    moved = num(roof.bytes[level])
    predicted = num(a.metrics.get("performance.predicted_ns", 0))
    if moved > 0 and predicted > 0:
        chart.kernel = (flops / moved, flops / predicted * 1e9)
    for _depth, node in scope_rows(a)[1:]:
        sr = a.scope_roofline.get(node.id)
        if sr is None:
            continue
        f, b, t = num(sr.flops), num(sr.bytes.get(level, 0)), num(sr.ideal_ns)
        if f <= 0 or b <= 0 or t <= 0:
            continue
        chart.scopes.append((node.label, f / b, f / t * 1e9))
    return chart


# ---------------------------------------------------------------- A/B: the pinned analysis

@dataclass(frozen=True)
class Inputs:
    """What an analysis was made from, as the explorer edits it."""

    profile: str
    knobs: tuple = ()                # ((path, text), ...)
    params: tuple = ()               # ((name, int), ...)
    kernel_text: str = ""
    codegen: str | None = None       # the code generator chosen (None: the default)


@dataclass(frozen=True)
class Pin:
    """The A side of the explorer's A/B: an analysis and the inputs it was made from."""

    analysis: Any
    inputs: Inputs


def input_changes(a: Inputs, b: Inputs, values_a: dict | None = None,
                  values_b: dict | None = None) -> list[str]:
    """What was edited between two states, in words: ``profile h200_sxm -> h100_sxm``,
    ``STAGES 3 -> 4``, ``knob memory.gmem.bandwidth=x2``, ``kernel text (+2 -1 lines)``.
    ``values_a``/``values_b``: each side's parameter values, for a parameter one side left
    at the kernel's default."""
    out = []
    if a.profile != b.profile:
        out.append(f"profile {a.profile} -> {b.profile}")
    if (a.codegen or DEFAULT_CODEGEN) != (b.codegen or DEFAULT_CODEGEN):
        out.append(f"codegen {a.codegen or DEFAULT_CODEGEN} -> {b.codegen or DEFAULT_CODEGEN}")
    for kind, old, new in (("knob", dict(a.knobs), dict(b.knobs)), ("param", dict(a.params), dict(b.params))):
        for k in sorted(set(old) | set(new)):
            if old.get(k) == new.get(k):
                continue
            if kind == "knob":
                out.append(f"knob {k}={new[k]}" if k in new else f"knob {k} reset")
            else:
                va = old.get(k, (values_a or {}).get(k, "default"))
                vb = new.get(k, (values_b or {}).get(k, "default"))
                out.append(f"{k} {va} -> {vb}")
    if a.kernel_text != b.kernel_text:
        import difflib
        plus = minus = 0
        for line in difflib.ndiff(a.kernel_text.splitlines(), b.kernel_text.splitlines()):
            plus += line.startswith("+ ")
            minus += line.startswith("- ")
        out.append(f"kernel text (+{plus} -{minus} lines)")
    return out


def pin_line(pin: Pin, a, inputs: Inputs) -> str:
    """The line under the panes while an analysis is pinned: what was edited since the pin,
    then what moved (the headline metrics)."""
    edits = _edits(pin, a, inputs)
    if not edits:
        return "A/B vs pin: no edit since the pin (b: metric by metric, P unpins)"
    moved = diff.summary(pin.analysis, a, limit=3)
    shown = ", ".join(edits[:3]) + (f" +{len(edits) - 3} more" if len(edits) > 3 else "")
    return f"A/B vs pin [{shown}]: {moved}"


@dataclass
class PinReport:
    edits: list                      # input_changes
    rows: list                       # (metric, pinned text, now text, change text)
    unchanged: int                   # metrics equal on both sides


def pin_report(pin: Pin, a, inputs: Inputs) -> PinReport:
    """Metric by metric, the pinned analysis (A) against the shown one (B)."""
    rows = []
    for c in diff.changes(pin.analysis, a):        # the one diff engine (tfx diff's)
        name, old, new, ratio = c.metric, c.old, c.new, c.ratio
        change = ("new" if old is None else "gone" if new is None else
                  "" if ratio is None else "from 0" if math.isinf(ratio) else
                  format_percent_change(ratio - 1))
        rows.append((name, "absent" if old is None else fmt.metric(name, old),
                     "absent" if new is None else fmt.metric(name, new), change))
    total = len(set(pin.analysis.metrics) | set(a.metrics))
    return PinReport(_edits(pin, a, inputs), rows, total - len(rows))


def _edits(pin: Pin, a, inputs: Inputs) -> list[str]:
    def values(x) -> dict:
        return {k: int(num(v)) for k, v in x.params.items() if not math.isnan(num(v))}
    return input_changes(pin.inputs, inputs, values(pin.analysis), values(a))


# ---------------------------------------------------------------- measured beside predicted

@dataclass
class MeasuredView:
    """The measurements (``tfx open --measured FILE``, read by ``tfx.analysis.measured``)
    that concern the shown analysis: its kernel file on its profile."""

    row: Any = None                  # the row at exactly these parameters, or None
    others: int = 0                  # rows of this kernel and profile at other parameters
    measured_ns: float | None = None
    predicted_ns: float | None = None
    cleared_ns: float = 0.0          # the dirty-L2 write-back added to the shown prediction: the rows'
                                     # timing, after an L2 clear (measured_view)
    roofline_ns: float = 0.0         # the shown analysis's roofline: a measurement under it is a wrong
                                     # unit, profile or rate (tfx validate warns the same)

    @property
    def faster_than_roofline(self) -> bool:
        from tfx.analysis.measured import faster_than_roofline
        return faster_than_roofline(self.measured_ns or 0, self.roofline_ns)

    @property
    def error(self) -> float | None:
        """predicted / measured - 1 (+: the prediction is slower than the measurement)."""
        if self.measured_ns and self.predicted_ns is not None:
            return self.predicted_ns / self.measured_ns - 1
        return None


def measured_view(rows: list, kernel_path: str, profile: str, a) -> MeasuredView:
    """The row measured at the shown analysis's kernel, profile and parameters (a row's
    empty parameter cells mean the kernel's default, as ``tfx validate`` reads them)."""
    target = Path(kernel_path).resolve()
    names = {profile, Path(profile).stem, a.profile.name}
    params = {k: int(num(v)) for k, v in a.params.items() if not math.isnan(num(v))}
    # the measurements were timed as do_bench times them, after an L2 clear (tfx.analysis.measured.
    # Predictor's default, tfx validate's): the shown analysis's prediction plus what that timing adds
    # where it does not price it already (launch_handoff.L2_CLEAR_CONDITION)
    cleared = 0.0 if getattr(a, "l2_clear", False) else num(a.metrics.get("performance.l2_clear_write_back_ns", 0))
    view = MeasuredView(predicted_ns=num(a.metrics["performance.predicted_ns"]) + cleared, cleared_ns=cleared,
                        roofline_ns=num(a.metrics["roofline.ideal_ns"]))
    for r in rows:
        if Path(r.kernel_path).resolve() != target or (r.profile and r.profile not in names
                                                        and Path(r.profile).stem not in names):
            continue
        if all(params.get(k) == v for k, v in r.params.items()) and view.row is None:
            view.row, view.measured_ns = r, r.measured_ms * 1e6
        else:
            view.others += 1
    return view


def measured_line(view: MeasuredView) -> str:
    if view.row is not None:
        timed = (f" {fmt.timed_as(True)[2:]} (+ {fmt.ns(view.cleared_ns)} l2 write-back)"
                 if view.cleared_ns else "")
        under = (f"; faster than the roofline {fmt.ns(view.roofline_ns)}: check the row's unit and profile"
                 if view.faster_than_roofline else "")
        return (f"measured {fmt.ns(view.measured_ns)}, predicted {fmt.ns(view.predicted_ns)}{timed} "
                f"({format_percent_change(view.error)}; {view.row.where}){under}")
    if view.others:
        return f"not measured at these parameters ({view.others} rows at others)"
    return "no measurement of this kernel on this profile"
