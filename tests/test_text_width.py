"""Text outputs fit an 80-column terminal (COLUMNS=80); a pipe (no COLUMNS, not a terminal:
tfx.cli.common.WIDE_OUTPUT = 200 columns) keeps the wide form, as tfx explore's tables do."""

from __future__ import annotations

from pathlib import Path

from tfx.cli.main import main
from tfx.cli.model_latency import stage_table
from tfx.model import load_model
from tfx.model.latency import latency
from tfx.model.system import Parallelism, Workload, load_system

ROOT = Path(__file__).resolve().parent.parent
GEMM = str(ROOT / "kernels" / "gemm.tile")


def _out(capsys, monkeypatch, columns, *argv):
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", str(columns))
    assert main(list(argv)) == 0
    return capsys.readouterr().out.splitlines()


def test_hw_list_wraps_descriptions_under_their_column(capsys, monkeypatch):
    """Names pad to the longest, a100_40gb_hgx8 (14), then 2 spaces, the kind in 5, 2 spaces: the
    description starts at column 14 + 2 + 5 + 2 = 23 and has 80 - 23 = 57 at 80 columns. sip's
    'SIP tiled accelerator (reference design): 8 cubes x 8 PEs, per-PE HBM 256 B/ns and 1 MiB TCM'
    (92 characters; 23 + 92 = 115 columns on one line) breaks after '... 8 cubes x 8' (53; adding
    ' PEs,' makes 58 > 57): 23 + 53 = 76, then 23 spaces + 'PEs, per-PE HBM 256 B/ns and 1 MiB TCM'
    (38) = 61. A pipe keeps the 115-column line."""
    out = _out(capsys, monkeypatch, 80, "hw", "list")
    at = out.index("sip" + " " * 11 + "  tiled  SIP tiled accelerator (reference design): 8 cubes x 8")
    assert out[at + 1] == " " * 23 + "PEs, per-PE HBM 256 B/ns and 1 MiB TCM"
    assert max(map(len, out)) <= 80
    out = _out(capsys, monkeypatch, None, "hw", "list")
    sip = next(line for line in out if line.startswith("sip "))
    assert len(sip) == 115 and sip.endswith("8 cubes x 8 PEs, per-PE HBM 256 B/ns and 1 MiB TCM")


def test_model_latency_stage_table_fits_80_columns():
    """llama3-8b decode on h200_sxm (batch 1, context 8,192, TP 1). The wide table: 2 + 'stage'
    in 24 + 4 x (1 + 11) + (1 + 10) + 2 + 'bound' = 2 + 24 + 48 + 11 + 7 = 92 for the header, 94
    for a 'latency' row: past 80. Narrow, each column as wide as its widest cell, 2 apart: the
    longest stage names are 'activation' and 'final_norm' (10); a time is 'x.xx ns' (7) to
    'xxx.xx us' (9): total, memory and launch reach 9 (a GEMM's hundreds of us; 529.28 ns of
    launch), compute 9 too (gate_proj's 112.56 us: its tile at batch 1 has BM = 32, 32 rows of
    mma for one token: linear.tile's fastest candidate at M = 1, N = 28672, K = 4096), comm 7 (one
    device: '0.00 ns'); the bound 'latency' (7). Rows take 2 + 10 + (2 + 9) + (2 + 9) + (2 + 9)
    + (2 + 7) + (2 + 9) + 2 + 7 = 74 at most; the header, 'bound' (5), 72."""
    r = latency(load_model("llama3-8b"), load_system("h200_sxm"), Workload(mode="decode", batch=1, context=8192),
                Parallelism())
    wide = stage_table(r)
    assert wide[0] == "  stage" + " " * 19 + "       total     compute      memory        comm     launch  bound"
    assert max(map(len, wide)) == 94
    narrow = stage_table(r, 80)
    assert narrow[0] == ("  stage     " + "  " + "    total" + "  " + "  compute" + "  " + "   memory"
                         + "  " + "   comm" + "  " + "   launch" + "  bound")
    assert len(narrow[0]) == 72 and max(map(len, narrow)) == 74
    assert [line.split()[0] for line in narrow] == [line.split()[0] for line in wide]


