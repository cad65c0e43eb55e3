"""``tfx run``: execute a kernel on seeded random data and check what it computes.

    tfx run kernels/gemm.tile --set M=256 --set N=256 --set K=256
    tfx run kernels/gemm.tile --set M=256 --set N=256 --set K=256 --out gemm.npz
    tfx run kernels/sip_decode_attention.tile --kernel decode_attention_composite \\
        --against decode_attention_single_op --set CTX=8192 --set HQ=8 --set HKV=8
    tfx run kernels/gemm.tile --set M=64 --set N=64 --set K=64 --reference myref:gemm

Interprets the kernel with numpy on random inputs (docs/language.md, "Executing
kernels"): normal or uniform floats per tensor (``--dist NAME=uniform``), seeded by
``--seed``. ``--out`` saves every tensor by name to an .npz (inputs as generated,
outputs as computed, float32 or the integer type). ``--against KERNEL2`` runs
another kernel of the file on the same inputs and compares their outputs
(``--against OTHER.tile[:KERNEL]`` takes it from another file: split-K vs plain GEMM);
``--reference module:function`` imports ``module`` (from the current directory or
the Python path) and calls ``function(inputs, params)``, which returns a dict of
expected outputs by name: the only place tfx runs user code. Exit 0 when every
compared output is within the tolerance derived from the dtypes, 1 when one is not
(printing the worst element), 2 for bad input or a size too big for a CPU.
"""

from __future__ import annotations

import importlib
import io
import sys
import time
from typing import Any

import numpy as np

from tfx.cli.common import check_set_domains, emit_json, parse_assignments, parse_int_assignments, say
from tfx.bundled import DEFAULT_PROFILE
from tfx.errors import TfxError
from tfx.present import formatting as fmt


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "run",
        help="execute a kernel on random data and check its outputs",
        description=__doc__.split("\n\n")[0],
    )
    p.add_argument("file", metavar="FILE", help=".tile file")
    p.add_argument("--kernel", metavar="NAME", help="the kernel to run (default: the file's main kernel)")
    p.add_argument("--set", action="append", metavar="P=V", dest="assignments",
                   help="bind parameter P to the integer V (repeatable, or several as P=V,P=V)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    p.add_argument("--dist", action="append", metavar="TENSOR=normal|uniform", dest="dists",
                   help="distribution of a float input: normal N(0,1) (default) or uniform [-1,1)")
    p.add_argument("--out", metavar="FILE.npz", help="save every tensor by name to an .npz file")
    p.add_argument("--against", metavar="KERNEL2",
                   help="compare with another kernel on the same inputs: a kernel of FILE, or OTHER.tile[:KERNEL]")
    p.add_argument("--reference", metavar="MODULE:FUNCTION",
                   help="compare with a Python reference function(inputs, params) -> {output: array}")
    p.add_argument("--hw", metavar="PROFILE", default=None,
                   help="the hardware profile whose counts a kernel names with units(LEVEL) (a "
                        f"persistent kernel's SMs; default {DEFAULT_PROFILE}, or the first shipped "
                        "profile with the levels the kernel counts: sip for cubes and PEs); nothing "
                        "else of it is read")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run)


def load_reference(spec: str):
    """``module:function`` -> the callable; bad specs and import failures are one line."""
    if spec.count(":") != 1 or not all(spec.split(":")):
        raise TfxError(f"expected MODULE:FUNCTION, found {spec!r}", where="--reference")
    mod_name, fn_name = spec.split(":")
    if "" not in sys.path:
        sys.path.insert(0, "")     # the current directory, as `python -m` does
    try:
        module = importlib.import_module(mod_name)
    except Exception as exc:  # user code: any failure to import is bad input
        raise TfxError(f"cannot import {mod_name}: {type(exc).__name__}: {exc}", where="--reference") from None
    fn = getattr(module, fn_name, None)
    if not callable(fn):
        raise TfxError(f"{mod_name} has no function {fn_name!r}", where="--reference")
    return fn


