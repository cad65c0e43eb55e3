"""``analyze``: one kernel on one profile -> one ``Analysis`` result object.

Text, JSON, the annotated IR and the explorer all render from this object.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Mapping

from tfx.analysis import codegen as codegens
from tfx.analysis import memory as memmod
from tfx.analysis import mma_layout
from tfx.analysis import register_estimate
from tfx.analysis import roofline_gap
from tfx.analysis import smem_buffers
from tfx.analysis.counting import Counter, ScopeNode
from tfx.analysis.numbers import ceil_int, emax, emin, if_else, is_array, ratio, to_plain
from tfx.analysis.occupancy import (OccupancyLimits, Resources, blocks_per_sm_array, thread_register_cap,
                                    compute_occupancy)
from tfx.analysis.l2_reuse import wave_reuse
from tfx.analysis.machine import links_by_mesh
from tfx.analysis.performance import SpillInfo, predict, spill_fraction
from tfx.analysis.roofline import COMPUTE_UNITS, roofline
from tfx.errors import TfxError
from tfx.hw.units import format_count, format_counted, format_exact_bytes, format_percent, format_time_ns
from tfx.hw.units import format_times
from tfx.ir.bind import bind, check_shapes, profile_units
from tfx.ir.expr import units_level
from tfx.ir.nodes import Kernel, Module, Window

# The numbers a person reads first about one configuration, under their metric names: the
# predicted time and what bounds it, the roofline and its bound, CTAs per SM and their limiter
# (with every ``memory.peak.<level>``: Analysis.headline_metrics). tfx analyze --json carries
# them in ``metrics``, tfx simulate --json in ``analysis``, tfx explore --json in ``current``;
# the explorer's header reads them (tfx.present.analysis_report.headline). One list, so the
# surfaces cannot name, or leave out, different ones (docs/analysis-api.md).
HEADLINE_METRICS = ("performance.predicted_ns", "performance.bound_by", "performance.bound_engine",
                    "roofline.ideal_ns", "roofline.bound_by", "occupancy.blocks_per_sm", "occupancy.limiter",
                    "occupancy.occupancy_pct")

# Registers a thread needs besides its tiles (tfx.analysis.register_estimate, which counts the rest)
BASE_REGISTERS = register_estimate.BASE_REGISTERS


@dataclass
class Analysis:
    module: Module
    kernel: Kernel
    profile: Any
    params: dict
    root: ScopeNode
    domains: dict                 # domain name -> divisor of the total (units of that level)
    metrics: dict                 # flat dotted name -> value
    precision: dict               # flat dotted name -> precision
    footprint: dict               # tensor -> unique bytes
    peaks: dict                   # level -> LevelPeak
    occupancy: Any                # Occupancy or None (tiled accelerators)
    resources: Any
    launches: list
    terms: list
    # the code generator whose instruction patterns were priced (tfx.analysis.codegen.priced_name:
    # the one analyze() was given, codegen.DEFAULT where none); None on a tiled profile, whose
    # kernels its own tool chain compiles. No default here: a result names what was priced.
    codegen: str | None
    warnings: list = field(default_factory=list)
    # scope id -> its own Roofline (tfx.analysis.roofline): its flops and bytes at the device's
    # peaks, DRAM moving the tensors it touches once; empty for a sweep (array parameters)
    scope_roofline: dict = field(default_factory=dict)
    # the prediction's excess over the roofline by term (tfx.analysis.roofline_gap); None for a sweep
    roofline_gap: Any = None
    # the first launch's register estimate (tfx.analysis.register_estimate), what a thread needs
    # when no compiled count is given; None off a GPU
    registers: Any = None
    # the pipelined mma loops' tile buffers as the code generator allocates them
    # (tfx.analysis.smem_buffers.LoopBuffers): Triton's warp-mma loops hold S - 1
    loop_buffers: list = field(default_factory=list)
    # shared-memory A tiles of mmas allocated at the instruction's rows (smem_buffers.PaddedOperand)
    padded_operands: list = field(default_factory=list)
    # priced as timed after a harness's L2 clear (analyze's ``l2_clear``,
    # tfx.analysis.launch_handoff.L2_CLEAR_CONDITION); False: as the launch runs in a serving step
    l2_clear: bool = False
    # the hardware profile's counts the kernel's defaults and lets named (``units(sm)`` -> 132;
    # tfx.ir.bind): apart from ``params``, which lists the kernel's own names
    units: dict = field(default_factory=dict)

    @property
    def knobs(self) -> dict:
        """The knobs applied to the profile (fact path -> the text given), in order."""
        return dict(self.profile.knobs)

    # ------------------------------------------------------------ per-scope records
    def scope_records(self, node: ScopeNode, domain: str = "total") -> dict:
        """Flat records of one scope in one domain: flops per dtype, traffic per level."""
        src = node.logical_sum if domain == "logical" else node.total
        div = 1 if domain in ("logical", "total") else self.domains[domain]
        out = {}
        for key, v in src.items():
            name = metric_name(key)
            out[name] = out.get(name, 0) + (v if div == 1 else ratio(v, div))
        return out

    def predicted_ns(self):
        return self.metrics["performance.predicted_ns"]

    def headline_metrics(self) -> dict:
        """HEADLINE_METRICS that this result has, then every ``memory.peak.<level>`` (bytes), as
        plain JSON numbers and strings: the one dict every JSON surface embeds."""
        m = self.metrics
        out = {k: to_plain(m[k]) for k in HEADLINE_METRICS if k in m}
        out.update({k: to_plain(v) for k, v in m.items() if k.startswith("memory.peak.")})
        return out

    # ------------------------------------------------------------ json
    def to_json(self) -> dict:
        def scope(node: ScopeNode) -> dict:
            d = {
                "id": node.id, "kind": node.kind, "label": node.label, "line": node.line,
                "executions": to_plain(node.execs), "precision": node.precision,
                "records": {dom: {k: to_plain(v) for k, v in self.scope_records(node, dom).items()}
                            for dom in ("logical", "total", *self.domains)},
            }
            if node.kind == "loop":
                d["trips"] = to_plain(node.trips)
                d["stages"] = to_plain(node.stages)
            if node.kind == "mesh":
                d["positions"] = to_plain(node.positions)
            if node.id in self.scope_roofline:
                d["roofline"] = self.scope_roofline[node.id].to_json()
            if node.children:
                d["children"] = [scope(c) for c in node.children]
            return d

        return {
            "tool": "tfx", "kernel": self.kernel.name, "file": self.module.filename,
            "profile": self.profile.name, "knobs": dict(self.knobs), "codegen": self.codegen,
            **({"timing": "after_l2_clear"} if self.l2_clear else {}),
            "parameters": {k: to_plain(v) for k, v in self.params.items()},
            # the machine's counts the kernel named (units(sm) -> 132), only where it names one
            **({"units": {k: to_plain(v) for k, v in self.units.items()}} if self.units else {}),
            "metrics": {k: to_plain(v) for k, v in self.metrics.items()},
            "precision": dict(self.precision),
            "occupancy": self.occupancy.to_json() if self.occupancy is not None else None,
            "register_estimate": self.registers.to_json() if self.registers is not None else None,
            "pipeline_buffers": [lb.to_json() for lb in self.loop_buffers],
            "padded_operands": [p.to_json() for p in self.padded_operands],
            "performance": {"terms": [t.to_json() for t in self.terms],
                            "launches": [launch_json(lt) for lt in self.launches],
                            "roofline_gap": self.roofline_gap.to_json() if self.roofline_gap is not None else None},
            "warnings": list(self.warnings),
            "scopes": scope(self.root),
        }


def launch_json(lt) -> dict:
    """One launch's numbers that its waves and tail-wave lines write (``performance.LaunchTime``):
    positions on units x resident, the waves (a count: 49.65), the full waves and the tail's
    positions, one full batch's and the tail's ns, the launch's ns and what bounds it (and why
    latency: ``latency_from``), under the names of the LaunchTime fields, times with the unit in
    the key."""
    keys = ("positions", "units", "resident", "waves", "full_waves", "tail_positions", "batch_ns", "tail_ns",
            "total_ns", "bound_engine", "bound_by", "latency_from", "l2_hit_ratio")
    return {"scope": lt.scope, **{k: to_plain(getattr(lt, k)) for k in keys}}


def metric_name(key: tuple, domain: str | None = None) -> str:
    """The dotted metric name of a counted quantity, in one domain (or none, for scope records):
    ("flops", "bf16", "tensor") -> compute-cost.flops.bf16[.<domain>];
    ("flops", "f32", "special") -> compute-cost.special.f32[.<domain>];
    ("flops", "int32", "compare") -> compute-cost.compare.int32[.<domain>] (select likewise);
    ("traffic", "gmem", "read") -> memory.traffic.gmem[.<domain>].read;
    ("link", "pe", "bytes") -> memory.traffic.link.pe[.<domain>]."""
    kind, a, b = key
    dom = f".{domain}" if domain else ""
    if kind == "flops":
        return f"compute-cost.{'flops' if b in ('tensor', 'vector') else b}.{a}{dom}"
    if kind == "traffic":
        return f"memory.traffic.{a}{dom}.{b}"
    return f"memory.traffic.link.{a}{dom}"


def analyze(module: Module, kernel: Kernel | str | None, profile, params: Mapping[str, Any] | None = None,
            resources: Mapping[str, int] | None = None,
            occupancy_hint: int | None = None, check: bool = True, _what_if: bool = False,
            codegen: str | None = None, l2_clear: bool = False) -> Analysis:
    """Analyze ``kernel`` of ``module`` on ``profile`` (a loaded Profile, knobs applied by
    ``Profile.with_knobs``: the one place knobs are applied; the result remembers them).

    ``params`` override parameter defaults (ints, or numpy arrays for sweeps);
    ``resources`` (threads, regs, smem, static_smem) override the kernel's first launch;
    ``resources["later_launches"]`` maps a later launch's index (1: the second top-level mesh,
    a split-KV merge say) to that launch's own compiled counts (regs, spills, smem); ``codegen``: the
    code generator whose instructions are priced (``triton``, the default, or ``cutlass``:
    tfx.analysis.codegen). ``l2_clear``: price each launch as timed right after a harness clears
    the L2 by writing a buffer (triton.testing.do_bench; tfx.analysis.launch_handoff.
    L2_CLEAR_CONDITION): a launch whose stream is priced from a clean L2 then pays the dirty lines'
    write-back (the ``l2 write-back`` term). False, the default: as the launch runs among others
    in a serving step, which clears nothing.
    """
    cg = codegens.lookup(codegen)
    codegens.check_profile(cg, profile)
    if not isinstance(kernel, Kernel):
        kernel = module.kernel(kernel)
    units = profile_units(module, kernel, profile)
    env = bind(module, kernel, _as_sweep(kernel, params or {}, units), units=units)
    vector = any(is_array(v) for v in env.values())
    if check and not vector:
        check_shapes(module, kernel, env)
        from tfx.ir.levels import check_levels
        check_levels(module, kernel, profile)
    threads = None
    attr_threads = kernel.attr("threads")
    if attr_threads is not None:
        threads = attr_threads.value.evaluate(env)
    if resources and "threads" in resources:
        threads = resources["threads"]
    fewest = None
    if threads is not None and not (is_array(threads) and threads.size == 0):
        fewest = int(threads.min() if is_array(threads) else threads)
    if fewest is not None and fewest < 1 and attr_threads is not None:
        # a sweep (WARPS=0) can make it 0 for some configurations: refuse at the attribute
        raise TfxError(f"attr threads is {fewest} for some swept values; every configuration "
                       "needs at least 1 thread per CTA", where=attr_threads.loc)
    # an mma's shared-memory operands as its warps read them (tfx.analysis.mma_layout.shared_reads)
    counter = Counter(module, kernel, env, operand_reads=mma_layout.shared_reads(profile, threads),
                      profile=profile)
    root = counter.run()
    warnings: list[str] = []

    # ---------------------------------------------------------------- domains
    domains: dict[str, Any] = {}
    top_meshes = [c for c in root.children if c.kind == "mesh"]
    for node in root.walk():
        if node.kind == "mesh":
            domains[node.level] = emax(domains.get(node.level, 0), node.execs) if is_array(node.execs) else max(domains.get(node.level, 0), node.execs)
    if profile.kind == "gpu" and "cta" in domains and threads is not None and "thread" not in domains:
        domains["warp"] = domains["cta"] * ratio(threads, 32) if not is_array(threads) else domains["cta"] * threads / 32
        domains["thread"] = domains["cta"] * threads

    # ---------------------------------------------------------------- memory
    footprint, footprint_precision = memmod.footprints(kernel, env, counter.info)
    spread = threads is not None and "thread" not in {n.level for n in root.walk() if n.kind == "mesh"}
    loop_buffers = smem_buffers.pipeline_buffers(root, counter.env, profile, threads, cg)
    padded_operands = smem_buffers.padded_operands(root, counter, profile, threads, cg)
    allocation = smem_buffers.peak_live_overrides(loop_buffers, padded_operands)
    live = memmod.peak_live(root, counter, **allocation)
    peaks = _per_thread(live, threads, spread)
    _capacity_checks(module, kernel, profile, peaks, warnings, vector, root.total)

    # ---------------------------------------------------------------- occupancy, per launch
    # Each top-level mesh is one launch with resources of its own. Declared resources
    # (attrs, --resources) describe the first launch, the kernel proper; later launches
    # (a split-K merge, say) are estimated from their own tiles unless the caller gives their
    # compiled counts (resources["later_launches"][i]: a measured CSV's merge_regs, ...).
    occupancy = None
    res = None
    blocks_by_launch: dict = {}
    spill_by_launch: dict = {}
    blocks = 1
    registers = None
    if profile.kind == "gpu":
        limits = OccupancyLimits.from_profile(profile)
        hint = occupancy_hint
        if hint is None and kernel.attr("occupancy") is not None:
            hint = int(kernel.attr("occupancy").value.evaluate(env)) if not vector else None
        for i, mesh in enumerate(top_meshes):
            # (a kernel that is one launch has the whole kernel's peaks: the same statements)
            one_launch = len(kernel.body) == 1 and kernel.body[0] is mesh.region
            launch_live = live if one_launch else memmod.peak_live(root, counter, [mesh.region], **allocation)
            launch_peaks = _per_thread(launch_live, threads, spread)
            declared = resources if i == 0 else ((resources or {}).get("later_launches") or {}).get(i)
            rmem_thread = launch_peaks["rmem"].bytes if "rmem" in launch_peaks else 0
            est = register_estimate.estimate(mesh, counter, profile, threads, rmem_thread, cg.per_thread_copies)
            r, origin = _resources(kernel if i == 0 else None, env, declared, launch_peaks, threads, limits)
            # the compiler keeps a thread under the cap one CTA of its size leaves it
            # (occupancy.thread_register_cap: 255, 128 at 512 threads, 64 at 1,024)
            cap = thread_register_cap(limits, r["threads"])
            est = replace(est, cap=cap)
            if i == 0:
                registers = est
            # a given count under the cap, else the estimate's allocation (a streamed row: the few
            # dozen the spilled code runs in): RegisterEstimate.priced
            regs = est.priced(r["regs"])
            r["regs"] = regs
            # Tiles that need more registers than a thread has spill, whatever the compiler
            # reports it allocated: the estimate decides.
            estimated = est.total
            # (a row body whose held tiles do not fit spills its chains' intermediates too:
            # RegisterEstimate.spill_total)
            spill_regs = if_else(estimated > cap, emax(est.spill_total - cap, 0), 0)
            # How bad a spill is depends on what spills. When an mma accumulator alone does not
            # fit a thread's registers, the tensor-core op cannot keep it resident: the whole
            # tile set round-trips through local memory every k-step. Otherwise the compiler
            # spills temporaries: only the excess registers round-trip.
            acc_bytes = _accumulator_bytes_per_thread(mesh, counter, threads, spread)
            acc_regs = ceil_int(register_estimate.registers_of(acc_bytes)) + BASE_REGISTERS
            catastrophic = acc_regs > cap
            # A row body (the estimate's held tiles, register_estimate.estimate) whose held tiles
            # exceed the cap by the cap again is not spilled a few values at a time: ptxas keeps a few dozen
            # registers and moves the whole row through local memory, every intermediate of its
            # chains a tile there (the campaigns: 16-warp rows at 256 values a thread compile to
            # 32 registers and 694-782 spilled words, 2-warp ones at 512 to 32 and 1,150-1,376,
            # against the section-5 live tiles' 512 and 1,024-1,100 words)
            streamed_row = est.streams
            whole = (catastrophic | streamed_row) if is_array(catastrophic, streamed_row) else (
                bool(catastrophic) or bool(streamed_row))
            severe = if_else(whole, rmem_thread, spill_regs * 4)
            spill_bytes = if_else(spill_regs > 0, severe, 0)
            compiled_spills = declared.get("spills") if declared else None
            if compiled_spills is not None:
                # The compiler's own count (ptxas, Triton's n_spills: 4-byte words of local
                # memory per thread) replaces the estimate.
                spill_bytes = 4 * compiled_spills
            spill_by_launch[mesh.id] = SpillInfo(
                spill_bytes, spill_fraction(spill_bytes, rmem_thread),
                r["smem"] + r.get("static_smem", 0), compiled_spills is not None, regs,
                declared.get("local_bytes") if declared else None)
            if vector:
                b, _ = blocks_per_sm_array(limits, r["threads"], regs, r["smem"], r.get("static_smem", 0))
                blocks_by_launch[mesh.id] = b
                if i == 0:
                    blocks = b
                continue
            resobj = Resources(threads=int(r["threads"]), regs_per_thread=int(regs),
                               smem_dynamic=int(r["smem"]), smem_static=int(r.get("static_smem", 0)),
                               origin=origin)
            occ = compute_occupancy(limits, resobj, hint if i == 0 else None)
            blocks_by_launch[mesh.id] = occ.blocks_per_sm if occ.feasible else 1
            where_ = "" if len(top_meshes) == 1 else f" ({mesh.label} at line {mesh.line})"
            if i == 0:
                occupancy, res, blocks = occ, resobj, occ.blocks_per_sm
            if not occ.feasible:
                warnings.append(f"infeasible{where_}: {occ.reason}")
            elif i == 0 and hint is not None and not occ.hint_met:
                warnings.append(f"occupancy hint {hint} is not met: {occ.explanation()[-1]}")
            if compiled_spills:
                warnings.append(f"register spill{where_} (compiled): {format_exact_bytes(4 * compiled_spills, 'thread')} in local "
                                f"memory, {format_percent(spill_fraction(4 * compiled_spills, rmem_thread))} "
                                "of the thread's register tiles; every op on them moves that share of its "
                                "register bytes through local memory")
            elif spill_regs > 0 and compiled_spills is None:
                what = (f"the mma accumulator alone needs about {format_count(acc_regs)}: all {format_exact_bytes(rmem_thread, 'thread')} "
                        "of tiles round-trip through local memory every k-step") if catastrophic else (
                        f"the row's held tiles are {format_count(estimated - cap)} registers over the cap: all "
                        f"{format_exact_bytes(rmem_thread, 'thread')} of its tiles go through local memory; the row runs in "
                        f"{format_count(regs)} registers") if streamed_row else (
                        f"{format_exact_bytes(spill_regs * 4, 'thread')} of the row's tiles round-trip through local memory "
                        "(its held tiles do not fit, so its chains' intermediates are tiles too)") if est.from_rows else (
                        f"{format_exact_bytes(spill_regs * 4, 'thread')} of temporaries round-trip through local memory every k-step")
                warnings.append(f"register spill{where_}: about {format_count(estimated)} registers/thread needed, "
                                f"{format_count(cap)} available{_cap_reason(cap, r['threads'], limits)}; {what}")
        if vector:
            import numpy as np
            blocks_by_launch = {k: np.maximum(v, 1) for k, v in blocks_by_launch.items()}

    # ---------------------------------------------------------------- wave reuse (L2)
    wave_info = wave_reuse(root, kernel, env, profile, blocks_by_launch)

    # ---------------------------------------------------------------- performance
    launches, predicted, terms = predict(root, counter, profile, blocks_by_launch, threads, wave_info,
                                         spill_bytes_per_thread=spill_by_launch, codegen=cg, l2_clear=l2_clear)
    if cg.name != codegens.DEFAULT and profile.kind == "gpu":
        from tfx.analysis.performance import Term
        terms.insert(0, Term("code generator", 0, codegens.describe(cg)))

    metrics, precision = _metrics(root, domains, footprint, footprint_precision, peaks, profile, occupancy, launches, predicted,
                                  blocks, vector, wave_info)
    if top_meshes and top_meshes[0].id in spill_by_launch:
        # 4-byte words a thread of the first launch keeps in local memory: the compiler's count
        # where given, else the register estimate's excess over the cap (tfx validate --estimate
        # reads it to tell spilling rows apart)
        first = spill_by_launch[top_meshes[0].id]
        metrics["occupancy.spilled_registers"] = ceil_int(register_estimate.registers_of(first.bytes_per_thread))
        precision["occupancy.spilled_registers"] = "exact" if first.compiled else "estimate"
    if (not vector and occupancy is not None and occupancy.hint_budget is not None
            and occupancy.hint_budget.reachable and not _what_if):
        # What the hinted occupancy would have gained: the same kernel compiled to the budget.
        b = occupancy.hint_budget
        r = occupancy.resources
        budget = {"threads": r.threads, "regs": r.regs_per_thread, "smem": r.smem_dynamic,
                  "static_smem": r.smem_static}
        if "registers" in b.blockers and b.max_regs_per_thread is not None:
            budget["regs"] = min(r.regs_per_thread, b.max_regs_per_thread)
        if "shared memory" in b.blockers and b.max_smem_per_cta is not None:
            budget["smem"] = max(min(r.smem_dynamic, b.max_smem_per_cta - r.smem_static), 0)
        hinted = analyze(module, kernel, profile, params, budget, None, check=False, _what_if=True, codegen=cg,
                         l2_clear=l2_clear)
        new_ns = hinted.metrics["performance.predicted_ns"]
        old_ns = metrics["performance.predicted_ns"]
        metrics["occupancy.hint_predicted_ns"] = new_ns
        precision["occupancy.hint_predicted_ns"] = "estimate"
        from tfx.analysis.performance import Term
        terms.append(Term("hint", new_ns - old_ns,
                          f"compiled for occupancy={b.hint} ({budget['threads']} threads, {budget['regs']} regs, "
                          f"{format_exact_bytes(budget['smem'] + budget['static_smem'])} smem: "
                          f"{format_counted(hinted.metrics['occupancy.blocks_per_sm'], 'CTA/SM', 'CTAs/SM')}) it would take "
                          f"{format_time_ns(float(new_ns))}, {_hint_change(float(old_ns), float(new_ns))}"))
    if not vector and not _what_if:
        # a configuration of a bundled kernel with values no campaign timed: its prediction is unchecked there
        from tfx.analysis.coverage import analysis_warning
        unchecked = analysis_warning(module, kernel, env, profile, codegens.priced_name(cg, profile))
        if unchecked:
            warnings.append(unchecked)
    scope_roof = {} if vector else _scope_rooflines(root, profile, footprint)
    gap = None if vector else roofline_gap.attribute(launches, metrics["performance.predicted_ns"],
                                                     metrics["roofline.ideal_ns"], scope_roof.get(root.id))
    return Analysis(module=module, kernel=kernel, profile=profile,
                    params={k: v for k, v in env.items() if units_level(k) is None}, units=units,
                    root=root, domains=domains, metrics=metrics, precision=precision, footprint=footprint,
                    peaks=peaks, occupancy=occupancy, resources=res, launches=launches, terms=terms,
                    warnings=warnings, scope_roofline=scope_roof, roofline_gap=gap,
                    codegen=codegens.priced_name(cg, profile), registers=registers, l2_clear=bool(l2_clear),
                    loop_buffers=loop_buffers, padded_operands=padded_operands)


def _hint_change(old_ns: float, new_ns: float) -> str:
    """How the hinted build compares, the larger time over the smaller: ``100, 80`` -> ``"1.25x
    faster"``, ``100, 125`` -> ``"1.25x slower"``; a change that rounds to 1.00x reads ``"no
    faster"`` (the hint changes nothing a person can read)."""
    ratio = format_times(max(old_ns, new_ns) / min(old_ns, new_ns)) if min(old_ns, new_ns) > 0 else None
    if ratio is None or ratio == format_times(1):
        return "no faster"
    return f"{ratio} {'faster' if new_ns < old_ns else 'slower'}"


