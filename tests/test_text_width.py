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
    launch), compute 8 (tens of us at batch 1), comm 7 (one device: '0.00 ns'); the bound
    'latency' (7). Rows take 2 + 10 + (2 + 9) + (2 + 8) + (2 + 9) + (2 + 7) + (2 + 9) + 2 + 7
    = 73 at most; the header, 'bound' (5), 71."""
    r = latency(load_model("llama3-8b"), load_system("h200_sxm"), Workload(mode="decode", batch=1, context=8192),
                Parallelism())
    wide = stage_table(r)
    assert wide[0] == "  stage" + " " * 19 + "       total     compute      memory        comm     launch  bound"
    assert max(map(len, wide)) == 94
    narrow = stage_table(r, 80)
    assert narrow[0] == ("  stage     " + "  " + "    total" + "  " + " compute" + "  " + "   memory"
                         + "  " + "   comm" + "  " + "   launch" + "  bound")
    assert len(narrow[0]) == 71 and max(map(len, narrow)) == 73
    assert [line.split()[0] for line in narrow] == [line.split()[0] for line in wide]


def test_simulate_prints_its_three_times_one_a_line_at_80(capsys, monkeypatch):
    """gemm at its defaults: 'simulated T (bound by l2)   predicted T (bound by l2)   roofline T
    (bound by l2)' is 2 + 104 = 106 columns (three 'label xxx.xx us (bound by l2)' of 33, 33 and
    32, 3 spaces between): at 80 the three go one a line, the labels padded to 'simulated' (9)."""
    out = _out(capsys, monkeypatch, 80, "simulate", GEMM, "--hw", "h200_sxm")
    at = next(i for i, line in enumerate(out) if line.startswith("  simulated "))
    assert out[at + 1].startswith("  predicted ") and out[at + 2].startswith("  roofline  ")
    assert all(len(out[at + i]) == 2 + 9 + 1 + 9 + 14 for i in range(3))   # 'xxx.xx us' + ' (bound by l2)'
    out = _out(capsys, monkeypatch, None, "simulate", GEMM, "--hw", "h200_sxm")
    line = next(line for line in out if line.startswith("  simulated "))
    assert "(bound by l2)   predicted " in line and "(bound by l2)   roofline " in line and len(line) == 106
