"""Hardware profiles: loading, inheritance, units, the Profile API, refusals, round trips, CLI.

Every expected number is derived by hand in the comment beside it, from the
datasheet figure or the unit definition, never copied from tfx's output.
"""

from __future__ import annotations

import json
import os
import time
import tomllib
from pathlib import Path

import pytest

from tfx.cli.main import main
from tfx.errors import SourceLocation, TfxError
from tfx.hw import (Fact, MemoryLevel, format_bandwidth, format_bytes, format_count,
                    format_time_ns, list_profiles, load_profile)
from tfx.hw.units import split_quantity, to_canonical
from tfx.bundled import REPO_ROOT

SHIPPED = ["a100_40gb_hgx8", "a100_hgx8", "a100_sxm", "a100_sxm_40gb", "b200", "b200_hgx8", "h100_hgx8",
           "h100_sxm", "h200_nvl8", "h200_sxm", "rtx5070ti", "sip"]


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


# ------------------------------------------------------------ every profile

def test_list_profiles_names_every_shipped_profile():
    assert list_profiles() == SHIPPED


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_profile_loads_and_shows(name, capsys):
    profile = load_profile(name)
    assert profile.name == name
    assert profile.kind in ("gpu", "tiled")
    assert profile.description
    assert profile.source_path == REPO_ROOT / "hw_profiles" / f"{name}.toml"
    for path, fact in profile.facts():
        assert isinstance(fact, Fact)
        if fact.available:
            assert fact.origin in ("vendor", "measured", "derived", "calibrated", "estimated", "reference"), path
            assert fact.source.strip(), path
        else:
            assert fact.value is None and fact.unavailable, path
    rc, out, err = run_cli(capsys, "hw", "show", name)
    assert rc == 0, err
    assert "clock.core" in out
    rc, out, err = run_cli(capsys, "hw", "show", name, "--json")
    assert rc == 0, err
    assert json.loads(out)["name"] == name


@pytest.mark.parametrize("name", [n for n in SHIPPED if n != "sip"])
def test_gpu_profiles_have_what_the_analysis_needs(name):
    profile = load_profile(name)
    assert profile.kind == "gpu"
    assert profile.mesh_levels() == {"cta": "sm", "warp": "warp", "thread": "thread"}
    assert profile.value("hierarchy.thread.count") == 32
    for key in ("threads_per_warp", "max_threads_per_sm", "max_warps_per_sm", "max_blocks_per_sm",
                "max_threads_per_block", "regs_per_sm", "regs_per_block", "max_regs_per_thread",
                "reg_alloc_unit", "warp_alloc_granularity", "smem_per_sm", "smem_per_block_optin",
                "smem_alloc_unit", "reserved_smem_per_block"):
        value = profile.value(f"occupancy.{key}")
        assert isinstance(value, int), key
    assert set(profile.memory_levels()) >= {"gmem", "l2", "smem", "rmem"}
    assert profile.memory_level("l2").caches == "gmem"
    assert profile.value("compute.tensor.bf16") > 0
    assert profile.value("launch.overhead") > 0


# ------------------------------------------------------------- inheritance

def test_h200_overrides_h100_memory_and_keeps_its_compute():
    h100, h200 = load_profile("h100_sxm"), load_profile("h200_sxm")
    # Datasheets: H100 SXM 3.35 TB/s = 3.35e12 B/s; H200 SXM 4.8 TB/s = 4.8e12 B/s.
    assert h100.value("memory.gmem.bandwidth") == pytest.approx(3.35e12)
    assert h200.value("memory.gmem.bandwidth") == pytest.approx(4.8e12)
    # 80 GB and 141 GB, decimal gigabytes.
    assert h100.value("memory.gmem.capacity") == pytest.approx(80e9)
    assert h200.value("memory.gmem.capacity") == pytest.approx(141e9)
    # Inherited untouched: the same Fact, provenance included.
    for path in ("compute.tensor.bf16", "compute.vector.f32", "memory.smem.capacity",
                 "occupancy.max_warps_per_sm", "memory.smem.latency"):
        assert h200.fact(path) == h100.fact(path), path
    # Overridden with the same value and its own provenance: the H200 measurements it cites.
    assert h200.value("memory.gmem.latency") == h100.value("memory.gmem.latency") == 700
    assert "calibration/h200/measured/latency.csv" in h200.fact("memory.gmem.latency").source
    # Inherited settings and keys the child added.
    assert h200.memory_level("gmem").aliases == ("hbm", "dram", "global")
    assert h200.fact("memory.gmem.bandwidth_measured").origin == "measured"
    assert not h100.has("memory.gmem.bandwidth_measured")


# The part's own facts h200_sxm states over h100_sxm's with another value: its memory (HBM3e,
# 60 MiB of L2), its measured tensor fractions, the memory facts measured on each part (session 34:
# calibration/h100/measured/h100_memory, h100_streams, sync_rows against calibration/h200's), and the
# one DRAM rate h100_sxm still derives from the H200's at 3.35 / 4.8.
H100_DERIVED_DRAM = ("memory.gmem.bandwidth_short_runs",)
H100_MEASURED_MEMORY = (
    "memory.gmem.efficiency", "memory.gmem.read_efficiency", "memory.gmem.bandwidth_strided_runs",
    "memory.gmem.bandwidth_strided_sectors", "pipeline.dram_latency_unloaded", "pipeline.dram_latency_loaded_low",
    "pipeline.dram_latency_loaded_high", "pipeline.dram_latency_saturated", "pipeline.dram_latency_loaded_low_at",
    "pipeline.dram_latency_loaded_high_at", "pipeline.dram_latency_saturated_at", "pipeline.dram_read_latency_low",
    "pipeline.dram_read_latency_mid", "pipeline.dram_read_latency_high", "pipeline.dram_read_latency_saturated",
    "pipeline.dram_read_latency_low_at", "pipeline.dram_read_latency_mid_at", "pipeline.dram_read_latency_high_at",
    "pipeline.dram_read_latency_saturated_at", "local.dram_bandwidth", "local.dram_bandwidth_8_warps",
    "local.l2_bandwidth", "pipeline.sync_line_load_cycles", "pipeline.dram_round_trip_stream_unloaded",
    "pipeline.dram_round_trip_stream_at_copy_bandwidth")