def _op_tensors(node: ScopeNode) -> list[str]:
    """The tensors the op of one node (not its children) reads or writes through windows."""
    op = node.op
    if op is None or not hasattr(op, "operands"):
        return []
    names = [o.tensor for o in op.operands if isinstance(o, Window)]
    if getattr(op, "target", None) is not None:
        names.append(op.target.tensor)
    return names


def tensors_touched_by_scope(root: ScopeNode) -> dict[str, set[str]]:
    """Scope id -> the names of the tensors the scope's ops read or write (through windows), for
    each scope of ``root``'s tree: gathered from the leaves up in one pass, where each scope
    walked its own subtree again (72 walks an analysis of flash_prefill)."""
    touched: dict[str, set[str]] = {}

    def gather(node: ScopeNode) -> set[str]:
        names = touched[node.id] = set(_op_tensors(node))
        for c in node.children:
            names |= gather(c)
        return names
    gather(root)
    return touched


def _scope_rooflines(root: ScopeNode, profile, footprint: dict) -> dict:
    """Each scope's roofline; the root's is the kernel's (footprint of every tensor), each
    other's the footprint of the tensors it touches."""
    touched = tensors_touched_by_scope(root)
    out = {}
    for node in root.walk():
        if node is root:
            fp = sum(footprint.values()) if footprint else None
        else:
            fp = sum(footprint[t] for t in touched[node.id] if t in footprint)
        out[node.id] = roofline(node.total, profile, fp)
    return out


