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
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from tfx.errors import TfxError
from tfx.hw.units import (format_bytes, format_count, format_quantity,
                          format_time_ns)

DOMAINS_ORDER = ("logical", "total", "cta", "warp", "thread", "cube", "pe")


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


@dataclass
class Outcome:
    generation: int
    analysis: Any = None             # tfx.analysis.analyze.Analysis
    hinted: Any = None               # Analysis with resources meeting the hint, or None
    hint: int | None = None
    hint_note: str = ""              # what the hinted analysis assumes, or why there is none
    error: str | None = None         # the TfxError's first line
    source_text: str = ""            # the kernel text analysed


_MODULE_CACHE: dict[tuple[str, str], Any] = {}


def _parse(path: str, text: str):
    from tfx.lang import parse_text
    key = (path, text)
    mod = _MODULE_CACHE.get(key)
    if mod is None:
        mod = parse_text(text, path)
        if len(_MODULE_CACHE) > 16:
            _MODULE_CACHE.clear()
        _MODULE_CACHE[key] = mod
    return mod


def worker_init() -> None:
    """Run in each worker process: its stdout and stderr go to /dev/null, since they are
    the terminal the app draws on (a stray warning would scribble over the screen); what
    a forked worker inherited is frozen out of the garbage collector's passes."""
    import gc
    gc.freeze()
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
    except OSError:
        pass


def noop() -> None:
    """Submitted once to start a worker process early (a fork-context pool forks at the
    first submit)."""


def warm_explore() -> None:
    """Imported by the sweep worker once the first screen is up, so the first sweep is fast."""
    import tfx.analysis.analyze  # noqa: F401
    import tfx.explore  # noqa: F401
    import tfx.lang  # noqa: F401  (the worker parses every job)


def run_check(job: tuple) -> dict:
    """The run-check action's job (c): ``(path, source text or None, kernel name or None,
    params)`` -> ``tfx.execute.quick.quick_check``'s outcome (plain data; params a dict or
    (name, value) pairs). The text, when given, is what the explorer shows."""
    from tfx.execute.quick import quick_check
    from tfx.lang import parse_file, parse_text
    path, text, kernel_name, params = job
    try:
        module = parse_file(path) if text is None else parse_text(text, path)
    except TfxError as err:
        return {"kernel": kernel_name, "outputs": [], "pass": False, "error": err.headline(), "seconds": 0.0}
    return quick_check(module, kernel_name, dict(params or {}))


def run_job(job: Job) -> Outcome:
    """The worker: parse, load the profile, analyse; never raises for bad input."""
    out = Outcome(job.generation)
    try:
        from tfx.analysis.analyze import analyze
        from tfx.hw import load_profile
        text = job.kernel_text
        if text is None:
            from tfx.errors import read_text_file
            text = read_text_file(job.kernel_path)
        out.source_text = text
        module = _parse(job.kernel_path, text)
        profile = load_profile(job.profile)
        knobs = dict(job.knobs)
        params = dict(job.params)
        a = analyze(module, job.kernel_name, profile, params=params, knobs=knobs or None,
                    occupancy_hint=job.hint)
        out.analysis = a
        _hinted(out, module, job, profile, knobs, params)
    except TfxError as err:
        out.error = err.headline()
    except (ArithmeticError, ValueError, KeyError, TypeError) as err:  # a model bug, not bad input
        out.error = f"error: analysis failed: {type(err).__name__}: {err}"
    return out


def _hinted(out: Outcome, module, job: Job, profile, knobs, params) -> None:
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
        a2 = analyze(module, job.kernel_name, profile, params=params, knobs=knobs or None,
                     occupancy_hint=hint)
        budget = a2.occupancy.hint_budget
    if budget is None or not budget.reachable:
        out.hint_note = (budget.sentence if budget is not None
                         else f"no budget lets {hint} CTAs share an SM")
        return
    if "threads" in budget.blockers:
        out.hint_note = (f"{hint} CTAs/SM need fewer threads per CTA, which changes the kernel; "
                         "not rerun")
        return
    res = {}
    parts = []
    if "registers" in budget.blockers and budget.max_regs_per_thread is not None:
        res["regs"] = int(budget.max_regs_per_thread)
        parts.append(f"{res['regs']} registers/thread (no spill assumed)")
    if "shared memory" in budget.blockers and budget.max_smem_per_cta is not None:
        res["smem"] = int(budget.max_smem_per_cta)
        parts.append(f"{format_bytes(res['smem'])} shared memory/CTA")
    out.hinted = analyze(module, job.kernel_name, profile, params=params, knobs=knobs or None,
                         resources=res, occupancy_hint=hint)
    out.hint_note = ("rerun with " + " and ".join(parts)) if parts else "rerun at the hint"


