"""One unit policy on every surface (tfx.present.formatting; docs/architecture.md, "Units").

The predicted time's breakdown lines are written in tfx.analysis with the low-level helpers
(tfx.hw.units) that tfx.present.formatting wraps: bytes with decimal prefixes, bandwidths in
B/s with decimal prefixes (a rate the analysis holds in B/ns shows as GB/s: 1 B/ns = 1e9 B/s),
times in ns/us/ms/s. Before session 10 several lines wrote rates as ``128.7 B/ns`` beside
``23 GB/s per SM`` for the same unit, and ``(4 MiB)`` beside decimal MB everywhere else.
"""

from __future__ import annotations

import re
from pathlib import Path

from tfx.hw.units import format_duration_s, formula_bytes, formula_flop_rate, formula_rate
from tfx.present import formatting as fmt

ROOT = Path(__file__).resolve().parent.parent
FORMATTERS = ("tfx/hw/units.py", "tfx/present/formatting.py")


def _source_lines(skip=FORMATTERS):
    """(path relative to the repo, line number, line) of every line of tfx's Python sources,
    the files in ``skip`` left out (the formatters write units by hand on purpose)."""
    for path in sorted((ROOT / "tfx").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel in skip:
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            yield rel, n, line


def test_formula_numbers_keep_four_significant_digits():
    """4,101 B and 4,096 B differ in a formula: 4.101 KB vs 4.096 KB (two decimals would print
    4.10 KB for both); the SM's L2 port 65 B/cycle x 1.98 GHz = 128.7 B/ns = 128.7 GB/s; the
    DRAM 4800 GB/s x 0.883 = 4,238.4 B/ns = 4.238 TB/s; 522.4 B stays in bytes."""
    assert formula_bytes(4101) == "4.101 KB" and formula_bytes(4096) == "4.096 KB"
    assert formula_rate(65 * 1.98) == "128.7 GB/s"
    assert formula_rate(4800 * 0.883) == "4.238 TB/s"
    assert formula_bytes(522.4) == "522.40 B"


def test_formula_flop_rates_are_flop_per_second_with_four_digits():
    """A tensor rate the analysis holds in flop/ns is written as every rate is, per second with a
    decimal prefix and four significant digits (mma_layout wrote '6,001.5 flop/ns' by hand):
    bf16 4,096 flop/cycle x 1.98 GHz x 0.74 = 6,001.4592 flop/ns = 6.0014592e12 flop/s ->
    '6.001 TFLOP/s'; fp8 8,192 x 1.98 = 16,220.16 -> '16.22 TFLOP/s', x 0.700 = 11,354.112 ->
    '11.35 TFLOP/s'; 950 flop/ns = 950 GFLOP/s stays under the next prefix."""
    assert formula_flop_rate(4096 * 1.98 * 0.74) == "6.001 TFLOP/s"
    assert formula_flop_rate(8192 * 1.98) == "16.22 TFLOP/s"
    assert formula_flop_rate(8192 * 1.98 * 0.700) == "11.35 TFLOP/s"
    assert formula_flop_rate(950) == "950 GFLOP/s"


def test_compact_axis_times_and_durations():
    """The timeline's axis label: 3,084.2 ns = 3.08 us in three digits, no space; 512 ns;
    1.5e9 ns = 1.5 s. A budget's duration: 21.3 s -> '21 s' (two digits), 600 s = 10 min,
    36,000 s = 10 h."""
    assert fmt.ns_compact(3084.2) == "3.08us" and fmt.ns_compact(512) == "512ns"
    assert fmt.ns_compact(1.5e9) == "1.5s"
    assert format_duration_s(21.3) == "21 s" and format_duration_s(600) == "10 min"
    assert format_duration_s(36_000) == "10 h"


def test_no_surface_writes_binary_prefixes_or_bytes_per_ns():
    """Every golden report (tfx analyze on the bundled kernels) and every f-string of tfx that
    puts a unit after a value: no 'B/ns', 'MiB' or 'GiB' (tfx.hw.units, which parses those
    units from profiles and knobs, is the one exception)."""
    for path in sorted((ROOT / "snapshots" / "analyze").glob("*.txt")):
        text = path.read_text()
        for unit in ("B/ns", "MiB", "GiB"):
            assert unit not in text, f"{path.name}: {unit}"
    pattern = re.compile(r"\}\s*(B/ns|MiB|GiB)\b")
    for rel, n, line in _source_lines(skip=("tfx/hw/units.py",)):
        assert not pattern.search(line), f"{rel}:{n}: {line.strip()}"


def test_no_f_string_writes_a_time_or_a_rate_by_hand():
    """A time or a bandwidth in an f-string goes through tfx.hw.units (format_time_ns, formula_rate,
    format_bandwidth..., or tfx.present.formatting's ns/bandwidth): '{port:,.2f} ns' printed
    1,282.95 ns where the policy writes 1.28 us, '{rate:,.2f} GB/s' 229.87 GB/s inside a formula
    whose rates carry 4 significant digits (229.9 GB/s), '{lat:g} ns' 1000 ns for 1 us, and
    '{rate:,.1f} flop/ns' 6,001.5 flop/ns where formula_flop_rate writes 6.001 TFLOP/s.
    Exempt: the formatters themselves (tfx/hw/units.py; formatting.ns_compact writes '512ns');
    a slope in 'ns per GB/s' (a coefficient, not a time); an option echoed as the user typed it
    ('TTFT <= {args.ttft_ms} ms')."""
    pattern = re.compile(r"\}\s*(ns|us|µs|ms|B/s|KB/s|MB/s|GB/s|TB/s|flop/ns|[GTP]?FLOP/s)\b(?! per GB/s)")
    echoed = re.compile(r"\{args\.\w+\}\s*(ns|us|ms)\b")
    found = [f"{rel}:{n}: {line.strip()}" for rel, n, line in _source_lines()
             if pattern.search(echoed.sub("", line))]
    assert found == []


def test_profile_facts_keep_the_digits_they_are_stated_with():
    """h200_sxm states memory.gmem.efficiency 0.883 (4238 / 4800 GB/s) and
    pipeline.wgmma_clock_fraction 0.876 (1.735 / 1.98 GHz); the breakdown multiplies by them
    ('x efficiency 0.883', 'clock x 0.876'), so `tfx hw show` and the Hardware pane (fmt.fact)
    write them so too, not 0.88 and 0.88. A whole number keeps its separators: 4,096 flop/cycle."""
    from tfx.hw import load_profile
    p = load_profile("h200_sxm")
    assert fmt.fact_value(p.fact("memory.gmem.efficiency")) == "0.883"
    assert fmt.fact(p.fact("memory.gmem.efficiency")) == "0.883 ratio"
    assert fmt.fact_value(p.fact("pipeline.wgmma_clock_fraction")) == "0.876"
    assert fmt.fact(p.fact("compute.tensor.bf16")) == "4,096 flop/cycle"


def test_the_validation_table_writes_every_percent_to_one_decimal():
    """tfx validate's per-group table: the spilling rows' median |error| 0.1134 reads 11.3%, as
    the group's 0.047 reads 4.7% (it printed '11%'), and the best of the top three's 0.0042 0.4%."""
    from types import SimpleNamespace

    from tfx.analysis.measured import format_table
    g = SimpleNamespace(family="rmsnorm", shape="8192x2048", n=14, median_abs_error=0.047, median_error=-0.022,
                        spearman=0.92, regret=0.017, top_picks_regret=0.0042, n_spilling=4,
                        spilling_median_abs_error=0.1134,
                        spill_ranked_first_wrongly=False)
    row = format_table([g]).splitlines()[1]
    assert row.split()[-1] == "11.3%" and "4.7%" in row and "-2.2%" in row and "1.7%" in row and " 0.4% " in row


def test_the_models_launch_costs_are_written_as_times():
    """calibration/h200/measured/launch.csv states triton_empty cuda_graph_100 at 0.52928 us a
    launch: 529.28 ns, three significant digits as the model's formulas write times -> '529 ns'
    (was '0.529 us' by hand, and '1 launches x 0.52928 us' in the stage formula); a profile without
    a measurement (b200) takes the GPU estimate, 1,500 ns -> '1.5 us'."""
    from tfx.model.system import load_system
    assert load_system("h200_sxm").launch_note.startswith("measured 529 ns per kernel inside a CUDA graph")
    assert load_system("b200").launch_note.startswith("estimate 1.5 us per kernel under CUDA graphs")


def test_a_stage_of_one_launch_says_launch():
    """llama3-8b decode on h200_sxm: the embedding gather runs once a step, 1 launch of 529.28 ns
    (written 529 ns, three significant digits) -> '; + 1 launch x 529 ns' (it read '1 launches');
    attn_norm runs once in each of the 32 layers -> '; + 32 launches x 529 ns'."""
    from tfx.model import load_model
    from tfx.model.latency import latency
    from tfx.model.system import Parallelism, Workload, load_system
    r = latency(load_model("llama3-8b"), load_system("h200_sxm"), Workload(), Parallelism())
    formula = {s.name: s.formula for s in r.stages}
    assert formula["embedding"].endswith("; + 1 launch x 529 ns")
    assert formula["attn_norm"].endswith("; x 32 layers; + 32 launches x 529 ns")


def test_no_f_string_writes_exact_bytes_waves_or_whole_percents_by_hand():
    """Exact bytes go through tfx.hw.units.format_exact_bytes ('8,480 B/thread', '98,304 B'),
    waves through format_counted ('1 wave', '5.82 waves': the explorer's metric writes a whole
    count whole) and shares through format_percent (one decimal): '{x:,} B/thread', '{w:.2f} waves'
    ('1.00 waves'), '{s * 100:.0f}%' ('13%' beside '3.9%' in one spill line) and '{s * 100:.1f}%'
    (the same digits, formatted apart in 22 places) were written by hand
    in analyze, performance, occupancy, row_spill, mma_layout, launch_handoff and the Roofline pane.
    Exempt: the formatters themselves (tfx/hw/units.py, tfx/present/formatting.py). The deployment
    pane's share of the best throughput, a whole percent in its own column (one decimal would push
    the 80-column suggest table's memory unit off the screen), is written by format_percent(x, 0)
    since session 19, no longer by hand."""
    patterns = [re.compile(r"\{[^{}]*:,(\.0f)?\}\s*B(/|\b)"), re.compile(r"\{[^{}]*:,?\.\d+f\}\s*(waves?|of a wave)\b"),
                re.compile(r"\* ?100[^{}]*:\.[01]f\}%")]
    found = [f"{rel}:{n}: {line.strip()}" for rel, n, line in _source_lines()
             if any(p.search(line) for p in patterns)]
    assert found == []
