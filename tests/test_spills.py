"""Register spills for every kernel (performance.spill_fraction, local_memory, the spill term).

Numbers from hw_profiles/h200_sxm.toml: local.l1_capacity 256 KiB = 262144 B,
local.l1_bandwidth_per_cycle 128 B at 1.98 GHz = 253.44 B/ns per SM; local.l2_bandwidth
7360 GB/s / 132 SMs = 55.7575... B/ns per SM (calibration/h200/measured/spill_local); DRAM 4800 GB/s x 0.883 / 132 = 32.109... B/ns."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import pytest

from tfx.analysis.analyze import analyze
from tfx.analysis.machine import Machine
from tfx.analysis.performance import SpillInfo, local_memory, spill_fraction
from tfx.hw import load_profile
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent
H200 = load_profile("h200_sxm")


def test_spill_fraction():
    assert spill_fraction(0, 1000) == 0
    assert spill_fraction(250, 1000) == Fraction(1, 4)
    assert spill_fraction(4000, 1000) == 1          # more spilled than the tiles: all of them
    assert spill_fraction(100, 0) == 1              # spills without tiles: whatever there is


def test_local_memory_levels():
    m = Machine(H200, "cta")
    # 100 B x 128 threads x 4 CTAs = 51200 B; L1 left = 262144 - 4 x 49152 = 65536: fits L1
    lm = local_memory(m, SpillInfo(100, 0.1, 49152), 128, 4)
    assert lm.level == "L1"
    assert lm.working_set == 51200 and lm.l1_free == 65536
    # local.l1_bandwidth_per_cycle 32 B/cycle (measured, spill_local) x 1.98 GHz
    assert lm.bytes_per_ns == pytest.approx(32 * 1.98)
    # 1000 B x 128 x 4 = 512000 B > 65536; x 132 SMs = 67.6 MB > L2's 62914560 B: DRAM
    lm = local_memory(m, SpillInfo(1000, 1, 49152), 128, 4)
    assert lm.level == "DRAM"
    assert lm.bytes_per_ns == pytest.approx(4800 * 0.883 / 132)
    # 500 B x 128 x 4 = 256000 B > L1 left; x 132 = 33.8 MB <= 62.9 MB: L2 at the LSU rate
    lm = local_memory(m, SpillInfo(500, 1, 49152), 128, 4)
    assert lm.level == "L2"
    assert lm.bytes_per_ns == pytest.approx(7360 / 132)


def test_rmsnorm_spill_term_by_hand():
    """rmsnorm M=4096 N=16384 BLOCK_M=4 WARPS=2 as Triton compiled it (issue15/run1/rows.csv):
    32 regs, 2120 spilled words = 8480 B/thread, 32 B smem.

    Peak live rmem per thread 34817/4 B = 8704.25 (tfx's liveness), so f = 8480 / 8704.25.
    Register bytes one CTA's ops move, with E = 4 x 16384 = 65536 tile elements and the
    16384-element weight row: load x w 2E; load w w 2N; cast x r 2E w 4E; sq r 4E w 4E;
    reduce r 4E; mul x_norm r 8E w 4E; cast w r 2N w 4N; mul y r 8E w 4E; cast y r 4E w 2E;
    store r 2E -> 52E + 8N; the per-row scalars (reduce's write, mul, add, rsqrt: 16 B each
    way) 7 x 16 = 112. Total 52 x 65536 + 8 x 16384 + 112 = 3,539,056 B.
    The grid of 1024 CTAs fills no wave (132 x 32 slots): an SM holds ceil(1024/132) = 8, the
    busiest 132 x 8 / 1024 = 1.03125 x its even share of the machine's warps
    (local_parallelism.spread). Working set 8480 x 64 x 8 = 4,341,760 B > L1, x 132 / 1.03125
    > L2: DRAM. The SM's 8 CTAs x 2 warps = 16 warps draw local bytes at the closed queue's rate
    (tfx.analysis.local_parallelism: 4,096 B a round, D = 4096 / (4238.4 / 132) ns, Z = 802 ns;
    the recursion R(n) = D (1 + Q(n-1)), Q(n) = n R(n) / (R(n) + Z) run to n = 16 below),
    16 x 4096 / (R(16) + Z) = 32.0921 B/ns a SM of a full machine (over the busiest SM's share
    x 1.03125 it is 33.09), and at most what the machine's warps reach past L2 as measured
    (local_parallelism.machine_ceiling): 16 / 1.03125 = 15.51515 warps a SM of all 132, between
    local.dram_bandwidth_8_warps 3,014.8 / 132 = 22.83939 at 8 and local.dram_bandwidth
    3,374.7 / 132 = 25.56591 at 16, geometric in log2: 22.83939 x exp((log2 15.51515 - 3 =
    0.955606) x ln(25.56591 / 22.83939) = 0.112773) = 22.83939 x 1.113788 = 25.43823 B/ns a SM
    of all, x 1.03125 = 26.23318 B/ns for the busiest.
    The frame (2120 words) reaches the 32 registers, under 128 (tfx.analysis.row_spill, docs/
    analysis.md section 8 (q)): the body's estimate, 4 x 16384 / 64 = 1,024 elements a thread; the
    2 warps span the 16,384-element row (16,384 / 256 = 64 >= 2), so a thread holds all 4 rows;
    32 registers leave none past the 32 the spilled code runs in, so every further row's product
    goes to local memory: 1,024 x (26.625 + (12 x 1 + 4 x 1) x (1 - 1/4)) = 1,024 x 38.625 =
    39,552 B a thread (its SASS 24,420 + 16,700 = 41,120), x 64 threads = 2,531,328 B a CTA =
    0.715250 of 3,539,056, under f = 0.974237. Spill term = 8 CTAs x 2,531,328 / 26.23318."""
    m = parse_file(ROOT / "kernels" / "rmsnorm.tile")
    a = analyze(m, None, H200, {"M": 4096, "N": 16384, "BLOCK_M": 4, "WARPS": 2},
                resources={"regs": 32, "spills": 2120, "smem": 32})
    (term,) = [t for t in a.terms if t.name == "spill"]
    f = 8480 / 8704.25
    d, q = 4096 / (4800 * 0.883 / 132), 0.0
    for n in range(1, 17):
        r = d * (1 + q)
        q = n * r / (r + 802.0)
    rate = 16 * 4096 / (r + 802.0)
    assert rate == pytest.approx(32.0921, abs=1e-4)
    assert 1024 * (26.625 + 16 * 0.75) * 64 == 2_531_328
    assert f * 3_539_056 > 2_531_328                     # the estimate is the smaller
    few, many = 3014.8 / 132, 3374.7 / 132
    busiest = few * math.exp((math.log2(16 / 1.03125) - 3) * math.log(many / few)) * 1.03125
    assert busiest == pytest.approx(26.23318, abs=1e-5)
    expected = 8 * 2_531_328 / busiest
    assert float(term.ns) == pytest.approx(expected, rel=1e-9)
    assert "DRAM" in term.detail and "compiled" in term.detail
    assert any("register spill (compiled)" in w for w in a.warnings)


def test_spilling_row_kernel_ranks_below_its_clean_neighbour():
    """Measured on the H200 (issue15/run1/rows.csv, 4096x16384): BLOCK_M=1 WARPS=4, 251 regs,
    no spill, 0.077 ms; BLOCK_M=4 WARPS=2, 32 regs and 2120 spilled words, 0.950 ms."""
    m = parse_file(ROOT / "kernels" / "rmsnorm.tile")
    clean = analyze(m, None, H200, {"M": 4096, "N": 16384, "BLOCK_M": 1, "WARPS": 4},
                    resources={"regs": 251, "spills": 0, "smem": 16})
    spilled = analyze(m, None, H200, {"M": 4096, "N": 16384, "BLOCK_M": 4, "WARPS": 2},
                      resources={"regs": 32, "spills": 2120, "smem": 32})
    assert spilled.predicted_ns() > 5 * clean.predicted_ns()
    assert not [t for t in clean.terms if t.name == "spill"]


def test_gemm_k_loop_reloads_the_evicted_accumulator_every_trip():
    """gemm 2048^3 BM=128 BN=256 BK=64 WARPS=4 STAGES=2 compiled with 194 spilled words
    (issue15/run1/gemm.csv): 776 B x 128 threads = 99,328 B per CTA round-trip every one of
    the 32 trips from L2 (the k-loop's operand tiles evict it from L1) at 7360/132 B/ns:
    at least 32 x 2 x 99,328 / (7360/132) ns of spill per CTA."""
    m = parse_file(ROOT / "kernels" / "gemm.tile")
    p = {"M": 2048, "N": 2048, "K": 2048, "BM": 128, "BN": 256, "BK": 64, "WARPS": 4, "STAGES": 2}
    a = analyze(m, None, H200, p, resources={"regs": 255, "spills": 194, "smem": 98304})
    per_cta = 32 * 2 * 776 * 128 / (7360 / 132)
    lt = a.launches[0]
    # the batch holds `resident` CTAs per SM; its spill engine time is at least theirs
    assert float(lt.engines["spill"]) >= lt.resident * per_cta * (1 - 1e-12)
    b = analyze(m, None, H200, p, resources={"regs": 255, "spills": 0, "smem": 98304})
    # the rest of the trip runs in series with the spill (spill_traffic.in_series), so the
    # launch (one CTA per SM: 64 tiles on 132 SMs) takes at least the spill time
    assert a.predicted_ns() >= per_cta
    assert b.predicted_ns() < per_cta / 2


PTXAS = """ptxas info    : Compiling entry function 'rms' for 'sm_90a'
ptxas info    : Function properties for rms
    8480 bytes stack frame, 8480 bytes spill stores, 8480 bytes spill loads
ptxas info    : Used 32 registers, 32 bytes smem
"""


def test_analyze_reads_compiled_spills_from_ptxas(tmp_path, capsys):
    """--ptxas: 32 registers, 8480 B of stack frame = 2120 spilled words, 32 B static smem:
    the same launch as test_rmsnorm_spill_term_by_hand (its spill term, 859.04 us)."""
    from tfx.cli.cmd_analyze import ptxas_resources
    from tfx.cli.main import main
    f = tmp_path / "rms.ptxas"
    f.write_text(PTXAS)
    assert ptxas_resources(str(f), None) == {"regs": 32, "spills": 2120, "static_smem": 32}
    rc = main(["analyze", str(ROOT / "kernels" / "rmsnorm.tile"), "--set", "N=16384", "--set", "M=4096",
               "--set", "BLOCK_M=4", "--set", "WARPS=2", "--ptxas", str(f), "--resources", "smem=0"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "8,480 B/thread compiled in local memory" in out
    assert main(["analyze", str(ROOT / "kernels" / "rmsnorm.tile"), "--ptxas", str(f),
                 "--ptxas-kernel", "nope"]) == 2


def test_a_spill_warning_writes_its_counts_with_separators():
    """gemm at BM = BN = 256 on 2 warps: the f32 accumulator, 256 x 256 x 4 B = 262,144 B over
    2 x 32 = 64 threads, is 4,096 B = 1,024 registers a thread, + BASE_REGISTERS 32 = 1,056 > 255:
    the catastrophic spill. The warning printed 'about 1056 registers/thread' (session 12: counts
    with separators, as its '4,096 B/thread' beside them)."""
    a = analyze(parse_file(ROOT / "kernels" / "gemm.tile"), None, H200,
                dict(BM=256, BN=256, WARPS=2), check=False)
    (w,) = [w for w in a.warnings if w.startswith("register spill")]
    assert "255 available; the mma accumulator alone needs about 1,056: " in w
