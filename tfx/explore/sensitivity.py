"""Sensitivity: every numeric knob halved and doubled around one configuration.

For each available numeric fact of the profile (``Profile.numeric_knob_paths``),
except those where a factor makes no sense (``SKIPPED``: threads per warp, warps
per SM, allocation granularities, tensor instruction shapes, efficiencies,
calibration measurements and node-level system facts), the predicted time of the
baseline configuration is recomputed with the knob at ``/2`` and ``x2``. The
ranking is by the relative change when doubled, most negative first: the top
entry is the knob that, doubled, helps most. A knob the profile refuses to scale
(its schema constraint) is listed under ``skipped`` with the reason.
"""

from __future__ import annotations

import re


from tfx.errors import TfxError
from tfx.explore.evaluate import Context, build_checks, evaluate_columns
from tfx.explore.space import Chunk, Space
from tfx.ir.bind import bind, profile_dependent

SKIPPED = (
    r"^occupancy\.(threads_per_warp|reg_alloc_unit|warp_alloc_granularity|smem_alloc_unit"
    r"|reserved_smem_per_block)$",
    r"^compute\.[a-z]+\.instruction_[mnk]$",
    r"\.efficiency$",
    r"^calibration\.",
    r"_measured$",
    r"^system\.",
)


def _structural_levels(profile) -> set[str]:
    """Hierarchy levels inside the unit that runs a CTA (warps per SM, threads per warp)."""
    meshes = profile.mesh_levels()
    unit = meshes.get("cta")
    if unit is None:
        return set()
    out = set()
    for level in profile.hierarchy_levels():
        cur = level
        while cur not in ("device", None):
            parent = profile.get(f"hierarchy.{cur}.parent")
            if parent == unit:
                out.add(level)
                break
            cur = parent
    return out


def knob_paths(profile) -> list[str]:
    inner = _structural_levels(profile)
    out = []
    for path in profile.numeric_knob_paths():
        if any(re.search(p, path) for p in SKIPPED):
            continue
        parts = path.split(".")
        if parts[0] == "hierarchy" and parts[1] in inner:
            continue
        out.append(path)
    return out


def sensitivity(module, kernel, profile, params: dict, base_knobs: dict | None = None,
                factors: tuple[str, str] = ("/2", "x2"), codegen: str | None = None) -> dict:
    """Relative change of the predicted time per knob, halved and doubled, ranked; each priced
    as ``codegen`` compiles the kernel (tfx.analysis.codegen; None: the default)."""
    env = bind(module, kernel, params, profile=profile)
    # a parameter the machine sizes (NUM_SMS = units(sm)) follows each knob's profile, as the
    # kernel would be launched on that machine; a given value stays
    machine = profile_dependent(kernel, params)
    fixed = {p.name: int(env[p.name]) for p in kernel.params if p.name not in machine}
    paths = knob_paths(profile)
    profiles = [profile]
    labels: list[tuple[str, str]] = [("", "")]
    skipped: dict[str, str] = {}
    for path in paths:
        trial = []
        try:
            for f in factors:
                trial.append(profile.with_knobs({path: f}))
        except TfxError as err:
            skipped[path] = err.message
            continue
        for f, prof in zip(factors, trial):
            profiles.append(prof)
            labels.append((path, f))
    space = Space([], [])
    ctx = Context(module=module, kernel_name=kernel.name, space=space, fixed=fixed, profiles=profiles,
                  costs=[1.0] * len(profiles), objectives=("time",), top=1,
                  checks=build_checks(module, kernel, profile), codegen=codegen)
    times, reasons = [], []
    for i in range(len(profiles)):
        cols, codes = evaluate_columns(ctx, Chunk(i, (), 0, 0, 1, i, 1))
        times.append(float(cols["time"][0]))
        code = int(codes[0])
        reasons.append(ctx.checks[code - 1].reason if code else None)
    base = times[0]
    by_path: dict[str, dict] = {}
    for (path, f), t, why in zip(labels[1:], times[1:], reasons[1:]):
        # the value with its canonical unit, as `tfx hw show` states it (the table wrote 1.98e+09
        # for clock.core and 6.29146e+07 for memory.l2.capacity; the JSON gave no unit)
        e = by_path.setdefault(path, {"knob": path, "value": profile.value(path),
                                      "unit": profile.fact(path).unit})
        key = "halved" if f == factors[0] else "doubled"
        e[key] = {"predicted_ns": _plain(t), "change": (t - base) / base if base else 0.0,
                  **({"infeasible": why} if why else {})}
    ranking = sorted(by_path.values(), key=lambda e: (e["doubled"]["change"], e["halved"]["change"] * -1, e["knob"]))
    return {
        "baseline": {"params": {k: v for k, v in params.items()}, "knobs": dict(base_knobs or {}),
                     "predicted_ns": _plain(base),
                     **({"infeasible": reasons[0]} if reasons[0] else {})},
        "ranking": ranking,
        "skipped": skipped,
    }


def _plain(x: float):
    x = float(x)
    return int(x) if x.is_integer() and abs(x) < 2**53 else x
