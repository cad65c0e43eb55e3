"""Text rendering of an Analysis: the summary block and the annotated IR.

Everything here reads the one Analysis object; no number is recomputed.
"""

from __future__ import annotations

from tfx.analysis.counting import ScopeNode
from tfx.analysis.numbers import to_plain
from tfx.hw.units import format_bytes, format_count, format_time_ns
from tfx.lang.printer import INDENT, print_kernel, print_op, region_header


def _f(x) -> float:
    return float(to_plain(x)) if not isinstance(to_plain(x), (int, float)) else to_plain(x)


def human_metric(name: str, value) -> str:
    """A metric in human units: bytes as KB/MB/GB, times as ns/us/ms, counts with separators."""
    if isinstance(value, str) or value is None or isinstance(value, bool):
        return str(value)
    v = _f(value)
    if name.startswith("memory.") and not name.endswith("_pct"):
        return format_bytes(v)
    if name.endswith("_ns") or ".memory_ns." in name or name.endswith("ns"):
        return format_time_ns(v)
    if name.endswith("_pct"):
        return f"{v:.1f}%"
    if name.endswith("ratio"):
        return f"{v * 100:.1f}%"
    if "flops" in name or "special" in name or name.startswith(("compute-cost.compare.", "compute-cost.select.")):
        return format_count(v)
    if isinstance(v, float) and not v.is_integer():
        return f"{v:.2f}"
    return f"{int(v):,}"


def op_records(a, node: ScopeNode, domain: str = "total") -> str:
    """The records an op line ends with: flops and traffic in one domain."""
    recs = a.scope_records(node, domain)
    parts = []
    for k, v in recs.items():
        if not v:
            continue
        if k.startswith("compute-cost.flops."):
            parts.append(f"{k.split('.')[-1]} {format_count(_f(v))}flop")
        elif k.startswith("compute-cost.special."):
            parts.append(f"sfu {format_count(_f(v))}")
        elif k.startswith(("compute-cost.compare.", "compute-cost.select.")):
            kind = "cmp" if k.startswith("compute-cost.compare.") else "sel"
            parts.append(f"{k.split('.')[-1]} {kind} {format_count(_f(v))}")
        elif k.startswith("memory.traffic.") and not k.startswith("memory.traffic.link."):
            _, _, level, rw = k.split(".")
            parts.append(f"{level}:{'r' if rw == 'read' else 'w'} {format_bytes(_f(v))}")
        elif k.startswith("memory.traffic.link."):
            parts.append(f"link {format_bytes(_f(v))}")
    return ", ".join(parts)


def annotated_ir(a, domain: str = "total") -> str:
    """The canonical kernel text; each op line ends with its records, each region with its counts."""
    lines: list[str] = []
    k = a.kernel
    header = print_kernel(k).split("\n")
    # Header: everything before the body (params, lets, attrs, tensors).
    body_start = next((i for i, l in enumerate(header) if l.startswith(INDENT + "mesh") or
                       l.startswith(INDENT + "loop") or (l.startswith(INDENT + "%")) or
                       l.startswith(INDENT + "store")), len(header) - 1)
    lines.extend(header[:body_start])

    def emit(node: ScopeNode, depth: int):
        pad = INDENT * depth
        for c in node.children:
            if c.kind == "capture":
                continue
            if c.kind == "op":
                text = pad + print_op(c.op)
                recs = op_records(a, c, domain)
                lines.append(f"{text:<60}  // x{format_count(_f(c.execs))}" + (f"  {recs}" if recs else ""))
            elif c.kind == "call":
                lines.append(f"{pad + print_op(c.op):<60}  // {op_records(a, c, domain)}")
            else:
                info = ""
                if c.kind == "mesh":
                    info = f"{format_count(_f(c.positions))} positions"
                elif c.kind == "loop":
                    info = f"{format_count(_f(c.trips))} trips" + (f", {c.stages} stages" if c.stages and c.stages > 1 else "")
                if c.precision != "exact":
                    info += f", {c.precision}"
                lines.append(f"{pad + region_header(c.region) + ' {':<60}  // {info}")
                emit(c, depth + 1)
                lines.append(pad + "}")

    emit(a.root, 1)
    lines.append("}")
    return "\n".join(lines)