def _accumulator_bytes_per_thread(mesh: ScopeNode, counter, threads, spread: bool):
    """The largest mma accumulator tile of a launch, per thread (0 without an mma)."""
    best = 0
    for node in mesh.walk():
        if node.kind == "op" and node.op is not None and node.op.opcode in ("mma", "dot"):
            ty = counter.info.result_types.get(id(node.op))
            if ty is None or ty.level != "rmem":
                continue
            elems = 1
            for d in ty.shape:
                elems = elems * d.evaluate(counter.env)
            b = ratio(elems * ty.dtype.bits, 8)
            if spread and threads is not None:
                b = ratio(b, threads)
            best = emax(best, b)
    return best


def _per_thread(peaks: dict, threads, spread: bool) -> dict:
    """rmem values in CTA-level scopes are spread over the CTA's threads."""
    if "rmem" in peaks and spread:
        p = peaks["rmem"]
        peaks = dict(peaks)
        peaks["rmem"] = memmod.LevelPeak("rmem", ratio(p.bytes, threads) if not is_array(p.bytes, threads)
                                         else p.bytes / threads, p.scope)
    return peaks


def _cap_reason(cap, threads, limits) -> str:
    """Why a thread has fewer than the ISA's registers, when it does."""
    if cap >= limits.max_regs_per_thread:
        return ""
    return f" (one CTA of {format_count(threads)} threads must fit the {format_count(limits.regs_per_block)}-register file)"


