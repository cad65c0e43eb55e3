"""DMA descriptors: contiguous runs of a window (tfx.analysis.dma), scalars and sweeps."""

from __future__ import annotations

import numpy as np

from tfx.analysis.dma import contiguous_runs
from tfx.ir.expr import Const, Name
from tfx.ir.nodes import AxisSlice, Window


def rng(size, stride=None):
    return AxisSlice("range", Const(0), size if not isinstance(size, int) else Const(size),
                     Const(stride) if stride else None)


FULL = AxisSlice("full")


def test_row_tiles_are_one_run_per_row():
    """A[4096, 4096] bf16, a 32 x 32 tile: 32 rows of 64 contiguous bytes = 32 runs."""
    assert contiguous_runs(Window("A", (rng(32), rng(32))), (4096, 4096), {}) == 32


def test_whole_rows_coalesce():
    """K[CTX, 128], a block of 256 whole rows (`:` or a size spanning the axis) is one run;
    so is a whole tensor."""
    assert contiguous_runs(Window("K", (rng(256), FULL)), (131072, 128), {}) == 1
    assert contiguous_runs(Window("K", (rng(256), rng(128))), (131072, 128), {}) == 1
    assert contiguous_runs(Window("K", (FULL, FULL)), (131072, 128), {}) == 1


def test_three_axes_and_strides():
    """X[8, 64, 64], a [2, 16, 64] window: the last axis is whole, so it coalesces into the
    middle one; the middle axis (16 of 64) is the innermost partial axis, so each of the 2
    first-axis indices gives one run of 16 x 64 contiguous elements: 2 runs.
    A strided axis never spans its tensor axis: Y[16, 64] as [4, 8 : stride 2] is 4 runs."""
    assert contiguous_runs(Window("X", (rng(2), rng(16), FULL)), (8, 64, 64), {}) == 2
    assert contiguous_runs(Window("Y", (rng(4), rng(8, stride=2))), (16, 64), {}) == 4


def test_gather_is_one_transfer():
    idx = AxisSlice("gather", index="%idx")
    assert contiguous_runs(Window("E", (idx, FULL)), (1000, 64), {}) == 1


def test_sweep_matches_scalars():
    """A[M, 4096] with a TM x TK tile, TK swept over {32, 4096}: 32 rows of a partial row are
    TM runs; TK = 4096 spans the rows, so the TM x 4096 block is one run."""
    w = Window("A", (rng(Name("TM")), rng(Name("TK"))))
    tk = np.array([32, 4096])
    got = contiguous_runs(w, (4096, 4096), {"TM": np.array([64, 64]), "TK": tk})
    assert list(got) == [64, 1]
    assert [contiguous_runs(w, (4096, 4096), {"TM": 64, "TK": int(t)}) for t in tk] == [64, 1]


def test_the_held_channels_line_counts_a_pe_s_descriptors():
    """kernels/sip_gemm.tile at its defaults (M = N = K = 4096, 128 x 128 x 128 tiles) with each
    DMA channel held through the round trip (the sip profile's knob): 32 x 32 = 1,024 tiles over
    64 PEs = 16 a PE; a tile's 32 k-trips each load a 128 x 128 window of A and of B, one run a row
    (128 + 128 descriptors), and its store writes 128 rows: 32 x 256 + 128 = 8,320 a tile, 16 x
    8,320 = 133,120 a PE, on the profile's 8 channels (counts through tfx.hw.units, as every number)."""
    from pathlib import Path

    from tfx.analysis.analyze import analyze
    from tfx.hw import load_profile
    from tfx.lang import parse_file
    root = Path(__file__).resolve().parent.parent
    profile = load_profile("sip").with_knobs({"dma.hold_channel_for_round_trip": "1"})
    a = analyze(parse_file(root / "kernels" / "sip_gemm.tile"), None, profile)
    (dma,) = [t for t in a.terms if t.name == "dma"]
    assert dma.detail.startswith("133,120 DMA descriptors per PE each hold one of 8 channels through the ")
