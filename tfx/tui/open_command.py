"""``tfx open``: the keyboard-first terminal explorer, the explorer's own command.

    tfx open                                 # the bundled gemm.tile on h200_sxm
    tfx open kernels/gemm.tile --hw h100_sxm --set BM=64 --knob hbm.bandwidth=x2
    tfx open --model llama3.1-70b [--hw h200_nvl8] [--mode decode] [--batch 1] [--ctx 8192]

Textual is imported inside ``run`` only, so ``tfx --help`` stays fast. The command
table (``tfx.command_table``) names this module; the CLI package never imports the explorer,
nor the explorer the CLI (tests/test_import_hygiene.py).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any

from tfx.assignments import (BATCH_RANGE, CONTEXT_RANGE, check_set_domains, int_arg, parse_assignments,
                             parse_int_assignments)
from tfx.errors import TfxError, argument_error
from tfx.bundled import DEFAULT_KERNEL, DEFAULT_PROFILE, bundled_kernel

MODEL_PROFILE = "h200_nvl8"


@contextmanager
def collector_paused():
    """The cyclic garbage collector off while the explorer starts, on again when the app
    says so (``ExplorerApp.startup_done``, once its first screen with data is drawn)
    or when it ends. Start-up makes ~56,000 objects the collector tracks (Textual's
    modules, styles and widgets), nearly all living as long as the app: before the
    first frame the collector scanned them in 99 young, 9 middle-aged and one full
    pass, ~35 ms of CPU on the 2-core bench machine (~40 ms until the first analysis
    shows), to free next to nothing."""
    import gc
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("open", help="explore a kernel in the terminal (TUI)",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("file", nargs="?", metavar="FILE",
                   help=f".tile file (default: the bundled {DEFAULT_KERNEL})")
    p.add_argument("--hw", metavar="PROFILE", default=None,
                   help=f"hardware profile name or .toml path (default {DEFAULT_PROFILE}; "
                        f"{MODEL_PROFILE} with --model)")
    p.add_argument("--set", action="append", metavar="P=V", dest="assignments",
                   help="bind parameter P to the integer V (repeatable, or several as P=V,P=V)")
    p.add_argument("--knob", action="append", metavar="K=V", dest="knobs",
                   help="change a hardware fact: K=3.2TB/s, K=x2, K=/2 (repeatable, or several as K=V,K=V)")
    p.add_argument("--kernel", metavar="NAME", help="the kernel of FILE to open")
    p.add_argument("--measured", metavar="CSV",
                   help="measured times (the tfx validate CSV: kernel, profile, measured_ms, "
                        "parameters) shown beside the prediction of the configuration on screen")
    from tfx.assignments import add_codegen_arg
    add_codegen_arg(p, side=" (every pane; g switches it)")
    p.add_argument("--no-mouse", action="store_true", help="do not capture the mouse")
    m = p.add_argument_group("model screen (--model; docs/explorer-model.md)")
    m.add_argument("--model", metavar="NAME",
                   help="open the model screen for this preset (or preset TOML) instead of a kernel; "
                        f"--hw defaults to {MODEL_PROFILE} there")
    m.add_argument("--mode", choices=("decode", "prefill"), default=None, help="decode (default) or prefill")
    m.add_argument("--batch", type=int_arg(*BATCH_RANGE), default=None, metavar="N", help="sequences (default 1)")
    m.add_argument("--ctx", type=int_arg(*CONTEXT_RANGE), default=None, metavar="N",
                   help="context tokens (decode: cached + new; prefill: prompt; default 8192)")
    m.add_argument("--config", metavar="SPEC", help="starting parallelism, e.g. tp=8,cp=2 (default all 1)")
    p.set_defaults(func=run)


def run(args) -> int:
    if getattr(args, "model", None):
        return run_model(args)
    extra = [f"--{n}" for n in ("mode", "batch", "ctx", "config") if getattr(args, n, None) is not None]
    if extra:
        raise argument_error(", ".join(extra), "expected with --model (the model screen)")
    from pathlib import Path
    path = args.file or str(bundled_kernel(DEFAULT_KERNEL))
    if Path(path).is_dir():          # as check, analyze and the others refuse a folder
        raise TfxError("is a directory, expected a .tile file", where=path)
    if not Path(path).is_file():
        from tfx.bundled import missing_kernel_notes
        raise TfxError("no such file", where=path, notes=missing_kernel_notes(path))
    params = parse_int_assignments(args.assignments, "--set")
    knobs = parse_assignments(args.knobs, "--knob")
    codegen = getattr(args, "codegen", None)
    checked = check_in_background(check_inputs, path, args.kernel, args.hw or DEFAULT_PROFILE, knobs,
                                  params, codegen)
    measured = None
    if args.measured:                # read (and refused at file:line:col) before the screen starts
        from tfx.analysis.measured import read_measurements
        measured = read_measurements(args.measured)
    with collector_paused():
        from tfx.tui.app import TfxApp   # lazily: Textual costs ~130 ms to import
        checked()                    # the inputs' refusal, if any, before the first frame
        app = TfxApp(path, args.hw or DEFAULT_PROFILE, knobs=knobs, params=params,
                     kernel_name=args.kernel, measured=measured, codegen=codegen)
        app.run(mouse=not args.no_mouse)
    if app.first_error is not None:      # the first analysis failed: bad kernel, --hw, --knob, --set
        import sys
        print(app.first_error, file=sys.stderr)
        return 2
    return 0


def check_inputs(path: str, kernel_name: str | None, hw: str, knobs: dict, params: dict,
                 codegen: str | None) -> None:
    """Refuse a bad kernel file (one that does not parse), ``--kernel``, ``--hw``, ``--knob``,
    ``--set`` or ``--codegen`` here, in the one line of every command, before the screen starts:
    the explorer used to draw its screen, run the first analysis and only then exit 2 with the
    refusal. The work is the first analysis' own (imports, the parse, the profile's TOML; the
    profile stays cached by path), done before the first frame instead of after it."""
    from tfx.hw import load_profile
    from tfx.lang import parse_file
    module = parse_file(path)
    kernel = module.kernel(kernel_name)
    profile = load_profile(hw, option="--hw")
    if knobs:
        profile = profile.with_knobs(knobs)
    # a level the profile lacks, as analyze refuses it (with its source line and the shipped
    # profiles that have it): sip_gemm.tile on the default h200_sxm drew the screen first and
    # then exited with the bare headline
    from tfx.ir.bind import profile_units
    from tfx.ir.levels import check_levels
    profile_units(module, kernel, profile)
    check_levels(module, kernel, profile)
    check_set_domains(module, kernel_name, params, profile)
    if codegen is not None:
        from tfx.analysis.codegen import check_profile
        check_profile(codegen, profile)


def check_in_background(check, *args):
    """Run ``check(*args)`` in a forked child while this process imports Textual; the function
    returned waits for it and raises its TfxError here. The check's imports, parse and profile
    load (~120 ms of CPU on the bench machine, the first analysis' own work) then cost the first
    frame nothing on a second core, where run inline they delayed it by that much
    (bench/tui_startup.py, paired). Inline where there is no fork or other threads exist."""
    import os
    import threading
    if not hasattr(os, "fork") or threading.active_count() > 1:
        check(*args)
        return lambda: None
    import pickle
    import sys
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:                                     # the child: check, report, leave
        code = 0
        try:
            os.close(read_end)
            try:
                check(*args)
            except TfxError as err:
                with os.fdopen(write_end, "wb") as out:
                    pickle.dump(err, out)
        except BaseException:                        # a bug: the app's first analysis reports it
            code = 1
        finally:
            sys.stdout.flush()
            os._exit(code)
    os.close(write_end)

    def wait() -> None:
        with os.fdopen(read_end, "rb") as inp:
            data = inp.read()
        os.waitpid(pid, 0)
        if data:
            raise pickle.loads(data)
    return wait


def run_model(args) -> int:
    """``tfx open --model NAME``: check the preset, profile and workload here (a clear error
    before the screen starts), then open the model screen."""
    if (args.file or args.assignments or args.knobs or args.kernel or getattr(args, "measured", None)
            or getattr(args, "codegen", None)):
        raise argument_error("--model", "expected without FILE, --set, --knob, --kernel, --measured and "
                                        "--codegen (the model screen; they are for kernels; its GEMMs' "
                                        "code generator is --gemm-codegen of tfx model)")
    from tfx.model.presets import load_model
    from tfx.model.system import Workload, load_system
    load_model(args.model, option="--model")
    hw = args.hw or MODEL_PROFILE
    load_system(hw, option="--hw")
    mode = args.mode or "decode"
    batch = 1 if args.batch is None else args.batch
    ctx = 8192 if args.ctx is None else args.ctx
    Workload(mode, ctx, batch)
    from tfx.tui.deployment.core import make_knobs
    knobs = make_knobs(args.model, hw, mode, batch, ctx, args.config)
    with collector_paused():
        from tfx.tui.deployment.app import ModelApp   # lazily: Textual
        app = ModelApp(knobs)
        app.run(mouse=not args.no_mouse)
    return 0
