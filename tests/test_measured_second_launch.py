"""A measured CSV's merge_regs / merge_spills / merge_smem_bytes (bench/h200/measure_accuracy.py's
decode.csv: the split-KV merge launch as compiled) price the second launch, where the partial
launch's regs / spills / smem_bytes price the first; before, the merge launch was always
estimated from its tiles while its compiled counts sat unread in the CSV."""
from pathlib import Path

import pytest

from tfx.analysis.measured import Predictor, read_measurements
from tfx.errors import TfxError

DECODE = str(Path(__file__).resolve().parents[1] / "kernels" / "gqa_decode.tile")
HEADER = "kernel,profile,measured_ms,merge_regs,merge_spills,merge_smem_bytes,regs,spills,smem_bytes\n"


def _rows(tmp_path, line):
    p = tmp_path / "decode.csv"
    p.write_text(HEADER + line)
    return read_measurements(p)


def test_the_merge_columns_reach_the_second_launch(tmp_path):
    """gqa_decode.tile's defaults: the merge launch (the second top-level mesh) runs 32 x WARPS =
    32 x 4 = 128 threads. At 255 registers a thread, allocated in steps of 8 (256), a CTA holds
    256 x 128 = 32,768 of the SM's 65,536 registers: 65,536 / 32,768 = 2 CTAs an SM. At 48
    registers a warp holds 48 x 32 = 1,536 (a multiple of the 256-register allocation unit), a
    CTA 4 x 1,536 = 6,144: floor(65,536 / 6,144) = 10 CTAs an SM (64 B of shared memory and
    16 CTAs of 4 warps in 64 warps do not bind first)."""
    (tight,) = _rows(tmp_path, f"{DECODE},h200_sxm,0.1,255,0,64,72,0,71680\n")
    assert tight.resources()["later_launches"] == {1: {"regs": 255, "spills": 0, "smem": 64}}
    assert Predictor().analysis(tight).launches[1].resident == 2
    (loose,) = _rows(tmp_path, f"{DECODE},h200_sxm,0.1,48,0,64,72,0,71680\n")
    assert Predictor().analysis(loose).launches[1].resident == 10


def test_empty_merge_columns_leave_the_merge_estimated(tmp_path):
    (row,) = _rows(tmp_path, f"{DECODE},h200_sxm,0.1,,,,72,0,71680\n")
    assert "later_launches" not in row.resources()


@pytest.mark.parametrize("cells, column, words", [
    ("lots,0,64", 4, "'merge_regs': 'lots' is not a number"),
    # a count that is not whole was truncated (3.5 -> 3), infinity raised OverflowError
    ("72,3.5,64", 5, "'merge_spills': '3.5' is not a whole number"),
    ("72,0,inf", 6, "'merge_smem_bytes': 'inf' is not a whole number"),
    ("72,-1,64", 5, "'merge_spills' must not be negative"),
    ("300,0,64", 4, "'merge_regs' must be 1..255 registers per thread"),
])
def test_a_merge_count_is_read_as_the_first_launchs_are(tmp_path, cells, column, words):
    """Refused while the CSV is read, at its cell (file:line:col: the header's 4th..6th column),
    in the words the partial launch's regs / spills / smem_bytes get."""
    with pytest.raises(TfxError) as err:
        _rows(tmp_path, f"{DECODE},h200_sxm,0.1,{cells},72,0,71680\n")
    assert words in err.value.message
    assert (err.value.where.line, err.value.where.col) == (2, column)
