"""``NAME=VALUE`` command-line assignments (``--set``, ``--knob``), read the same way by
every command: the CLI's (``tfx.cli``) and the explorer's ``tfx open`` (``tfx.tui``),
which must not import each other (tests/test_import_hygiene.py)."""

from __future__ import annotations

from tfx.errors import argument_error
from tfx.hw.units import format_count


def parse_assignments(items: list[str] | None, flag: str) -> dict[str, str]:
    """``["A=1", "B=x2"]`` -> ``{"A": "1", "B": "x2"}``; an item may hold several, comma-separated
    (``"A=1,B=x2"``: no value of a parameter, knob or distribution holds a comma); a later
    assignment of a name wins, as a repeated flag's does. Refuses malformed items by name."""
    out: dict[str, str] = {}
    for item in items or []:
        pieces = item.split(",")
        for i, piece in enumerate(pieces):
            name, equals, value = (s.strip() for s in piece.partition("="))
            if not (name and equals and value):
                if len(pieces) == 1:
                    raise argument_error(flag, "expected NAME=VALUE", found=item)
                # "BM=64,128": a list of values is a sweep, not an assignment
                raise argument_error(flag, "expected NAME=VALUE pairs separated by commas (A=1,B=2), "
                                           "one value a name (a list of values is tfx explore's sweep)",
                                     found=piece if piece.strip() else item)
            out[name] = value
    return out


def parse_int_assignments(items: list[str] | None, flag: str) -> dict[str, int]:
    from tfx.literals import parse_int
    out = {}
    for name, value in parse_assignments(items, flag).items():
        try:
            out[name] = parse_int(value)
        except ValueError as exc:
            raise argument_error(flag, str(exc), name=name, found=value) from None
    return out


def check_set_domains(module, kernel_name: str | None, params: dict[str, int],
                      profile=None) -> dict[str, int]:
    """``params`` (from ``--set``), after refusing a value outside its parameter's declared
    domain with one line naming the domain (tfx.ir.bind.check_set_values). ``profile``: the
    machine whose counts a default names (``units(sm)``)."""
    if params:
        from tfx.ir.bind import check_set_values
        check_set_values(module, module.kernel(kernel_name), params, profile=profile)
    return params


def add_codegen_arg(p, flag: str = "--codegen", side: str = "") -> None:
    """The code generator option of every command that prices a kernel (analyze, explore, diff,
    simulate, validate, and tfx open: one spelling, one help)."""
    from tfx.analysis.codegen import CODEGENS
    p.add_argument(flag, choices=tuple(CODEGENS), default=None,
                   help=f"the code generator whose GPU instructions are priced{side}: triton (default; "
                        "per-thread cp.async copies, ptxas-scheduled wgmma) or cutlass (TMA copies, "
                        "hand-pipelined wgmma); on a tiled profile its own tool chain compiles: cutlass is refused, "
                        "triton (the default, spelled out) is accepted and results name no code generator")


#: ``--timing`` choices: how the launches priced were (or would be) timed
#: (tfx.analysis.launch_handoff.L2_CLEAR_CONDITION): ``do_bench`` right after a harness clears the
#: L2 by writing a buffer (triton.testing.do_bench: analyze's l2_clear), ``clean`` with no such
#: clear (back to back in a serving step, or after Nsight Compute's flush, --cache-control all)
TIMINGS = ("do_bench", "clean")


def add_timing_arg(p, default: str) -> None:
    """The timing condition option (``TIMINGS``) of the commands that price launches against a
    measurement or for one (analyze, validate): one spelling, one help."""
    p.add_argument("--timing", choices=TIMINGS, default=None,
                   help=f"how the launches are timed (default {default}): do_bench, right after an L2 "
                        "clear that writes a buffer (triton.testing.do_bench; a launch whose stream is "
                        "priced from a clean L2 pays the dirty lines' write-back, the `l2 write-back` "
                        "term), or clean (no clear: a serving step; or Nsight Compute's flush)")


def int_arg(lo: int, hi: int):
    """An argparse ``type`` for a whole number in ``lo..hi`` (ASCII digits, explicit ceiling):
    argparse turns the refusal into one line naming the option. Here, not in tfx.cli, so that
    ``tfx open`` (tfx.tui) bounds its options as the CLI does."""
    import argparse

    from tfx.errors import shorten
    from tfx.literals import parse_int

    def parse(text: str) -> int:
        try:
            value = parse_int(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"{exc}, found {shorten(text)!r}") from None
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"expected a whole number in {format_count(lo)}..{format_count(hi)}, found {shorten(text)!r}")
        return value
    parse.__name__ = "whole number"
    return parse


# a workload's bounds, the same for tfx model and tfx open --model
BATCH_RANGE = (1, 2 ** 24)
CONTEXT_RANGE = (1, 2 ** 31 - 1)
