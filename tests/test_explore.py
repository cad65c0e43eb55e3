"""tfx explore: Pareto frontiers, sweep parsing, infeasibility, a hand-derived sweep,
vectorized == scalar on every shipped kernel, Dask == in-process, CLI --json shape."""

from __future__ import annotations

import glob
import itertools
import json
import math
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tfx.errors import TfxError
from tfx.explore.space import declared_sweeps
from tfx.explore import (dominates, explore, pareto_2d, pareto_front, parse_knob_sweeps,
                         parse_sweeps, parse_values, top_k)
from tfx.hw import load_profile
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "explore"
TOY = str(DATA / "toy_gpu.toml")


def brute_front(pts):
    pts = np.asarray(pts, dtype=float)
    return sorted(i for i in range(len(pts))
                  if not any(dominates(pts[j], pts[i]) for j in range(len(pts)) if j != i))


# ------------------------------------------------------------------ Pareto, by hand

def test_pareto_2d_hand_made():
    #        time  smem
    pts = [(10, 50),   # 0: frontier (fastest)
           (20, 30),   # 1: frontier
           (20, 40),   # 2: dominated by 1 (same time, more smem)
           (30, 30),   # 3: dominated by 1 (slower, same smem)
           (40, 10),   # 4: frontier (least smem)
           (15, 60),   # 5: dominated by 0
           (40, 10),   # 6: duplicate of 4: equal points do not dominate each other
           (35, 20)]   # 7: frontier
    x, y = zip(*pts)
    assert sorted(pareto_2d(x, y).tolist()) == [0, 1, 4, 6, 7]
    assert pareto_2d(x, y).tolist() == [0, 1, 7, 4, 6]        # ordered by time, then index
    assert sorted(pareto_front(np.array(pts)).tolist()) == [0, 1, 4, 6, 7]


def test_pareto_3d_hand_made():
    pts = [(1, 5, 5),   # 0 frontier
           (5, 1, 5),   # 1 frontier
           (5, 5, 1),   # 2 frontier
           (2, 5, 5),   # 3 dominated by 0
           (3, 3, 3),   # 4 frontier (no point <= it everywhere)
           (3, 3, 4),   # 5 dominated by 4
           (1, 5, 5)]   # 6 duplicate of 0
    assert sorted(pareto_front(np.array(pts)).tolist()) == [0, 1, 2, 4, 6]


def test_pareto_edge_cases():
    assert pareto_2d([], []).tolist() == []
    assert pareto_front(np.zeros((0, 3))).tolist() == []
    assert pareto_front(np.array([[3.0], [1.0], [1.0]])).tolist() == [1, 2]
    assert pareto_2d([1], [1]).tolist() == [0]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(*[st.integers(0, 6)] * 3), min_size=1, max_size=40), st.integers(2, 3))
def test_pareto_matches_brute_force(points, k):
    pts = np.array(points)[:, :k]
    assert sorted(pareto_front(pts).tolist()) == brute_front(pts)


def test_top_k_ties_by_index():
    assert top_k([5, 1, 3, 1, 2], 3).tolist() == [1, 3, 4]
    assert top_k([5, 1, 3, 1, 2], 3, tiebreak=np.array([0, 9, 0, 1, 0])).tolist() == [3, 1, 4]
    assert top_k([1, 2], 0).tolist() == []


# ------------------------------------------------------------------ parsing

def test_parse_values():
    assert parse_values("64,128,256") == [64, 128, 256]
    assert parse_values("2..6") == [2, 3, 4, 5, 6]
    assert parse_values("2..6:2") == [2, 4, 6]
    assert parse_values("16..256:x2") == [16, 32, 64, 128, 256]
    assert parse_values("1,2..3,2") == [1, 2, 3]
    for bad in ("a", "6..2", "1..4:0", "1,,2", "1..", "0..8:x2"):
        with pytest.raises(TfxError):
            parse_values(bad)
    assert parse_sweeps(["BM=64,128", "STAGES=2..3"]) == {"BM": [64, 128], "STAGES": [2, 3]}
    assert parse_knob_sweeps(["hbm.bandwidth=x0.5,x1,x2"]) == {"hbm.bandwidth": ["x0.5", "x1", "x2"]}
    # a bare name is its declared sweep, which build_space evaluates on the profile
    assert parse_sweeps(["BM", "STAGES=2..3"]) == {"BM": None, "STAGES": [2, 3]}
    for bad in ("BM=", "=64", "B M", "BM,BN"):
        with pytest.raises(TfxError):
            parse_sweeps([bad])