def summary(a) -> str:
    m = a.metrics
    out = []
    params = ", ".join(f"{k}={to_plain(v)}" for k, v in a.params.items())
    out.append(f"kernel {a.kernel.name} ({a.module.filename}) on {a.profile.name}"
               + (f" with {', '.join(f'{k}={v}' for k, v in a.knobs.items())}" if a.knobs else ""))
    out.append(f"  parameters: {params}")
    out.append(f"  predicted {format_time_ns(_f(m['performance.predicted_ns']))}"
               f"   roofline {format_time_ns(_f(m['roofline.ideal_ns']))} ({m.get('roofline.bound_by', '?')}-bound:"
               f" compute {format_time_ns(_f(m['roofline.compute_ns']))}, memory {format_time_ns(_f(m['roofline.memory_ns']))})")
    flops = [(k.split(".")[2], v) for k, v in m.items() if k.startswith("compute-cost.flops.") and k.endswith(".total")]
    # comparisons and selections (masking) are their own work kinds, listed after the flops
    lanes = [(k.split(".")[1], k.split(".")[2], v) for k, v in m.items()
             if k.startswith(("compute-cost.compare.", "compute-cost.select.")) and k.endswith(".total")]
    work = [f"{format_count(_f(v))} {d} flop" for d, v in flops]
    work += [f"{format_count(_f(v))} {d} {'cmp' if kind == 'compare' else 'sel'}" for kind, d, v in lanes]
    out.append("  work: " + (", ".join(work) or "no arithmetic"))
    levels = sorted({k.split(".")[2] for k in m if k.startswith("memory.traffic.")} - {"link"})
    for lvl in levels:
        r = m.get(f"memory.traffic.{lvl}.total.read", 0)
        w = m.get(f"memory.traffic.{lvl}.total.write", 0)
        out.append(f"  {lvl:<5} read {format_bytes(_f(r)):>10}  write {format_bytes(_f(w)):>10}"
                   + (f"  peak {format_bytes(_f(m[f'memory.peak.{lvl}']))}" if f"memory.peak.{lvl}" in m else ""))
    links = sorted({k.split(".")[3] for k in m if k.startswith("memory.traffic.link.")})
    if links:
        out.append("  links " + ", ".join(f"{lk} {format_bytes(_f(m.get(f'memory.traffic.link.{lk}.total', 0)))}"
                                          for lk in links) + " between positions")
    if a.footprint:
        # an upper bound (rows named by data: gathers, run-time starts) says so
        out.append("  footprint: " + ", ".join(
            f"{t} {'<= ' if a.precision.get(f'memory.footprint.{t}.logical') == 'upper' else ''}"
            f"{format_bytes(_f(b))}" for t, b in a.footprint.items()))
    if "memory.l2.reuse_window" in m:
        fits = m.get("memory.l2.reuse_fits")
        out.append(f"  L2 reuse window: {format_bytes(_f(m['memory.l2.reuse_window']))} per wave must stay resident"
                   f" ({'fits' if fits else 'does not fit'} in L2); hit ratio "
                   f"{_f(m.get('performance.l2_hit_ratio', 0)) * 100:.1f}%")
    if a.occupancy is not None:
        out.append("  occupancy: " + a.occupancy.summary()
                   + (f" [resources {a.resources.origin}: {a.resources.threads} threads, "
                      f"{a.resources.regs_per_thread} regs, {a.resources.smem_per_cta:,} B smem]"))
        for line in a.occupancy.explanation()[1:]:
            out.append(f"    {line}")
    out.append("  predicted time:")
    for t in a.terms:
        out.append(f"    {t.name:<10} {format_time_ns(_f(t.ns)):>10}  {t.detail}")
    for w in a.warnings:
        out.append(f"  warning: {w}")
    return "\n".join(out)


def render_text(a, domain: str = "total") -> str:
    return summary(a) + "\n\n" + annotated_ir(a, domain) + "\n"
