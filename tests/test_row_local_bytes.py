"""bench/row_local_bytes.py: the issue-15 row CSVs joined with their kernels' compiled local
traffic (calibration/h200/measured/row_spill_sass). Expected numbers from the data files."""

from __future__ import annotations

import csv
import importlib.util
import io
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEAD = "kernel,profile,measured_ms,M,N,BLOCK_M,WARPS,ms_graph,regs,spills,smem_bytes,family,shape,split\n"


def _tool():
    spec = importlib.util.spec_from_file_location("row_local_bytes", ROOT / "bench" / "row_local_bytes.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_a_spilling_row_takes_its_kernels_ldl_and_stl_bytes(tmp_path, capsys):
    """session12.csv: rmsnorm N = 32768, BLOCK_M = 1, 2 warps, 32 registers, 1,150 spilled words:
    LDL 6,944 B + STL 6,688 B = 13,632 B a thread. The non-spilling row and the GEMM row get none."""
    p = tmp_path / "rows.csv"
    p.write_text(HEAD + "kernels/rmsnorm.tile,h200_sxm,2.361,8192,32768,1,2,,32,1150,8,rmsnorm,8192x32768,heldout\n"
                 "kernels/rmsnorm.tile,h200_sxm,0.276,8192,32768,1,16,,112,0,64,rmsnorm,8192x32768,heldout\n"
                 "kernels/gemm.tile,h200_sxm,0.5,64,,,,,128,12,0,gemm_bf16,64x64x64,heldout\n")
    assert _tool().main([str(p)]) == 0
    out = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert list(out[0].keys()).index("local_bytes") == list(out[0].keys()).index("smem_bytes") + 1
    assert [r["local_bytes"] for r in out] == ["13632", "", ""]


def test_an_uncompiled_or_other_binary_is_refused_with_its_line(tmp_path, capsys):
    """N = 32768 (3, 2) was never compiled; (1, 2) compiled at 32 registers, not 40."""
    p = tmp_path / "rows.csv"
    p.write_text(HEAD + "kernels/rmsnorm.tile,h200_sxm,1.0,8192,32768,3,2,,32,1000,8,rmsnorm,s,heldout\n")
    assert _tool().main([str(p)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"{p}:2: rmsnorm N=32768 BLOCK_M=3 WARPS=2 spills 1000 words but has no compiled SASS")
    assert "\n" not in err
    p.write_text(HEAD + "kernels/rmsnorm.tile,h200_sxm,1.0,8192,32768,1,2,,40,1150,8,rmsnorm,s,heldout\n")
    assert _tool().main([str(p)]) == 2
    assert "measured at 40 registers and 1150 spilled words, compiled at 32 and 1150" in capsys.readouterr().err


def test_every_spilling_row_of_the_campaigns_has_its_kernel():
    """Each spilling rmsnorm/softmax row of issue15/run1..run15 (the campaigns whose configurations
    were compiled) joins (same registers and spilled words as compiled), so --local-bytes figures
    cover every spilling row of them (a later campaign's new configurations are compiled first)."""
    tool = _tool()
    table = tool.sass_table()
    n = 0
    runs = [ROOT / "calibration" / "h200" / "measured" / "issue15" / f"run{i}" / "rows.csv" for i in range(1, 16)]
    for path in [p for p in runs if p.exists()]:
        for line, r in enumerate(csv.DictReader(open(path, newline="")), start=2):
            if r["family"] in tool.FAMILIES and int(r["spills"]):
                assert tool.local_bytes(r["family"], int(r["N"]), int(r["BLOCK_M"]), int(r["WARPS"]), int(r["regs"]),
                                        int(r["spills"]), table, f"{path}:{line}") > 0
                n += 1
    assert n > 0