def test_simulate_prints_its_three_times_one_a_line_at_80(capsys, monkeypatch):
    """gemm at its defaults: 'simulated T (bound by l2)   predicted T (bound by l2)   roofline T
    (bound by smem)' is 2 + 106 = 108 columns (three 'label xxx.xx us (bound by ...)' of 33, 33
    and 34, 3 spaces between): at 80 the three go one a line, the labels padded to 'simulated'
    (9): 2 + 9 + 1 + 9 ('xxx.xx us') + 14 (' (bound by l2)') = 35, the roofline's 16 (' (bound by
    smem)') 37."""
    out = _out(capsys, monkeypatch, 80, "simulate", GEMM, "--hw", "h200_sxm")
    at = next(i for i, line in enumerate(out) if line.startswith("  simulated "))
    assert out[at + 1].startswith("  predicted ") and out[at + 2].startswith("  roofline  ")
    assert [len(out[at + i]) for i in range(3)] == [2 + 9 + 1 + 9 + 14] * 2 + [2 + 9 + 1 + 9 + 16]
    out = _out(capsys, monkeypatch, None, "simulate", GEMM, "--hw", "h200_sxm")
    line = next(line for line in out if line.startswith("  simulated "))
    assert "(bound by l2)   predicted " in line and "(bound by l2)   roofline " in line and len(line) == 108


def test_wrap_breaks_at_words_keeps_a_number_with_its_unit():
    """'  predicted 216.26 us   roofline 198.28 us' (42 columns) at 30: '  predicted 216.26 us' is 21;
    adding '   roofline' makes 32 > 30, so the break comes there; the continuation starts at the
    indent 2 + 4 = 6: '      roofline 198.28 us' (24). At 18, '  predicted 216.26' would fit
    (2 + 9 + 1 + 6 = 18) but a number keeps its unit: '  predicted' (11), then '      216.26 us'
    (15), and so on. No width (a pipe) or a line that fits: the line as it is."""
    from tfx.present.layout import wrap
    line = "  predicted 216.26 us   roofline 198.28 us"
    assert wrap(line, 30) == ["  predicted 216.26 us", "      roofline 198.28 us"]
    assert wrap(line, 18) == ["  predicted", "      216.26 us", "      roofline", "      198.28 us"]
    assert wrap(line, None) == [line] and wrap(line, 42) == [line]


def test_analyze_fits_80_columns(capsys, monkeypatch):
    """gemm at its defaults. '  parameters: M=4096, N=4096, K=4096, BM=128, BN=128, BK=64,
    WARPS=4, STAGES=3,' is 2 + 12 + 65 = 79 columns; ' GROUP_M=8' would make 89, so it goes on a
    line of its own at the indent 2 + 4 = 6. The mesh's header '  mesh cta[cdiv(M, BM), cdiv(N,
    BN)] as (pm, pn) swizzle(GROUP_M) capture(A, B, C) {' is 84 columns of code: its comment
    '1,024 positions' (32 x 32 CTAs) goes on the line above at its indent, '  // 1,024
    positions', and the code breaks at its last space within 80, after 'capture(A, B,' (79),
    continuing 2 + 4 = 6 in: '      C) {'. The load of A: 'x65,536' (1,024
    CTAs x 64 trips) with its traffic above it: 65,536 x 128 x 64 x 2 B = 1.07 GB read from gmem
    and written to smem. A pipe keeps each line whole (89 columns)."""
    out = _out(capsys, monkeypatch, 80, "analyze", GEMM)
    at = out.index("  parameters: M=4096, N=4096, K=4096, BM=128, BN=128, BK=64, WARPS=4, STAGES=3,")
    assert out[at + 1] == "      GROUP_M=8"
    mesh = next(i for i, line in enumerate(out) if line.startswith("  mesh cta["))
    assert out[mesh - 1] == "  // 1,024 positions"
    assert out[mesh:mesh + 2] == ["  mesh cta[cdiv(M, BM), cdiv(N, BN)] as (pm, pn) swizzle(GROUP_M) capture(A, B,",
                                  "      C) {"]
    load = out.index("      %a = load A[pm * BM : BM, k * BK : BK] -> smem")
    assert out[load - 1] == "      // x65,536  gmem:r 1.07 GB, smem:w 1.07 GB"
    assert max(map(len, out)) <= 80
    out = _out(capsys, monkeypatch, None, "analyze", GEMM)
    assert "  parameters: M=4096, N=4096, K=4096, BM=128, BN=128, BK=64, WARPS=4, STAGES=3, GROUP_M=8" in out


def test_simulate_fits_80_columns(capsys, monkeypatch):
    """gemm at its defaults. '  vs roofline: simulated 1.36x, predicted 1.35x (+55.78 us: l2
    below peak' is 73 columns; ' (64.8%)' would make 81, so the line breaks there and goes on 6
    columns in (its indent 2 + 4). The chart's rows are '  ' + the engine in 9 + ' |' +
    cells + '|': 14 + 72 = 86 columns wide, so at 80 the cells are 80 - 14 = 66. The batches
    write their counts with separators and their nouns ('390 commands, 258 DMA descriptors').
    A pipe keeps the vs-roofline line whole and the chart's 72 cells."""
    out = _out(capsys, monkeypatch, 80, "simulate", GEMM, "--hw", "h200_sxm")
    assert max(map(len, out)) <= 80
    at = out.index("  vs roofline: simulated 1.36x, predicted 1.35x (+55.78 us: l2 below peak")
    assert out[at + 1].startswith("      (64.8%) 37.80 us, tail-wave excess 6.44 us, copy engine")
    chart = [line for line in out if line.startswith("       copy |")]
    assert len(chart) == 1 and len(chart[0]) == 80
    assert "  gemm/mesh cta: full wave x3: " in "\n".join(out)
    out = _out(capsys, monkeypatch, None, "simulate", GEMM, "--hw", "h200_sxm")
    vs = next(line for line in out if line.startswith("  vs roofline: "))
    assert vs.endswith("(+55.78 us: l2 below peak (64.8%) 37.80 us, tail-wave excess 6.44 us, copy engine (as "
                       "scheduled) 4.87 us, launch 3.00 us, latency past the engines 2.98 us, fill 700.00 ns)")
    assert len(next(line for line in out if line.startswith("       copy |"))) == 86