# ---------------------------------------------------------------- formatting

def num(v: Any) -> float:
    if isinstance(v, Fraction):
        return float(v)
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def fmt_ns(v: Any) -> str:
    return format_time_ns(num(v))


def fmt_bytes(v: Any) -> str:
    """Decimal prefixes, two decimals, as the traffic table shows them (KB/MB/GB)."""
    return format_bytes(num(v), binary=False)


def fmt_flops(v: Any) -> str:
    x = num(v)
    for unit, scale in (("Pflop", 1e15), ("Tflop", 1e12), ("Gflop", 1e9), ("Mflop", 1e6),
                        ("Kflop", 1e3)):
        if abs(x) >= scale:
            return f"{x / scale:.2f} {unit}"
    return f"{x:.0f} flop" if float(x).is_integer() else f"{x:.2f} flop"


def fmt_metric(name: str, v: Any) -> str:
    if isinstance(v, str) or v is None or isinstance(v, bool):
        return str(v)
    if name.endswith("_ns") or "_ns." in name or name.endswith(".ns"):
        return fmt_ns(v)
    if name.startswith("memory."):
        return fmt_bytes(v)
    if name.startswith("compute-cost."):
        return fmt_flops(v)
    if name.endswith("ratio"):
        return f"{num(v) * 100:.1f}%"
    return format_count(num(v))


def fmt_fact(fact) -> str:
    if not fact.available:
        return "unavailable"
    return format_quantity(fact.value, fact.unit)


def pct_change(old: float, new: float) -> str:
    if old == 0:
        return ""
    return f" ({(new - old) / old * 100:+.1f}%)"


# ---------------------------------------------------------------- derived views

def scope_rows(a) -> list:
    """(depth, node) for every scope of the tree, depth-first."""
    out = []

    def walk(n, d):
        out.append((d, n))
        for c in n.children:
            walk(c, d + 1)

    walk(a.root, 0)
    return out


def domains_of(a) -> list[str]:
    return ["logical", "total", *[d for d in DOMAINS_ORDER[2:] if d in a.domains],
            *[d for d in a.domains if d not in DOMAINS_ORDER]]


def _tensors_touched(node) -> set[str]:
    from tfx.ir.nodes import Window
    names = set()
    for n in node.walk():
        op = n.op
        if op is None or not hasattr(op, "operands"):
            continue
        for o in op.operands:
            if isinstance(o, Window):
                names.add(o.tensor)
        if getattr(op, "target", None) is not None:
            names.add(op.target.tensor)
    return names


def _scope_time_ns(a, node) -> float:
    """A roofline time of one scope: max of its flops at peak and its bytes at each level's bandwidth."""
    p = a.profile
    t = 0.0
    for (kind, x, y), v in node.total.items():
        try:
            if kind == "flops":
                from tfx.analysis.performance import _rate_dtype
                dt = x if y == "tensor" else _rate_dtype(x)
                t = max(t, num(v) / (p.peak_flops_per_s(y, dt) / 1e9))
            elif kind == "traffic":
                lvl = p.memory_level(x)
                bw = p.memory_bandwidth(lvl.name, aggregate=True) / 1e9
                moved = num(node.total.get(("traffic", x, "read"), 0)) + num(
                    node.total.get(("traffic", x, "write"), 0))
                t = max(t, moved / bw)
        except TfxError:
            continue
    return t


@dataclass
class TrafficTable:
    columns: list[str]
    rows: list[list[str]]
    keys: list[str] = field(default_factory=list)   # scope ids


