"""``tfx open``: the keyboard-first terminal explorer.

    tfx open                                 # the bundled gemm.tile on h200_sxm
    tfx open kernels/gemm.tile --hw h100_sxm --set BM=64 --knob hbm.bandwidth=x2

Textual is imported inside ``run`` only, so ``tfx --help`` stays fast.
"""

from __future__ import annotations

from typing import Any

from tfx.cli.common import parse_assignments, parse_int_assignments
from tfx.errors import TfxError
from tfx.resources import DEFAULT_KERNEL, DEFAULT_PROFILE, bundled_kernel


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("open", help="explore a kernel in the terminal (TUI)",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("file", nargs="?", metavar="FILE",
                   help=f".tile file (default: the bundled {DEFAULT_KERNEL})")
    p.add_argument("--hw", metavar="PROFILE", default=DEFAULT_PROFILE,
                   help=f"hardware profile name or .toml path (default {DEFAULT_PROFILE})")
    p.add_argument("--set", action="append", metavar="P=V", dest="assignments",
                   help="bind parameter P to the integer V (repeatable)")
    p.add_argument("--knob", action="append", metavar="K=V", dest="knobs",
                   help="change a hardware fact: K=3.2TB/s, K=x2, K=/2 (repeatable)")
    p.add_argument("--kernel", metavar="NAME", help="the kernel of FILE to open")
    p.add_argument("--no-mouse", action="store_true", help="do not capture the mouse")
    p.set_defaults(func=run)


def run(args) -> int:
    from pathlib import Path
    path = args.file or str(bundled_kernel(DEFAULT_KERNEL))
    if not Path(path).is_file():
        raise TfxError("no such file", where=path)
    params = parse_int_assignments(args.assignments, "--set")
    knobs = parse_assignments(args.knobs, "--knob")
    from tfx.tui.app import TfxApp   # lazily: Textual costs ~130 ms to import
    app = TfxApp(path, args.hw, knobs=knobs, params=params, kernel_name=args.kernel)
    app.run(mouse=not args.no_mouse)
    return 0
