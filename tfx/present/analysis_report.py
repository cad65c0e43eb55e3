"""An ``Analysis`` as text: the summary block, the annotated IR, the Traffic table's rows
and the header line the explorer shows.

Everything here reads the one Analysis object and formats through
``tfx.present.formatting``; no number is recomputed.
"""

from __future__ import annotations

import math

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tfx.hw.units import format_percent
from tfx.present import formatting as fmt
from tfx.present.layout import wrap, wrap_all

if TYPE_CHECKING:  # the explorer imports this module before it needs numpy (tfx.analysis)
    from tfx.analysis.counting import ScopeNode

DOMAINS_ORDER = ("logical", "total", "cta", "warp", "thread", "cube", "pe")


def inputs_line(a) -> str:
    """``kernel gemm (kernels/gemm.tile) on h200_sxm with memory.l2.bandwidth=x2``: what was
    analysed, with every knob applied, and on a GPU the code generator priced
    (``..., compiled as triton``: tfx.analysis.codegen; a tiled profile has none), and the timing
    condition where it is not a serving step's (``..., timed after an L2 clear``: analyze's l2_clear)."""
    return (f"kernel {a.kernel.name} ({a.module.filename}) on {a.profile.name}"
            + fmt.with_knobs(a.knobs) + fmt.compiled_as(a.codegen) + fmt.timed_as(getattr(a, "l2_clear", False)))


def parameters_line(a) -> str:
    """``M=8192, ..., CTAS=132``, then the machine's counts the kernel named, whose they are:
    ``; h200_sxm's units(sm)=132`` (tfx run says them alike)."""
    from tfx.analysis.numbers import to_plain
    units = {k: to_plain(v) for k, v in (getattr(a, "units", None) or {}).items()}
    return (", ".join(f"{k}={to_plain(v)}" for k, v in a.params.items())
            + fmt.machine_counts(a.profile.name, units))


def roofline_line(a) -> str:
    """``roofline 198.28 us, bound by l2 (compute 128.63 us, memory 198.28 us)``."""
    m = a.metrics
    return (f"roofline {fmt.ns(m['roofline.ideal_ns'])}, bound by {m.get('roofline.bound_by', '?')}"
            f" (compute {fmt.ns(m['roofline.compute_ns'])}, memory {fmt.ns(m['roofline.memory_ns'])})")


def _bound_of_prediction(a) -> str:
    """`` (bound by latency)``: the predicted time's own bound beside it, as tfx simulate, the
    explorer's header and its Roofline pane write it; the line read 'predicted 99.51 us   roofline
    55.93 us, bound by dram' for rmsnorm, whose schedule the latency bounds (said only at the end
    of the summary). '' where the analysis names none (a sweep)."""
    bound = a.metrics.get("performance.bound_by")
    return f" (bound by {bound})" if bound else ""


def roofline_terms(a) -> list[tuple[str, str, str]]:
    """(term, time, share of the ideal) for each roofline term: compute units then memory
    levels, each largest first."""
    m = a.metrics
    ideal = fmt.num(m["roofline.ideal_ns"]) or 1.0
    out = []
    for prefix in ("roofline.compute_ns.", "roofline.memory_ns."):
        terms = sorted(((k[len(prefix):], v) for k, v in m.items() if k.startswith(prefix)),
                       key=lambda kv: -fmt.num(kv[1]))
        out += [(name, fmt.ns(v), fmt.percent(fmt.num(v) / ideal * 100)) for name, v in terms]
    return out


def roofline_breakdown(a) -> list[str]:
    """``compute 128.63 us = tensor 128.38 us + vector 251.00 ns`` (compute units add up) and
    ``memory 198.28 us = max(l2 198.28 us, smem 128.38 us, dram 20.97 us)`` (levels overlap)."""
    m = a.metrics
    out = []
    for roof, prefix, join in (("compute", "roofline.compute_ns.", " + "), ("memory", "roofline.memory_ns.", ", ")):
        terms = sorted(((k[len(prefix):], v) for k, v in m.items() if k.startswith(prefix)),
                       key=lambda kv: -fmt.num(kv[1]))
        if not terms:
            continue
        parts = join.join(f"{n} {fmt.ns(v)}" for n, v in terms)
        if roof == "memory" and len(terms) > 1:
            parts = f"max({parts})"
        out.append(f"{roof:<7} {fmt.ns(m[f'roofline.{roof}_ns'])} = {parts}")
    return out