def test_refusals():
    m = parse_file(ROOT / "kernels/gemm.tile")
    p = load_profile("h200_sxm")
    with pytest.raises(TfxError, match="no parameter 'BX'"):
        explore(m, None, p, sweeps={"BX": [1]})
    with pytest.raises(TfxError, match="--objective: error: expected one of time, .*, found 'speed'"):
        explore(m, None, p, sweeps={"BM": [64]}, objectives=("speed",))
    with pytest.raises(TfxError, match="--knob-sweep nonsense.path: error: unknown fact in profile h200_sxm"):
        explore(m, None, p, sweeps={"BM": [64]}, knob_sweeps={"nonsense.path": ["x2"]})
    with pytest.raises(TfxError, match="both swept and fixed"):
        explore(m, None, p, sweeps={"BM": [64]}, fixed={"BM": 64})


# ------------------------------------------------------------------ a sweep derived by hand

def test_hand_derived_sweep_on_toy_gpu():
    """tile2d on the toy GPU (100 SMs, 1 TB/s DRAM, 1000 ns latency, no launch overhead).

    Every configuration copies X to Y: 2 bytes x M x N read + the same written
    = 4 x 64 x 102400 = 26,214,400 B. At 1 TB/s = 1000 B/ns that is 26,214.4 ns,
    and a load exposes at least one DRAM latency (1000 ns) before the first byte:
    no configuration can beat ceil(26,214.4 + 1000) = 27,215 ns.

    BM = 128 > M = 64: a tile larger than the problem, infeasible (3 BN x 3 WARPS = 9).

    The 18 others all move their bytes on all 100 SMs; occupancy (registers: the
    loop-free body holds its loaded tile, 2*BM*BN / (32*WARPS) / 4 per thread, + the
    row base 16) decides CTAs per SM. With BM=32, BN=64, WARPS=2: T = 2048
    elements, 64 threads, 2048 x 2 B / 64 = 64 B = 16 + 16 = 32 registers, 4 x 256
    registers per warp -> 64 warps -> 32 CTAs/SM (threads allow 32 too).
    The smallest tile with the most warps (BM=32, BN=64, WARPS=8: 256 threads,
    16 B = 4 + 16 = 20 registers, 3 x 256 a warp; the 64 warp slots hold 8 CTAs of
    2048-element tiles, 3200 CTAs in 4 batches of 800) pays more batches of latency.

    The best is therefore 27,215 ns, reached (tied) by the configurations that fill
    the machine; ties go to the lowest index: BM=32, BN=64, WARPS=2.
    """
    m = parse_file(DATA / "tile2d.tile")
    p = load_profile(TOY)
    r = explore(m, None, p, sweeps={"BM": [32, 64, 128], "BN": [64, 128, 256], "WARPS": [2, 4, 8]},
                keep_columns=True, top=3)
    assert r.configs == 27
    assert r.infeasible == {"tile BM > M (X)": 9}
    assert r.feasible == 18
    best = r.top[0]
    assert best["params"] == {"BM": 32, "BN": 64, "WARPS": 2}
    assert best["predicted_ns"] == math.ceil(4 * 64 * 102400 / 1000 + 1000) == 27215
    assert best["blocks_per_sm"] == 32
    assert best["regs_per_thread"] == 32
    assert best["dram_bytes"] == 4 * 64 * 102400
    slow = r.config(2)       # BM=32, BN=64, WARPS=8
    assert slow["params"] == {"BM": 32, "BN": 64, "WARPS": 8}
    assert slow["blocks_per_sm"] == 8 and slow["predicted_ns"] > 27215
    # Infeasible ones are nowhere in the top or the frontier.
    for e in r.top + r.pareto:
        assert e["params"]["BM"] != 128


