"""``tfx check``: parse, verify and shape-check .tile files.

    tfx check kernels/*.tile
    tfx check kernels/gemm.tile --set BM=64 --set BK=32
    tfx check kernels/gemm.tile --print > gemm.canonical.tile
    tfx check kernels/sip_gemm.tile --hw sip

For each file: parse (which verifies names, captures and types), bind the
parameters (defaults, replaced by ``--set``) and check shapes under those
values; with ``--hw``, also refuse storage and mesh levels the hardware profile
does not have. Prints ``FILE: ok (N kernels: names)``; the first problem is a
``file:line:col: error: ...`` and exit status 2. ``--print`` writes the
canonical form of the checked kernels to stdout (the ok line then goes to
stderr, so the output can be redirected to a file).
"""

from __future__ import annotations

import sys
from typing import Any

from tfx.cli.common import parse_int_assignments, say
from tfx.errors import argument_error
from tfx.hw.units import format_counted
from tfx.ir.bind import bind, check_set_values, check_shapes, needs_machine, units_used
from tfx.ir.nodes import Kernel, Module
from tfx.lang import parse_file, print_kernel


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "check",
        help="parse, verify and shape-check .tile files",
        description=__doc__.split("\n\n")[0],
    )
    p.add_argument("files", nargs="+", metavar="FILE", help=".tile files")
    p.add_argument("--print", action="store_true", dest="print_canonical",
                   help="write the canonical form of the checked kernels to stdout")
    p.add_argument("--set", action="append", metavar="P=V", dest="assignments",
                   help="bind parameter P to the integer V before checking shapes (repeatable, or several as P=V,P=V)")
    p.add_argument("--kernel", metavar="NAME", help="check only this kernel of each file")
    p.add_argument("--hw", metavar="PROFILE",
                   help="also refuse storage and mesh levels this hardware profile lacks")
    p.set_defaults(func=run)


def _load_profile(name: str | None):
    if name is None:
        return None
    try:
        from tfx.hw import load_profile
    except ImportError:
        raise argument_error("--hw", "hardware profiles are not available in this build") from None
    return load_profile(name, option="--hw")


def selected_kernels(module: Module, name: str | None) -> list[Kernel]:
    return [module.kernel(name)] if name is not None else list(module.kernels)


def check_module(module: Module, kernels: list[Kernel], overrides: dict[str, int],
                 profile=None) -> list[str]:
    """Shape-check (and level-check) ``kernels`` of ``module`` under ``overrides``; returns the
    kernels whose shapes wait for a profile (a default sized by the machine, ``units(sm)``,
    without ``--hw``: parsed and verified, not bound).

    Each kernel gets the ``--set`` values of the parameters it has; a name that no
    checked kernel has is refused (by ``bind``, which suggests a close name).
    """
    known = {p.name for k in kernels for p in k.params}
    unknown = [n for n in overrides if n not in known]
    if unknown:
        bind(module, kernels[0], {unknown[0]: overrides[unknown[0]]})  # raises, naming the kernel's parameters
    unbound = []
    for k in kernels:
        mine = {n: v for n, v in overrides.items() if k.param(n) is not None}
        if profile is None and needs_machine(k, mine):
            unbound.append(k.name)
            continue
        check_set_values(module, k, mine, profile=profile)
        env = bind(module, k, mine, profile=profile)
        check_shapes(module, k, env)
        if profile is not None:
            from tfx.ir.levels import check_levels
            check_levels(module, k, profile)
    return unbound


def run(args) -> int:
    overrides = parse_int_assignments(args.assignments, "--set")
    profile = _load_profile(args.hw)
    canonical = []
    for path in args.files:
        module = parse_file(path)
        kernels = selected_kernels(module, args.kernel)
        unbound = check_module(module, kernels, overrides, profile)
        names = ", ".join(k.name for k in kernels)
        line = f"{path}: ok ({format_counted(len(kernels), 'kernel')}: {names})"
        if unbound:
            counts = sorted({f"units({lvl})" for k in kernels if k.name in unbound
                             for lvl in units_used(module, k)})
            line += (f"; shapes of {', '.join(unbound)} not checked: {', '.join(counts)} "
                     f"{'is a count' if len(counts) == 1 else 'are counts'} of the hardware profile "
                     "(add --hw PROFILE)")
        if args.print_canonical:
            say(line, file=sys.stderr)
            canonical.append("\n".join(print_kernel(k) for k in kernels))
        else:
            say(line)
    if canonical:
        sys.stdout.write("\n".join(canonical))
    return 0