def call_reference(fn, spec: str, result) -> dict[str, np.ndarray]:
    inputs = {n: v.copy() for n, v in result.inputs.items()}
    try:
        expected = fn(inputs, dict(result.params))
    except Exception as exc:
        raise TfxError(f"the reference raised {type(exc).__name__}: {exc}", where=f"--reference {spec}") from None
    if not isinstance(expected, dict):
        raise TfxError(f"the reference returned {type(expected).__name__}, expected a dict of outputs by name",
                       where=f"--reference {spec}")
    if not expected:
        raise TfxError("the reference returned no outputs", where=f"--reference {spec}")
    try:
        return {str(k): np.asarray(v, dtype=np.float64) for k, v in expected.items()}
    except (TypeError, ValueError) as exc:
        raise TfxError(f"the reference returned a value that is not an array: {exc}",
                       where=f"--reference {spec}") from None


def _save(path: str, arrays: dict[str, np.ndarray]) -> None:
    from tfx.files import atomic_open
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    with atomic_open(path, what="the .npz", binary=True) as fh:
        fh.write(buf.getvalue())


def _machine(hw: str | None, kernels):
    """The profile whose counts the kernels name (units(sm)); None when none names any and no
    --hw was given (a run reads nothing else of a profile, so none is loaded). Without --hw:
    h200_sxm, or where it lacks a level they count (sip's cube), the first shipped profile
    that has them all, so a tiled accelerator's kernel runs as its own chip sizes it."""
    from tfx.ir.bind import units_used
    levels = {lvl for m, k in kernels for lvl in units_used(m, k)}
    if hw is None and not levels:
        return None
    from tfx.hw import load_profile
    if hw is not None:
        return load_profile(hw, option="--hw")
    from tfx.hw.profile import shipped_profile_with
    # none has them: the default's refusal names the levels it has
    return shipped_profile_with(levels) or load_profile(DEFAULT_PROFILE)


def _index(idx) -> str:
    return "[" + ", ".join(str(i) for i in idx) + "]"


def run(args) -> int:
    from tfx.execute import accumulation_terms, check_outputs, derived_rtol, execute, rounding_dtypes
    from tfx.lang import parse_file

    overrides = parse_int_assignments(args.assignments, "--set")
    dists = parse_assignments(args.dists, "--dist")
    if args.against and args.reference:
        raise TfxError("give --against or --reference, not both", where="--against")
    if args.out:
        from tfx.files import check_writable
        check_writable(args.out, "the .npz")
    reference = load_reference(args.reference) if args.reference else None
    module = parse_file(args.file)
    kernel = module.kernel(args.kernel)
    other_module, other = _against(module, args.against) if args.against else (module, None)
    if other is not None:
        _same_tensors(kernel, other, module)
    known = {p.name for p in kernel.params} | ({p.name for p in other.params} if other else set())
    for name in overrides:
        if name not in known:
            from tfx.ir.bind import bind
            bind(module, kernel, {name: overrides[name]})    # raises, suggesting a close name
    mine = {n: v for n, v in overrides.items() if kernel.param(n) is not None}
    profile = _machine(args.hw, [(module, kernel)] + ([(other_module, other)] if other is not None else []))
    # a value outside its declared domain: refused by name, as check, analyze and open refuse it
    # (was 'copy.tile:15:3: error: mesh cta extent 0 is 0' for --set N=0, naming no --set)
    check_set_domains(module, kernel.name, mine, profile)
    if other is not None:
        check_set_domains(other_module, other.name, {n: v for n, v in overrides.items() if other.param(n) is not None},
                          profile)

    from tfx.ir.bind import profile_units
    units = profile_units(module, kernel, profile)
    started = time.perf_counter()
    result = execute(module, kernel, mine, seed=args.seed, dists=dists, profile=profile)
    checks, against_label = [], None
    if other is not None:
        theirs = {n: v for n, v in overrides.items() if other.param(n) is not None}
        twin = execute(other_module, other, theirs, seed=args.seed, dists=dists,
                       inputs={n: v for n, v in result.inputs.items()}, profile=profile)
        rtol = derived_rtol(rounding_dtypes(module, kernel) | rounding_dtypes(other_module, other),
                            accumulation_terms(result.tensors, twin.tensors))
        checks = check_outputs(result, twin.outputs(), rtol)
        against_label = f"kernel {other.name}"
    elif reference is not None:
        expected = call_reference(reference, args.reference, result)
        rtol = derived_rtol(rounding_dtypes(module, kernel), accumulation_terms(result.tensors))
        checks = check_outputs(result, expected, rtol)
        against_label = f"reference {args.reference}"
    seconds = time.perf_counter() - started
    if args.out:
        _save(args.out, result.arrays())
    passed = all(c.passed for c in checks)
    if args.json:
        emit_json({
            "file": args.file, "kernel": kernel.name,
            # 'parameters', as analyze, simulate and diff name them (was 'params' until session 14)
            "parameters": dict(result.params), "seed": args.seed,
            # the machine's counts the kernel named (units(sm)) and whose they are; {} and null
            # for a kernel that names none
            "units": dict(units), "hw": profile.name if units else None,
            # the --dist choices (every other float input: normal): they change every number below
            "dists": dists,
            "estimate": {"mma_flops": result.work.flops, "element_operations": result.work.elements,
                         "steps": result.work.steps, "seconds": result.work.seconds},
            "seconds": seconds,
            "tensors": [{"name": t.name, "role": t.role, "dtype": str(t.type.dtype),
                         "shape": list(result.tensors[t.name].shape)} for t in kernel.tensors],
            "against": against_label,
            "checks": [c.to_json() for c in checks],
            "pass": passed if checks else None,
            "out": args.out,
        })
    else:
        _print_text(args, kernel, result, checks, against_label, seconds, dists, units, profile)
    return 0 if passed else 1