def _as_sweep(kernel: Kernel, params: Mapping[str, Any], units: Mapping[str, Any]) -> Mapping[str, Any]:
    """Where some parameters are numpy arrays (a sweep), every other parameter of the kernel too,
    given or defaulted, as an array of one element on every axis, as explore passes them: a
    plain int beside the arrays enters the arithmetic exactly, as Fractions, and a Fraction
    times an int array is an object array of Fractions, which numpy's sqrt and isnan refuse
    (gqa_decode swept over STAGES alone raised a TypeError)."""
    arrays = [v for v in params.values() if is_array(v)]
    if not arrays:
        return params
    import numpy as np
    ndim = max(np.ndim(v) for v in arrays)
    out = dict(params)
    defaults: dict = dict(units)    # the machine's counts a default names (units(sm))
    for p in kernel.params:
        value = out[p.name] if p.name in out else p.default.evaluate(defaults)
        defaults[p.name] = value
        if p.name not in out or not is_array(out[p.name]):
            out[p.name] = np.full((1,) * ndim, value, dtype=np.int64) if not is_array(value) else value
    return out


def _resources(kernel, env, overrides, peaks, threads, limits):
    """threads/regs/smem per CTA: --resources, then the kernel's attrs (``kernel`` None: none
    apply), then estimates from the IR; regs None where nobody gave them (the caller allocates
    the register estimate's under the thread's cap: RegisterEstimate.allocated)."""
    overrides = dict(overrides or {})
    out = {}
    origin = "declared"
    for key, attr in (("threads", "threads"), ("regs", "regs"), ("smem", "smem"), ("static_smem", "static_smem")):
        if key in overrides:
            out[key] = overrides[key]
            origin = "cli"
        elif kernel is not None and kernel.attr(attr) is not None:
            out[key] = kernel.attr(attr).value.evaluate(env)
    if "threads" not in out:
        out["threads"] = threads if threads is not None else 128
    if "regs" not in out:
        out["regs"] = None
        origin = "estimated"
    if "smem" not in out:
        out["smem"] = ceil_int(peaks["smem"].bytes) if "smem" in peaks else 0
        origin = "estimated" if origin != "cli" else origin
    out.setdefault("static_smem", 0)
    return out, origin