def beyond_roofline(a) -> str:
    """How far the prediction sits above the roofline and what binds the schedule:
    ``2.17 ms is 2.36x the roofline (917.53 us, +1.25 ms); the schedule is bound by dram``."""
    m = a.metrics
    pred, ideal = fmt.num(m["performance.predicted_ns"]), fmt.num(m["roofline.ideal_ns"])
    bound = m.get("performance.bound_by")
    tail = f"; the schedule is bound by {bound}" if bound else ""
    if not ideal or pred <= ideal:
        return f"{fmt.ns(pred)}, at the roofline{tail}"
    return (f"{fmt.ns(pred)} is {fmt.times(pred / ideal)} the roofline ({fmt.ns(ideal)}, "
            f"+{fmt.ns(pred - ideal)}{gap_causes(a)}){tail}")


def gap_causes(a) -> str:
    """``: tail-wave excess 6.44 us, launch 3.00 us, fill 700 ns, not attributed 7.85 us``: the terms
    that put the prediction above the roofline, largest first (tfx.analysis.roofline_gap);
    empty at the roofline or for a sweep."""
    g = getattr(a, "roofline_gap", None)
    if g is None or not g.gap_ns:
        return ""
    parts = [f"{name} {fmt.ns(ns)}" for name, ns in g.terms]
    if g.not_attributed_ns >= 0.5:
        parts.append(f"not attributed {fmt.ns(g.not_attributed_ns)}")
    elif g.not_attributed_ns <= -0.5:
        parts.append(f"the terms overlap by {fmt.ns(-g.not_attributed_ns)}")
    return ": " + ", ".join(parts)


def intensity_level(a) -> str | None:
    """The memory level arithmetic intensity counts bytes at, for every scope: the kernel's
    (``Roofline.intensity_level``, the Roofline chart's x axis); None without a roofline."""
    roof = a.scope_roofline.get(a.root.id)
    return roof.intensity_level() if roof is not None else None


def scope_intensity(a, node, level: str | None) -> tuple[str, dict[str, str]]:
    """One scope's arithmetic intensity at ``level`` and the fraction of each peak it runs at
    when it takes its roofline time, formatted: ("63.0 flop/B", {"tensor": "64.7%", ...});
    ("", {}) for a scope without a roofline (a sweep)."""
    sr = a.scope_roofline.get(node.id)
    if sr is None:
        return "", {}
    ai = sr.arithmetic_intensity().get(level) if level else None
    return (fmt.intensity(ai) if ai is not None else "",
            {t: fmt.ratio_pct(f) for t, f in sr.peak_fractions().items()})


def scope_roofline_lines(a) -> list[str]:
    """The summary's per-scope block: each region scope (the kernel, meshes, loops) with its
    arithmetic intensity and the fraction of each peak at its roofline time."""
    level = intensity_level(a)
    if level is None:
        return []
    order = list(a.scope_roofline[a.root.id].terms)    # every scope lists terms as the kernel does
    out = [f"  scopes at their roofline time: flop per {level} byte; fraction of each peak"]
    for depth, node in scope_rows(a):
        if node.kind == "op" or node.kind == "call" or node.kind == "capture":
            continue
        ai, fracs = scope_intensity(a, node, level)
        if not fracs:
            continue
        out.append(f"    {'  ' * depth}{node.label}: {ai or '-'}; "
                   + ", ".join(f"{t} {fracs[t]}" for t in sorted(
                       fracs, key=lambda t: order.index(t) if t in order else len(order))))
    return out


def op_records(a, node: ScopeNode, domain: str = "total") -> str:
    """The records an op line ends with: flops and traffic in one domain."""
    recs = a.scope_records(node, domain)
    parts = []
    for k, v in recs.items():
        if not v:
            continue
        if k.startswith("compute-cost.flops."):
            parts.append(f"{k.split('.')[-1]} {fmt.flop(v)}")
        elif k.startswith("compute-cost.special."):
            parts.append(f"sfu {fmt.ops(v)}")
        elif k.startswith(("compute-cost.compare.", "compute-cost.select.")):
            kind = "cmp" if k.startswith("compute-cost.compare.") else "sel"
            parts.append(f"{k.split('.')[-1]} {kind} {fmt.ops(v)}")
        elif k.startswith("memory.traffic.") and not k.startswith("memory.traffic.link."):
            _, _, level, rw = k.split(".")
            parts.append(f"{level}:{'r' if rw == 'read' else 'w'} {fmt.nbytes(v)}")
        elif k.startswith("memory.traffic.link."):
            parts.append(f"link {fmt.nbytes(v)}")
    return ", ".join(parts)