# The L2's rates, which h100_sxm derives at 5 / 6: its slices sit with the memory controllers,
# 10 of the full GH100's 12 on the H100 SXM5 (50 MB of L2 against 60, the whitepaper).
H100_DERIVED_L2 = ("memory.l2.bandwidth", "memory.l2.slice_bandwidth", "power.l2_traffic_power")
H200_OWN_VALUES = {"memory.gmem.capacity", "memory.gmem.bandwidth", "memory.l2.capacity", "compute.tensor.efficiency",
                   "compute.tensor.efficiency_fp8e4m3", "compute.tensor.efficiency_fp8e5m2",
                   "launch.l2_dirty_write_back", *H100_DERIVED_DRAM, *H100_DERIVED_L2, *H100_MEASURED_MEMORY}
# The GH100 die's facts measured on the H200 that h100_sxm states (its [power] and
# [instruction_latency] tables whole, and these).
GH100_DIE = ("launch.cta_interval", "compute.tensor.power_clock_exponent", "compute.tensor.unthrottled_efficiency",
             "warp_mma.loop_alu_instructions", "warp_mma.copy_alu_instructions", "local.l1_bandwidth_per_cycle",
             "local.l2_latency", "local.dram_latency", "local.l2_warp_round",
             "local.dram_warp_round", "local.dram_round_bytes_per_warp", "memory.gmem.favoured_units", "memory.gmem.others_rate_ratio",
             "memory.l2.fabric_bandwidth", "memory.l2.walk_pair_merged_share", "pipeline.load_trip_overhead",
             "pipeline.sm_load_bandwidth_per_cycle", "pipeline.dram_round_trip_idle", "pipeline.wgmma_trip_busy")


def _stated_paths(name: str) -> set[str]:
    """The fact paths a profile's own file states (not its base's)."""
    def walk(table, prefix=""):
        for key, value in table.items():
            if isinstance(value, dict) and not ({"value", "unavailable"} & value.keys()):
                yield from walk(value, f"{prefix}{key}.")
            elif isinstance(value, dict):
                yield f"{prefix}{key}"
    return set(walk(tomllib.loads((REPO_ROOT / "hw_profiles" / f"{name}.toml").read_text())))


