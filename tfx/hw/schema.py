"""The schema of a hardware profile, written as data, and the checks that enforce it.

A profile file is TOML. Its tables nest as the fact paths of
docs/architecture.md do; every numeric fact is an inline table

    bandwidth = { value = 4.8, unit = "TB/s", origin = "vendor", source = "H200 datasheet" }
    latency   = { unavailable = "not published; not measured yet" }

Validation happens in two passes:

* ``parse_document`` (one file at a time): every key must be in the schema and
  every value of the right type, unit family and range. Facts are converted to
  canonical units here, so an error names the file that holds the mistake.
* ``check_complete`` (after ``base`` inheritance has been merged): required
  facts are present and the names that point at each other (``parent``,
  ``scope``, ``caches``, ``aliases``, ``mesh``) agree.

Both raise ``TfxError(..., where="<file>:<dotted.key>")``.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Union

from tfx.errors import TfxError
from tfx.hw.units import (INTEGER_FAMILIES, UNIT_FAMILIES, accepted_units, canonical_unit,
                          family_of, format_count, format_plain, format_significant, to_canonical)

# calibrated: fitted so the model reproduces an observation its source names (not measured itself)
ORIGINS = ("vendor", "measured", "derived", "calibrated", "estimated", "reference")
KINDS = ("gpu", "tiled")

# Element types a compute engine may state a rate for: the IR's dtype names
# (tfx.ir.types.DType), so an mma on ``fp8e4m3`` looks up ``compute.tensor.fp8e4m3``.
COMPUTE_DTYPES = ("f64", "f32", "tf32", "bf16", "f16", "fp8e4m3", "fp8e5m2", "fp4e2m1",
                  "int8", "int32")

# The level every hierarchy chain ends in. It is not declared in ``hierarchy``.
DEVICE = "device"


# ------------------------------------------------------------------ the spec

@dataclass(frozen=True)
class FactSpec:
    """A numeric fact. ``family`` is a units family, or ``"any"`` (calibration numbers)."""

    family: str
    constraint: str  # "positive" | "nonnegative" | "positive_int" | "nonnegative_int" | "flag"
    doc: str
    ceiling: float | None = None  # tighter than the family's range, where work grows with it


@dataclass(frozen=True)
class TextSpec:
    """A string setting (a name, a scope). ``choices`` limits it when given."""

    doc: str
    choices: tuple[str, ...] | None = None


@dataclass(frozen=True)
class NameListSpec:
    """A list of names (memory ``aliases``)."""

    doc: str


@dataclass(frozen=True)
class TableSpec:
    """A table with a fixed set of keys."""

    fields: Mapping[str, "Spec"]
    doc: str


@dataclass(frozen=True)
class NamedTablesSpec:
    """A table whose keys the profile chooses (hierarchy levels, memories, links)."""

    entry: "Spec"
    doc: str


Spec = Union[FactSpec, TextSpec, NameListSpec, TableSpec, NamedTablesSpec]

_CONSTRAINT_TEXT = {
    "positive": "a number > 0",
    "nonnegative": "a number >= 0",
    "positive_int": "a whole number >= 1",
    "nonnegative_int": "a whole number >= 0",
    "flag": "0 or 1",
}


def _count(doc: str, constraint: str = "positive_int") -> FactSpec:
    return FactSpec("count", constraint, doc)


_OCCUPANCY_KEYS = {
    "threads_per_warp": "threads in a warp",
    "max_threads_per_sm": "resident threads per SM",
    "max_warps_per_sm": "resident warps per SM",
    "max_blocks_per_sm": "resident thread blocks per SM",
    "max_threads_per_block": "threads per block",
    "regs_per_sm": "32-bit registers per SM",
    "regs_per_block": "32-bit registers one block may use",
    "max_regs_per_thread": "registers one thread may use",
    "reg_alloc_unit": "register allocation granularity per warp",
    "warp_alloc_granularity": "warp allocation granularity for registers",
    "smem_per_sm": "shared memory per SM usable by blocks",
    "smem_per_block_optin": "shared memory one block may opt in to",
    "smem_alloc_unit": "shared memory allocation granularity",
    "reserved_smem_per_block": "shared memory the system reserves per block",
}
_OCCUPANCY_BYTES = {"smem_per_sm", "smem_per_block_optin", "smem_alloc_unit",
                    "reserved_smem_per_block"}


def _compute_unit(doc: str, with_instruction_shape: bool, conversions: bool = False) -> TableSpec:
    fields: dict[str, Spec] = {
        "scope": TextSpec("hierarchy level that owns one engine (sm, pe)"),
    }
    if conversions:
        # casts the code generator lowers onto this unit (the GPU's XU also converts types);
        # a cast with no fact here is priced as vector work
        fields["int_to_float"] = FactSpec(
            "count", "positive", "conversion instructions this unit runs per element of a cast from an "
                                 "integer type (int4, int8, int32) to a float (I2F: the XU's type conversions)")
        fields["fp8_to_bf16"] = FactSpec(
            "count", "positive", "conversion instructions this unit runs per element of a cast from fp8 to "
                                 "bf16 (where no instruction converts fp8 to bf16 directly: fp8 -> f16 in pairs "
                                 "on the ALU, then f16 -> bf16 one element an instruction here)")
    for dtype in COMPUTE_DTYPES:
        fields[dtype] = FactSpec("flop_per_cycle", "positive",
                                 f"{dtype} flop per cycle per scope unit (dense)")
    fields["efficiency"] = FactSpec("ratio", "positive",
                                    "sustained fraction of the peak rate (power and issue limits, measured)")
    for dtype in COMPUTE_DTYPES:
        # A dtype whose sustained fraction differs (fp8 draws more power per cycle than bf16
        # and settles at a lower clock under load): it replaces `efficiency` for that dtype.
        fields[f"efficiency_{dtype}"] = FactSpec(
            "ratio", "positive", f"sustained fraction of the {dtype} peak rate (default: `efficiency`)")
    fields["power_clock_exponent"] = FactSpec(
        "count", "positive",
        "how the power limit's clock falls with the units that run this engine: the sustained "
        "fraction `efficiency` holds with every unit busy, and with n of N busy it is "
        "efficiency x (N / n)^(1 / exponent) (dynamic power ~ n f^exponent at the limit)")
    fields["unthrottled_efficiency"] = FactSpec(
        "ratio", "positive",
        "the fraction of the peak rate (clock x its per-cycle rate) this engine keeps with few units "
        "busy, where the power limit no longer binds: the most power_clock_exponent raises it to")
    if with_instruction_shape:
        for dim in "mnk":
            fields[f"instruction_{dim}"] = _count(
                f"tensor instruction {dim.upper()} (bf16 shape; a smaller tile wastes it)")
    return TableSpec(fields, doc)


PROFILE_SPEC = TableSpec({
    "name": TextSpec("profile name (defaults to the file name without .toml)"),
    "base": TextSpec("profile this one inherits from: a bundled name or a path to a .toml"),
    "kind": TextSpec("gpu or tiled", KINDS),
    "description": TextSpec("one line for `tfx hw list`"),
    "isa": TextSpec("the instruction set the device runs (sm_80, sm_90, sm_100, ...): facts read off "
                    "compiled binaries (row load rounds, decode issue counts) apply only to profiles "
                    "of the binaries' instruction set"),
    "hierarchy": NamedTablesSpec(TableSpec({
        "count": _count("units of this level per parent unit"),
        "parent": TextSpec("parent level name (`device` at the top)"),
        "mesh": TextSpec("mesh name kernels use at this level (cta, warp, thread, cube, pe)"),
    }, "one level of the execution hierarchy"), "execution hierarchy, outermost first"),
    "clock": TableSpec({
        "core": FactSpec("frequency", "positive", "core clock that per-cycle facts run at"),
    }, "clocks"),
    "power": TableSpec({
        "tensor_share_at_limit": FactSpec("ratio", "positive",
                                          "the share of the SMs' cycles their tensor cores may be busy (random "
                                          "data, at clock.core) before the board reaches its power limit"),
        "l2_traffic_power": FactSpec("ratio", "positive",
                                     "the dynamic power of the SMs' L2 traffic at memory.l2.bandwidth relative "
                                     "to the tensor cores' busy every cycle (random data)"),
        "response_time": FactSpec("time", "positive",
                                  "how long a load over the limit is sustained (launches back to back) before "
                                  "the power controller lowers the clock to the limit's"),
    }, "the board power limit's clock (tfx.analysis.power_limit)"),
    "memory": NamedTablesSpec(TableSpec({
        "scope": TextSpec("hierarchy level owning one instance (device, sm, thread, pe)"),
        "capacity": FactSpec("bytes", "positive", "bytes per instance"),
        "bandwidth": FactSpec("bandwidth", "positive", "B/s per instance"),
        "bandwidth_per_cycle": FactSpec("bytes_per_cycle", "positive", "B/cycle per instance"),
        "bandwidth_measured": FactSpec(
            "bandwidth", "positive",
            "a measured ceiling (streaming copy) per instance, beside the vendor `bandwidth`"),
        "latency": FactSpec("time", "nonnegative", "load-to-use latency"),
        "bandwidth_short_runs": FactSpec(
            "bandwidth", "positive",
            "measured read bandwidth when every read's contiguous runs are shorter than a 128-byte line"),
        "bandwidth_strided_runs": FactSpec(
            "bandwidth", "positive",
            "measured read bandwidth of 64-127-byte runs that no neighbouring CTA continues (K-major tiles)"),
        "bandwidth_strided_sectors": FactSpec(
            "bandwidth", "positive",
            "measured read bandwidth of runs under 64 bytes that no neighbouring CTA continues"),
        "slice_bandwidth": FactSpec(
            "bandwidth", "positive",
            "a cache's data rate for the requests its slices serve plus the lines they fill from the "
            "level below, device-wide (measured: the H200 L2's sectors served plus DRAM's fills)"),
        "efficiency": FactSpec("ratio", "positive",
                               "sustained fraction of `bandwidth` a streaming kernel achieves (measured)"),
        "read_efficiency": FactSpec("ratio", "positive",
                                    "sustained fraction of `bandwidth` a read-only stream achieves (measured; "
                                    "`efficiency` is a copy's, half its traffic writes)"),
        "favoured_units": _count("SMs that draw a larger share of this level's bandwidth than the others when "
                                 "every SM's queue is deep (the H200's smaller GPCs, measured per CTA)"),
        "others_rate_ratio": FactSpec("ratio", "positive",
                                      "the rate one SM not among `favoured_units` draws as a fraction of one "
                                      "of them, both bound by their share (measured)"),
        "channels": _count("independent channels per instance"),
        "caches": TextSpec("the memory level this one caches (l2 caches gmem)"),
        "walk_pair_merged_share": FactSpec(
            "ratio", "positive",
            "the share of a tile both SMs of a TPC copy at a step that merges before the slices in a "
            "persistent tile walk (the grouped launches' pair, in step: 1/2)"),
        "fabric_bandwidth": FactSpec(
            "bandwidth", "positive",
            "the data rate of the fabric between a partitioned cache's partitions, device-wide: the far "
            "partitions' fills of lines read from the level below (measured: the H200 L2's ltcfabric sectors)"),
        "partitions": _count("partitions of a cache that each keep their own copy of a line the SMs "
                             "of both sides read (A100/H100: two L2 partitions)"),
        "aliases": NameListSpec("other names kernels and knobs may use (hbm for gmem)"),
    }, "one memory level"), "memory levels"),
    "compute": TableSpec({
        "tensor": _compute_unit("matrix engine", with_instruction_shape=True),
        "vector": _compute_unit("SIMD/SIMT lanes", with_instruction_shape=False),
        "special": _compute_unit("special-function units (one op counted as one flop)",
                                 with_instruction_shape=False, conversions=True),
    }, "compute engines"),
    "occupancy": TableSpec({
        key: (FactSpec("bytes", "nonnegative" if key == "reserved_smem_per_block" else "positive",
                       doc) if key in _OCCUPANCY_BYTES
              else _count(doc))
        for key, doc in _OCCUPANCY_KEYS.items()
    }, "CUDA occupancy calculator inputs"),
    "launch": TableSpec({
        "overhead": FactSpec("time", "nonnegative", "host time per kernel launch"),
        "l2_dirty_write_back": FactSpec("time", "nonnegative",
                                        "time a launch's first L2 of DRAM misses adds when the L2 holds "
                                        "dirty lines (a timing harness that clears the L2 by writing it, "
                                        "triton.testing.do_bench), beyond the same launch from a clean L2"),
        "cta_interval": FactSpec("time", "positive",
                                 "time between two CTA launches on one SM (the block scheduler's rate): "
                                 "r resident CTAs that do little work take at least r of it"),
    }, "kernel launch"),
    "local": TableSpec({
        "l1_capacity": FactSpec("bytes", "positive",
                                "per-SM SRAM of the L1 data cache and shared memory together: what shared "
                                "memory leaves of it caches local memory (register spills)"),
        "l1_bandwidth_per_cycle": FactSpec("bytes_per_cycle", "positive",
                                           "B/cycle per SM the L1 serves coalesced local loads and stores at"),
        "l2_bandwidth": FactSpec("bandwidth", "positive",
                                 "B/s the whole L2 serves the SMs' own loads and stores at (not bulk copies): "
                                 "local memory that does not fit L1"),
        "max_carveout_above": FactSpec("bytes", "positive",
                                       "shared memory per CTA above which the kernel's loader asks for the largest "
                                       "shared-memory carve-out (occupancy.smem_per_sm): L1 keeps only what that "
                                       "leaves of l1_capacity, whatever CTAs an SM holds"),
        "l2_latency": FactSpec("time", "positive",
                               "one dependent local load's round trip from L2 (a chase through per-thread "
                               "frames that fit L2): a reload that misses L1 waits it (tfx.analysis.spill_chain)"),
        "dram_latency": FactSpec("time", "positive",
                                 "the same round trip once the machine's frames pass L2 (tfx.analysis.spill_chain)"),
        "dram_bandwidth": FactSpec("bandwidth", "positive",
                                   "B/s the SMs' own local loads and stores reach past L2 with many warps a "
                                   "SM (register spills in DRAM), where it is below the DRAM share"),
        "dram_bandwidth_8_warps": FactSpec("bandwidth", "positive",
                                           "B/s the SMs' own local loads and stores reach past L2 with 8 warps "
                                           "a SM (with local.dram_bandwidth: the measured rates between 8 and "
                                           "16 warps)"),
        "dram_round_bytes_per_warp": FactSpec("bytes", "positive",
                                              "local bytes one warp loads and stores in one round of the "
                                              "measurement that states dram_warp_round"),
        "l2_warp_round": FactSpec("time", "positive",
                                  "the part of a warp's round of local traffic served from L2 spent away from "
                                  "the SM's L2 share (latency, issue): with few warps a SM local traffic in L2 "
                                  "is bound by it (tfx.analysis.local_parallelism)"),
        "dram_warp_round": FactSpec("time", "positive",
                                    "the part of a warp's round of local traffic at DRAM spent away from the "
                                    "SM's DRAM share (latency, issue): with few warps a SM local traffic is "
                                    "bound by it (tfx.analysis.local_parallelism)"),
    }, "local memory: where spilled registers live"),
    "pipeline": TableSpec({
        "iteration_overhead": FactSpec("cycles", "nonnegative_int",
                                       "cycles a loop trip spends on its own bookkeeping (barrier waits, "
                                       "address updates, issue), serial with that position's compute"),
        "load_trip_overhead": FactSpec("cycles", "nonnegative_int",
                                       "cycles one CTA's pipelined load trip takes beyond moving its bytes "
                                       "(stage wait, barrier, mma issue, address update, async-copy issue) "
                                       "when no other CTA overlaps it"),
        "stepped_trip_overhead": FactSpec("cycles", "positive",
                                          "one CTA's pipelined trip beyond its bytes where the k-loop steps its "
                                          "pointers (no address re-derived a trip): the floor of one CTA's trip "
                                          "(the round trips keep load_trip_overhead)"),
        "stepped_load_bandwidth_per_cycle": FactSpec("bytes_per_cycle", "positive",
                                                     "B/cycle one CTA's stepped k-loop brings in from L2 alone "
                                                     "(with stepped_trip_overhead)"),
        "dram_round_trip_unloaded": FactSpec("time", "positive",
                                             "the intercept of the loaded line of a pipelined tile load's "
                                             "DRAM round trip (fitted where the SMs draw bandwidth)"),
        "dram_round_trip_idle": FactSpec("time", "positive",
                                         "a pipelined tile load's DRAM round trip with no other traffic "
                                         "(one SM alone): the loaded line holds only above it"),
        "dram_round_trip_idle_one_tile": FactSpec("time", "positive",
                                                  "the same with one tile in flight (2 stages): a persistent "
                                                  "walk's floor where its tiles in flight queue at the SM's "
                                                  "load path (tfx.analysis.load_queue)"),
        "dram_latency_unloaded": FactSpec("time", "positive",
                                          "one dependent load's DRAM latency with no other traffic "
                                          "(a pointer chase)"),
        "dram_latency_loaded_low": FactSpec("time", "positive",
                                            "the same latency while other SMs stream "
                                            "dram_latency_loaded_low_at of DRAM bandwidth"),
        "dram_latency_loaded_low_at": FactSpec("bandwidth", "positive",
                                               "the DRAM bandwidth streamed at dram_latency_loaded_low"),
        "dram_latency_loaded_high": FactSpec("time", "positive",
                                             "the same latency at dram_latency_loaded_high_at"),
        "dram_latency_loaded_high_at": FactSpec("bandwidth", "positive",
                                                "the DRAM bandwidth streamed at dram_latency_loaded_high"),
        "dram_latency_saturated": FactSpec("time", "positive",
                                           "the same latency with the DRAM saturated (at "
                                           "dram_latency_saturated_at): linear between the points"),
        "dram_latency_saturated_at": FactSpec("bandwidth", "positive",
                                              "the DRAM bandwidth streamed at dram_latency_saturated"),
        # the same chase while other SMs only read DRAM (no write-backs): a persistent walk's
        # round trip queues on it (tfx.analysis.load_trip.chase_round_trip_ns)
        **{f"dram_read_latency_{k}": FactSpec("time", "positive",
                                               f"the pointer chase's DRAM latency while other SMs read "
                                               f"dram_read_latency_{k}_at of DRAM (a read-only stream): "
                                               f"linear between the points from dram_latency_unloaded")
           for k in ("low", "mid", "high", "saturated")},
        **{f"dram_read_latency_{k}_at": FactSpec("bandwidth", "positive",
                                                  f"the DRAM bandwidth read at dram_read_latency_{k}")
           for k in ("low", "mid", "high", "saturated")},
        "sm_dram_bandwidth_per_cycle": FactSpec("bytes_per_cycle", "positive",
                                                "B/cycle one SM's loads bring in from DRAM at most, "
                                                "however many bytes it keeps in flight"),
        "dram_round_trip_at_copy_bandwidth": FactSpec(
            "time", "positive",
            "the same round trip while the SMs draw the measured copy bandwidth: linear between"),
        "dram_round_trip_stream_unloaded": FactSpec(
            "time", "positive",
            "the loaded line's intercept for a weight stream (every byte read by one CTA, its rows "
            "continued by the neighbouring CTA's): the small-M k-loop's own line"),
        "dram_round_trip_stream_at_copy_bandwidth": FactSpec(
            "time", "positive",
            "the weight stream's round trip while the SMs draw the measured copy bandwidth: linear between"),
        "sm_load_bandwidth_per_cycle": FactSpec("bytes_per_cycle", "positive",
                                                "B/cycle one SM's pipelined async copies (cp.async) bring "
                                                "in from L2, shared by the CTAs it holds"),
        "drifted_fill_bandwidth_per_cycle": FactSpec("bytes_per_cycle", "positive",
                                                     "B/cycle at which a 2-stage serial trip (attention) of a CTA "
                                                     "started after the launch's first wave waits for its copies' "
                                                     "bytes beyond the latency its running mma hides"),
        "wgmma_serial_trip_overhead": FactSpec("cycles", "positive",
                                               "cycles of a k-loop trip whose warpgroup mmas ptxas serializes "
                                               "(each waited before the next) beyond its wgmma work and latencies"),
        "wgmma_serial_latency": FactSpec("cycles", "positive",
                                         "cycles each serialized wgmma waits beyond its work at the SM's peak "
                                         "tensor rate (its latency exposed)"),
        "narrow_copy_cycles": FactSpec("cycles", "positive",
                                       "cycles one warp-wide async copy of fewer than 16 bytes a thread "
                                       "(cp.async.ca) holds the SM's load path, whatever its bytes"),
        "short_row_copy_cycles": FactSpec("cycles", "positive",
                                          "cycles one warp-wide async copy of 16 bytes a thread holds the "
                                          "SM's load path where the tile's rows are at most 64 bytes"),
        "sync_load_cycles": FactSpec("cycles", "positive",
                                     "cycles one warp-wide load into registers of 16 bytes a thread "
                                     "(an unpipelined k-loop's ld.global) holds the SM's load path"),
        "sync_narrow_load_cycles": FactSpec("cycles", "positive",
                                            "the same for a load of 4-8 bytes a thread"),
        "sync_line_load_cycles": FactSpec("cycles", "positive",
                                          "cycles one warp-wide load into registers of 16 bytes a thread holds "
                                          "the SM's load path where the tile's rows are longer than 64 bytes "
                                          "(4 whole 128-byte lines a load; sync_load_cycles is 64-byte rows' "
                                          "8 half lines)"),
        "wgmma_clock_fraction": FactSpec("ratio", "positive",
                                         "the SM clock while every SM runs warpgroup mmas (and nothing "
                                         "else) over the profile's clock: the rate a k-loop's next copy "
                                         "waits behind the trip's mma at"),
        "wgmma_outstanding": FactSpec("count", "positive_int",
                                      "warpgroup mma instructions (HGMMA) a warp keeps issued and not "
                                      "complete: its next issue waits for the oldest"),
        "wgmma_issue_cycles": FactSpec("cycles", "positive",
                                       "cycles one HGMMA holds its sub-partition's issue (each warpgroup's "
                                       "warp on it in turn)"),
        "wgmma_trip_issue_overhead": FactSpec("cycles", "nonnegative",
                                              "cycles a pipelined warpgroup-mma k-trip spends around its "
                                              "HGMMA issue before its next copies leave (its barriers, the "
                                              "warpgroup arrive, the descriptors)"),
        "wgmma_trip_busy": FactSpec("ratio", "positive",
                                    "the share of a tensor-bound GEMM k-trip (warpgroup mma left running, "
                                    "copies in flight) its tensor cores run: the trip's tensor cycles over "
                                    "this are compared with its shared-memory port cycles"),
        "dependent_issue": FactSpec("cycles", "nonnegative_int",
                                    "cycles from an arithmetic instruction's issue to a dependent one's "
                                    "(the step of a serial reduction chain)"),
        "shuffle_results_per_cycle": FactSpec("count", "positive_int",
                                              "warp-shuffle results an SM delivers a cycle: a warp's "
                                              "shfl.sync holds the SM's shuffle unit 32 / this cycles "
                                              "(the shuffle steps of a row reduction)"),
    }, "software-pipelined loops"),
    "instruction_latency": TableSpec({
        "mma_sync": FactSpec("cycles", "nonnegative_int",
                             "cycles from a warp mma (mma.sync m16n8k16) to one that reads its result "
                             "as accumulator"),
        "shfl_sync": FactSpec("cycles", "nonnegative_int",
                              "cycles from a warp shuffle (shfl.sync.bfly) to a dependent one"),
        "bar_sync": FactSpec("cycles", "nonnegative_int",
                             "cycles of one CTA barrier (bar.sync) that a 4-warp CTA's warps pass in turn"),
        "ex2": FactSpec("cycles", "nonnegative_int",
                        "cycles from a special-function exp2 (ex2.approx.f32) to a dependent one"),
        "fma": FactSpec("cycles", "nonnegative_int",
                        "cycles from an FP32 fused multiply-add to a dependent one"),
        "smem_load": FactSpec("cycles", "nonnegative_int",
                              "cycles of a shared-memory load round trip (ld.shared to a dependent ld.shared)"),
        "ldmatrix": FactSpec("cycles", "nonnegative_int",
                             "cycles from a warp's ldmatrix (.x4, .x4.trans) to an instruction that reads "
                             "its fragment (a pointer chase through ldmatrix)"),
        "wgmma_wait": FactSpec("cycles", "nonnegative_int",
                               "cycles a trip waits for a warpgroup mma's result past the mma's own "
                               "tensor time (wgmma.wait_group after the group's last instruction)"),
        "wgmma_rs_group": FactSpec("cycles", "nonnegative_int",
                                   "cycles a warpgroup mma group reading A from registers (RS) holds the "
                                   "tensor cores beyond its instructions, once a group"),
        "wgmma_serial": FactSpec("cycles", "nonnegative_int",
                                 "cycles each instruction of a serialized warpgroup mma (ptxas waits for "
                                 "every wgmma: its registers do not fit) waits past its own tensor time, "
                                 "A from shared memory"),
        "wgmma_serial_rs": FactSpec("cycles", "nonnegative_int",
                                    "the same for a serialized warpgroup mma reading A from registers (RS)"),
    }, "dependent-instruction latencies (one warp's chain, no other work on the SM)"),
    "warp_mma": TableSpec({
        "subpartitions": _count("sub-partitions of one SM, each with its own warp scheduler and tensor core: "
                                "a warp's mma.sync runs on its own sub-partition's"),
        "f16_mma_cycles": FactSpec("cycles", "positive",
                                   "cycles one sub-partition's tensor core takes per mma.sync m16n8k16 f16 "
                                   "(4096 flop) when its warps keep it busy"),
        "mma_issue_cycles": FactSpec("cycles", "positive",
                                     "cycles of its warp scheduler's issue one mma.sync m16n8k16 holds when "
                                     "other instructions (conversions) are issued beside it"),
        "fp8_to_f16_cycles": FactSpec("cycles", "positive",
                                      "cycles one sub-partition takes per warp instruction converting a pair "
                                      "of fp8 values to f16 (cvt.rn.f16x2.e4m3x2, 32 threads)"),
        "clock_fraction": FactSpec("ratio", "positive",
                                   "the SM clock under sustained warp mma over clock.core (power)"),
        "loop_alu_instructions": FactSpec("count", "nonnegative",
                                          "ALU instructions a warp of a warp-mma k-loop issues a trip beside "
                                          "its copies' (the loop's counters and stage indices)"),
        "copy_alu_instructions": FactSpec("count", "nonnegative",
                                          "ALU instructions a warp issues a trip per 16-byte copy each of its "
                                          "threads makes (the copy's address step and mask)"),
        "alu_cycles": FactSpec("cycles", "positive",
                               "cycles one sub-partition's ALU pipe takes per warp instruction"),
        "promotes_fp8": FactSpec("flag", "flag",
                                 "1: the compiler converts fp8 operands of a warp mma (not a warpgroup mma) "
                                 "to f16 in registers and runs f16 mma.sync (Triton on sm_90)"),
    }, "warp-level mma (mma.sync) on a GPU whose tensor instruction is a warpgroup one"),
    "dispatch": TableSpec({
        "single_op": FactSpec("cycles", "nonnegative_int", "cycles to dispatch one command"),
        "composite": FactSpec("cycles", "nonnegative_int", "cycles to dispatch a composite command"),
        "completion_latency": FactSpec(
            "cycles", "nonnegative_int",
            "cycles until the command processor sees a command finish (a command waiting on it "
            "is dispatched no earlier)"),
    }, "command dispatch (tiled accelerators)"),
    "dma": TableSpec({
        # the simulator keeps one free time per channel and scans them per descriptor
        "channels": FactSpec("count", "positive_int", "DMA channels per PE", ceiling=4096),
        "hold_channel_for_round_trip": FactSpec(
            "flag", "flag", "1: a read holds its channel until the data returns; 0: pipelined"),
    }, "DMA engines (tiled accelerators)"),
    "links": NamedTablesSpec(TableSpec({
        "scope": TextSpec("level one endpoint belongs to (device, cube, pe)"),
        "bandwidth": FactSpec("bandwidth", "positive", "B/s per endpoint, each direction"),
        "latency": FactSpec("time", "nonnegative", "one-way latency"),
        "efficiency": FactSpec("ratio", "positive",
                               "fraction of `bandwidth` (the line rate) a collective library moves "
                               "data at: protocol overhead (model level)"),
        "count": _count("links per endpoint"),
    }, "one interconnect"), "interconnects"),
    "system": TableSpec({
        "devices_per_node": _count("devices (GPUs, SIPs) per node"),
    }, "the system around the device, for the model layer"),
    "calibration": NamedTablesSpec(FactSpec("any", "positive", "a measured ceiling"),
                                   "measured ceilings kept beside the profile (any unit)"),
}, "a hardware profile")

# Keys that belong to one file and are not inherited through ``base``.
PER_FILE_KEYS = ("name", "base")

REQUIRED_COMMON = ("kind", "description", "clock.core")
REQUIRED_BY_KIND = {
    "gpu": tuple(f"occupancy.{key}" for key in _OCCUPANCY_KEYS) + ("compute.tensor.scope",),
    "tiled": ("dispatch.single_op", "dispatch.composite"),
}

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


# ------------------------------------------------------------------ the Fact

@dataclass(frozen=True)
class Fact:
    """One numeric fact with its provenance.

    ``value`` is in the canonical ``unit`` (ints for counts, cycles and flags);
    ``raw_value``/``raw_unit`` are as written, ``raw`` their text. An
    unavailable fact has ``value is None`` and the reason in ``unavailable``.
    ``knob`` names the knob that set it (not part of equality, so a profile
    saved with knobs applied loads back equal).
    """

    value: float | int | None
    unit: str | None
    origin: str | None
    source: str
    raw: str
    unavailable: str | None = None
    raw_value: float | int | None = None
    raw_unit: str | None = None
    knob: str | None = field(default=None, compare=False)

    @property
    def available(self) -> bool:
        return self.unavailable is None

    def to_json(self) -> dict[str, Any]:
        return {"value": self.value, "unit": self.unit, "origin": self.origin,
                "source": self.source, "raw": self.raw, "unavailable": self.unavailable,
                "knob": self.knob}


def make_fact(raw_value: float | int, raw_unit: str, origin: str, source: str,
              knob: str | None = None) -> Fact:
    """A Fact from the value and unit as written, converting to the canonical unit."""
    family = family_of(raw_unit)
    assert family is not None, raw_unit
    return Fact(value=to_canonical(raw_value, raw_unit), unit=canonical_unit(family),
                origin=origin, source=source, raw=f"{raw_value!r} {raw_unit}",
                raw_value=raw_value, raw_unit=raw_unit, knob=knob)


def unavailable_fact(spec: FactSpec, reason: str) -> Fact:
    unit = canonical_unit(spec.family) if spec.family != "any" else None
    return Fact(value=None, unit=unit, origin=None, source="", raw=f"unavailable: {reason}",
                unavailable=reason)


# The sane envelope of each family, in canonical units: (smallest value > 0, largest value).
# Not a claim about any machine: far outside every real one (the shipped profiles span
# 1..65536 counts, 32 GB/s..11 TB/s, 1..2.5 GHz), yet tight enough that no quotient or
# product of facts overflows a float or a 64-bit integer (1e-320 B/s would make a transfer
# take infinite time; 2**70 SMs no longer fits an int64 column). A value of 0 stays allowed
# where the constraint allows it ("nonnegative").
FAMILY_RANGES: dict[str, tuple[float, float]] = {
    "bytes": (1, 2 ** 50),                  # 1 B .. 1 PiB
    "bandwidth": (1e3, 1e18),               # 1 KB/s .. 1 EB/s
    "frequency": (1e6, 1e11),               # 1 MHz .. 100 GHz
    "time": (1e-3, 1e12),                   # 1 ps .. 1000 s
    "flop_per_cycle": (1e-3, 1e8),
    "bytes_per_cycle": (1e-3, 1e8),
    "cycles": (1, 10 ** 9),
    "count": (1, 2 ** 24),                  # 16,777,216: SMs, registers per SM, channels
    "ratio": (1e-3, 1.0),                   # a fraction of a peak: 0.1% .. 100%
    "flop_rate": (1e3, 1e21),
}


def _bound_text(value: float, family: str) -> str:
    unit = canonical_unit(family)
    number = format_count(int(value)) if float(value).is_integer() and abs(value) < 1e15 else format_significant(value, 6)
    return number if unit in ("count", "ratio", "flag") else f"{number} {unit}"


def _got(value: float, family: str | None) -> str:
    """The canonical value a refusal got, with its canonical unit: a profile's ``core = { value =
    -1980, unit = "MHz" }`` was refused 'got -1.98e+09', a number in no unit the file wrote
    (now 'got -1.98e+09 Hz', beside bounds written '1,000,000 Hz')."""
    unit = canonical_unit(family) if family else None
    number = format_significant(value, 6)
    return number if unit in (None, "count", "ratio", "flag") else f"{number} {unit}"


def range_problem(value: float, family: str | None, zero_allowed: bool = True) -> str | None:
    """Why a finite canonical ``value`` is outside ``family``'s sane envelope, or None."""
    bounds = FAMILY_RANGES.get(family or "")
    if bounds is None or (value == 0 and zero_allowed):
        return None
    low, high = bounds
    if abs(value) < low:
        either = "0 or " if zero_allowed else ""
        return f"must be {either}at least {_bound_text(low, family)}, got {_got(value, family)}"
    if abs(value) > high:
        return f"must be at most {_bound_text(high, family)}, got {_got(value, family)}"
    return None