def _capacity_checks(module, kernel, profile, peaks, warnings, vector, root_total) -> None:
    if vector:
        return
    levels = profile.memory_levels()
    alias = {a: n for n, l in levels.items() for a in l.aliases}
    for lvl, peak in peaks.items():
        name = alias.get(lvl, lvl)
        level = levels.get(name)
        if level is None or not level.capacity:
            continue
        if name == "rmem" and profile.kind == "gpu":
            # a GPU thread's registers are the register estimate's (register_estimate, with the
            # cap one CTA leaves a thread: occupancy.thread_register_cap) and its spill warning
            # says when they do not fit; section 5's live tiles against 255 x 4 B would warn of
            # rows the compiler holds (rmsnorm's defaults: 1,024 B live, 161 registers held)
            continue
        cap = level.capacity
        if lvl == "smem" and profile.get("occupancy.smem_per_block_optin") is not None:
            cap = profile.value("occupancy.smem_per_block_optin")
        if peak.bytes > cap:
            # exact bytes, as allocations are written (tfx.present.formatting): rmsnorm's
            # 1,024.06 B of registers a thread over its 1,020 B read '1.02 KB exceeds its
            # capacity 1.02 KB' with decimal prefixes
            warnings.append(f"peak {lvl} {format_count(float(peak.bytes))} B exceeds its capacity "
                            f"{format_count(float(cap))} B (reached in {peak.scope})")
    links = links_by_mesh(profile)
    for mesh in sorted({a for (kind, a, _) in root_total if kind == "link"} - set(links)):
        warnings.append(f"no link of {profile.name} joins the positions of `{mesh}` (no links.<name> "
                        f"with that scope): its transfers take no time")