def test_the_gh100_die_facts_live_in_h100_sxm_and_its_dram_rates_are_the_h200s_scaled():
    """The H100 and H200 are one GH100 die with other memory. What was measured on the H200 and
    belongs to the die is stated once, in h100_sxm, and h200_sxm inherits it: the same Fact,
    provenance included. h200_sxm restates a fact of its base only as its own (the same value
    with its own source, as clock.core 1980 MHz from calibration/h200), or with another value
    where the part differs; those are exactly its memory, its tensor fractions, the memory facts
    measured on both parts (each in calibration/<part>/measured) and the DRAM rate h100_sxm still
    derives at the datasheet ratio 3.35 / 4.8 = 0.697917 (3.2 TB/s x 0.697917 = 2.2333 -> 2.23, to
    the digits it is written with). Measured on the H100 (session 34):

      memory.gmem.efficiency: a 4 GiB copy at 2,992.3 GB/s / 3,350 = 0.89322 -> 0.8932
      local.dram_bandwidth: median 18.409 B/ns per SM x 132 = 2,429.99 -> 2,430.0 GB/s
      pipeline.dram_read_latency_mid_at: 132 streaming CTAs read 2,680 GB/s

    and launch.l2_dirty_write_back, the dirty L2 written back at the DRAM's rate: scaled by the
    L2 (50 MiB = 52,428,800 B against 60 MiB = 62,914,560 B) over the rate:
    8.16 us x (52,428,800 / 62,914,560 = 0.833333) / 0.697917 = 6.8 / 0.697917 = 9.7433 -> 9.74 us.
    """
    h100, h200 = load_profile("h100_sxm"), load_profile("h200_sxm")
    stated = _stated_paths("h200_sxm")
    # the die's measured facts: in h100_sxm (measured on the H200), inherited whole
    die = [*GH100_DIE, *(p for p, _ in h100.facts()
                         if p.startswith(("power.", "instruction_latency.")) and p not in H100_DERIVED_L2)]
    # [power]: tensor_share_at_limit, response_time (l2_traffic_power is per share of the L2: 5/6 on the
    # H100); [instruction_latency]: mma_sync, shfl_sync, bar_sync, ex2, fma, smem_load, ldmatrix,
    # wgmma_wait, wgmma_rs_group, wgmma_serial, wgmma_serial_rs
    assert len(die) == len(GH100_DIE) + 2 + 11
    for path in die:
        fact = h100.fact(path)
        assert fact.origin in ("measured", "derived"), path     # the rounds: derived from the H200's rates
        assert path not in stated and h200.fact(path) == fact, path
    # every fact of h200_sxm the H100 also states: inherited (the same Fact), or restated with the
    # same value, or one of the part's own values
    own = set()
    for path, fact in h200.facts():
        if not h100.has(path):
            continue
        if path not in stated:
            assert fact == h100.fact(path), path
        elif fact.value != h100.fact(path).value:
            own.add(path)
    assert own == H200_OWN_VALUES
    # the derived DRAM facts: the H200's x 3.35 / 4.8, to the digits written
    ratio = h100.value("memory.gmem.bandwidth") / h200.value("memory.gmem.bandwidth")
    assert ratio == pytest.approx(3.35 / 4.8) and 3.35 / 4.8 == pytest.approx(0.697917, abs=1e-6)
    for path in H100_DERIVED_DRAM:
        mine, theirs = h100.fact(path), h200.fact(path)
        assert mine.origin == "derived" and "x 3.35 / 4.8" in mine.source, path
        assert mine.raw_unit == theirs.raw_unit, path
        text = str(mine.raw_value)
        digits = len(text.split(".")[1]) if "." in text else 0
        assert round(theirs.raw_value * 3.35 / 4.8, digits) == pytest.approx(mine.raw_value), path
    # the measured memory facts: each from the H100's own calibration
    for path in H100_MEASURED_MEMORY:
        fact = h100.fact(path)
        assert fact.origin == "measured" and fact.source.startswith("calibration/h100/measured/"), path
    assert 2992.3 / 3350 == pytest.approx(0.89322, abs=1e-5) and h100.value("memory.gmem.efficiency") == 0.8932
    assert 18.409 * 132 == pytest.approx(2429.99, abs=0.01)
    assert h100.value("local.dram_bandwidth") == pytest.approx(2430.0e9)
    assert h100.value("pipeline.dram_read_latency_mid_at") == pytest.approx(2680e9)
    # the write-back: 8.16 x (52,428,800 / 62,914,560) / (3.35 / 4.8) = 9.7433 -> 9.74 us
    assert (h100.value("memory.l2.capacity"), h200.value("memory.l2.capacity")) == (52_428_800, 62_914_560)
    assert 8.16 * (52_428_800 / 62_914_560) / (3.35 / 4.8) == pytest.approx(9.7433, abs=1e-4)
    assert h200.fact("launch.l2_dirty_write_back").raw_value == 8.16
    assert h100.fact("launch.l2_dirty_write_back").raw_value == 9.74
    assert h100.fact("launch.l2_dirty_write_back").raw_unit == "us"
    assert h100.value("launch.l2_dirty_write_back") == pytest.approx(9740)   # ns, the canonical unit


def _stream_line(part: str, folder: str):
    """The weight stream's round trip against the DRAM bandwidth drawn, by the selection its fact
    states: stream_depth's `own` rows (each B tile read by one CTA) at 4 and 8 warps and 2-3 stages,
    each row's implied round trip less the 122.22 ns chain and its trip bytes at the 128.7 GB/s
    port, fitted by least squares (intercept ns, slope ns per TB/s)."""
    import csv
    import numpy as np
    path = REPO_ROOT / "calibration" / part / "measured" / folder / "stream_depth.csv"
    rows = [r for r in csv.DictReader(path.open()) if r["status"] == "ok" and r["variant"] == "own"
            and r["WARPS"] in ("4", "8") and r["STAGES"] in ("2", "3")]
    x = np.array([float(r["dram_tb_s"]) for r in rows])
    y = np.array([float(r["implied_round_trip_ns"]) - 122.22 - float(r["trip_bytes"]) / 128.7 for r in rows])
    intercept, slope = np.linalg.lstsq(np.vstack([np.ones_like(x), x]).T, y, rcond=None)[0]
    return len(rows), intercept, slope


def test_each_part_states_its_own_weight_stream_line():
    """pipeline.dram_round_trip_stream_*: one selection of each part's stream_depth run gives its
    line. The H200's (session 10): 433.5 + 105.2 ns per TB/s, stated 433 and, at its copy
    bandwidth 4.2384 TB/s, 433 + 105 x 4.2384 = 878.0 ns. The H100's (its session-34 run, read
    in session 36): 183.7 + 289.9 ns per TB/s, stated 184 and, at its copy bandwidth 2.9923 TB/s,
    183.7 + 289.9 x 2.9923 = 1,051.2 -> 1,051 ns: its HBM3 queues deeper at the same draw."""
    h100, h200 = load_profile("h100_sxm"), load_profile("h200_sxm")
    n, a, b = _stream_line("h200", "stream_depth")
    assert n == 16 and round(a, 1) == 433.5 and round(b, 1) == 105.2
    assert h200.fact("pipeline.dram_round_trip_stream_unloaded").raw_value == 433
    assert h200.fact("pipeline.dram_round_trip_stream_at_copy_bandwidth").raw_value == round(433 + 105 * 4.2384)
    n, a, b = _stream_line("h100", "h100_streams/stream_depth")
    assert n == 16 and round(a, 1) == 183.7 and round(b, 1) == 289.9
    assert h100.fact("pipeline.dram_round_trip_stream_unloaded").raw_value == round(183.7)
    assert h100.fact("pipeline.dram_round_trip_stream_at_copy_bandwidth").raw_value == round(183.7 + 289.9 * 2.9923)
    assert 2992.3 / 3350 == pytest.approx(h100.value("memory.gmem.efficiency"), abs=1e-4)