def traffic_table(a, domain: str) -> TrafficTable:
    """Rows: scopes; columns: flops per dtype, read/write per level, footprint, share of time."""
    dtypes = sorted({(x, y == "special") for (k, x, y) in a.root.total if k == "flops"})
    levels = []
    for (k, x, y) in a.root.total:
        if k == "traffic" and x not in levels:
            levels.append(x)
    order = {n: i for i, n in enumerate(a.profile.memory_levels())}
    levels.sort(key=lambda l: order.get(a.profile.memory_level(l).name if _has_level(a, l) else l, 99))
    cols = ["scope"]
    cols += [f"{d}{' sfu' if s else ''} flop" for d, s in dtypes]
    for l in levels:
        cols += [f"{l} rd", f"{l} wr"]
    cols += ["footprint", "time%"]
    fp = a.footprint
    root_t = _scope_time_ns(a, a.root) or 1.0
    rows, keys = [], []
    for depth, node in scope_rows(a):
        rec = a.scope_records(node, domain)
        r = ["  " * depth + node.label]
        for d, s in dtypes:
            key = f"compute-cost.special.{d}" if s else f"compute-cost.flops.{d}"
            r.append(fmt_flops(rec[key]) if key in rec else "")
        for l in levels:
            for rw in ("read", "write"):
                key = f"memory.traffic.{l}.{rw}"
                r.append(fmt_bytes(rec[key]) if key in rec else "")
        touched = _tensors_touched(node)
        r.append(fmt_bytes(sum(num(fp[t]) for t in touched if t in fp)) if touched else "")
        r.append(f"{_scope_time_ns(a, node) / root_t * 100:.1f}")
        rows.append(r)
        keys.append(node.id)
    return TrafficTable(cols, rows, keys)


def _has_level(a, name: str) -> bool:
    try:
        a.profile.memory_level(name)
        return True
    except TfxError:
        return False


def headline(a) -> dict[str, str]:
    m = a.metrics
    return {
        "predicted": fmt_ns(m["performance.predicted_ns"]),
        "bound": str(m.get("roofline.bound_by", "?")),
        "occupancy": (f"{m['occupancy.blocks_per_sm']} CTA/SM ({num(m['occupancy.occupancy_pct']):.1f}%)"
                      if "occupancy.occupancy_pct" in m else "n/a"),
    }


# metrics a diff reports, in order, with a name people read
DIFF_METRICS = (
    ("performance.predicted_ns", "predicted"),
    ("roofline.compute_ns", "compute"),
    ("roofline.memory_ns", "memory"),
    ("memory.traffic.gmem.total.read", "gmem read"),
    ("memory.peak.smem", "smem peak"),
    ("occupancy.blocks_per_sm", "CTAs/SM"),
    ("performance.waves", "waves"),
    ("roofline.bound_by", "bound"),
    ("occupancy.limiter", "limiter"),
)


def diff_summary(old, new, limit: int = 4) -> str:
    """What moved between two analyses: ``predicted 1.23 ms -> 0.98 ms (-20.3%)``; '' if nothing."""
    if old is None or new is None:
        return ""
    parts, hidden = [], False
    for key, name in DIFF_METRICS:
        if key not in old.metrics or key not in new.metrics:
            continue
        a, b = old.metrics[key], new.metrics[key]
        if a == b:
            continue
        if isinstance(a, (str, bool)) or isinstance(b, (str, bool)) or a is None or b is None:
            parts.append(f"{name} {a} -> {b}")
            continue
        fa, fb = fmt_metric(key, a), fmt_metric(key, b)
        if fa == fb:             # moved below the shown precision
            hidden = True
            continue
        parts.append(f"{name} {fa} -> {fb}{pct_change(num(a), num(b))}")
    if not parts:
        return "nothing moved at the shown precision" if hidden else "nothing moved"
    return "; ".join(parts[:limit])


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
    tiles: int = 16                  # trips simulated per loop; the rest extrapolated


@dataclass
class SimOutcome:
    generation: int
    result: Any = None               # tfx.sim.SimResult
    error: str | None = None         # the TfxError's first line


