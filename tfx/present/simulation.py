"""A simulation beside its analysis: the three times side by side, each with its named
bound, and where the simulation departs from the prediction, by how much and why."""

from __future__ import annotations

from tfx.present import formatting as fmt
from tfx.present.analysis_report import gap_causes


def comparison_times(r) -> list[tuple[str, str]]:
    """``[("simulated", "165.23 us (bound by dram)"), ("predicted", ...), ("roofline", ...)]``: the
    three times of comparison_lines' first line, for a narrow terminal to print one a line."""
    m = r.analysis.metrics
    pred, ideal = fmt.num(m["performance.predicted_ns"]), fmt.num(m["roofline.ideal_ns"])
    return [("simulated", f"{fmt.ns(r.makespan_ns)} (bound by {r.bound_by})"),
            ("predicted", f"{fmt.ns(pred)} (bound by {m.get('performance.bound_by', '?')})"),
            ("roofline", f"{fmt.ns(ideal)} (bound by {m.get('roofline.bound_by', '?')})")]


def comparison_lines(r) -> list[str]:
    """``simulated 165.23 us (bound by dram)   predicted 130.50 us (bound by dram)   roofline
    111.85 us (bound by dram)`` and the gap's size and reason."""
    m = r.analysis.metrics
    sim, pred, ideal = r.makespan_ns, fmt.num(m["performance.predicted_ns"]), fmt.num(m["roofline.ideal_ns"])
    out = ["   ".join(f"{label} {text}" for label, text in comparison_times(r))]
    if ideal:
        # the prediction's excess by term, as on the analysis's predicted-time line
        over = f" (+{fmt.ns(pred - ideal)}{gap_causes(r.analysis)})" if pred > ideal else ""
        out.append(f"vs roofline: simulated {fmt.times(sim / ideal)}, predicted {fmt.times(pred / ideal)}{over}")
    gap = r.comparison()
    if gap["gap_ns"]:
        kinds = gap["gap_stalls"]
        why = ("stalls the closed form averages: "
               + ", ".join(f"{k['kind']} {fmt.ratio_pct(k['share'])} ({fmt.ns(k['ns'])})" for k in kinds)
               + f" of {fmt.ns(sum(k['ns'] for k in kinds))} summed over engines"
               if kinds else "the event order the closed form averages")
        out.append(f"gap: simulated {'+' if sim > pred else '-'}{fmt.ns(abs(sim - pred))} "
                   f"({fmt.times(sim / pred)} the prediction): {why}")
    return out


def efficiency_line(r) -> str:
    """``efficiency 97.4% (copy engine busy / the waves' makespan; bound by l2)``: how busy the
    bottleneck engine kept, with the bound named as everywhere else. The waves' makespan, not
    the makespan: SimResult.pipeline_efficiency leaves the launch overhead out (gemm 4096^3:
    209.90 us busy / (218.58 - 3.00 us launch) = 97.4%), where the engine table's util divides
    by the whole makespan (209.90 / 218.58 = 96.0%); the line said '/ makespan' beside both."""
    return (f"efficiency    {fmt.ratio_pct(r.pipeline_efficiency)} ({r.bottleneck_engine} engine busy / "
            f"the waves' makespan; bound by {r.bound_by})   commands {fmt.count(r.commands)}   dispatch {fmt.ns(r.dispatch_ns)}")