def annotated_ir(a, domain: str = "total", width: int | None = None) -> str:
    """The canonical kernel text; each op line ends with its records, each region with its counts.
    Where a line with its comment is wider than ``width`` (an 80-column terminal), the comment
    goes on lines of its own just above it, at its indent (``// x65,536  gmem:r 1.07 GB, ...``);
    code wider than ``width`` breaks at spaces, continuing 4 columns in (the language reads
    whitespace, newlines included, as one space: the text still parses), and a source comment
    continues as ``// ...``. ``width`` None (a pipe, the TUI, the golden reports): every line
    whole, each comment at column 62 of its line."""
    from tfx.lang.printer import INDENT, print_kernel, print_op, region_header
    lines: list[str] = []
    k = a.kernel
    header = print_kernel(k).split("\n")
    # Header: everything before the body (params, lets, attrs, tensors).
    body_start = next((i for i, l in enumerate(header) if l.startswith(INDENT + "mesh") or
                       l.startswith(INDENT + "loop") or (l.startswith(INDENT + "%")) or
                       l.startswith(INDENT + "store")), len(header) - 1)

    def code(text: str) -> None:
        body = text.lstrip(" ")
        if width is None or len(text) <= width:
            lines.append(text)
        elif body.startswith("//"):
            pad = text[:len(text) - len(body)] + "// "
            lines.extend(pad + part for part in wrap(body[2:].lstrip(" "), max(width - len(pad), 20), 0))
        else:
            lines.extend(wrap(text, width))

    def line(pad: str, text: str, comment: str) -> None:
        whole = f"{text:<60}  // {comment}"
        if width is None or len(whole) <= width:
            lines.append(whole)
            return
        room = max(width - len(pad) - 3, 20)
        lines.extend(f"{pad}// {part}" for part in wrap(comment, room, 0))
        code(text)

    def emit(node: ScopeNode, depth: int):
        pad = INDENT * depth
        for c in node.children:
            if c.kind == "capture":
                continue
            if c.kind == "op":
                text = pad + print_op(c.op)
                recs = op_records(a, c, domain)
                line(pad, text, f"x{fmt.count(c.execs)}" + (f"  {recs}" if recs else ""))
            elif c.kind == "call":
                line(pad, pad + print_op(c.op), op_records(a, c, domain))
            else:
                info = ""
                if c.kind == "mesh":
                    info = fmt.counted(c.positions, "position")
                elif c.kind == "loop":
                    info = fmt.counted(c.trips, "trip") + (f", {c.stages} stages" if c.stages and c.stages > 1 else "")
                if c.precision != "exact":
                    info += f", {c.precision}"
                line(pad, pad + region_header(c.region) + " {", info)
                emit(c, depth + 1)
                lines.append(pad + "}")

    for text in header[:body_start]:
        code(text)
    emit(a.root, 1)
    lines.append("}")
    return "\n".join(lines)


# where a breakdown term's detail starts: 4 + the name in 10 + 1 + the time in 10 + 2; a detail
# past the width continues there
TERM_DETAIL_COLUMN = 27


def estimated_registers_line(a) -> str | None:
    """Where the registers came from when nobody compiled the kernel (the register estimate's
    terms: tfx.analysis.register_estimate), for the text summary and the Roofline pane alike;
    None where the first launch's registers were given, or there is no occupancy."""
    if a.registers is None or a.occupancy is None or a.resources.origin != "estimated":
        return None
    if a.resources.regs_per_thread != a.registers.allocated:
        return None               # given (a declared regs attr beside an estimated smem)
    from tfx.analysis.register_estimate import describe
    return f"registers a thread, estimated: {describe(a.registers)}"


def estimated_smem_line(a) -> str | None:
    """Why the estimated shared memory holds fewer tiles than a pipelined loop's stages
    (tfx.analysis.smem_buffers: Triton's warp-mma loops), for the text summary and the Roofline
    pane alike; None where the smem was given or every loop holds its stages."""
    if a.occupancy is None or a.resources.origin != "estimated" or "smem" not in a.peaks:
        return None
    if a.resources.smem_dynamic != math.ceil(a.peaks["smem"].bytes):
        return None               # given (a declared smem attr beside estimated registers)
    from tfx.analysis.smem_buffers import describe
    return describe(a.loop_buffers, a.padded_operands)