def warm_simulate() -> None:
    """Imported by the simulation worker once the first screen is up."""
    import tfx.sim  # noqa: F401


def run_simulation(job: SimJob) -> SimOutcome:
    """The worker: ``tfx.sim.simulate`` of the analysis; never raises for bad input."""
    out = SimOutcome(job.generation)
    try:
        from tfx.sim import simulate
        out.result = simulate(job.analysis, tiles=job.tiles)
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
    """Parameters with a declared domain (``param BM = 128 in {...}``), in declaration order."""
    return [p.name for p in kernel.params if p.domain is not None]


def default_sweep(kernel) -> tuple[str, ...]:
    """The tile parameters: every declared domain except the problem's shape."""
    shapes = shape_params(kernel)
    return tuple(n for n in sweepable(kernel) if n not in shapes)


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


def explore_job(analysis, kernel_path: str, kernel_text: str, kernel_name: str | None,
                profile: str, knobs: dict, overrides: dict, sweep, top: int = 10) -> ExploreJob:
    """The sweep of ``sweep`` around ``analysis``: every other parameter with a domain, and
    every parameter the user set, stays at the value the analysis used."""
    kernel = analysis.kernel
    sweep = tuple(n for n in (p.name for p in kernel.params) if n in set(sweep))
    fixed = tuple((p.name, int(num(analysis.params[p.name]))) for p in kernel.params
                  if p.name not in sweep and (p.domain is not None or p.name in overrides)
                  and p.name in analysis.params)
    return ExploreJob(kernel_path, kernel_text, kernel_name or kernel.name, profile,
                      tuple(sorted(knobs.items())), sweep, fixed, top)


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
        meshes = prof.mesh_levels()
        unit = meshes.get("cta") or (prof.hierarchy_levels() or ["device"])[-1]
        onchip = {n for n, l in prof.memory_levels().items() if l.scope == unit and l.capacity}
        peak = 0.0
        for lvl, pk in a.peaks.items():
            name = prof.memory_level(lvl).name if _has_level(a, lvl) else lvl
            if name in onchip:
                peak = max(peak, num(pk.bytes))
        return t, peak
    except (AttributeError, KeyError, TypeError, TfxError):
        return None


def run_explore(job: ExploreJob) -> ExploreOutcome:
    """The worker: ``tfx.explore.explore`` over ``job.sweep``; never raises for bad input."""
    out = ExploreOutcome(job)
    if not job.sweep:
        out.error = "no parameter is swept: choose some in the list (space toggles)"
        return out
    try:
        import numpy as np

        from tfx.explore import explore
        from tfx.explore.space import build_space
        from tfx.hw import load_profile
        module = _parse(job.kernel_path, job.kernel_text)
        kernel = module.kernel(job.kernel_name)
        profile = load_profile(job.profile, knobs=dict(job.knobs) or None)
        fixed = dict(job.fixed)
        size = build_space(kernel, None, fixed, None, profile).size
        if size > EXPLORE_LIMIT:
            out.configs = size
            out.error = (f"{size:,} configurations: more than the {EXPLORE_LIMIT:,} this pane sweeps; "
                         "untick a parameter (or use tfx explore)")
            return out
        r = explore(module, kernel, profile, top=job.top, fixed=fixed, keep_columns=True)
    except TfxError as err:
        out.error = err.headline()
        return out
    except (ArithmeticError, ValueError, KeyError, TypeError) as err:
        out.error = f"error: explore failed: {type(err).__name__}: {err}"
        return out
    out.configs, out.feasible, out.infeasible, out.seconds = r.configs, r.feasible, r.infeasible, r.seconds
    out.top = r.top
    seen = set()
    for e in r.pareto:                      # ties share a point: one row per point
        key = (e["predicted_ns"], e["smem_per_cta"])
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


def _moved(total: dict, level: str) -> float:
    return num(total.get(("traffic", level, "read"), 0)) + num(total.get(("traffic", level, "write"), 0))


def _flops(total: dict) -> float:
    return sum(num(v) for (k, _x, _y), v in total.items() if k == "flops")


