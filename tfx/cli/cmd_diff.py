"""``tfx diff``: two analyses compared metric by metric, largest changes first.

Each side is a saved ``tfx analyze --json`` report or a kernel file analyzed with
that side's options: ``tfx diff kernels/gemm.tile kernels/gemm.tile --hw h100_sxm --hw-b h200_sxm``,
``tfx diff gemm.tile gemm.tile --set-b BM=256``, ``tfx diff old.json new.json``.
"""

from __future__ import annotations

import json
import math

from tfx.cli.common import emit_json, parse_assignments, parse_int_assignments, read_text
from tfx.errors import TfxError


def register(sub) -> None:
    p = sub.add_parser("diff", help="compare two analyses metric by metric",
                       description="Compare two analyses: two profiles, parameter sets, kernel files or saved JSON reports.")
    p.add_argument("a", help="a .tile file or a saved `tfx analyze --json` report")
    p.add_argument("b", help="a .tile file or a saved report")
    p.add_argument("--kernel")
    p.add_argument("--hw", default="h200_sxm", help="profile of side A (and B unless --hw-b)")
    p.add_argument("--hw-b", help="profile of side B")
    p.add_argument("--set", action="append", metavar="P=V", help="parameter of both sides")
    p.add_argument("--set-b", action="append", metavar="P=V", help="parameter of side B only")
    p.add_argument("--knob", action="append", metavar="K=V", help="knob of both sides")
    p.add_argument("--knob-b", action="append", metavar="K=V", help="knob of side B only")
    p.add_argument("--all", action="store_true", help="also list unchanged metrics")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def _report(path: str, hw: str, sets: dict, knobs: dict, kernel) -> dict:
    if path.endswith(".json"):
        try:
            data = json.loads(read_text(path))
        except json.JSONDecodeError as exc:
            raise TfxError(f"not a JSON report: {exc.msg}", where=f"{path}:{exc.lineno}:{exc.colno}") from None
        if not isinstance(data, dict) or "metrics" not in data:
            raise TfxError("expected a `tfx analyze --json` report with a 'metrics' object", where=path)
        return data
    from tfx.analysis.analyze import analyze
    from tfx.hw import load_profile
    from tfx.lang import parse_file
    profile = load_profile(hw)
    if knobs:
        profile = profile.with_knobs(knobs)
    return analyze(parse_file(path), kernel, profile, sets).to_json()


def _kind(name: str) -> str:
    if name.startswith("memory."):
        return "bytes"
    if name.endswith("_ns") or ".memory_ns." in name:
        return "ns"
    return "count"


def human(name: str, v) -> str:
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        return str(v)
    kind = _kind(name)
    if kind == "bytes":
        for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
            if abs(v) >= scale:
                return f"{v / scale:.2f} {unit}"
        return f"{v:.0f} B"
    if kind == "ns":
        for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
            if abs(v) >= scale:
                return f"{v / scale:.2f} {unit}"
        return f"{v:.0f} ns"
    if isinstance(v, float) and not v.is_integer():
        return f"{v:.4g}"
    return f"{int(v):,}"


def compare(a: dict, b: dict) -> list[dict]:
    """Changed metrics, largest relative change first (appearing/disappearing metrics first)."""
    rows = []
    for name in sorted(set(a["metrics"]) | set(b["metrics"])):
        old, new = a["metrics"].get(name), b["metrics"].get(name)
        if old == new:
            continue
        if isinstance(old, (int, float)) and isinstance(new, (int, float)) and not isinstance(old, bool):
            ratio = (new / old) if old else math.inf
            change = abs(math.log(ratio)) if ratio not in (0, math.inf) and ratio > 0 else math.inf
        else:
            ratio, change = None, math.inf
        rows.append({"scope": a.get("kernel", "?"), "metric": name, "old": old, "new": new,
                     "ratio": ratio, "_change": change})
    rows.sort(key=lambda r: (-r["_change"], r["metric"]))
    for r in rows:
        del r["_change"]
    return rows


def run(args) -> int:
    sets = parse_int_assignments(args.set, "--set")
    knobs = parse_assignments(args.knob, "--knob")
    a = _report(args.a, args.hw, sets, knobs, args.kernel)
    b = _report(args.b, args.hw_b or args.hw, {**sets, **parse_int_assignments(args.set_b, "--set-b")},
                {**knobs, **parse_assignments(args.knob_b, "--knob-b")}, args.kernel)
    rows = compare(a, b)
    if args.json:
        emit_json({"a": {"file": a.get("file"), "profile": a.get("profile"), "parameters": a.get("parameters")},
                   "b": {"file": b.get("file"), "profile": b.get("profile"), "parameters": b.get("parameters")},
                   "changes": [{**r, "ratio": None if r["ratio"] in (None, math.inf) else r["ratio"]} for r in rows]})
        return 0
    print(f"A: {a.get('file')} {a.get('kernel')} on {a.get('profile')}  B: {b.get('file')} {b.get('kernel')} on {b.get('profile')}")
    if not rows:
        print("no metric changed")
    for r in rows:
        ratio = "" if r["ratio"] is None else (" (new)" if r["ratio"] == math.inf else f" (x{r['ratio']:.3g})")
        print(f"{r['scope']} {r['metric']} {human(r['metric'], r['old'])} -> {human(r['metric'], r['new'])}{ratio}")
    return 0