def test_model_compare_numbers_its_columns_where_they_do_not_fit(capsys, monkeypatch):
    """llama3-70b on h200_nvl8 at tp 2, 4, 8: the table as it was takes 2 + 24 (stage) + 3 x (2 +
    19 + 2) = 95 columns (labels 'tp2 cp1 pp1 dp1 ep1', 19): past 80, so the columns are #1..#3,
    each as wide as its widest value ('266.82 us', 9), the stage as its longest name
    ('tp_allreduce_attn', 17): 2 + 17 + 3 x 13 = 58. Each priced line starts with its number:
    '#1 ' 3 + 'tp2 cp1 pp1 dp1 ep1' 19 + ': llama3-70b on h200_nvl8' 25 + ': decode,' 9 + ' batch 1,'
    9 + ' context 8,192,' 15 = 80; ' weights' would pass 80, so 'weights bf16, kv bf16' goes on
    the next line, 4 in. Two configurations fit as they were: 2 + 24 + 2 x 23 = 72."""
    args = ["model", "compare", "--model", "llama3-70b", "--hw", "h200_nvl8"]
    out = _out(capsys, monkeypatch, 80, *args, "--config", "tp=2", "--config", "tp=4", "--config", "tp=8")
    assert out[:2] == ["#1 tp2 cp1 pp1 dp1 ep1: llama3-70b on h200_nvl8: decode, batch 1, context 8,192,",
                       "    weights bf16, kv bf16"]
    header = "  " + "stage".ljust(17) + "".join("  " + f"#{i}".rjust(9) + "  " for i in (1, 2, 3))
    assert header.rstrip() in out and max(map(len, out)) <= 80
    out = _out(capsys, monkeypatch, 80, *args, "--config", "tp=2", "--config", "tp=4")
    assert ("  " + "stage".ljust(24) + "".join("  " + f"tp{n} cp1 pp1 dp1 ep1  " for n in (2, 4))).rstrip() in out


def test_model_latency_fits_80_columns_at_tp8_prefill(capsys, monkeypatch):
    """llama3-8b prefill on h200_nvl8 at tp 8: the stage column takes 'tp_allreduce_attn' (17),
    and the times reach 'xxx.xx us' (9) in total, compute, memory and launch (hundreds of us a
    stage at 8,192 prompt tokens), comm 'xx.xx ms' (8): 2 + 17 + 5 x 2 + 4 x 9 + 8 + 2 + 7
    ('compute', 'latency') = 82 > 80 two apart with the table's indent, 80 without it: the table
    starts at column 0. The first line, 'llama3-8b on h200_nvl8: prefill, batch 1, context 8,192,
    weights bf16, kv bf16;' (79), wraps before 'tp8 cp1 pp1 dp1 ep1 on 8 devices'. deepseek-v3
    at the same: 'tp_allreduce_attn[dense]' (24) does not fit even one apart, so it takes a line
    of its own, its times under the other rows'. Every line fits 80."""
    out = _out(capsys, monkeypatch, 80, "model", "latency", "--model", "llama3-8b", "--mode", "prefill",
               "--hw", "h200_nvl8", "--tp", "8")
    assert out[:2] == ["llama3-8b on h200_nvl8: prefill, batch 1, context 8,192, weights bf16, kv bf16;",
                       "    tp8 cp1 pp1 dp1 ep1 on 8 devices"]
    assert max(map(len, out)) <= 80
    assert any(line.startswith("stage ") for line in out) and any(line.startswith("tp_allreduce_attn ") for line in out)
    out = _out(capsys, monkeypatch, 80, "model", "latency", "--model", "deepseek-v3", "--mode", "prefill",
               "--hw", "h200_nvl8", "--tp", "8")
    at = out.index("tp_allreduce_attn[dense]")
    assert out[at + 1].startswith(" " * 20) and out[at + 1].endswith("  comm") and max(map(len, out)) <= 80