def roofline_chart(a) -> RooflineChart | None:
    """The chart of one analysis, or None when there is nothing to draw (no flops, no bytes)."""
    m = a.metrics
    flops = _flops(a.root.total)
    compute_ns = num(m.get("roofline.compute_ns", 0))
    if flops <= 0 or not compute_ns > 0:
        return None
    roofs = []
    for key in sorted(k for k in m if k.startswith("roofline.memory_ns.")):
        level = key.rsplit(".", 1)[-1]
        ns, moved = num(m[key]), _moved(a.root.total, level)
        if ns > 0 and moved > 0:
            roofs.append((level, moved / ns * 1e9))
    if not roofs:
        return None
    roofs.sort(key=lambda r: r[1])
    bound = str(m.get("roofline.memory_level", roofs[0][0]))
    level = bound if any(r[0] == bound for r in roofs) else roofs[0][0]
    peak = flops / compute_ns * 1e9
    chart = RooflineChart(peak=peak, roofs=roofs, level=level)
    moved = _moved(a.root.total, level)
    predicted = num(m.get("performance.predicted_ns", 0))
    if moved > 0 and predicted > 0:
        chart.kernel = (flops / moved, flops / predicted * 1e9)
    bandwidth = dict(roofs)
    for _depth, node in scope_rows(a)[1:]:
        f, b = _flops(node.total), _moved(node.total, level)
        if f <= 0 or b <= 0:
            continue
        t = max([f / peak] + [_moved(node.total, lvl) / bw for lvl, bw in bandwidth.items()])
        chart.scopes.append((node.label, f / b, f / t))
    return chart


# ---------------------------------------------------------------- A/B: the pinned analysis

@dataclass(frozen=True)
class Inputs:
    """What an analysis was made from, as the explorer edits it."""

    profile: str
    knobs: tuple = ()                # ((path, text), ...)
    params: tuple = ()               # ((name, int), ...)
    kernel_text: str = ""


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


def metric_changes(old, new) -> list[tuple[str, Any, Any, float | None]]:
    """Every metric that differs, largest relative change first (new, gone or non-numeric
    first of all): (metric, old, new, new/old or None). The rule of ``tfx diff``."""
    ma = {k: v for k, v in old.metrics.items()}
    mb = {k: v for k, v in new.metrics.items()}
    rows = []
    for name in sorted(set(ma) | set(mb)):
        a, b = ma.get(name), mb.get(name)
        if a == b:
            continue
        if isinstance(a, (int, float, Fraction)) and isinstance(b, (int, float, Fraction)) \
                and not isinstance(a, bool) and not isinstance(b, bool):
            fa, fb = num(a), num(b)
            ratio = fb / fa if fa else math.inf
            key = abs(math.log(ratio)) if 0 < ratio < math.inf else math.inf
        else:
            ratio, key = None, math.inf
        rows.append((key, name, a, b, ratio))
    rows.sort(key=lambda r: (-r[0], r[1]))
    return [(name, a, b, ratio) for _k, name, a, b, ratio in rows]


def pin_line(pin: Pin, a, inputs: Inputs) -> str:
    """The line under the panes while an analysis is pinned: what was edited since the pin,
    then what moved (the headline metrics)."""
    edits = _edits(pin, a, inputs)
    if not edits:
        return "A/B vs pin: no edit since the pin (b: metric by metric, P unpins)"
    moved = diff_summary(pin.analysis, a, limit=3)
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
    for name, old, new, ratio in metric_changes(pin.analysis, a):
        change = ("new" if old is None else "gone" if new is None else
                  "" if ratio is None else "from 0" if math.isinf(ratio) else
                  f"{(ratio - 1) * 100:+.1f}%")
        rows.append((name, "absent" if old is None else fmt_metric(name, old),
                     "absent" if new is None else fmt_metric(name, new), change))
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
    view = MeasuredView(predicted_ns=num(a.metrics["performance.predicted_ns"]))
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
        return (f"measured {fmt_ns(view.measured_ns)}, predicted {fmt_ns(view.predicted_ns)} "
                f"({view.error * 100:+.1f}%; {view.row.where})")
    if view.others:
        return f"not measured at these parameters ({view.others} rows at others)"
    return "no measurement of this kernel on this profile"
