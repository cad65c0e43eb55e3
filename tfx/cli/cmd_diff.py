"""``tfx diff``: two analyses compared metric by metric, largest changes first.

Each side is a saved ``tfx analyze --json`` report or a kernel file analyzed with
that side's options: ``tfx diff kernels/gemm.tile kernels/gemm.tile --hw h100_sxm --hw-b h200_sxm``,
``tfx diff gemm.tile gemm.tile --set-b BM=256``, ``tfx diff old.json new.json``,
``tfx diff gemm_fp8.tile gemm_fp8.tile --codegen-b cutlass`` (the same kernel as Triton and as
CUTLASS compile it).
"""

from __future__ import annotations

import json

from tfx.bundled import DEFAULT_PROFILE
from tfx.cli.common import check_set_domains, emit_json, parse_assignments, parse_int_assignments, read_text, say
from tfx.errors import TfxError, argument_error
from tfx.present.diff import changes, header, line


def register(sub) -> None:
    p = sub.add_parser("diff", help="compare two analyses metric by metric",
                       description="Compare two analyses: two profiles, parameter sets, kernel files or saved JSON reports.")
    p.add_argument("a", help="a .tile file or a saved `tfx analyze --json` report")
    p.add_argument("b", help="a .tile file or a saved report")
    p.add_argument("--kernel")
    p.add_argument("--hw", default=DEFAULT_PROFILE, help="profile of side A (and B unless --hw-b)")
    p.add_argument("--hw-b", help="profile of side B")
    p.add_argument("--set", action="append", metavar="P=V", help="parameter of both sides (repeatable, or several as P=V,P=V)")
    p.add_argument("--set-b", action="append", metavar="P=V", help="parameter of side B only (as --set)")
    p.add_argument("--knob", action="append", metavar="K=V", help="knob of both sides (repeatable, or several as K=V,K=V)")
    p.add_argument("--knob-b", action="append", metavar="K=V", help="knob of side B only (as --knob)")
    from tfx.cli.cmd_analyze import add_codegen_arg
    add_codegen_arg(p, side=" on both sides")
    add_codegen_arg(p, "--codegen-b", side=" on side B only")
    p.add_argument("--all", action="store_true", help="also list unchanged metrics")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def _report(path: str, hw: str, sets: dict, knobs: dict, kernel, codegen: tuple | None = None,
            hw_option: str = "--hw") -> dict:
    """One side's analysis JSON; ``codegen``: (the option that named it, its value) or None;
    ``hw_option``: the option that named ``hw`` (--hw, or side B's --hw-b)."""
    if path.endswith(".json"):
        if codegen is not None:
            # a saved report was priced as it names ("codegen"): nothing here could change that
            raise argument_error(codegen[0], f"expected with a .tile side; the saved report {path} names "
                                 "its own code generator", found=codegen[1])
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
    from tfx.analysis.codegen import check_profile
    profile = load_profile(hw, option=hw_option).with_knobs(knobs)
    if codegen is not None:
        check_profile(codegen[1], profile, codegen[0])
    module = parse_file(path)
    return analyze(module, kernel, profile, check_set_domains(module, kernel, sets, profile),
                   codegen=None if codegen is None else codegen[1]).to_json()


def run(args) -> int:
    sets = parse_int_assignments(args.set, "--set")
    knobs = parse_assignments(args.knob, "--knob")
    cg_a = ("--codegen", args.codegen) if args.codegen else None
    cg_b = ("--codegen-b", args.codegen_b) if args.codegen_b else cg_a
    a = _report(args.a, args.hw, sets, knobs, args.kernel, cg_a)
    b = _report(args.b, args.hw_b or args.hw, {**sets, **parse_int_assignments(args.set_b, "--set-b")},
                {**knobs, **parse_assignments(args.knob_b, "--knob-b")}, args.kernel, cg_b,
                "--hw-b" if args.hw_b else "--hw")
    rows = changes(a, b)
    if args.json:
        side = ("file", "kernel", "profile", "knobs", "codegen", "parameters")
        emit_json({"a": {k: a.get(k) for k in side}, "b": {k: b.get(k) for k in side},
                   "changes": [c.to_json() for c in rows]})
        return 0

    for text in header(a, b):
        say(text)
    if not rows:
        say("no metric changed")
    for c in rows:
        say(line(c))
    return 0