def test_a_tile_of_no_element_is_infeasible(recwarn):
    """A sweep may step outside a declared domain (the Python API and --sweep are permissive), but
    BM = 0 or -64 is no tile: gemm at BM in {-64, 0, 64} x BK in {0, 64} was 6 configurations, all
    feasible, BM = -64 ranked 3rd at 12.54 ms with numpy's division-by-zero warnings on stderr.
    Each configuration gets the first failing check, in window order: A[pm * BM : BM, k * BK : BK]
    names BM before BK, so the 2 x 2 with BM < 1 fail on BM (4), BM = 64 with BK = 0 on BK (1),
    BM = 64, BK = 64 is the one feasible configuration."""
    m = parse_file(ROOT / "kernels/gemm.tile")
    r = explore(m, None, load_profile("h200_sxm"), sweeps={"BM": [-64, 0, 64], "BK": [0, 64]})
    assert r.configs == 6
    assert r.infeasible == {"tile BM < 1 (A)": 4, "tile BK < 1 (A)": 1}
    assert r.feasible == 1 and [e["params"] for e in r.top] == [{"BM": 64, "BK": 64}]
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_infeasible_reasons_gemm():
    m = parse_file(ROOT / "kernels/gemm.tile")
    p = load_profile("h200_sxm")
    r = explore(m, None, p, sweeps={"M": [512], "BM": [256, 1024], "BN": [256], "BK": [128],
                                    "STAGES": [2, 6], "K": [512], "WARPS": [4, 64]},
                keep_columns=True)
    assert r.configs == 8
    reasons = set(r.infeasible)
    assert "tile BM > M (A)" in reasons                       # BM=1024 > M=512
    assert "STAGES > trips of loop k" in reasons              # 6 stages, 512/128 = 4 trips
    assert "threads per CTA > max_threads_per_block" in reasons or \
        "smem per CTA > opt-in limit" in reasons
    assert sum(r.infeasible.values()) == r.configs - r.feasible
    # A 256x256x128 tile in 2 stages needs 256 KiB of smem: over the 227 KiB opt-in limit.
    i = next(i for i in range(r.configs) if r.space.decode(i)[0] == {
        "M": 512, "K": 512, "BM": 256, "BN": 256, "BK": 128, "WARPS": 4, "STAGES": 2})
    assert r.config(i)["reason"] == "smem per CTA > opt-in limit"


def test_knob_sweep_cost_and_default_objectives():
    m = parse_file(ROOT / "kernels/gemm.tile")
    p = load_profile("h200_sxm")
    r = explore(m, None, p, sweeps={"BM": [128], "BN": [128]},
                knob_sweeps={"hbm.bandwidth": ["x0.5", "x1", "x2"]}, fixed={"M": 8192, "N": 8192})
    assert r.objectives == ("time", "cost")
    costs = sorted(e["cost"] for e in r.pareto)
    assert costs[0] == 0.5 and r.configs == 3
    times = {e["knobs"]["hbm.bandwidth"]: e["predicted_ns"] for e in r.top}
    assert times["x2"] <= times["x1"] <= times["x0.5"]


def test_sensitivity_ranks_doubling():
    m = parse_file(ROOT / "kernels/gemm.tile")
    p = load_profile("h200_sxm")
    r = explore(m, None, p, sweeps={"BM": [128]}, sensitivity=True)
    s = r.sensitivity
    knobs = [e["knob"] for e in s["ranking"]]
    assert "occupancy.threads_per_warp" not in knobs and "hierarchy.thread.count" not in knobs
    assert "memory.gmem.bandwidth" in knobs
    changes = [e["doubled"]["change"] for e in s["ranking"]]
    assert changes == sorted(changes)
    assert s["baseline"]["predicted_ns"] == r.top[0]["predicted_ns"]


def test_sensitivity_states_each_knobs_value_in_its_unit(capsys):
    """The table wrote each knob's value with %g: clock.core 1.98e+09, memory.l2.capacity
    6.29146e+07, compute.tensor.bf16 4096, where `tfx hw show` writes the same facts 1.98 GHz,
    62.91 MB, 4,096 flop/cycle (h200_sxm: 1980 MHz; 62,914,560 B = 62.91 MB; 4.8 TB/s = 4.80 TB/s);
    the JSON now names each value's canonical unit beside it."""
    import re

    from tfx.cli.main import main
    argv = ["explore", str(ROOT / "kernels/gemm.tile"), "--sweep", "BM=128", "--sensitivity"]
    assert main([*argv, "--json"]) == 0
    ranking = {e["knob"]: e for e in json.loads(capsys.readouterr().out)["sensitivity"]["ranking"]}
    assert (ranking["clock.core"]["value"], ranking["clock.core"]["unit"]) == (1.98e9, "Hz")
    assert (ranking["memory.l2.capacity"]["value"], ranking["memory.l2.capacity"]["unit"]) == (62914560, "B")
    assert main(argv) == 0
    rows = {m[1]: m[2] for m in re.finditer(r"│\s+\d+ │ (\S+)\s+│\s+([^│]+?) │", capsys.readouterr().out)}
    assert rows["clock.core"] == "1.98 GHz"
    assert rows["memory.l2.capacity"] == "62.91 MB"
    assert rows["compute.tensor.bf16"] == "4,096 flop/cycle"
    assert rows["memory.gmem.bandwidth"] == "4.80 TB/s"


