"""``tfx analyze``: per-scope work, traffic, footprint, occupancy, roofline and predicted time."""

from __future__ import annotations

from tfx.assignments import add_codegen_arg  # noqa: F401  (shared with tfx open; cli modules import it here)
from tfx.bundled import DEFAULT_PROFILE
from tfx.cli.common import check_set_domains, emit_json, int_arg, parse_assignments, parse_int_assignments
from tfx.errors import TfxError, argument_error


def add_kernel_args(p, hw_required: bool = False) -> None:
    p.add_argument("file", help="a .tile file")
    p.add_argument("--kernel", help="which kernel of the file (default: the one no other calls)")
    p.add_argument("--hw", default=DEFAULT_PROFILE, help="hardware profile: a shipped name or a TOML path")
    p.add_argument("--set", action="append", metavar="P=V", help="override a kernel parameter (repeatable, or several as P=V,P=V)")
    p.add_argument("--knob", action="append", metavar="K=V", help="override a profile fact (value or xF, /F; repeatable, or several as K=V,K=V)")


def register(sub) -> None:
    p = sub.add_parser("analyze", help="work, traffic, footprint, occupancy, roofline and predicted time",
                       description="Analyze one kernel on one hardware profile.")
    add_kernel_args(p)
    p.add_argument("--resources", metavar="threads=T,regs=R,smem=S,spills=W",
                   help="per-CTA resources (override the kernel's and the estimate); spills: 4-byte "
                        "words of local memory per thread as compiled; local_bytes: the bytes a "
                        "thread's local loads and stores move (LDL + STL of the SASS)")
    p.add_argument("--ptxas", metavar="FILE",
                   help="compiled registers, spills and static shared memory from ptxas -v output "
                        "(replace the estimate; --resources wins where both give one)")
    p.add_argument("--ptxas-kernel", metavar="NAME", help="which function of the --ptxas output")
    p.add_argument("--occupancy", type=int_arg(1, 2 ** 20), metavar="N", help="occupancy hint (CTAs per SM)")
    add_codegen_arg(p)
    from tfx.assignments import add_timing_arg
    add_timing_arg(p, "clean")
    p.add_argument("--domain", default="total", help="domain of the annotated IR: logical, total, cta, thread, ...")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def parse_resources(text: str | None) -> dict[str, int]:
    if not text:
        return {}
    out = parse_int_assignments([s for s in text.split(",") if s.strip()], "--resources")
    allowed = {"threads", "regs", "smem", "static_smem", "spills", "local_bytes"}
    for k in out:
        if k not in allowed:
            raise argument_error("--resources", f"expected one of {', '.join(sorted(allowed))}", found=k)
        lowest = 1 if k == "threads" else 0
        if out[k] < lowest:
            raise argument_error("--resources", f"expected a whole number >= {lowest}", name=k, found=str(out[k]))
    return out


def _check_regs(resources: dict, profile) -> None:
    """regs must be 1..the profile's per-thread maximum (255 where it states none): the analysis
    would otherwise clamp 300 to 255 and price 0 registers, silently."""
    if "regs" not in resources:
        return
    from tfx.analysis.measured import MAX_REGS_PER_THREAD
    from tfx.analysis.occupancy import OccupancyLimits
    try:
        most = int(OccupancyLimits.from_profile(profile).max_regs_per_thread)
    except (TfxError, KeyError, AttributeError, TypeError):    # a profile without occupancy limits
        most = MAX_REGS_PER_THREAD
    if not 1 <= resources["regs"] <= most:
        raise argument_error("--resources", f"expected 1..{most} registers per thread (the {profile.name} "
                             "per-thread maximum)", name="regs", found=str(resources["regs"]))


def ptxas_resources(path: str, name: str | None) -> dict[str, int]:
    """regs, spills (local words per thread: the stack frame and spill stores, whichever is
    larger, over 4 B) and static_smem of one function of ``ptxas -v`` output."""
    from tfx.analysis.compiler_resources import parse_ptxas_v
    from tfx.cli.common import read_text
    found = parse_ptxas_v(read_text(path), path)
    if name is not None:
        found = [k for k in found if name in (k.name, k.base_name)]
        if not found:
            raise argument_error("--ptxas-kernel", f"no such function in the ptxas output {path}", name=name)
    if len(found) != 1:
        names = ", ".join(k.display_name for k in found) or "none"
        raise TfxError(f"the ptxas output has {len(found)} functions ({names}): name one with --ptxas-kernel",
                       where=path)
    k = found[0]
    local = max(k.stack_frame + k.local_bytes, k.spill_stores)
    return {"regs": k.registers, "spills": -(-local // 4), "static_smem": k.smem_static}


def load_analysis(args, resources=None, occupancy_hint=None):
    from tfx.analysis.analyze import analyze
    from tfx.hw import load_profile
    from tfx.lang import parse_file
    module = parse_file(args.file)
    profile = load_profile(args.hw, option="--hw").with_knobs(parse_assignments(args.knob, "--knob"))
    params = check_set_domains(module, args.kernel, parse_int_assignments(args.set, "--set"), profile)
    _check_regs(resources, profile)
    codegen = getattr(args, "codegen", None)
    # analyze() refuses a code generator the profile cannot compile for (tfx.analysis.codegen.check_profile)
    return analyze(module, args.kernel, profile, params,
                   resources=resources, occupancy_hint=occupancy_hint, codegen=codegen,
                   l2_clear=getattr(args, "timing", None) == "do_bench")


def run(args) -> int:
    from tfx.present.analysis_report import render_text
    if args.occupancy is not None and args.occupancy < 1:
        raise argument_error("--occupancy", "expected a whole number >= 1", found=str(args.occupancy))
    resources = ptxas_resources(args.ptxas, args.ptxas_kernel) if args.ptxas else {}
    resources.update(parse_resources(args.resources))
    a = load_analysis(args, resources, args.occupancy)
    if args.json:
        emit_json(a.to_json())
        return 0
    if args.domain not in ("logical", "total", *a.domains):
        raise argument_error("--domain", f"expected one of logical, total, {', '.join(a.domains)}",
                             found=args.domain)
    from tfx.cli.common import text_width
    print(render_text(a, args.domain, text_width()), end="")
    return 0