def test_the_h100s_l2_rates_are_five_sixths_of_the_h200s():
    """The L2 slices sit with the memory controllers: the full GH100 (the H200) has 60 MB of L2 on
    12 512-bit controllers, the H100 SXM5 50 MB on 10 (5 HBM3 stacks), so the H100 serves its SMs
    from 5/6 of the slices at the same clock (CUDA reports 52,428,800 and 62,914,560 B: 5/6 exactly):
      memory.l2.slice_bandwidth  10.71 TB/s x 5 / 6 = 8.925 TB/s
      memory.l2.bandwidth        11 TB/s x 5 / 6 = 9.1667 -> stated 9.17
    and the L2 traffic's power, fitted per share of the H200's L2 (the same bytes a second are 6/5
    the share of 5/6 of the slices): power.l2_traffic_power 0.443 x 5 / 6 = 0.3692 -> stated 0.369.
    The spilled walk's L2 rate is measured on the H100 (session 34): 48.584 B/ns per SM x 132 =
    6,413.1 -> 6,413 GB/s, 0.871 of the H200's 7,360 (5 / 6 would say 6,133)."""
    h100, h200 = load_profile("h100_sxm"), load_profile("h200_sxm")
    assert 52_428_800 / 62_914_560 == pytest.approx(5 / 6)
    assert h200.fact("memory.l2.slice_bandwidth").raw_value == 10.71
    assert h100.fact("memory.l2.slice_bandwidth").raw_value == 8.925 and 10.71 * 5 / 6 == pytest.approx(8.925)
    assert h100.fact("memory.l2.bandwidth").raw_value == 9.17 and round(11 * 5 / 6, 2) == 9.17
    assert h100.fact("local.l2_bandwidth").raw_value == 6413 and round(48.584 * 132) == 6413
    assert h100.fact("power.l2_traffic_power").raw_value == 0.369 and round(0.443 * 5 / 6, 3) == 0.369
    for path in H100_DERIVED_L2:
        assert h100.fact(path).origin == "derived" and "5 / 6" in h100.fact(path).source, path
        assert h200.fact(path).origin == "measured", path


def test_two_level_inheritance_node_profile():
    node, h200 = load_profile("h200_nvl8"), load_profile("h200_sxm")
    assert node.value("system.devices_per_node") == 8
    assert h200.value("system.devices_per_node") == 1
    assert node.fact("memory.gmem.bandwidth") == h200.fact("memory.gmem.bandwidth")
    # 900 GB/s bidirectional per GPU -> 450 GB/s = 4.5e11 B/s each way.
    assert node.value("links.nvlink.bandwidth") == pytest.approx(450e9)
    # 400 Gb/s NDR = 400e9 bit/s / 8 bit/B = 5e10 B/s.
    assert node.value("links.ib.bandwidth") == pytest.approx(50e9)


def test_h200_measured_facts_agree_with_the_calibration_copy():
    """The repo's copy of device.txt (never ../shared) backs every `measured` occupancy fact."""
    text = (REPO_ROOT / "calibration" / "h200" / "device.txt").read_text().strip().split(",")
    props = dict(zip(text[::2], text[1::2]))
    h200 = load_profile("h200_sxm")
    pairs = {"sms": "hierarchy.sm.count", "regsPerSM": "occupancy.regs_per_sm",
             "regsPerBlock": "occupancy.regs_per_block", "smemPerSM": "occupancy.smem_per_sm",
             "smemPerBlockOptin": "occupancy.smem_per_block_optin",
             "maxThreadsPerSM": "occupancy.max_threads_per_sm",
             "maxBlocksPerSM": "occupancy.max_blocks_per_sm", "l2": "memory.l2.capacity",
             "reservedSmemPerBlock": "occupancy.reserved_smem_per_block"}
    for key, path in pairs.items():
        assert h200.value(path) == int(props[key]), path
        assert h200.fact(path).origin == "measured", path


# ---------------------------------------------------------- unit conversion

@pytest.mark.parametrize("value, unit, expected", [
    (4.8, "TB/s", 4.8e12),          # tera = 1e12
    (256, "B/ns", 256e9),           # 1 s = 1e9 ns, so 256 B/ns = 2.56e11 B/s
    (400, "Gb/s", 50e9),            # bits: 400e9 / 8 = 5e10 B/s
    (1, "GiB/s", 1073741824),       # 2**30
    (228, "KiB", 233472),           # 228 * 1024
    (1, "MiB", 1048576),            # 2**20
    (50, "MiB", 52428800),          # 50 * 2**20
    (141, "GB", 141e9),             # decimal giga
    (1980, "MHz", 1.98e9),          # mega = 1e6
    (1.41, "GHz", 1.41e9),
    (3, "us", 3000),                # canonical time is ns
    (2, "ms", 2e6),
    (1, "s", 1e9),
    (743.3, "TFLOP/s", 743.3e12),
    (4096, "flop/cycle", 4096),     # per-cycle units are canonical as written
    (8, "cycle", 8),
])
def test_to_canonical(value, unit, expected):
    assert to_canonical(value, unit) == pytest.approx(expected)


