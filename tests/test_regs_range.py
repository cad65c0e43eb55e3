"""Registers per thread outside 1..255 are refused with one line, not clamped or priced as 0.

255 is the per-thread maximum of every NVIDIA GPU since sm_35 (CUDA C Programming Guide,
technical specifications) and the h200_sxm profile's occupancy limit; 300 would otherwise be
clamped to 255 and 0 priced as a kernel without registers."""

from __future__ import annotations

from pathlib import Path

import pytest

from tfx.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
GEMM = ROOT / "kernels" / "gemm.tile"


@pytest.mark.parametrize("regs", ["0", "300", "256"])
def test_resources_refuse_regs_out_of_range(capsys, regs):
    assert main(["analyze", str(GEMM), "--resources", f"regs={regs}"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"--resources regs: error: expected 1..255 registers per thread (the h200_sxm "
                   f"per-thread maximum), found '{regs}'"]


def test_resources_take_the_edges(capsys):
    for regs in ("1", "255"):
        assert main(["analyze", str(GEMM), "--resources", f"regs={regs}", "--json"]) == 0
        capsys.readouterr()


@pytest.mark.parametrize("regs", ["0", "300"])
def test_validate_refuses_regs_cell(tmp_path, capsys, regs):
    """Row 2 (line 2), regs is the 4th column: file:2:col of that cell."""
    rows = tmp_path / "r.csv"
    rows.write_text(f"kernel,profile,measured_ms,regs\n{GEMM},h200_sxm,1.0,{regs}\n")
    assert main(["validate", str(rows)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith(f"{rows}:2:4: error: ")
    assert err[0].endswith(f"column 'regs' must be 1..255 registers per thread (the hardware's per-thread "
                           f"maximum), found '{regs}'")