def _against(module, spec: str):
    """``KERNEL`` of the same file, or ``OTHER.tile`` / ``OTHER.tile:KERNEL``."""
    from tfx.lang import parse_file
    path, sep, name = spec.rpartition(":") if ".tile:" in spec else (spec, "", "")
    if path.endswith(".tile"):
        other_module = parse_file(path)
        return other_module, other_module.kernel(name or None)
    return module, module.kernel(spec)


def _same_tensors(kernel, other, module) -> None:
    """Two kernels compared on the same inputs must declare the same tensors."""
    mine = {t.name: (t.role, t.type.dtype) for t in kernel.tensors if t.role != "scratch"}
    theirs = {t.name: (t.role, t.type.dtype) for t in other.tensors if t.role != "scratch"}
    if mine != theirs:
        diff = sorted(set(mine.items()) ^ set(theirs.items()))
        name = diff[0][0]
        raise TfxError(f"kernels {kernel.name} and {other.name} declare different tensors "
                       f"(first difference: {name}); --against needs the same inputs and outputs",
                       where=module.filename)


def _print_text(args, kernel, result, checks, against_label, seconds, dists=None, units=None,
                profile=None) -> None:
    params = ", ".join(f"{n}={v}" for n, v in result.params.items())
    params += fmt.machine_counts(profile.name if profile is not None else "", units)
    drawn = f" ({', '.join(f'{n} {d}' for n, d in dists.items())})" if dists else ""
    say(f"{args.file}: {kernel.name} ({params}), seed {args.seed}{drawn}: "
          f"{result.work.describe()}; ran in {fmt.ns(seconds * 1e9)}")
    for t in kernel.tensors:
        a = result.tensors[t.name] if t.role != "in" else result.inputs[t.name]
        stats = ""
        if a.size and a.dtype.kind == "f":
            finite = a[np.isfinite(a)]
            unwritten = int(np.isnan(a).sum())
            stats = (f"  min {fmt.general(float(finite.min()))}  max {fmt.general(float(finite.max()))}  "
                     f"mean {fmt.general(float(finite.mean()))}" if finite.size else "")
            if unwritten and t.role != "in":
                stats += f"  {unwritten} never written (NaN)"
        elif a.size:
            stats = f"  min {int(a.min())}  max {int(a.max())}"
        say(f"  {t.name:<10} {t.role:<7} {str(t.type.dtype) + str(list(a.shape)):<24}{stats}")
    if args.out:
        say(f"saved {len(result.arrays())} arrays to {args.out}")
    if against_label is None:
        return
    say(f"against {against_label} (tolerance rtol {fmt.general(checks[0].rtol) if checks else '-'} "
          "x (|want| + rms(want))):")
    for c in checks:
        verdict = "ok" if c.passed else "FAIL"
        say(f"  {c.name:<10} max abs error {fmt.general(c.max_abs)}  max rel error {fmt.general(c.max_rel)}  {verdict}")
        if not c.passed:
            say(f"    worst at {c.name}{_index(c.worst_index)}: got {fmt.general(c.got)}, want {fmt.general(c.want)} "
                  f"(allowed error {fmt.general(c.allowed)})")
    n_ok = sum(c.passed for c in checks)
    say(f"{'pass' if n_ok == len(checks) else 'FAIL'}: {n_ok} of {len(checks)} outputs within tolerance")