def test_profile_facts_are_canonical():
    h100, a100, sip = load_profile("h100_sxm"), load_profile("a100_sxm"), load_profile("sip")
    assert h100.value("memory.smem.capacity") == 228 * 1024
    assert h100.fact("memory.smem.capacity").unit == "B"
    assert h100.value("clock.core") == pytest.approx(1980e6)
    assert h100.value("launch.overhead") == pytest.approx(3000)           # 3 us in ns
    assert h100.value("memory.rmem.capacity") == 255 * 4                  # 1020 B
    assert a100.value("memory.l2.bandwidth_per_cycle") == 5120
    assert sip.value("memory.hbm.bandwidth") == pytest.approx(8 * 32e9)   # 8 channels x 32 GB/s
    assert sip.value("memory.tcm.capacity") == 2 ** 20
    assert sip.value("dispatch.single_op") == 8
    assert sip.value("dispatch.composite") == 40
    assert sip.fact("dispatch.single_op").unit == "cycle"
    fact = h100.fact("memory.gmem.bandwidth")
    assert (fact.raw_value, fact.raw_unit, fact.raw) == (3.35, "TB/s", "3.35 TB/s")


def test_split_quantity():
    assert split_quantity("3.2TB/s") == (3.2, "TB/s")
    assert split_quantity("3.2 TB/s") == (3.2, "TB/s")
    assert split_quantity("1.2e12") == (1.2e12, None)
    assert split_quantity("132") == (132, None) and isinstance(split_quantity("132")[0], int)
    assert split_quantity("fast") is None


def test_formatting_helpers():
    # One policy: decimal prefixes for every byte count, as for bandwidths.
    assert format_bytes(228 * 1024) == "233.47 KB"        # 233,472 B / 1000 = 233.472 KB
    assert format_bytes(80e9) == "80.00 GB"
    assert format_bytes(999) == "999 B"                   # below 1000: whole bytes
    assert format_bytes(1000) == "1.00 KB"
    assert format_bytes(3 * 2 ** 30) == "3.22 GB"         # 3,221,225,472 B = 3.221 GB
    assert format_bytes(1_500_000) == "1.50 MB"
    assert format_bytes(1_500_000, significant=3) == "1.5 MB"
    assert format_bandwidth(4.8e12) == "4.80 TB/s"
    assert format_bandwidth(450e9) == "450.00 GB/s"
    assert format_time_ns(700) == "700.00 ns"
    assert format_time_ns(2500) == "2.50 us"              # 2500 ns = 2.5 us
    assert format_time_ns(3e6) == "3.00 ms"
    assert format_count(65536) == "65,536"
    assert format_count(1.5) == "1.50"


def test_exact_bytes():
    """Allocations and spills in whole bytes with separators, the one helper of analyze's spill
    warnings, the spill term, occupancy's sentences and fmt.allocation: 228 KiB = 233,472 B;
    2,120 spilled 4-byte words = 8,480 B a thread; 8,704.25 rounds to 8,704; 999 stays 999."""
    from tfx.hw.units import format_exact_bytes
    from tfx.present.formatting import allocation
    assert format_exact_bytes(228 * 1024) == "233,472 B"
    assert format_exact_bytes(4 * 2120, "thread") == "8,480 B/thread"
    assert format_exact_bytes(8704.25) == "8,704 B"
    assert format_exact_bytes(999) == "999 B"
    assert allocation(98304) == format_exact_bytes(98304) == "98,304 B"


def test_percent():
    """A share as percent with one decimal, the one helper of fmt.ratio_pct and the analysis'
    sentences: 3 / 8 = 37.5%; 1 / 4 = 25.0% (the L2 hand-off wrote '25%'); 1 = 100.0%; rmsnorm's
    spill, 136 B of its 1,024.0625 B of register tiles a thread = 0.13281 = 13.3% (the spill term
    wrote '13%' beside '3.9%' in one line)."""
    from tfx.hw.units import format_percent
    from tfx.present.formatting import ratio_pct
    assert format_percent(3 / 8) == ratio_pct(3 / 8) == "37.5%"
    assert format_percent(1 / 4) == "25.0%"
    assert format_percent(1) == "100.0%"
    assert format_percent(136 / 1024.0625) == "13.3%"


# -------------------------------------------------------------- the API

def test_units_of_multiplies_counts_up_the_parent_chain():
    h100, sip = load_profile("h100_sxm"), load_profile("sip")
    assert h100.units_of("device") == 1
    assert h100.units_of("sm") == 132
    assert h100.units_of("thread") == 132 * 64 * 32      # sm x warps/SM x threads/warp
    assert sip.units_of("cube") == 8
    assert sip.units_of("pe") == 8 * 8
    with pytest.raises(TfxError, match="not a hierarchy level"):
        h100.units_of("pe")


def test_peak_flops_per_s():
    h100, a100, b200, sip = (load_profile(n) for n in ("h100_sxm", "a100_sxm", "b200", "sip"))
    # 4096 flop/cycle/SM x 132 SMs x 1.98e9 Hz = 1.07053056e15 flop/s.
    assert h100.peak_flops_per_s("tensor", "bf16") == pytest.approx(4096 * 132 * 1.98e9)
    # Same number through the dtype aliases other layers may use.
    assert h100.peak_flops_per_s("tensor", "bfloat16") == h100.peak_flops_per_s("tensor", "bf16")
    assert h100.peak_flops_per_s("tensor", "fp8") == pytest.approx(8192 * 132 * 1.98e9)
    # A100: 2048 x 108 x 1.41e9 = 3.1187e14, the datasheet's 312 TFLOP/s to 0.05 %.
    assert a100.peak_flops_per_s("tensor", "bf16") == pytest.approx(312e12, rel=5e-4)
    # B200: the clock is derived so that 8192 x 148 x clock = the datasheet's 2.25e15.
    assert b200.peak_flops_per_s("tensor", "bf16") == pytest.approx(2.25e15, rel=1e-4)
    # SIP: 2048 flop/cycle/PE x 64 PEs x 1e9 Hz = 1.31072e14.
    assert sip.peak_flops_per_s("tensor", "bf16") == pytest.approx(2048 * 64 * 1e9)
    with pytest.raises(TfxError, match="compute.tensor.fp8e4m3 is unavailable"):
        a100.peak_flops_per_s("tensor", "fp8e4m3")