# ------------------------------------------------------------------ vectorized == scalar

KERNELS = sorted(glob.glob(str(ROOT / "kernels" / "*.tile")))
MAIN_METRICS = ("performance.predicted_ns", "memory.peak.smem", "occupancy.blocks_per_sm")


def _close(a, b):
    return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-9)


@pytest.mark.parametrize("path", KERNELS, ids=lambda p: Path(p).stem)
def test_vectorized_equals_scalar(path):
    from tfx.analysis.analyze import analyze
    try:
        module = parse_file(path)
    except TfxError as err:
        pytest.skip(f"does not parse yet: {err}")
    kernel = module.kernel(None)
    profile = load_profile("sip" if "sip" in Path(path).stem else "h200_sxm")
    # A fixed seed per kernel, independent of PYTHONHASHSEED (str hash() is salted per
    # process, so the old hash()-derived seed drew different samples on every CI run).
    rng = np.random.default_rng(zlib.crc32(Path(path).stem.encode()))
    sweeps = {}
    # every declared sweep, on the profile's counts (persistent_gemm's NUM_SMS names units(sm))
    declared = declared_sweeps(kernel, {}, profile, names=[prm.name for prm in kernel.params])
    for prm in kernel.params:
        if prm.name in declared:
            vals = declared[prm.name]
            sweeps[prm.name] = sorted(rng.choice(vals, min(3, len(vals)), replace=False).tolist())
    r = explore(module, kernel, profile, sweeps=sweeps, keep_metrics=True, chunk_size=97)
    sample = rng.choice(r.configs, min(20, r.configs), replace=False)
    mismatches = []
    for i in sample:
        params, _ = r.space.decode(int(i))
        a = analyze(module, kernel, profile, params=params, check=False)
        keys = [k for k in a.metrics if k in MAIN_METRICS or
                (k.startswith("memory.traffic.") and ".total." in k) or
                (k.startswith("compute-cost.") and k.endswith(".total"))]
        assert "performance.predicted_ns" in keys
        for k in keys:
            v = r.columns.get(f"metric:{k}")
            if v is None:
                continue
            if not _close(a.metrics[k], v[i]):
                mismatches.append((params, k, a.metrics[k], v[i]))
        if not _close(a.metrics["performance.predicted_ns"], r.columns["time"][i]):
            mismatches.append((params, "time", a.metrics["performance.predicted_ns"], r.columns["time"][i]))
        if a.occupancy is not None:
            # explore's resource checks agree with the scalar occupancy calculator
            feasible_res = r.columns["code"][i] == 0 or not r.reasons[r.columns["code"][i] - 1].startswith(
                ("threads per", "registers per", "smem per", "occupancy 0"))
            assert r.columns["blocks"][i] == a.occupancy.blocks_per_sm
            if r.columns["code"][i] == 0:
                assert a.occupancy.feasible
            elif feasible_res is False:
                assert not a.occupancy.feasible
    assert not mismatches, mismatches[:3]