def summary(a, width: int | None = None) -> str:
    """The summary block; each line past ``width`` wraps at words (tfx.present.layout.wrap), a
    breakdown term's detail under its column (TERM_DETAIL_COLUMN); None keeps every line whole."""
    m = a.metrics
    out = [inputs_line(a), f"  parameters: {parameters_line(a)}",
           f"  predicted {fmt.ns(m['performance.predicted_ns'])}{_bound_of_prediction(a)}   {roofline_line(a)}"]
    out += [f"    {line}" for line in roofline_breakdown(a)]
    out += scope_roofline_lines(a)
    flops = [(k.split(".")[2], v) for k, v in m.items() if k.startswith("compute-cost.flops.") and k.endswith(".total")]
    out.append("  work: " + (", ".join(f"{fmt.flop(v)} {d}" for d, v in flops) or "no arithmetic"))
    levels = sorted({k.split(".")[2] for k in m if k.startswith("memory.traffic.")} - {"link"})
    for lvl in levels:
        r = m.get(f"memory.traffic.{lvl}.total.read", 0)
        w = m.get(f"memory.traffic.{lvl}.total.write", 0)
        out.append(f"  {lvl:<5} read {fmt.nbytes(r):>10}  write {fmt.nbytes(w):>10}"
                   + (f"  peak {fmt.nbytes(m[f'memory.peak.{lvl}'])}" if f"memory.peak.{lvl}" in m else ""))
    links = sorted({k.split(".")[3] for k in m if k.startswith("memory.traffic.link.")})
    if links:
        out.append("  links " + ", ".join(f"{lk} {fmt.nbytes(m.get(f'memory.traffic.link.{lk}.total', 0))}"
                                          for lk in links) + " between positions")
    if a.footprint:
        # an upper bound (rows named by data: gathers, run-time starts) says so
        out.append("  footprint: " + ", ".join(
            f"{t} {'<= ' if a.precision.get(f'memory.footprint.{t}.logical') == 'upper' else ''}"
            f"{fmt.nbytes(b)}" for t, b in a.footprint.items()))
    if "memory.l2.reuse_window" in m:
        fits = m.get("memory.l2.reuse_fits")
        out.append(f"  L2 reuse window: {fmt.nbytes(m['memory.l2.reuse_window'])} per wave must stay resident"
                   f" ({'fits' if fits else 'does not fit'} in L2); hit ratio "
                   f"{fmt.ratio_pct(m.get('performance.l2_hit_ratio', 0))}")
    if a.occupancy is not None:
        out.append("  occupancy: " + a.occupancy.summary()
                   + (f" [resources {a.resources.origin}: {a.resources.threads} threads, "
                      f"{a.resources.regs_per_thread} regs, {fmt.allocation(a.resources.smem_per_cta)} smem]"))
        for line in a.occupancy.explanation()[1:]:
            out.append(f"    {line}")
        for estimate in (estimated_registers_line(a), estimated_smem_line(a)):
            if estimate is not None:
                out.append(f"    {estimate}")
    out.append("  predicted time: " + beyond_roofline(a))
    out = wrap_all(out, width)
    for t in a.terms:
        out += wrap(f"    {t.name:<10} {fmt.ns(t.ns):>10}  {t.detail}", width, TERM_DETAIL_COLUMN)
    out += wrap_all((f"  warning: {w}" for w in a.warnings), width)
    return "\n".join(out)


def render_text(a, domain: str = "total", width: int | None = None) -> str:
    """``tfx analyze``'s text: the summary, a blank line, the annotated IR; ``width`` the
    columns it fits (tfx.cli.common.text_width; None: every line whole)."""
    return summary(a, width) + "\n\n" + annotated_ir(a, domain, width) + "\n"


# ---------------------------------------------------------------- the explorer's rows

def headline(a) -> dict[str, str]:
    """The explorer's header: predicted time, the bound of that time, occupancy. The bound is
    the schedule's (``performance.bound_by``), as `tfx analyze`, `tfx simulate` and the Roofline
    pane name it beside the predicted time ('predicted 118.80 us (bound by latency)'); the
    header named the roofline's ('dram-bound' for rmsnorm's default, whose roofline is DRAM's
    but whose predicted time the latency sets)."""
    return headline_of(a.headline_metrics())