def test_memory_bandwidth_per_instance_and_aggregate():
    h100, a100, sip = load_profile("h100_sxm"), load_profile("a100_sxm"), load_profile("sip")
    # smem: 128 B/cycle x 1.98e9 Hz = 2.5344e11 B/s per SM; x 132 SMs for the device.
    assert h100.memory_bandwidth("smem") == pytest.approx(128 * 1.98e9)
    assert h100.memory_bandwidth("smem", aggregate=True) == pytest.approx(128 * 1.98e9 * 132)
    # A device-scoped level is the same either way.
    assert h100.memory_bandwidth("gmem") == h100.memory_bandwidth("gmem", aggregate=True)
    assert h100.memory_bandwidth("hbm") == pytest.approx(3.35e12)        # alias of gmem
    # A100 L2 stated per cycle: 5120 B/cycle x 1.41e9 Hz = 7.2192e12 B/s.
    assert a100.memory_bandwidth("l2") == pytest.approx(5120 * 1.41e9)
    # SIP: 256 B/ns = 2.56e11 B/s per PE; 64 PEs = 1.6384e13 B/s.
    assert sip.memory_bandwidth("hbm") == pytest.approx(2.56e11)
    assert sip.memory_bandwidth("hbm", aggregate=True) == pytest.approx(64 * 2.56e11)
    with pytest.raises(TfxError, match="memory.rmem has no available bandwidth"):
        h100.memory_bandwidth("rmem")


def test_memory_and_mesh_levels():
    h200, sip = load_profile("h200_sxm"), load_profile("sip")
    gmem = h200.memory_levels()["gmem"]
    assert gmem == MemoryLevel(name="gmem", scope="device", capacity=141e9, bandwidth=4.8e12,
                               bandwidth_per_cycle=None, latency_ns=700.0, caches=None,
                               aliases=("hbm", "dram", "global"))
    smem = h200.memory_levels()["smem"]
    assert (smem.scope, smem.capacity, smem.bandwidth, smem.bandwidth_per_cycle) == (
        "sm", 233472, None, 128)
    assert h200.memory_level("hbm").name == "gmem"
    assert sip.mesh_levels() == {"cube": "cube", "pe": "pe"}
    assert set(sip.memory_levels()) == {"hbm", "tcm"}
    assert sip.memory_levels()["hbm"].scope == "pe"
    assert sip.memory_levels()["tcm"].scope == "pe"
    assert sip.memory_levels()["hbm"].capacity is None      # unavailable
    for path in ("links.pe_pe.bandwidth", "links.d2d.bandwidth", "links.c2c.bandwidth",
                 "links.c2c.latency", "dma.channels", "system.devices_per_node"):
        assert sip.value(path) > 0, path
    assert sip.value("dma.hold_channel_for_round_trip") in (0, 1)


def test_value_get_and_fact_errors_name_the_path():
    b200 = load_profile("b200")
    with pytest.raises(TfxError) as info:
        b200.value("memory.l2.bandwidth")
    assert "memory.l2.bandwidth is unavailable" in info.value.message
    assert "not published" in info.value.message           # the reason is given
    with pytest.raises(TfxError, match="has no fact memory.gmem.bandwith; did you mean memory.gmem.bandwidth"):
        b200.value("memory.gmem.bandwith")
    assert b200.get("memory.l2.bandwidth", "none") == "none"
    assert b200.get("no.such.path") is None
    assert b200.get("memory.gmem.bandwidth") == pytest.approx(8e12)
    assert b200.value("memory.smem.scope") == "sm"          # settings answer too
    with pytest.raises(TfxError, match="is a setting"):
        b200.fact("memory.smem.scope")


def test_facts_are_in_file_order_with_bases_first():
    paths = [p for p, _ in load_profile("h200_sxm").facts()]
    assert paths[0] == "hierarchy.sm.count"
    assert len(paths) == len(set(paths))
    # Inherited keys keep the base's position; keys new in the child come after them.
    assert paths.index("memory.gmem.latency") < paths.index("memory.gmem.bandwidth_measured")
    assert paths[-1].startswith("calibration.")


# -------------------------------------------------------- save and reload

@pytest.mark.parametrize("name", SHIPPED)
def test_to_toml_round_trip(name, tmp_path):
    profile = load_profile(name)
    saved = tmp_path / "saved.toml"
    saved.write_text(profile.to_toml(name="saved_copy"))
    again = load_profile(saved)
    assert again.name == "saved_copy"
    assert again.kind == profile.kind and again.description == profile.description
    assert again.facts() == profile.facts()
    assert again.settings() == profile.settings()
    assert "base" not in tomllib.loads(saved.read_text())   # standalone: bases merged in


# ----------------------------------------------------------- refusals

GOOD_FACT = '{ value = 1, unit = "count", origin = "vendor", source = "s" }'


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    return path