def test_vectorized_equals_scalar_flash_prefill_edges():
    """The corners of flash_prefill the random sample above may miss, every one checked:
    the shortest sequence (S = 512) where query block pm = 0 runs a zero-trip stage 1
    (0 * BLOCK_M / BLOCK_N = 0 blocks), stage 2's end clipped by min(..., cdiv(S, BLOCK_N)),
    BLOCK_N both below and above BLOCK_M, every pipeline depth (STAGES 1..4, so the spill
    and stage-buffer terms vary), and both warp counts and head sizes:
    2 BLOCK_M x 3 BLOCK_N x 4 STAGES x 2 WARPS x 2 D = 96 configurations, B = 1, H = 8."""
    from tfx.analysis.analyze import analyze
    module = parse_file(ROOT / "kernels/flash_prefill.tile")
    kernel = module.kernel(None)
    profile = load_profile("h200_sxm")
    sweeps = {"B": [1], "H": [8], "S": [512], "D": [64, 128], "BLOCK_M": [64, 128],
              "BLOCK_N": [32, 64, 128], "WARPS": [4, 8], "STAGES": [1, 2, 3, 4]}
    r = explore(module, kernel, profile, sweeps=sweeps, keep_metrics=True, chunk_size=7)
    assert r.configs == 2 * 3 * 4 * 2 * 2 == 96
    mismatches = []
    for i in range(r.configs):
        params, _ = r.space.decode(i)
        a = analyze(module, kernel, profile, params=params, check=False)
        if not _close(a.metrics["performance.predicted_ns"], r.columns["time"][i]):
            mismatches.append((params, "time", a.metrics["performance.predicted_ns"], r.columns["time"][i]))
        for k, v in a.metrics.items():
            col = r.columns.get(f"metric:{k}")
            if col is not None and not _close(v, col[i]):
                mismatches.append((params, k, v, col[i]))
    assert not mismatches, mismatches[:3]


def test_vectorized_equals_scalar_row_kernels_every_config():
    """rmsnorm and softmax at 15360 x 2048, every (BLOCK_M, WARPS) of their sweeps (5 x 5 each):
    explore's vectorized time equals tfx analyze's. It did not at (8, 16) and (16, 16): the
    reduce's shuffle issue took the loaded tile's element (bf16, 2 B) in the scalar path but,
    in a sweep whose load sizes are arrays, fell back to the reduce's f32 (4 B). At (8, 16),
    16,384 elements on 512 threads: v = min(16 / 2, 16,384 / 512) = 8 a thread, t = min(512,
    2,048 / 8) = 256 threads a row, each holds max(8 x 256 // 512, 1) = 4 outputs, log2(32) = 5
    butterfly steps: 16 warps x 4 x 5 x (32 / 32 results a cycle) = 320 cycles / 1.98 GHz =
    161.62 ns; with 4 B, v = 4, t = 512, 8 outputs: 640 cycles = 323.23 ns, which outran the
    reduce's chain and raised explore's 54.72 us to 56.27."""
    from tfx.analysis import row_body
    from tfx.analysis.analyze import analyze
    from tfx.analysis.machine import Machine
    profile = load_profile("h200_sxm")
    m = Machine(profile, "cta")
    bf16 = np.array([[2]])
    assert np.asarray(row_body.shuffle_issue_ns(16384, 2048, bf16, 512, m)).item() == pytest.approx(320 / 1.98)
    assert row_body.shuffle_issue_ns(16384, 2048, 4, 512, m) == pytest.approx(640 / 1.98)
    for name in ("rmsnorm", "softmax"):
        module = parse_file(ROOT / f"kernels/{name}.tile")
        kernel = module.kernel(None)
        fixed = {"M": 15360, "N": 2048}
        sweeps = {"BLOCK_M": [1, 2, 4, 8, 16], "WARPS": [1, 2, 4, 8, 16]}
        r = explore(module, kernel, profile, sweeps=sweeps, fixed=fixed, keep_metrics=True)
        assert r.configs == 25
        mismatches = []
        for i in range(r.configs):
            params = {**fixed, **r.space.decode(i)[0]}
            a = analyze(module, kernel, profile, params=params, check=False)
            if not _close(a.metrics["performance.predicted_ns"], r.columns["time"][i]):
                mismatches.append((name, params, a.metrics["performance.predicted_ns"], r.columns["time"][i]))
        assert not mismatches, mismatches[:3]


