"""The one diff: two results compared metric by metric.

``changes`` is the engine: every metric whose value differs, largest relative change
first (metrics that appear or disappear, or change kind, first of all). ``tfx diff``
prints all of them (``line``); the explorer's "what moved" line (``summary``) shows the
headline metrics among them, formatted by the same policy.

Either side is an ``Analysis`` or its JSON (``tfx analyze --json``): both carry the
same flat ``metrics`` mapping, compared as plain numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from tfx.hw.units import format_scale
from tfx.present import formatting as fmt


@dataclass(frozen=True)
class Change:
    metric: str
    old: Any              # None: the metric is new on side B
    new: Any              # None: the metric is gone on side B
    ratio: float | None   # new / old for two numbers (inf when old is 0); None otherwise
    change: float         # |log ratio|: the sort key (inf for a new, gone or non-numeric change)

    def to_json(self) -> dict:
        r = None if self.ratio is None or math.isinf(self.ratio) else self.ratio
        return {"metric": self.metric, "old": self.old, "new": self.new, "ratio": r}


def metrics_of(result) -> dict:
    """The flat metrics of an ``Analysis`` (as plain numbers) or of its JSON."""
    if isinstance(result, dict):
        return result.get("metrics", {})
    from tfx.analysis.numbers import to_plain
    return {k: to_plain(v) for k, v in result.metrics.items()}


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def changes(a, b) -> list[Change]:
    """Every metric that differs between ``a`` and ``b``, largest relative change first."""
    ma, mb = metrics_of(a), metrics_of(b)
    out = []
    for name in sorted(set(ma) | set(mb)):
        old, new = ma.get(name), mb.get(name)
        if old == new:
            continue
        if _is_number(old) and _is_number(new):
            r = (new / old) if old else math.inf
            change = abs(math.log(r)) if 0 < r < math.inf else math.inf
        else:
            r, change = None, math.inf
        out.append(Change(name, old, new, r, change))
    out.sort(key=lambda c: (-c.change, c.metric))
    return out


def _side(r: dict) -> str:
    return (f"{r.get('file')} {r.get('kernel')} on {r.get('profile')}{fmt.with_knobs(r.get('knobs'))}"
            f"{fmt.compiled_as(r.get('codegen'))}")


def _parameters(r: dict) -> str:
    """As the analysis' parameters line: the kernel's names, then the machine's counts it named
    and whose they are (``; a100_sxm's units(sm)=108``)."""
    return (", ".join(f"{k}={v}" for k, v in (r.get("parameters") or {}).items())
            + fmt.machine_counts(r.get("profile"), r.get("units")))


def header(a: dict, b: dict) -> list[str]:
    """What each side analysed (two results' JSON): file, kernel, profile and knobs, one line a
    side (both on one line took 116 columns for two bundled kernels), then the parameters, once
    when both sides share them, else one line a side."""
    out = [f"A: {_side(a)}", f"B: {_side(b)}"]
    pa, pb = _parameters(a), _parameters(b)
    if pa == pb:
        out.append(f"  parameters: {pa}" if pa else "  parameters: none")
    else:
        out += [f"  parameters A: {pa or 'none'}", f"  parameters B: {pb or 'none'}"]
    return out


def line(c: Change) -> str:
    """``performance.predicted_ns 216.26 us -> 198.28 us (x0.917)``."""
    tail = ""
    if c.ratio is not None:
        tail = " (new)" if math.isinf(c.ratio) else f" ({format_scale(c.ratio, 3)})"
    old = "absent" if c.old is None else fmt.metric(c.metric, c.old)
    new = "absent" if c.new is None else fmt.metric(c.metric, c.new)
    return f"{c.metric} {old} -> {new}{tail}"


# The headline metrics of the explorer's "what moved" line, in order, with a short name.
HEADLINE = (
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


def summary(old, new, limit: int = 4) -> str:
    """What moved between two results among the headline metrics:
    ``predicted 1.23 ms -> 984.00 us (-20.0%)``; '' when a side is missing."""
    if old is None or new is None:
        return ""
    moved = {c.metric: c for c in changes(old, new)}
    parts, hidden = [], False
    for key, name in HEADLINE:
        c = moved.get(key)
        if c is None or c.old is None or c.new is None:
            continue
        if not (_is_number(c.old) and _is_number(c.new)):
            parts.append(f"{name} {c.old} -> {c.new}")
            continue
        fa, fb = fmt.metric(key, c.old), fmt.metric(key, c.new)
        if fa == fb:             # moved below the shown precision
            hidden = True
            continue
        parts.append(f"{name} {fa} -> {fb}{fmt.pct_change(c.old, c.new)}")
    if not parts:
        return "nothing moved at the shown precision" if hidden else "nothing moved"
    return "; ".join(parts[:limit])