REFUSALS = [
    # (case id, file text, text the error must contain)
    ("unknown top-level key",
     'base = "h100_sxm"\nvendor = "nvidia"\n', "bad.toml:vendor: error: unknown key 'vendor'"),
    ("unknown key in a memory level",
     'base = "h100_sxm"\n[memory.gmem]\nbandwith = { value = 1, unit = "TB/s", origin = "vendor", '
     'source = "s" }\n', "bad.toml:memory.gmem.bandwith: error: unknown key 'bandwith'"),
    ("unknown key in a fact",
     'base = "h100_sxm"\n[clock]\ncore = { value = 1, unit = "GHz", origin = "vendor", source = "s", '
     'note = "x" }\n', "bad.toml:clock.core.note: error: unknown key 'note'"),
    ("bare number instead of a fact table",
     'base = "h100_sxm"\n[hierarchy.sm]\ncount = 132\n', "bad.toml:hierarchy.sm.count: error: expected a fact table"),
    ("string value",
     'base = "h100_sxm"\n[hierarchy.sm]\ncount = { value = "132", unit = "count", origin = "vendor", '
     'source = "s" }\n', "bad.toml:hierarchy.sm.count.value: error: expected `value` to be a finite number"),
    ("missing origin",
     'base = "h100_sxm"\n[clock]\ncore = { value = 1, unit = "GHz", source = "s" }\n',
     "bad.toml:clock.core: error: fact is missing origin"),
    ("bad origin",
     'base = "h100_sxm"\n[clock]\ncore = { value = 1, unit = "GHz", origin = "rumour", source = "s" }\n',
     "bad.toml:clock.core.origin: error: expected `origin` to be one of vendor"),
    ("unit of another family",
     'base = "h100_sxm"\n[memory.gmem]\ncapacity = { value = 4, unit = "TB/s", origin = "vendor", '
     'source = "s" }\n', "bad.toml:memory.gmem.capacity.unit: error: unit 'TB/s' does not fit"),
    ("unknown unit",
     'base = "h100_sxm"\n[clock]\ncore = { value = 1, unit = "furlongs", origin = "vendor", source = "s" }\n',
     "bad.toml:clock.core.unit: error: unknown unit 'furlongs'"),
    ("per-second figure for a per-cycle fact",
     'base = "h100_sxm"\n[compute.tensor]\nbf16 = { value = 989.4, unit = "TFLOP/s", origin = "vendor", '
     'source = "s" }\n', "per-cycle facts are stated per cycle"),
    ("negative bandwidth",
     'base = "h100_sxm"\n[memory.gmem]\nbandwidth = { value = -1, unit = "TB/s", origin = "vendor", '
     'source = "s" }\n', "bad.toml:memory.gmem.bandwidth.value: error: bandwidth must be a number > 0"),
    ("fractional count",
     'base = "h100_sxm"\n[hierarchy.sm]\ncount = { value = 131.5, unit = "count", origin = "vendor", '
     'source = "s" }\n', "bad.toml:hierarchy.sm.count.value: error: count must be a whole number >= 1"),
    ("empty unavailable reason",
     'base = "h100_sxm"\n[memory.l2]\nlatency = { unavailable = "" }\n',
     "bad.toml:memory.l2.latency: error: expected `unavailable` to be a non-empty string"),
    ("unavailable with a value",
     'base = "h100_sxm"\n[memory.l2]\nlatency = { unavailable = "x", value = 1 }\n',
     "bad.toml:memory.l2.latency: error: an unavailable fact has only `unavailable`"),
    ("kind not gpu or tiled",
     'base = "h100_sxm"\nkind = "fpga"\n', "bad.toml:kind: error: expected one of \"gpu\", \"tiled\""),
    ("aliases not a list",
     'base = "h100_sxm"\n[memory.gmem]\naliases = "hbm"\n', "bad.toml:memory.gmem.aliases: error: expected a list"),
    ("unknown compute unit",
     'base = "h100_sxm"\n[compute.matrix]\nscope = "sm"\n', "bad.toml:compute.matrix: error: unknown key 'matrix'"),
    ("unknown dtype",
     f'base = "h100_sxm"\n[compute.tensor]\nbf8 = {GOOD_FACT}\n', "bad.toml:compute.tensor.bf8: error: unknown key"),
    ("missing base",
     'base = "h999_sxm"\n', "bad.toml:base: error: base 'h999_sxm': unknown hardware profile"),
    ("base is itself",
     'base = "bad"\n', "bad.toml:base: error: base profiles form a cycle"),
    ("parent that does not exist",
     'base = "h100_sxm"\n[hierarchy.warp]\nparent = "sn"\n',
     "bad.toml:hierarchy.warp.parent: error: 'sn' is not a hierarchy level"),
    ("hierarchy cycle",
     'base = "h100_sxm"\n[hierarchy.sm]\nparent = "thread"\n', "error: hierarchy parents form a cycle"),
    ("memory scope that does not exist",
     'base = "h100_sxm"\n[memory.smem]\nscope = "cta"\n', "bad.toml:memory.smem.scope: error: 'cta' is not a hierarchy level"),
    ("caches an unknown level",
     'base = "h100_sxm"\n[memory.l2]\ncaches = "hbm2"\n', "bad.toml:memory.l2.caches: error: 'hbm2' is not another memory level"),
    ("alias clashes with a level",
     'base = "h100_sxm"\n[memory.l2]\naliases = ["smem"]\n', "bad.toml:memory.l2.aliases: error: alias 'smem'"),
    ("two levels on one mesh",
     'base = "h100_sxm"\n[hierarchy.warp]\nmesh = "cta"\n', "bad.toml:hierarchy.warp.mesh: error: mesh 'cta'"),
    ("missing required fact",
     'kind = "tiled"\ndescription = "d"\n[hierarchy.pe]\n'
     f'count = {GOOD_FACT}\nparent = "device"\n[memory.tcm]\nscope = "pe"\n'
     'capacity = { value = 1, unit = "MiB", origin = "vendor", source = "s" }\n',
     "bad.toml:clock.core: error: missing clock.core"),
    ("gpu without occupancy facts",
     'kind = "gpu"\ndescription = "d"\n[clock]\ncore = { value = 1, unit = "GHz", origin = "vendor", source = "s" }\n'
     f'[hierarchy.sm]\ncount = {GOOD_FACT}\nparent = "device"\n[memory.gmem]\nscope = "device"\n'
     'capacity = { value = 1, unit = "GB", origin = "vendor", source = "s" }\n',
     "bad.toml:occupancy.threads_per_warp: error: missing occupancy.threads_per_warp"),
    ("TOML syntax error",
     'base = "h100_sxm"\n[clock]\ncore = { value = 1,, }\n', "bad.toml:3:"),
]