def test_annotated_ir_at_80_columns_still_parses(capsys, monkeypatch):
    """flash_prefill's causal loop header, 'loop j = pm * BLOCK_M / BLOCK_N to min(cdiv((pm + 1) *
    BLOCK_M, BLOCK_N), cdiv(S, BLOCK_N)) bound cdiv(BLOCK_M, BLOCK_N) + 1 stages STAGES carry(%m,
    %l, %acc) capture(K, V, pm, bh, %q, %s_zero) {' at an indent of 4 (199 columns), breaks at
    spaces and continues 4 + 4 = 8 columns in; the language reads a newline as a space, so the
    80-column IR (the report's lines after its first blank one) parses back to the kernel it
    annotates: the same canonical text (tfx.lang.printer) but its comment lines (the source's
    header comment re-wrapped). No line passes 80."""
    from tfx.lang.parser import parse_text
    from tfx.lang.printer import print_kernel
    path = str(ROOT / "kernels" / "flash_prefill.tile")
    out = _out(capsys, monkeypatch, 80, "analyze", path)
    assert max(map(len, out)) <= 80
    ir = "\n".join(out[out.index("") + 1:])
    at = next(i for i, line in enumerate(out) if line.startswith("    loop j = pm * BLOCK_M / BLOCK_N to "))
    assert out[at + 1].startswith("        ") and not out[at + 1].startswith("         ")
    again = parse_text(ir, "ir80.tile")
    from tfx.lang import parse_file
    def code(k):
        return [line for line in print_kernel(k).splitlines() if not line.lstrip().startswith("//")]
    assert code(again.kernels[0]) == code(parse_file(path).kernels[0])


def test_hw_show_and_occupancy_fit_80_columns(capsys, monkeypatch):
    """tfx hw show and tfx occupancy sized their rich tables 160 columns wide whenever stdout was
    not a terminal, $COLUMNS or not. At 80 the facts of h200_sxm do not fit a table beside a
    30-column source (the longest fact, 'memory.gmem.bandwidth_strided_sectors', is 37): a fact a
    line, 'path  value  unit  origin' (h200's 132 SMs, measured), the source 4 in below it. The
    occupancy table (gemm's 128 threads, 160 registers, 98,304 B) wraps its cells within 80. A
    pipe keeps the ruled 160-column table."""
    out = _out(capsys, monkeypatch, 80, "hw", "show", "h200_sxm")
    at = out.index("hierarchy.sm.count  132  count  measured")
    assert out[at + 1] == "    calibration/h200/device.txt: sms 132"
    assert max(map(len, out)) <= 80
    out = _out(capsys, monkeypatch, 80, "occupancy", "--threads", "128", "--regs", "160", "--smem", "98304")
    assert out[1] == "2 CTAs/SM (8 of 64 warps, 12.5%), limited by shared memory" and max(map(len, out)) <= 80
    out = _out(capsys, monkeypatch, None, "hw", "show", "h200_sxm")
    assert any(line.startswith("fact ") for line in out) and max(map(len, out)) == 160


def test_validate_suggest_diff_fit_80_columns(capsys, monkeypatch):
    """validate's per-group table takes 2 + 18 (family) + 1 + 26 (shape) + 1 + 67 (the figures:
    4 + 8 + 8 + 8 + 7 + 6 + 5 + 14 and 7 spaces) = 115 columns: at 80 each group's family and shape
    go on a line of their own, its figures 4 in below (71 columns). model suggest's rows take 2 +
    40 + 1 + 7 + 1 + 11 + 1 + 10 + 1 + 11 = 85: the configuration column narrows to its longest
    label. diff's 'parameters A: ...' line (91 columns for gemm) wraps at words. A pipe keeps the
    115-column table."""
    csv = str(ROOT / "calibration" / "h200" / "measured" / "issue15" / "run17" / "gemm.csv")
    out = _out(capsys, monkeypatch, 80, "validate", csv)
    # (the header above it wraps at words: ', timed after an L2 clear' took it to three lines)
    i = out.index("  family shape")
    assert out[i:i + 2] == ["  family shape",
                            "    rows med|err|  med err spearman  regret   top3 spill spill med|err|"]
    assert out[i + 2] == "  gemm_bf16 5120x8192x4096" and len(out[i + 3]) == 71 and max(map(len, out)) <= 80
    out = _out(capsys, monkeypatch, 80, "model", "suggest", "--model", "llama3-8b", "--hw", "h200_nvl8")
    assert max(map(len, out)) <= 80
    out = _out(capsys, monkeypatch, 80, "diff", GEMM, GEMM, "--set-b", "M=1")
    assert out[2] == "  parameters A: M=4096, N=4096, K=4096, BM=128, BN=128, BK=64, WARPS=4,"
    assert max(map(len, out)) <= 80
    out = _out(capsys, monkeypatch, None, "validate", csv)
    assert len(out[1]) == 115