def _metrics(root, domains, footprint, footprint_precision, peaks, profile, occupancy, launches, predicted, blocks, vector,
             wave_info):
    m: dict[str, Any] = {}
    prec: dict[str, str] = {}
    dom_list = ("logical", "total", *domains)
    for key, v in root.total.items():
        logical = root.logical_sum.get(key, 0)
        for dom in dom_list:
            val = logical if dom == "logical" else v if dom == "total" else ratio(v, domains[dom])
            name = metric_name(key, dom)
            m[name] = m.get(name, 0) + val
    for k in m:
        prec[k] = root.precision
    for t, b in footprint.items():
        m[f"memory.footprint.{t}.logical"] = b
        prec[f"memory.footprint.{t}.logical"] = footprint_precision[t]
    for lvl, p in peaks.items():
        m[f"memory.peak.{lvl}"] = p.bytes
        prec[f"memory.peak.{lvl}"] = "upper"

    # Roofline over the whole kernel: device-aggregate rates (tfx.analysis.roofline).
    roof = roofline(root.total, profile, sum(footprint.values()) if footprint else None)
    for name, t in roof.terms.items():
        m[f"roofline.{'compute' if name in COMPUTE_UNITS else 'memory'}_ns.{name}"] = t
    m["roofline.compute_ns"] = roof.compute_ns
    m["roofline.memory_ns"] = roof.memory_ns
    m["roofline.ideal_ns"] = ideal = roof.ideal_ns
    if roof.bound_by is not None:
        m["roofline.bound_by"] = roof.bound_by
    if occupancy is not None:
        m["occupancy.blocks_per_sm"] = occupancy.blocks_per_sm
        m["occupancy.limiter"] = occupancy.limiter
        m["occupancy.active_warps"] = occupancy.active_warps
        m["occupancy.occupancy_pct"] = occupancy.occupancy_pct
        m["occupancy.hint_met"] = occupancy.hint_met
    elif vector:
        m["occupancy.blocks_per_sm"] = blocks
    for mesh_id, info in wave_info.items():
        if info.window is not None:
            window, capacity = info.window
            m["memory.l2.reuse_window"] = m.get("memory.l2.reuse_window", 0) + window if len(wave_info) > 1 else window
            if not vector:
                m["memory.l2.reuse_fits"] = bool(window <= capacity)
            break
    waves = 0
    for lt in launches:
        waves = waves + lt.waves
    m["performance.waves"] = waves
    m["performance.predicted_ns"] = ceil_int(emax(predicted, ideal))
    cleared = sum(float(lt.l2_clear_ns) for lt in launches) if not vector else 0
    if cleared:
        # what timing the launches after an L2 clear adds (tfx.analysis.launch_handoff.L2_CLEAR_CONDITION),
        # in predicted_ns where analyze was given l2_clear: the measured-beside-predicted views add it
        m["performance.l2_clear_write_back_ns"] = cleared
    if not vector and launches:
        lt = launches[0]
        m["performance.bound_engine"] = lt.bound_engine
        m["performance.bound_by"] = lt.bound_by
        m["performance.l2_hit_ratio"] = lt.l2_hit_ratio
    return m, prec