@pytest.mark.parametrize("text, expected", [c[1:] for c in REFUSALS], ids=[c[0] for c in REFUSALS])
def test_bad_profile_is_refused_with_the_key_named(text, expected, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # errors show paths relative to the working directory
    _write(tmp_path, "bad", text)
    rc, out, err = run_cli(capsys, "hw", "show", "bad.toml")
    assert rc == 2
    assert expected in err, err
    assert "Traceback" not in err


def test_base_cycle_between_two_files_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, "first", 'base = "second"\n')
    _write(tmp_path, "second", 'base = "first.toml"\n')
    rc, _, err = run_cli(capsys, "hw", "show", "first.toml")
    assert rc == 2
    assert "base profiles form a cycle: first -> second -> first" in err


def test_unknown_profile_name_suggests_close_names(capsys):
    rc, _, err = run_cli(capsys, "hw", "show", "h200sxm")
    assert rc == 2
    assert "unknown hardware profile 'h200sxm'" in err and "did you mean h200_sxm" in err


def test_toml_error_points_at_line_and_column(tmp_path):
    path = _write(tmp_path, "broken", 'kind = "gpu"\ndescription = \n')
    with pytest.raises(TfxError) as info:
        load_profile(path)
    assert isinstance(info.value.where, SourceLocation)
    assert info.value.where.line == 2


def test_child_profile_next_to_its_base_and_inheritance_of_a_user_file(tmp_path):
    child = _write(tmp_path, "faster", 'base = "h200_sxm"\ndescription = "what if"\n[memory.gmem]\n'
                   'bandwidth = { value = 6, unit = "TB/s", origin = "estimated", source = "guess" }\n')
    profile = load_profile(child)
    assert profile.name == "faster"
    assert profile.value("memory.gmem.bandwidth") == pytest.approx(6e12)
    assert profile.fact("memory.gmem.capacity") == load_profile("h200_sxm").fact("memory.gmem.capacity")


# -------------------------------------------------------------- caching

def test_loading_is_cached_and_notices_edits(tmp_path):
    path = _write(tmp_path, "edit", 'base = "h100_sxm"\n[clock]\n'
                  'core = { value = 1, unit = "GHz", origin = "estimated", source = "s" }\n')
    assert load_profile(path).value("clock.core") == pytest.approx(1e9)
    start = time.perf_counter()
    for _ in range(50):
        load_profile("h200_sxm")
    per_load = (time.perf_counter() - start) / 50
    assert per_load < 0.02, per_load      # a few ms at most once parsed
    path.write_text(path.read_text().replace("value = 1,", "value = 2,"))
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10_000_000))
    assert load_profile(path).value("clock.core") == pytest.approx(2e9)


# ------------------------------------------------------------------ CLI

def test_cli_hw_list(capsys):
    rc, out, err = run_cli(capsys, "hw", "list")
    assert rc == 0, err
    # a description wraps under its column where the output is narrow (COLUMNS=80 under xdist)
    lines = [line for line in out.strip().splitlines() if not line.startswith(" ")]
    assert [line.split()[0] for line in lines] == SHIPPED
    assert any(line.split()[:2] == ["sip", "tiled"] for line in lines)
    rc, out, _ = run_cli(capsys, "hw", "list", "--json")
    assert [row["name"] for row in json.loads(out)] == SHIPPED


def test_cli_hw_show_json(capsys):
    rc, out, err = run_cli(capsys, "hw", "show", "h200_sxm", "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert (data["name"], data["kind"]) == ("h200_sxm", "gpu")
    facts = {f["path"]: f for f in data["facts"]}
    bandwidth = facts["memory.gmem.bandwidth"]
    assert bandwidth["value"] == pytest.approx(4.8e12)
    assert (bandwidth["unit"], bandwidth["origin"], bandwidth["raw"]) == ("B/s", "vendor", "4.8 TB/s")
    assert facts["memory.l2.capacity"]["origin"] == "measured"
    assert data["settings"]["memory.gmem.aliases"] == ["hbm", "dram", "global"]


def test_cli_hw_show_text_has_human_units(capsys):
    rc, out, err = run_cli(capsys, "hw", "show", "h200_sxm")
    assert rc == 0, err
    row = next(line for line in out.splitlines() if line.startswith("memory.gmem.bandwidth "))
    assert "4.80 TB/s" in row and "vendor" in row
    row = next(line for line in out.splitlines() if line.startswith("memory.smem.capacity "))
    assert "233.47 KB" in row                       # 228 KiB = 233,472 B, shown in decimal KB


def test_cli_hw_without_subcommand_is_a_usage_error(capsys):
    rc, _, err = run_cli(capsys, "hw")
    assert rc == 2
    assert "list or show" in err