def constraint_problem(value: float, constraint: str, family: str | None = None,
                       ceiling: float | None = None) -> str | None:
    """Why ``value`` (canonical) breaks ``constraint``, ``family``'s range or ``ceiling``, or None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return f"must be {_CONSTRAINT_TEXT[constraint]}, got {value!r}"
    whole = float(value).is_integer()
    ok = {
        "positive": value > 0,
        "nonnegative": value >= 0,
        "positive_int": whole and value >= 1,
        "nonnegative_int": whole and value >= 0,
        "flag": value in (0, 1),
    }[constraint]
    if ok:
        if ceiling is not None and value > ceiling:
            return f"must be at most {format_plain(ceiling)}, got {format_significant(value, 6)}"
        return range_problem(value, family, zero_allowed=constraint.startswith("nonnegative"))
    return f"must be {_CONSTRAINT_TEXT[constraint]}, got {_got(value, family)}"


# ------------------------------------------------------------- spec lookups

def spec_at(path: str) -> Spec | None:
    """The spec governing a dotted path (``memory.gmem.bandwidth``), or None."""
    spec: Spec = PROFILE_SPEC
    for part in path.split("."):
        if isinstance(spec, TableSpec):
            if part not in spec.fields:
                return None
            spec = spec.fields[part]
        elif isinstance(spec, NamedTablesSpec):
            spec = spec.entry
        else:
            return None
    return spec


def _expected_text(spec: Spec) -> str:
    if isinstance(spec, FactSpec):
        return ("a fact table { value, unit, origin, source } or { unavailable = \"reason\" }")
    if isinstance(spec, TextSpec):
        if spec.choices:
            return "one of " + ", ".join(f'"{c}"' for c in spec.choices)
        return "a string"
    if isinstance(spec, NameListSpec):
        return "a list of names"
    return "a table"


def _type_name(value: Any) -> str:
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, str):
        return f"the string {value!r}"
    return f"{type(value).__name__} {value!r}"


# ------------------------------------------------------------------ pass 1

def parse_document(doc: dict, file: str) -> dict:
    """Check one parsed TOML document against the schema; facts become ``Fact``s.

    Returns a nested dict with the same shape whose leaves are ``Fact``, str
    or tuple (aliases). Raises TfxError naming ``file:dotted.key``.
    """
    return _parse_table(doc, PROFILE_SPEC, (), file)


def _where(file: str, path: tuple[str, ...]) -> str:
    return f"{file}:{'.'.join(path)}" if path else file


def _parse_value(value: Any, spec: Spec, path: tuple[str, ...], file: str) -> Any:
    where = _where(file, path)
    if isinstance(spec, FactSpec):
        return _parse_fact(value, spec, path, file)
    if isinstance(spec, TextSpec):
        if not isinstance(value, str):
            raise TfxError(f"expected {_expected_text(spec)}, got {_type_name(value)}", where=where)
        if spec.choices and value not in spec.choices:
            raise TfxError(f"expected {_expected_text(spec)}, got {value!r}", where=where)
        if not value.strip():
            raise TfxError("expected a non-empty string", where=where)
        return value
    if isinstance(spec, NameListSpec):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise TfxError(f"expected a list of names, got {_type_name(value)}", where=where)
        for name in value:
            if not _NAME.match(name):
                raise TfxError(f"expected names made of letters, digits and _, got {name!r}",
                               where=where)
        return tuple(value)
    if not isinstance(value, dict):
        raise TfxError(f"expected a table ({spec.doc}), got {_type_name(value)}", where=where)
    if isinstance(spec, TableSpec):
        return _parse_table(value, spec, path, file)
    out = {}
    for name, entry in value.items():
        if not _NAME.match(name):
            raise TfxError(f"expected a name made of letters, digits and _, got {name!r}",
                           where=_where(file, path + (name,)))
        out[name] = _parse_value(entry, spec.entry, path + (name,), file)
    return out


def _parse_table(table: dict, spec: TableSpec, path: tuple[str, ...], file: str) -> dict:
    out = {}
    for key, value in table.items():
        if key not in spec.fields:
            known = list(spec.fields)
            close = difflib.get_close_matches(key, known, n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            where_text = ".".join(path) or "the top level"
            raise TfxError(f"unknown key {key!r} in {where_text} (expected one of: "
                           f"{', '.join(known)}){hint}", where=_where(file, path + (key,)))
        out[key] = _parse_value(value, spec.fields[key], path + (key,), file)
    return out


_FACT_KEYS = ("value", "unit", "origin", "source")


def _parse_fact(value: Any, spec: FactSpec, path: tuple[str, ...], file: str) -> Fact:
    where = _where(file, path)
    if not isinstance(value, dict):
        raise TfxError(f"expected {_expected_text(spec)}, got {_type_name(value)}", where=where)
    if "unavailable" in value:
        extra = sorted(set(value) - {"unavailable"})
        if extra:
            raise TfxError(f"an unavailable fact has only `unavailable`, got also {', '.join(extra)}",
                           where=where)
        reason = value["unavailable"]
        if not isinstance(reason, str) or not reason.strip():
            raise TfxError("expected `unavailable` to be a non-empty string (the reason)",
                           where=where)
        return unavailable_fact(spec, reason)
    for key in value:
        if key not in _FACT_KEYS:
            raise TfxError(f"unknown key {key!r} in a fact (expected value, unit, origin, "
                           "source, or only unavailable)", where=f"{where}.{key}")
    missing = [key for key in _FACT_KEYS if key not in value]
    if missing:
        raise TfxError(f"fact is missing {', '.join(missing)} (expected {_expected_text(spec)})",
                       where=where)
    number, unit, origin, source = (value[k] for k in _FACT_KEYS)
    if isinstance(number, bool) or not isinstance(number, (int, float)) or not math.isfinite(number):
        raise TfxError(f"expected `value` to be a finite number, got {_type_name(number)}",
                       where=f"{where}.value")
    if isinstance(number, int) and abs(number) > 2 ** 63 - 1:
        raise TfxError("`value` does not fit a 64-bit integer", where=f"{where}.value")
    if not isinstance(unit, str):
        raise TfxError(f"expected `unit` to be a string, got {_type_name(unit)}", where=f"{where}.unit")
    unit_family = family_of(unit)
    if spec.family == "any":
        if unit_family is None:
            raise TfxError(f"unknown unit {unit!r}", where=f"{where}.unit")
    elif unit_family != spec.family:
        raise TfxError(_unit_problem(unit, unit_family, spec), where=f"{where}.unit")
    if origin not in ORIGINS:
        raise TfxError(f"expected `origin` to be one of {', '.join(ORIGINS)}, got {origin!r}",
                       where=f"{where}.origin")
    if not isinstance(source, str) or not source.strip():
        raise TfxError("expected `source` to be a non-empty string saying where the number "
                       "comes from", where=f"{where}.source")
    fact = make_fact(number, unit, origin, source)
    problem = constraint_problem(fact.value, spec.constraint, family_of(unit), spec.ceiling)
    if problem:
        raise TfxError(f"{path[-1]} {problem}", where=f"{where}.value")
    return fact


def _unit_problem(unit: str, unit_family: str | None, spec: FactSpec) -> str:
    expected = ", ".join(accepted_units(spec.family))
    text = f"unit {unit!r} does not fit this fact; expected {expected}"
    if unit_family is None:
        text = f"unknown unit {unit!r}; expected {expected}"
    if spec.family in ("flop_per_cycle", "bytes_per_cycle") and unit_family in (
            "flop_rate", "bandwidth"):
        text += (" (per-cycle facts are stated per cycle; put the vendor's per-second "
                 "figure in `source`)")
    return text


# ------------------------------------------------------------------ pass 2

def merge(base: dict, child: dict) -> dict:
    """Deep merge: the child's tables merge into the base's, the child's leaves win.

    Insertion order follows the base, with keys new in the child appended, so
    ``Profile.facts()`` lists inherited facts where the base file has them.
    """
    out = dict(base)
    for key, value in child.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def lookup(tree: dict, path: str) -> Any:
    node: Any = tree
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def check_complete(tree: dict, file: str) -> None:
    """Required facts present and cross-references consistent, on a merged profile."""
    def need(path: str) -> None:
        if lookup(tree, path) is None:
            raise TfxError(f"missing {path} ({_doc_of(path)})", where=f"{file}:{path}")

    for path in REQUIRED_COMMON:
        need(path)
    for section in ("hierarchy", "memory"):
        if not tree.get(section):
            raise TfxError(f"missing {section} (at least one level is required)",
                           where=f"{file}:{section}")
    for path in REQUIRED_BY_KIND[tree["kind"]]:
        need(path)

    hierarchy: dict = tree["hierarchy"]
    levels = set(hierarchy) | {DEVICE}
    if DEVICE in hierarchy:
        raise TfxError("`device` is the implicit top level; do not declare it",
                       where=f"{file}:hierarchy.{DEVICE}")
    meshes: dict[str, str] = {}
    for name, level in hierarchy.items():
        need(f"hierarchy.{name}.count")
        need(f"hierarchy.{name}.parent")
        _check_name_ref(level["parent"], levels, f"{file}:hierarchy.{name}.parent", "a hierarchy level")
        mesh = level.get("mesh")
        if mesh is not None:
            if mesh in meshes:
                raise TfxError(f"mesh {mesh!r} is already used by hierarchy.{meshes[mesh]}",
                               where=f"{file}:hierarchy.{name}.mesh")
            meshes[mesh] = name
    for name in hierarchy:  # each parent chain must reach the device
        seen = [name]
        current = hierarchy[name]["parent"]
        while current != DEVICE:
            if current in seen:
                chain = " -> ".join(seen + [current])
                raise TfxError(f"hierarchy parents form a cycle: {chain}",
                               where=f"{file}:hierarchy.{name}.parent")
            seen.append(current)
            current = hierarchy[current]["parent"]

    memory: dict = tree["memory"]
    names_in_use = {name: f"memory.{name}" for name in memory}
    for name, level in memory.items():
        need(f"memory.{name}.scope")
        need(f"memory.{name}.capacity")
        _check_name_ref(level["scope"], levels, f"{file}:memory.{name}.scope", "a hierarchy level")
        cached = level.get("caches")
        if cached is not None:
            _check_name_ref(cached, set(memory) - {name}, f"{file}:memory.{name}.caches",
                            "another memory level")
        for alias in level.get("aliases", ()):
            if alias in names_in_use:
                raise TfxError(f"alias {alias!r} is already the name or an alias of "
                               f"{names_in_use[alias]}", where=f"{file}:memory.{name}.aliases")
            names_in_use[alias] = f"memory.{name}"

    for unit, engine in tree.get("compute", {}).items():
        need(f"compute.{unit}.scope")
        _check_name_ref(engine["scope"], levels, f"{file}:compute.{unit}.scope", "a hierarchy level")
    for link, table in tree.get("links", {}).items():
        need(f"links.{link}.bandwidth")
        need(f"links.{link}.latency")
        if "scope" in table:
            _check_name_ref(table["scope"], levels, f"{file}:links.{link}.scope", "a hierarchy level")


def _check_name_ref(name: str, known: set[str], where: str, what: str) -> None:
    if name not in known:
        close = difflib.get_close_matches(name, sorted(known), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise TfxError(f"{name!r} is not {what} (known: {', '.join(sorted(known))}){hint}",
                       where=where)


def _doc_of(path: str) -> str:
    spec = spec_at(path)
    return getattr(spec, "doc", "required")


__all__ = ["Fact", "FactSpec", "ORIGINS", "KINDS", "COMPUTE_DTYPES", "PROFILE_SPEC",
           "parse_document", "check_complete", "merge", "spec_at", "constraint_problem", "range_problem", "FAMILY_RANGES",
           "make_fact", "UNIT_FAMILIES", "INTEGER_FAMILIES"]