def test_vectorized_equals_scalar_spilling_rows_under_one_wave():
    """rmsnorm and softmax at 512 x 16384, every (BLOCK_M, WARPS): 32-512 CTAs, most of them
    spilling by the estimate and under one wave, where the busiest SM's share of the machine's
    warps (local_parallelism.spread: 132 x 1 / 32 = 4.125 at BLOCK_M 16) is an array in a sweep
    and a number in tfx analyze: the two give the same time."""
    from tfx.analysis.analyze import analyze
    profile = load_profile("h200_sxm")
    for name in ("rmsnorm", "softmax"):
        module = parse_file(ROOT / f"kernels/{name}.tile")
        kernel = module.kernel(None)
        fixed = {"M": 512, "N": 16384}
        r = explore(module, kernel, profile, sweeps={"BLOCK_M": [1, 2, 4, 8, 16], "WARPS": [1, 2, 4, 8, 16]},
                    fixed=fixed, keep_metrics=True)
        spilling, mismatches = 0, []
        for i in range(r.configs):
            params = {**fixed, **r.space.decode(i)[0]}
            a = analyze(module, kernel, profile, params=params, check=False)
            spilling += bool(a.metrics.get("occupancy.spilled_registers"))
            if not _close(a.metrics["performance.predicted_ns"], r.columns["time"][i]):
                mismatches.append((name, params, a.metrics["performance.predicted_ns"], r.columns["time"][i]))
        assert spilling >= 10
        assert not mismatches, mismatches[:3]


def test_chunking_does_not_change_results():
    m = parse_file(ROOT / "kernels/gemm.tile")
    p = load_profile("h200_sxm")
    kw = dict(sweeps={"BM": [64, 128, 256], "BN": [64, 128], "STAGES": [1, 2, 3, 4, 5, 6],
                      "K": [512, 4096]}, top=5)
    a = explore(m, None, p, chunk_size=7, **kw).to_json()
    b = explore(m, None, p, **kw).to_json()
    for k in ("configs", "feasible", "infeasible", "pareto", "top"):
        assert a[k] == b[k]


def test_dask_matches_in_process():
    distributed = pytest.importorskip("distributed")
    m = parse_file(ROOT / "kernels/gemm.tile")
    p = load_profile("h200_sxm")
    kw = dict(sweeps={"BM": [64, 128, 256], "BN": [64, 128, 256], "STAGES": [2, 3, 4]},
              knob_sweeps={"hbm.bandwidth": ["x1", "x2"]}, top=4, chunk_size=5)
    local = explore(m, None, p, **kw).to_json()
    with distributed.LocalCluster(n_workers=2, processes=False, dashboard_address=None) as cluster:
        remote = explore(m, None, p, scheduler=cluster.scheduler_address, **kw).to_json()
    for k in ("configs", "feasible", "infeasible", "pareto", "top"):
        assert remote[k] == local[k]
    assert remote["scheduler"].startswith("dask")


# ------------------------------------------------------------------ CLI