def headline_of(m: dict) -> dict[str, str]:
    """``headline`` of a result's headline metrics (Analysis.headline_metrics, or the JSON
    objects that carry them: simulate's ``analysis``, explore's ``current``): ``predicted``,
    ``bound``, ``occupancy`` ('2 CTAs/SM (12.5%)', 'n/a' on a tiled profile) and ``limiter``
    ('' where none)."""
    return {
        "predicted": fmt.ns(m["performance.predicted_ns"]),
        "bound": str(m.get("performance.bound_by") or m.get("roofline.bound_by", "?")),
        "occupancy": (f"{fmt.ctas_per_sm(m['occupancy.blocks_per_sm'])} ({fmt.percent(m['occupancy.occupancy_pct'])})"
                      if m.get("occupancy.occupancy_pct") is not None else "n/a"),
        "limiter": str(m.get("occupancy.limiter") or ""),
    }


def scope_rows(a) -> list:
    """(depth, node) for every scope of the tree, depth-first."""
    out = []

    def walk(n, d):
        out.append((d, n))
        for c in n.children:
            walk(c, d + 1)

    walk(a.root, 0)
    return out


def domains_of(a) -> list[str]:
    return ["logical", "total", *[d for d in DOMAINS_ORDER[2:] if d in a.domains],
            *[d for d in a.domains if d not in DOMAINS_ORDER]]


@dataclass
class TrafficTable:
    columns: list[str]
    rows: list[list[str]]
    keys: list[str] = field(default_factory=list)   # scope ids
    note: str = ""                                  # what the derived columns mean


def traffic_table(a, domain: str) -> TrafficTable:
    """Rows: scopes; columns: flops per dtype, read/write per level, footprint, and the scope's
    roofline time as a share of the kernel's (``Analysis.scope_roofline``) with its bound."""
    from tfx.analysis.analyze import tensors_touched_by_scope
    from tfx.errors import TfxError
    # (dtype, metric kind): flops (tensor and vector work), special, compare, select
    dtypes = sorted({(x, "flops" if y in ("tensor", "vector") else y) for (k, x, y) in a.root.total if k == "flops"})
    label = {"flops": "flop", "special": "sfu op", "compare": "cmp op", "select": "sel op"}
    levels = []
    for (k, x, y) in a.root.total:
        if k == "traffic" and x not in levels:
            levels.append(x)
    order = {n: i for i, n in enumerate(a.profile.memory_levels())}

    def level_order(l):
        try:
            return order.get(a.profile.memory_level(l).name, 99)
        except TfxError:
            return 99

    levels.sort(key=level_order)
    cols = ["scope"]
    cols += [f"{d} {label.get(s, s + ' op')}" for d, s in dtypes]
    for l in levels:
        cols += [f"{l} rd", f"{l} wr"]
    cols += ["footprint", "time%", "bound"]
    fp = a.footprint
    roof = a.scope_roofline
    ai_level = intensity_level(a)
    peak_terms = list(roof[a.root.id].terms) if a.root.id in roof else []
    if ai_level is not None:
        cols.append(f"flop/B {ai_level}")
    cols += [f"{t} peak%" for t in peak_terms]
    root_t = fmt.num(roof[a.root.id].ideal_ns) if a.root.id in roof else 0.0
    rows, keys = [], []
    touched_by_scope = tensors_touched_by_scope(a.root)
    for depth, node in scope_rows(a):
        rec = a.scope_records(node, domain)
        r = ["  " * depth + node.label]
        for d, s in dtypes:
            key = f"compute-cost.{s}.{d}"
            r.append((fmt.flop if s == "flops" else fmt.ops)(rec[key]) if key in rec else "")
        for l in levels:
            for rw in ("read", "write"):
                key = f"memory.traffic.{l}.{rw}"
                r.append(fmt.nbytes(rec[key]) if key in rec else "")
        touched = touched_by_scope[node.id]
        r.append(fmt.nbytes(sum(fmt.num(fp[t]) for t in touched if t in fp)) if touched else "")
        sr = roof.get(node.id)
        r.append(format_percent(fmt.num(sr.ideal_ns) / root_t, sign=False) if sr is not None and root_t else "")
        r.append(sr.bound_by or "" if sr is not None else "")
        ai, fracs = scope_intensity(a, node, ai_level)
        if ai_level is not None:
            r.append(ai)
        r += [fracs.get(t, "") for t in peak_terms]
        rows.append(r)
        keys.append(node.id)
    note = ("time% = the scope's roofline time over the kernel's"
            + (f"; flop/B {ai_level} = flop per {ai_level} byte (the Roofline chart's x axis)" if ai_level else "")
            + ("; peak% = each term's rate at the scope's roofline time over its peak" if peak_terms else ""))
    return TrafficTable(cols, rows, keys, note)