def test_cli_json_shape(capsys):
    from tfx.cli.main import main
    rc = main(["explore", str(ROOT / "kernels/gemm.tile"), "--hw", "h200_sxm", "--set", "M=4096",
               "--sweep", "BM=64,128,256", "--sweep", "STAGES=2..6", "--sweep", "BN=128",
               "--knob-sweep", "hbm.bandwidth=x1,x2", "--top", "3", "--sensitivity", "--json"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("configs", "feasible", "infeasible", "seconds", "pareto", "top", "sensitivity"):
        assert key in out
    assert out["configs"] == 3 * 5 * 2
    assert len(out["top"]) == 3
    assert isinstance(out["infeasible"], dict)
    e = out["pareto"][0]
    assert set(e) >= {"params", "knobs", "objectives", "predicted_ns"}
    assert set(e["objectives"]) == {"time", "cost"}
    assert out["sensitivity"]["ranking"][0]["doubled"]["change"] <= 0


def test_cli_table_names_a_tiled_profiles_own_memory(capsys, monkeypatch):
    """On sip the executing unit is the PE and its on-chip memory the tcm: the table's memory column
    is `tcm/PE` and it has no registers or CTAs an SM (a GPU's; a PE runs one position). sip_gemm
    at TM = TN = TK = 128, 2 stages: the f32 accumulator 128 x 128 x 4 B = 65,536 B + 2 stages x
    (A's 128 x 128 x 2 B + B's 128 x 128 x 2 B = 65,536 B) = 196,608 B of tcm a PE. gemm.tile on
    h200_sxm keeps smem/CTA, regs and CTAs/SM."""
    from tfx.cli.main import main
    monkeypatch.setenv("COLUMNS", "160")
    rc = main(["explore", str(ROOT / "kernels/sip_gemm.tile"), "--hw", "sip", "--sweep", "TM=128",
               "--sweep", "TN=128", "--sweep", "TK=128", "--sweep", "STAGES=2"])
    assert rc == 0
    text = capsys.readouterr().out
    header = next(line for line in text.splitlines() if " TM " in line and "time" in line)
    assert "tcm/PE" in header and "smem" not in header and "regs" not in header and "CTAs/SM" not in header
    assert "196,608 B" in text
    assert "Pareto frontier (time vs tcm/PE): 1 point" in text
    r = explore(parse_file(ROOT / "kernels/sip_gemm.tile"), None, load_profile("sip"),
                fixed={"TM": 128, "TN": 128, "TK": 128, "STAGES": 2})
    assert (r.onchip_label, r.occupancy) == ("tcm/PE", False)
    r = explore(parse_file(ROOT / "kernels/gemm.tile"), None, load_profile("h200_sxm"),
                fixed={"BM": 128, "BN": 128, "BK": 64, "WARPS": 4, "STAGES": 3, "GROUP_M": 8})
    assert (r.onchip_label, r.occupancy) == ("smem/CTA", True)


def test_registers_objective_refused_on_a_tiled_profile(capsys):
    """A PE has no registers a thread (every row's would be 0, a frontier of one point): on sip
    `--objective time,regs` is one line naming the objectives that mean something there, exit 2."""
    from tfx.cli.main import main
    rc = main(["explore", str(ROOT / "kernels/sip_gemm.tile"), "--hw", "sip", "--objective", "time,regs"])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.strip() == ("--objective: error: expected one of time, smem, traffic, cost on sip "
                           "(its PE has no registers a thread), found 'regs'")


def test_json_and_csv_name_a_tiled_profiles_own_memory(tmp_path, capsys):
    """The JSON rows and the CSV header name the on-chip column as the table does: sip_gemm's
    196,608 B (the f32 accumulator 128 x 128 x 4 B = 65,536 B + 2 stages x 65,536 B of A and B
    tiles) under `tcm_per_pe`, with no `smem_per_cta`, `regs_per_thread` or `blocks_per_sm`;
    the JSON's `onchip` says which key; gemm.tile on h200_sxm keeps `smem_per_cta`."""
    import csv
    from tfx.cli.main import main
    args = ["explore", str(ROOT / "kernels/sip_gemm.tile"), "--hw", "sip", "--sweep", "TM=128",
            "--sweep", "TN=128", "--sweep", "TK=128", "--sweep", "STAGES=2"]
    assert main([*args, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["onchip"] == {"label": "tcm/PE", "key": "tcm_per_pe"}
    row = out["top"][0]
    assert row["tcm_per_pe"] == 196_608
    assert not {"smem_per_cta", "regs_per_thread", "blocks_per_sm"} & set(row)
    assert main([*args, "--csv", str(tmp_path / "sip.csv")]) == 0
    [got] = list(csv.DictReader(open(tmp_path / "sip.csv")))
    assert int(got["tcm_per_pe"]) == 196_608
    assert not {"smem_per_cta", "regs_per_thread", "blocks_per_sm"} & set(got)
    r = explore(parse_file(ROOT / "kernels/gemm.tile"), None, load_profile("h200_sxm"),
                fixed={"BM": 128, "BN": 128, "BK": 64, "WARPS": 4, "STAGES": 3, "GROUP_M": 8})
    assert r.to_json()["onchip"] == {"label": "smem/CTA", "key": "smem_per_cta"}
    assert {"smem_per_cta", "regs_per_thread", "blocks_per_sm"} <= set(r.top[0])


def test_cli_text_and_csv(tmp_path, capsys):
    from tfx.cli.main import main
    out_csv = tmp_path / "s.csv"
    rc = main(["explore", str(DATA / "tile2d.tile"), "--hw", TOY, "--csv", str(out_csv)])
    assert rc == 0
    text = capsys.readouterr().out
    assert "top" in text and "Pareto" in text and "tile BM > M (X)" in text
    lines = out_csv.read_text().splitlines()
    assert lines[0].startswith("index,BM,BN,WARPS,feasible,reason,predicted_ns")
    assert len(lines) == 28


def test_cli_refusal_exit_2(capsys):
    from tfx.cli.main import main
    rc = main(["explore", str(ROOT / "kernels/gemm.tile"), "--hw", "h200_sxm", "--sweep", "BM=6..2"])
    assert rc == 2
    assert "error" in capsys.readouterr().err
