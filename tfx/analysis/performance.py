"""Predicted time: waves of CTAs over a per-CTA pipeline model (docs/analysis.md, "performance").

For each launch (a top-level mesh) the positions run in waves of
``units x resident`` (SMs x CTAs per SM on a GPU; PEs on a tiled accelerator).
One residency batch's time comes from the engines of one unit:

  copy     gmem bytes over the unit's share of DRAM bandwidth, L2-hit bytes over its share of L2
  tensor   mma flops, padded to the tensor-core instruction shape, over the unit's tensor rate
  smem     shared-memory (or TCM) bytes moved by loads and read by mma over its bandwidth
  vector   elementwise and reduction flops over the vector rate
  special  exp/rsqrt/... over the special-function rate
  dispatch command processor cycles (tiled accelerators)

A pipelined loop (``stages S``) runs each trip at the slowest engine or at the
memory latency over S-1 loads in flight (Little's law), after a fill of one
latency and one tile; an unpipelined loop pays latency plus every engine in
series, overlapped only across resident CTAs. The last wave runs with the CTAs
it has: a tail wave costs the fraction of the machine it uses.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from tfx.analysis import (chain_overlap, copy_behind_mma, cta_launch, local_parallelism, row_spill, spill_chain, spill_traffic, decode_trip, l2_reuse, launch_handoff, load_trip,
                          memory_parallelism, mma_layout, mma_path, persistent_rounds, pipeline_depth, row_body,
                          transpose_trip, trip_latency, uneven_tail, unpipelined_chain)
from tfx.analysis import drifted_stream
from tfx.analysis import wgmma_serial
from tfx.analysis import converting_trip
from tfx.analysis import wgmma_port
from tfx.analysis import lockstep_chain
from tfx.analysis import fragment_chain, load_rounds, lone_walk
from tfx.analysis import warp_trip
from tfx.analysis import strided_runs
from tfx.analysis import tile_walk
from tfx.analysis import power_limit
from tfx.analysis import load_queue
from tfx.analysis import favoured_tail
from tfx.analysis.counting import ScopeNode
from tfx.analysis.mma_layout import SHARED_LEVEL
from tfx.analysis.dma import contiguous_runs
from tfx.analysis.machine import Machine
from tfx.analysis.numbers import cdiv, emax, emin, if_else, is_array, ratio, where
from tfx.analysis.roofline import mma_engine, rate_dtype
from tfx.errors import TfxError
from tfx.ir import ops as opcat
from tfx.ir.nodes import Window
from tfx.hw.profile import normalize_dtype
from tfx.hw.units import (format_bandwidth_per_ns, format_bytes, formula_bytes, format_count, format_counted, format_exact_bytes, format_percent, format_time_ns, formula_frequency, formula_rate, level_noun,
                          verb_for)
from tfx.hw.units import format_plain, format_whole

@dataclass(eq=False, repr=False)
class LaunchMiss(dict):
    """One launch's L2 miss ratio per load op id (the mapping: tfx.analysis.l2_reuse), with
    what its timing keeps for the launch beside it (the fields; ``_launch_time`` sets them).
    Outside a launch (the simulator's tasks: ``op_demand``) the fields keep their defaults."""
    l2_only: dict = field(default_factory=dict)   # loop id -> share of its trips whose tiles the previous wave left in L2
    spill: tuple = (None, None, 0, None)          # (spilled share, local bytes/ns, CTA spill bytes, beyond L1)
    spill_regs: tuple = (0, None)                 # (spill bytes per thread, registers compiled to)
    spill_chain: tuple | None = None              # spill_chain's facts: (threads, L2 bytes, L2 ns, DRAM ns, positions)
    demands: dict | None = None                   # op id -> its Demand, computed once (op_demand); None: no memo
    fragment_chains: dict = field(default_factory=dict)  # loop id -> its fragment_chain.Chain or None (_fragment_chain)
    lone_walks: dict = field(default_factory=dict)       # loop id -> its lone_walk ns a trip, 0 where none (_lone_walk_ns)
    spill_trips: dict = field(default_factory=dict)  # loop id -> its spill_traffic.SpillTrip (_spill_trip)
    loop_parts: dict = field(default_factory=dict)   # (part, loop id[, r]) -> what pricing the loop works
                                                  # out that no batch changes (_once_a_launch)
    loop_ns: dict | None = None                   # loop id -> its ns in one CTA of the batch being timed
    loop_life: dict | None = None                 # loop id -> one CTA's own path through it (drifted_stream)
    drifted: Any = 0                              # share of CTAs that start after the first wave (pipeline_depth)
    one_wave: Any = False                         # no full wave: every CTA starts together (cta_share_weight)
    notes: dict | None = None                     # loop id -> mma_path.LoopNote of the full batch (breakdown)
    stream_notes: dict | None = None              # loop id -> (r, units, line) per batch (tfx.analysis.decode_trip)
    spill_series: dict | None = None              # loop id -> (local ns, rest ns, r) of the full batch (spill_traffic)
    chain_notes: dict | None = None               # loop id -> the trip chain's line per batch (decode_trip)
    command_notes: dict | None = None             # loop id -> a command processor's carried chain's line per batch
    mio_notes: dict | None = None                 # loop id -> the MIO queue's line per batch (warp_trip.describe_mio)
    dram_trips: dict | None = None                # loop id -> load_trip.LoadedTrip per batch (its breakdown line)
    load_queues: dict | None = None               # loop id -> (r, units, load_queue.LoadQueue) per batch (its line)
    round_bounds: dict | None = None              # loop id -> (its ns, whether a chain, not an engine, sets its
                                                  # round) of the full batch (the launch's bound_by)
    pair_merged: dict = field(default_factory=dict)  # op id -> share of its copies a TPC pair merges (l2_reuse)
    side_block: dict = field(default_factory=dict)   # op id -> co-readers on one L2 partition (l2_reuse.side_block)
    partitions: Any = 1                           # the L2's partitions (l2_reuse.far_fill_share)
    walk: bool = False                            # a persistent tile walk (l2_reuse.WaveReuse.walk): its pipelined
                                                  # trips' DRAM round trip queues on the pointer chase's curve
                                                  # (load_trip.chase_round_trip_ns)
    walk_drifted: Any = 0                         # share of a walk's tiles after its first round, whose CTAs'
                                                  # trips have drifted apart (pipeline_depth.walk_drifted_share)
    walk_rounds: tuple | None = None              # a walk's (CTAS, TILES), for the breakdown's words
    runs_lockstep_round: dict = field(default_factory=dict)  # decode trip loop id -> whether it runs decode_trip's
                                                  # unpipelined lock-step round (bool or array): the tail packs
    pays_write_back: dict = field(default_factory=dict)  # loop id -> the share of its DRAM bytes priced at rates
                                                  # measured from a clean L2 (True: all; a number or an array),
                                                  # so that timed after an L2 clear its launch pays that share of
                                                  # launch_handoff.dirty_write_back_ns
    write_back_slack: dict = field(default_factory=dict)  # loop id -> (its round, its DRAM side's round, the DRAM
                                                  # bytes its CTAs drawing read a round) in the batch that sets the
                                                  # launch (launch_handoff.unhidden_write_back)
    drift: Any = None                             # l2_reuse.Drift of a launch whose column tiles' co-readers may
                                                  # drift apart (GROUP_M = 1), None where none can
    read_streams: dict = field(default_factory=dict)  # decode trip loop id -> whether its K and V stream at
                                                  # DRAM's read-only rate (bool or array: own_stream applies)

    @classmethod
    def of(cls, ratios, **fields) -> "LaunchMiss":
        """``ratios`` (op id -> miss ratio) with ``fields`` set."""
        miss = cls(**fields)
        miss.update(ratios)
        return miss

    def for_batch(self, lives=None, noted=True) -> "LaunchMiss":
        """This launch's miss as one batch's pricing sees it (``_launch_time``'s drawn_batch): a
        fresh ``loop_ns`` that receives each loop's ns in one CTA of the batch, ``lives`` as its
        ``loop_life``, and, ``noted`` False (a pricing the breakdown does not show: the drift's
        lone CTA), none of the note sinks (``NOTE_SINKS``), so its loops add no notes to the
        launch's. The ratios and the memo dicts (demands, fragment_chains, lone_walks, loop_parts, l2_only)
        are this launch's own, shared."""
        kept = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        kept.update(loop_ns={}, loop_life=lives)
        if not noted:
            kept.update(dict.fromkeys(NOTE_SINKS))
        return LaunchMiss.of(self, **kept)


# the LaunchMiss fields a batch's pricing writes the breakdown's notes into
NOTE_SINKS = ("notes", "stream_notes", "spill_series", "chain_notes", "dram_trips", "mio_notes", "load_queues",
              "round_bounds", "command_notes")


ENGINES = ("copy", "tensor", "smem", "vector", "special", "dispatch", "spill", "link")
VIEWS = ("reshape", "transpose", "broadcast", "return")   # free: no command, no work


@dataclass
class Term:
    name: str
    ns: Any
    detail: str
    # its ns is time the roofline does not price and the prediction adds (launch overhead,
    # the first bytes' latency, a serial chain's or a load's wait): the gap's attribution
    # (tfx.analysis.roofline_gap); False for the waves' work and for notes of 0 ns
    beyond_roofline: bool = False

    def to_json(self):
        from tfx.analysis.numbers import to_plain
        return {"name": self.name, "ns": to_plain(self.ns), "detail": self.detail}


@dataclass
class LaunchTime:
    scope: str
    positions: Any
    units: int
    resident: Any
    waves: Any
    full_waves: Any
    tail_positions: Any
    batch_ns: Any
    tail_ns: Any
    total_ns: Any
    engines: dict          # engine -> ns per full batch (sum over loops)
    bound_engine: Any
    l2_hit_ratio: Any
    terms: list = field(default_factory=list)
    bound_by: Any = None   # the bound engine by the roofline's names (tfx.analysis.roofline.BOUNDS)
    # why bound_by says latency: "chain" (one CTA's serial chain outlasts the engines: the waves
    # wait on it past every engine) or "round" (the longest loop's round is a chain or a queue
    # longer than its engines' own work, which may sit inside an engine's time as its floor:
    # tfx.analysis.roofline_gap.mma_chain_waits_ns names that part); None otherwise
    latency_from: str | None = None
    drift: Any = None      # DriftRate where GROUP_M = 1 readers drift apart (predict prices the launch again with its share)
    reuse: Any = None      # the l2_reuse.WaveReuse this launch was priced with (the drift's re-fetch included):
                           # the one the simulator lowers its loads with
    l2_clear_ns: Any = 0   # the dirty-L2 write-back this launch pays timed after an L2 clear (in total_ns only
                           # under predict's l2_clear; launch_handoff.L2_CLEAR_CONDITION)
    dram_bytes: Any = 0    # the bytes the launch moves to and from DRAM (its L2 misses and write-backs):
                           # the roofline gap's "dram re-reads" (tfx.analysis.roofline_gap)
    tensor_pad_ns: Any = 0  # the device's time on the mmas' padding to their instruction shape (all
                            # positions over the units): the roofline gap's "mma padding"
    first_wave_excess_ns: Any = 0  # a straight body's first full wave in lock step past a batch's time
                                   # (row_body.waves_ns): the roofline gap's "first wave in lock step"
    tensor_work_ns: Any = None  # the device's time on the mmas themselves, padding included (all
                                # positions over the units): what the tensor engine's time has past it
                                # is its chain's waits, the roofline gap's "mma chain waits"


class SpillInfo(NamedTuple):
    """One launch's register spill: what the compiler (or the estimate) puts in local memory."""

    bytes_per_thread: Any         # local-memory bytes per thread holding spilled values
    fraction: Any                 # that over the thread's live register tiles (0..1)
    cta_smem: Any                 # shared memory per CTA (takes its share of the L1 SRAM)
    compiled: bool = False        # from the compiler's count, not the estimate
    regs: Any = None              # registers allocated per thread (tfx.analysis.spill_traffic)
    local_bytes: Any = None       # LDL + STL bytes a thread of the compiled code (None: not given)


def spill_fraction(spill_bytes, rmem_bytes_per_thread):
    """The share of a thread's live register tiles that sits in local memory: the spilled
    bytes over the peak live tile bytes, at most 1 (0 without tiles or spills)."""
    if is_array(spill_bytes, rmem_bytes_per_thread):
        import numpy as np
        rmem = np.maximum(rmem_bytes_per_thread, 1e-30)
        return np.where(np.asarray(spill_bytes) > 0, np.minimum(np.asarray(spill_bytes) / rmem, 1.0), 0.0)
    if not spill_bytes:
        return 0
    if not rmem_bytes_per_thread:
        return 1
    return min(ratio(spill_bytes, rmem_bytes_per_thread), 1)


class LocalMemory(NamedTuple):
    """Where a launch's spilled values live and the bandwidth one SM reaches them at."""

    level: str                    # "L1", "L2" or "DRAM"
    bytes_per_ns: Any             # per SM
    working_set: Any              # local bytes of the resident CTAs of one SM
    l1_free: Any                  # L1 bytes shared memory leaves per SM (None: no L1 fact)
    beyond_l1: Any = None         # per SM, from L2 (or DRAM when the machine's set exceeds L2)
    beyond_level: str = ""
    dram_mask: Any = None         # level "mixed" (arrays): where the values live in DRAM
    largest_carveout: Any = None  # l1_free is what the largest carve-out leaves (largest_carveout; None: not asked)

    @property
    def at_dram(self) -> Any:
        """Whether the spilled values live in DRAM (past L1 and L2); elementwise for arrays."""
        return self.level == "DRAM" if self.dram_mask is None else self.dram_mask


def largest_carveout(m: "Machine", cta_smem) -> Any:
    """Whether a kernel of ``cta_smem`` bytes of shared memory a CTA runs at the largest
    shared-memory carve-out (occupancy.smem_per_sm), whatever CTAs an SM holds: over
    local.max_carveout_above its loader asks for it; elementwise for arrays, None where the
    profile lacks either fact (local_memory keeps it: LocalMemory.largest_carveout)."""
    above = m.profile.get("local.max_carveout_above", None)
    if above is None or m.profile.get("occupancy.smem_per_sm", None) is None:
        return None
    return cta_smem > above


def local_memory(m: "Machine", spill: SpillInfo, threads, resident, spread=1) -> LocalMemory:
    """Local memory is cached in L1 (what shared memory leaves of the SM's SRAM), then L2,
    then DRAM. The spilled bytes of every resident CTA of an SM are its working set: they
    are served at L1 bandwidth when they fit there, at the SM's share of L2 when the whole
    machine's working set fits L2, else at its share of DRAM. ``spread``: how many times its
    even share of the machine's CTAs the busiest SM holds (local_parallelism.spread; 1: a full
    launch): the machine's working set is the SMs' / ``spread``, and the busiest SM draws
    ``spread`` x the even share of DRAM (local_parallelism.device_share; of L2 its own share,
    a SM's rate)."""
    working = spill.bytes_per_thread * threads * resident
    cap = m.profile.get("local.l1_capacity", None)
    per_cycle = m.profile.get("local.l1_bandwidth_per_cycle", None)
    l2_cap = m.profile.memory_levels()[m.l2].capacity if m.l2 else None
    lsu_l2 = m.profile.get("local.l2_bandwidth", None)
    l2 = (lsu_l2 / 1e9 if lsu_l2 else (m.l2_bw_device or m.dram_bw_device)) / m.units
    dram = local_parallelism.device_share(m, m.dram_bw_device, spread, dram=True)
    machine_working = working * m.units / spread     # the CTAs' frames: the busiest SM's x SMs / spread
    free = largest = None
    if cap is not None and per_cycle is not None:
        used = spill.cta_smem * resident
        largest = largest_carveout(m, spill.cta_smem)
        if largest is not None:
            # a kernel over local.max_carveout_above runs at the largest carve-out, whatever CTAs
            # an SM holds (its loader asks for it)
            used = where(largest, m.profile.get("occupancy.smem_per_sm"), used)
        free = emax(cap - used, 0)
    if is_array(working, free):
        import numpy as np
        l1_bw = per_cycle * m.clock_ghz if per_cycle is not None else l2
        in_l1 = (working <= free) if free is not None else np.zeros_like(np.asarray(working), dtype=bool)
        in_l2 = (machine_working <= l2_cap) if l2_cap else np.zeros_like(in_l1)
        beyond = np.where(in_l2, l2, dram)
        return LocalMemory("mixed", np.where(in_l1, l1_bw, beyond), working, free, beyond, "mixed",
                           dram_mask=~np.asarray(in_l1, dtype=bool) & ~np.asarray(in_l2, dtype=bool), largest_carveout=largest)
    beyond, beyond_level = (l2, "L2") if l2_cap and machine_working <= l2_cap else (dram, "DRAM")
    if free is not None and working <= free:
        return LocalMemory("L1", per_cycle * m.clock_ghz, working, free, beyond, beyond_level, largest_carveout=largest)
    return LocalMemory(beyond_level, beyond, working, free, beyond, beyond_level, largest_carveout=largest)


@dataclass
class Demand:
    """What one position asks of its unit's engines for one execution of a scope."""

    dram: Any = 0          # bytes from/to DRAM (after L2 hits)
    l2: Any = 0            # bytes through L2 (all global traffic)
    tensor: Any = 0        # padded flops / flop per ns -> ns at full unit rate
    smem: Any = 0          # ns on on-chip memory bandwidth
    vector: Any = 0        # ns
    special: Any = 0       # ns
    dispatch: Any = 0      # ns
    spill: Any = 0         # ns
    global_loads: Any = 0  # bytes loaded from global memory (for Little's law)
    descriptors: Any = 0   # DMA descriptors (contiguous runs of global windows), with dma.channels
    link: Any = 0          # ns on the unit's outbound interconnect (send; allreduce both ways)
    link_in: Any = 0       # ns on its inbound direction (recv; allreduce): links are full duplex
    link_latency: Any = 0  # ns: the latency of those transfers (hops x one-way), summed over ops
    unpipelined: Any = 0   # operands whose load the compiler cannot pipeline (register transposes)
    dram_lines: Any = 0    # DRAM bytes at the rate of whole-line reads (memory_parallelism.short_run_bytes)
    warp_tensor: Any = 0   # ns one warp's warp mma (mma.sync) keeps its sub-partition (mma_layout.warp_mma)
    dram_busy: Any = 0     # DRAM bytes at the device's busy time of whole lines (tfx.analysis.strided_runs)
    operand_reads: Any = 0  # ns of ``smem``: an mma's operands read at the port while it runs (Counter.shared_operand_reads)
    l2_merged: Any = 0     # bytes of reads a TPC pair merges before the slices (l2_reuse.pair_merged_share)
    l2_far: Any = 0        # bytes the far L2 partitions fill across the fabric (l2_reuse.far_fill_share)
    tensor_pad: Any = 0    # ns of ``tensor``: the flops padding an mma to its instruction shape adds
                           # (the roofline gap's "mma padding", tfx.analysis.roofline_gap)

    def add(self, other: "Demand", k=1) -> None:
        for f in self.__dataclass_fields__:
            setattr(self, f, getattr(self, f) + getattr(other, f) * k)

    @property
    def l2_slices(self) -> Any:
        """Bytes the L2 slices move (l2_slices_ns): every global read less the copies a TPC pair
        merges before the slices, plus every DRAM byte, which crosses a slice once more (a read
        miss's fill, a store's write): ``global_loads - l2_merged + dram``. Derived, not summed
        beside them: a demand that adds up its ops' reads and DRAM bytes (row_body's summed
        transfers) holds its slices' bytes as well."""
        return self.global_loads - self.l2_merged + self.dram


def predict(root: ScopeNode, counter, profile, occupancy_blocks, threads, wave_info,
            spill_bytes_per_thread=0, codegen=None, l2_clear=False) -> tuple[list, Any, list]:
    """Per-launch times, the total predicted ns, and the explained terms; ``codegen``: the
    code generator whose instructions are priced (tfx.analysis.codegen; None: Triton);
    ``l2_clear``: each launch timed after a harness's L2 clear (launch_handoff.L2_CLEAR_CONDITION)."""
    launches = []
    terms: list[Term] = []
    total = 0
    meshes = [c for c in root.children if c.kind == "mesh"]
    if not meshes:
        raise TfxError(f"kernel {counter.kernel.name} has no mesh region: nothing executes on the device",
                       where=counter.module.filename)
    for mesh in meshes:
        lt = _launch_time(mesh, counter, profile, occupancy_blocks, threads, wave_info,
                          spill_bytes_per_thread, codegen, l2_clear=l2_clear)
        if lt.drift is not None:
            # GROUP_M = 1 readers that drift apart: their share fetched again, priced again
            # with it (l2_reuse.drift_refetch; the rate gap from the first pricing, whose
            # lock-step bytes it keeps: the re-fetch is not fed back into the gap)
            again = dict(wave_info)
            again[mesh.id] = l2_reuse.with_drift(wave_info[mesh.id], lt.drift.share)
            lt = _launch_time(mesh, counter, profile, occupancy_blocks, threads, again,
                              spill_bytes_per_thread, codegen, drift_rate=lt.drift, l2_clear=l2_clear)
        launches.append(lt)
        total = total + lt.total_ns
        terms.extend(lt.terms)
    return launches, total, terms


def unit_mesh(mesh: ScopeNode, profile) -> ScopeNode:
    """The mesh whose positions occupy whole units: cta on a GPU; the innermost of cube>pe."""
    if profile.kind == "gpu":
        return mesh
    node = mesh
    while True:
        inner = [c for c in node.children if c.kind == "mesh"]
        if len(inner) != 1:
            return node
        node = inner[0]


class DriftRate(NamedTuple):
    """What the GROUP_M = 1 drift term took from the timing (l2_reuse.drift_refetch)."""
    lone_ns: Any        # a CTA alone on an SM: the SM's device share to itself, its loads queued behind the wave's draw
    shared_ns: Any      # one of the b CTAs an SM holds (the wave's batch)
    b: Any              # CTAs an SM (the wave's batch)
    delta: Any          # 1 - lone_ns / shared_ns, at least 0
    share: Any          # the share of the shared re-reads fetched again


def _per_batch(full, slack_full: dict, slack_tail: dict) -> dict:
    """The loops' write-back slack (``LaunchMiss.write_back_slack``) of the batch that sets the launch: the full
    wave's where ``full`` (the launch has a full wave), else the tail's; arrays elementwise."""
    if not is_array(full):
        return slack_full if full else slack_tail
    out = {}
    for lid in set(slack_full) & set(slack_tail):
        out[lid] = tuple(where(full, a, b) for a, b in zip(slack_full[lid], slack_tail[lid]))
    return out


def _write_back_share(miss, m) -> tuple:
    """(the share of the dirty L2's write-back the launch pays, (its stream share, its slack or None) for the
    breakdown): over the loops priced from a clean L2 (``LaunchMiss.pays_write_back``: the share of their DRAM
    bytes so priced), the largest of that share x what their rounds' slack leaves of it
    (launch_handoff.unhidden_write_back; 1 where no slack was noted: an unpipelined trip waits its DRAM round
    trip in series). Arrays elementwise; the breakdown's parts are the scalar case's."""
    out, paying = 0.0, (1, None)
    for lid, share in miss.pays_write_back.items():
        if isinstance(share, bool) or getattr(share, "dtype", None) == bool:
            share = where(share, 1.0, 0.0)
        slack = miss.write_back_slack.get(lid)
        left = 1 if slack is None else launch_handoff.unhidden_write_back(m, *slack)
        part = share * left
        if not is_array(part, out) and part > out:
            paying = (share, slack if left < 1 else None)
        out = emax(out, part)
    return out, paying


def _any_of(flags):
    """Whether any of ``flags`` (bools, or arrays elementwise) holds: False where none is given."""
    out = False
    for f in flags:
        out = (out | f) if is_array(out, f) else (out or f)
    return out


def _launch_time(mesh: ScopeNode, counter, profile, occupancy_blocks, threads, wave_info,
                 spill_bytes_per_thread=0, codegen=None, drift_rate=None, l2_clear=False) -> LaunchTime:
    """One launch's time; ``drift_rate``: the DriftRate of its first pricing, where its column
    tiles' shared re-reads are already raised by it (``predict``): described, not priced again;
    ``l2_clear``: the launch timed after a harness's L2 clear (launch_handoff.L2_CLEAR_CONDITION):
    a launch whose stream is priced from a clean L2 (``LaunchMiss.pays_write_back``) pays the
    dirty lines' write-back, in the share of its DRAM bytes priced so."""
    unit_node = unit_mesh(mesh, profile)
    positions = unit_node.execs
    # the SMs the launch keeps busy, min(positions, SMs): the power limit's clock under their
    # tensor work (Machine.tensor_clock_factor)
    m = Machine(profile, unit_node.level, codegen, positions)
    if isinstance(occupancy_blocks, dict):
        occupancy_blocks = occupancy_blocks.get(mesh.id, 1)
    if isinstance(spill_bytes_per_thread, dict):
        spill_bytes_per_thread = spill_bytes_per_thread.get(mesh.id, 0)
    resident = occupancy_blocks if profile.kind == "gpu" else 1
    resident = emax(resident, 1) if is_array(resident) else max(resident, 1)
    units = m.units
    slots = units * resident
    reuse = wave_info.get(mesh.id)
    if reuse is None:
        reuse = l2_reuse.WaveReuse()
    miss = LaunchMiss.of(reuse, l2_only=reuse.l2_only, pair_merged=reuse.pair_merged, side_block=reuse.side_block,
                         partitions=reuse.partitions, walk=reuse.walk is not None,
                         walk_drifted=0 if reuse.walk is None else pipeline_depth.walk_drifted_share(reuse.walk[0]),
                         walk_rounds=None if reuse.walk is None else (reuse.walk[0].ctas, reuse.walk[0].tiles),
                         drift=reuse.drift)
    spill = spill_bytes_per_thread
    if not isinstance(spill, SpillInfo):        # a bare byte count: all of the tiles (callers of predict)
        spill = SpillInfo(spill, 1 if (is_array(spill) or spill) else 0, 0)
    local = local_bound = reductions = estimated = None
    has_spill = is_array(spill.fraction) or bool(spill.fraction)
    if has_spill and profile.kind == "gpu" and threads is not None:
        # the CTAs an SM actually holds at once: a grid under one wave leaves slots empty
        on_sm = emin(resident, cdiv(positions, units))
        # ... and, under one wave, more of the machine's warps than its even share
        # (local_parallelism.spread: their spilled traffic is the machine's, split by warps)
        local_spread = local_parallelism.spread(units, on_sm, positions, slots)
        local = local_memory(m, spill, threads, on_sm, local_spread)
        if not any(unit_node.mma_ops()):
            # few warps a SM: spilled values in DRAM come back at their latency's pace
            local, local_bound = local_parallelism.in_local_memory(m, local, on_sm * ratio(threads, 32),
                                                                   local_spread)
        share = spill.fraction
        # the body's reduce ops, walked once: the frame's share and its breakdown line (row_spill)
        reductions = _reductions(unit_node) if spill.regs is not None else None
        if not any(unit_node.mma_ops()) and spill.regs is not None:
            # a loop-free (row) body that keeps most values in registers spills each value once
            # (tfx.analysis.spill_traffic.stored_once_share)
            register_bytes = _register_bytes(unit_node, positions)
            share = spill_traffic.stored_once_share(share, spill.bytes_per_thread, threads,
                                                    register_bytes, spill.regs)
            # ... and one whose frame reaches its registers moves a multiple of the frame (row_spill)
            share = row_spill.frame_share(share, spill.bytes_per_thread, threads, register_bytes, spill.regs,
                                          reductions)
            if spill.local_bytes is not None:
                # the compiled code's own local loads and stores, where given, replace both rules
                share = row_spill.compiled_share(spill.local_bytes, threads, register_bytes)
            else:
                # ... else, under STREAMING_REGISTERS, their estimate from the body (row_spill, section 8 (q))
                share, estimated = _estimated_share(unit_node, share, spill, threads, register_bytes)
        miss.spill = (share, local.bytes_per_ns, spill.bytes_per_thread * threads, local.beyond_l1)
        miss.spill_regs = (spill.bytes_per_thread, spill.regs)
        l2_ns, dram_ns = m.profile.get("local.l2_latency", None), m.profile.get("local.dram_latency", None)
        if spill.regs is not None and m.l2 and l2_ns is not None and dram_ns is not None:
            # a 32-register k-loop's chain of local round trips (tfx.analysis.spill_chain)
            miss.spill_chain = (threads, m.profile.memory_levels()[m.l2].capacity, float(l2_ns), float(dram_ns),
                            positions)
    warps = mma_layout.warps_of(threads)
    # op id -> its Demand: what an op asks is fixed for the launch (its miss ratio, the spill
    # share, warps), and the trip's chains ask it again and again (op_demand)
    miss.demands = {}
    per_pos = _demand_of(unit_node, counter, m, miss, warps, positions)

    # A loop-free CTA body on a launch of more than one wave: resident CTAs overlap
    # (tfx.analysis.row_body); one wave runs in lock step, priced op by op (row_body.applies).
    straight = row_body.applies(unit_node, profile)
    fills = positions > slots
    body_times = {}

    lockstep_notes = []               # (r, lockstep_chain.LockStep) per lock-step batch priced

    def lockstep_time(priced, r, active_units, draw=None):
        """op by op, plus one CTA's compute chain beyond the r CTAs' issue (lockstep_chain);
        ``priced``: the launch's miss as this pricing sees it (LaunchMiss.for_batch);
        ``draw``: CTAs a SM whose loads draw DRAM with the batch's (None: its r)"""
        t, e = _scope_time(unit_node, counter, m, priced, warps, r, active_units, positions, draw=draw)
        if straight:
            bt, be = _straight_batch(unit_node, counter, m, priced, warps, r, active_units)
            # the busiest scheduler's issue of the compiled binary's instructions, where known
            # (row_body.issue_floor_ns; the SM's schedulers: its sub-partitions)
            subs = m.profile.get("warp_mma.subpartitions", None)
            insns = row_body.compiled_instructions(counter.kernel.name, counter.env, m.isa) if subs else 0
            sched = cdiv(r * warps, subs) if subs else 0
            floor = row_body.issue_floor_ns(insns, r, warps, subs, m.clock_ghz) if subs else 0
            step = lockstep_chain.lock_step(bt.chain_parts, be, floor, insns, sched)
            lockstep_notes.append((r, step))
            t = t + step.excess
        return t, e

    def batch_time(priced, r, active_units, successor=False, draw=None):
        if not straight or (not is_array(fills) and not fills):
            return lockstep_time(priced, r, active_units, draw)
        bt, e = _straight_batch(unit_node, counter, m, priced, warps, r, active_units, successor)
        if is_array(fills):
            t_op, e_op = lockstep_time(priced, r, active_units, draw)
            return where(fills, bt.ns, t_op), {k: where(fills, e.get(k, 0), e_op.get(k, 0)) for k in e_op}
        body_times["last"] = bt
        return bt.ns, e

    def drawn_batch(r, active_units, drawing, lives=None, successor=False, wave_r=None, noted=True):
        """``batch_time`` with ``drawing`` CTAs drawing DRAM on the ``active_units`` SMs
        (memory_parallelism.drawing_per_unit: at most ``wave_r`` a SM, the CTAs an SM of the wave
        whose draw the batch's loads queue behind; None: the batch's own r), and each loop's ns
        in one CTA of the batch (uneven_tail, persistent_rounds). ``lives``: a dict that receives
        one CTA's own path through each streaming loop (tfx.analysis.drifted_stream). ``noted``
        False: a pricing the breakdown does not show (the drift's lone CTA) adds none of its
        loops' notes to the launch's."""
        draw = memory_parallelism.drawing_per_unit(drawing, r if wave_r is None else wave_r, active_units)
        priced = miss.for_batch(lives, noted)
        t, e = batch_time(priced, r, active_units, successor, draw)
        return t, e, priced.loop_ns

    miss.notes, miss.stream_notes, miss.spill_series, miss.chain_notes = {}, {}, {}, {}
    miss.dram_trips, miss.mio_notes, miss.load_queues, miss.round_bounds = {}, {}, {}, {}
    miss.command_notes = {}

    full_waves = positions // slots
    tail = positions - full_waves * slots
    # the CTAs that start after the first wave drift apart (tfx.analysis.pipeline_depth.serial_copy_transfer_ns)
    miss.drifted = pipeline_depth.drifted_share(positions, slots)
    miss.one_wave = full_waves == 0
    full_lives = {}
    # a full wave's CTAs draw together; the CTAs of the waves that follow take their slots
    miss.write_back_slack = {}
    t_full, engines, loop_ns = drawn_batch(resident, units, slots, full_lives, successor=True)
    slack_full, miss.write_back_slack = miss.write_back_slack, {}
    full_body = body_times.pop("last", None)   # the full batch's parts, for the breakdown
    r_tail = cdiv(tail, units)
    active_tail = emin(tail, units)
    # a tail after a full wave of lock-step one-stage trips takes the first slots to free, an
    # SM's r together: its busiest SM runs r of them (tfx.analysis.decode_trip.packed_tail)
    packed = decode_trip.packs(miss.runs_lockstep_round.values(), full_waves)
    if is_array(packed) or packed:
        r_tail, active_tail = decode_trip.packed_tail(packed, tail, resident, r_tail, active_tail)
    t_tail, e_tail, loop_ns_tail = drawn_batch(emax(r_tail, 1), emax(active_tail, 1), emax(tail, 1))
    # the write-back's slack is the rounds' of the batch that sets the launch: the full wave's where there is one
    miss.write_back_slack = _per_batch(full_waves > 0, slack_full, miss.write_back_slack)
    tail_lock = lockstep_notes[-1] if lockstep_notes else None     # a launch of one wave or less
    t_tail_spill = e_tail.get("spill", 0)
    t_tail = if_else(tail > 0, t_tail, 0)
    # The first full wave of a straight body starts together and runs in lock step, priced
    # op by op as a launch of one wave is; the CTAs that follow start as slots free and
    # overlap (row_body: "The first wave"). Without a full wave there is no first wave.
    t_first = t_full
    first_lock = None
    if straight:
        t_first, _ = lockstep_time(miss, resident, units)
        first_lock = lockstep_notes[-1]
        t_first = cta_launch.bound(t_first, resident, m)     # its CTAs start at the SM's launch rate
    # after the first wave a streaming body's CTAs drift apart: a batch takes the longer of its
    # engines and one CTA's own path, not their sum phase by phase (tfx.analysis.drifted_stream)
    life = (_drifted_life(unit_node, counter, m, miss, warps, resident, units, full_lives)
            if full_lives and not straight else None)
    drift = None if life is None else drifted_stream.Drift(t_full, _max_engine(engines), *life)
    if drift is None:
        waves_ns = row_body.waves_ns(full_waves, t_first, t_full)
        t_mean = t_full
    else:
        t_mean = drift.batch(positions, slots)
        waves_ns = row_body.waves_ns(full_waves, t_first, t_mean)
    launch_ns = m.launch_ns
    fill_ns = m.dram_latency
    # CTAs of unequal trip counts (causal attention) drift apart after the first wave and the
    # last ones launched end the launch (tfx.analysis.uneven_tail: list scheduling)
    spreads = uneven_tail.spreads(unit_node, counter.env) if m.kind == "gpu" else None
    uneven = uneven_tail.tail(spreads, loop_ns, t_mean, positions, slots)
    uneven_ns = longest = 0
    if uneven is not None:
        # more than a wave: list scheduling; one wave or less: they start together and the
        # longest CTA ends the launch
        longest = uneven_tail.longest_ns(spreads, loop_ns_tail, t_tail)
        uneven_ns = where(positions > slots,
                          where(uneven_tail.applies(uneven, positions, slots),
                                emax(uneven.makespan_ns - (waves_ns + t_tail), 0), 0),
                          emax(longest - t_tail, 0))
    # A persistent kernel's CTAs walk the tiles round-robin: the longest one runs the whole
    # rounds and a last round with only TILES mod CTAS CTAs pulling (tfx.analysis.persistent_rounds)
    rounds = persistent_rounds.find(unit_node, counter.env) if m.kind == "gpu" else None
    rounds_ns = tile_full = tile_last = 0
    if rounds is not None:
        tile_full = where(tail > 0, persistent_rounds.tile_ns(rounds, loop_ns_tail),
                          persistent_rounds.tile_ns(rounds, loop_ns))
        _, _, last_ns = drawn_batch(emax(cdiv(rounds.extra, units), 1), emax(emin(rounds.extra, units), 1),
                                    emax(rounds.extra, 1))
        tile_last = persistent_rounds.tile_ns(rounds, last_ns)
        rounds_ns = where(positions <= slots, persistent_rounds.extra_ns(rounds, tile_full, tile_last), 0)
    # the L2 slices serve the whole launch's requests and fills at one device rate: the waves take
    # at least that long (l2_slices_ns)
    body_ns = waves_ns + t_tail + uneven_ns + rounds_ns
    slices_ns = l2_slices_ns(per_pos, positions, m)
    slices_gap = 0 if slices_ns is None else emax(slices_ns - body_ns, 0)
    # the far partitions' fills cross the L2 fabric at one device rate (l2_fabric_ns)
    fabric_ns = l2_fabric_ns(per_pos, positions, m)
    fabric_gap = 0 if fabric_ns is None else emax(fabric_ns - (body_ns + slices_gap), 0)
    # timed after a harness's L2 clear (do_bench's: every line dirty), a launch whose DRAM stream
    # is priced at rates measured from a clean L2 pays for its first L2 of misses writing those
    # lines back (tfx.analysis.launch_handoff.dirty_write_back_ns), in the share of its DRAM bytes
    # priced so (kloop's line, which prices the rest, holds its own launches' write-back in its
    # trips: docs/analysis.md, "Co-read B in a launch of one wave"), less what the rounds' slack
    # over their DRAM side hides (launch_handoff.unhidden_write_back); a serving step has no clear
    cleared_ns = 0
    write_back_share, paying = _write_back_share(miss, m)
    if is_array(write_back_share) or write_back_share:
        cleared_ns = write_back_share * launch_handoff.dirty_write_back_ns(m, per_pos.dram * positions)
    write_back_ns = cleared_ns if l2_clear else 0
    reads = _any_of(miss.read_streams.values())     # the waves line's read-only clause
    # a pipelined read-only decode launch of one full wave and a tail whose first wave its DRAM
    # share binds: the favoured SMs end it first, take r tail CTAs each and end the launch
    # (tfx.analysis.favoured_tail)
    favoured = favoured_tail.facts(m) if m.kind == "gpu" else None
    fav_ns = 0
    fav_note = None
    if favoured is not None:
        fav_applies = reads & (full_waves == 1) & (tail > 0)
        fav_applies = fav_applies & ~packed if is_array(fav_applies, packed) else fav_applies and not packed
        if is_array(fav_applies) or fav_applies:
            view = favoured_tail.view_units(units, favoured)
            t_f, _, _ = drawn_batch(resident, view, view * resident, noted=False)
            r_f = emax(favoured_tail.tail_per_sm(tail, resident, favoured), 1)
            p_share, _, _ = drawn_batch(r_f, view, view * r_f, noted=False)
            p_own, _, _ = drawn_batch(r_f, favoured.units, emax(tail, 1), noted=False)
            fav_end = favoured_tail.end_ns(t_f, waves_ns, p_share, p_own)
            past = emax(fav_end - (waves_ns + t_tail), 0)
            ahead = favoured_tail.runs_ahead(t_f, waves_ns, view, units)
            fav_ns = where(fav_applies & ahead, past, 0) if is_array(fav_applies, ahead, past) else (
                past if fav_applies and ahead else 0)
            if not is_array(fav_ns) and fav_ns > 0:
                fav_note = favoured_tail.describe(favoured, view, r_f, t_f, waves_ns, p_share, p_own, fav_end, fav_ns)
    total = launch_ns + fill_ns + waves_ns + t_tail + uneven_ns + rounds_ns + slices_gap + fabric_gap + fav_ns
    # a serial chain's launch under a load sustained past the power controller's response (a
    # serving step's; the campaigns' harness's for launches it times again) runs at the clock the
    # board's power limit leaves its tensor and L2 traffic (tfx.analysis.power_limit)
    power = None
    if m.kind == "gpu" and any(_serial_trip(n) for n in unit_node.walk()):
        power = power_limit.launch(m, per_pos.tensor, per_pos.l2, positions, total - launch_ns - fill_ns,
                                   timed=bool(l2_clear))
        if power is not None:
            total = total + power.ns
    total = total + write_back_ns
    waves = ratio(positions, slots)
    bound = max(engines, key=lambda k: _scalar(engines[k])) if not is_array(*engines.values()) else None
    bound_by = None if bound is None else _bound_name(bound, per_pos, m, resident, units)
    latency_from = None
    if full_body is not None and full_body.chain > full_body.throughput:
        bound_by, latency_from = "latency", "chain"   # one CTA's serial chain outlasts the engines
    if bound_by is not None and latency_from is None and _latency_sets_rounds(miss.round_bounds, t_full):
        bound_by, latency_from = "latency", "round"   # the longest loop's round is a chain, not an engine's work
    if full_body is not None and not is_array(full_body.ns) and cta_launch.binds(
            max(full_body.throughput, full_body.chain, full_body.queued), resident, m):
        bound_by, latency_from = "the CTA launch rate", None   # r short CTAs end faster than the SM starts them
    l2_total = per_pos.l2
    hit = 1 - ratio(per_pos.dram, l2_total) if not is_array(l2_total) and l2_total else 0
    lt = LaunchTime(scope=mesh.id, positions=positions, units=units, resident=resident, waves=waves,
                    full_waves=full_waves, tail_positions=tail, batch_ns=t_full, tail_ns=t_tail,
                    total_ns=total, engines=engines, bound_engine=bound, l2_hit_ratio=hit,
                    bound_by=bound_by, latency_from=latency_from, reuse=reuse, l2_clear_ns=cleared_ns, dram_bytes=per_pos.dram * positions,
                    tensor_pad_ns=per_pos.tensor_pad * positions / units,
                    tensor_work_ns=per_pos.tensor * positions / units,
                    first_wave_excess_ns=if_else(full_waves >= 1, emax(t_first - t_full, 0), 0))
    if drift_rate is None and reuse.drift is not None and _drift_possible(reuse.drift):
        # GROUP_M = 1 co-readers drift apart as far as a CTA's rate falls with the CTAs that share
        # its SM (l2_reuse.drift_refetch): the wave's batch (b CTAs an SM) against the same
        # pricing of one CTA alone on an SM, which has the SM's share of the device's DRAM and L2
        # to itself while its loads queue behind the wave's whole draw (calibration/h200/measured/
        # cta_timeline: a lone CTA 139.6 us against one of two 173.2; cta_timeline_s12b: 188.4
        # against 190.8 where every CTA waits its loads' round trip)
        full = full_waves > 0     # each value below: the full wave's where there is one, else the tail's
        b = if_else(full, resident, emax(r_tail, 1))
        active = if_else(full, units, emax(active_tail, 1))
        drawing = if_else(full, slots, emax(tail, 1))
        shared = if_else(full, t_full, t_tail)
        lone, _, _ = drawn_batch(1, active, drawing, wave_r=b, noted=False)
        delta = emax(1 - lone / emax(shared, 1e-30), 0)
        f = reuse.drift
        share = l2_reuse.drift_refetch(f.P, delta, f.loop_bytes, f.room, f.stagger, f.waves)
        if bool((share > 0).any()) if is_array(share) else share > 0:
            lt.drift = DriftRate(lone, shared, b, delta, share)
            return lt     # predict prices the launch again with the re-fetch: its breakdown is that pricing's
    elif drift_rate is not None:
        lt.drift = drift_rate     # priced with it (predict)
    if not is_array(total):
        unit = "CTA" if profile.kind == "gpu" else level_noun(unit_node.level)
        lt.terms = [
            Term("launch", launch_ns, f"launch overhead of {mesh.label} (line {mesh.line})", beyond_roofline=True),
            Term("fill", fill_ns, "one memory latency before the first bytes arrive", beyond_roofline=True),
            *([Term("l2 write-back", write_back_ns,
                    launch_handoff.describe_dirty_write_back(m, per_pos.dram * positions, write_back_ns,
                                                             *paying),
                    beyond_roofline=True)] if write_back_ns else []),
            Term("waves", waves_ns,
                 f"{format_counted(positions, unit)} on {format_counted(units, level_noun(m.unit_level))} x "
                 f"{format_count(resident)} resident = "
                 f"{format_counted(float(waves), 'wave')}; " + (
                     row_body.describe_waves(full_waves, t_first, t_full, format_time_ns)
                     if full_body is not None else
                     row_body.describe_waves(full_waves, t_first, drift.drifted, format_time_ns)
                     if drifted_stream.applies(drift, full_waves, positions, slots) else
                     f"{format_counted(full_waves, 'full wave')} x {format_time_ns(float(t_full))}")
                 + f" (bound by {bound_by})"
                 + (memory_parallelism.describe_read_stream(m) if reads else "")),
            Term("tail wave", t_tail,
                 f"{format_counted(tail, unit)} in the last wave ({format_count(float(ratio(tail, slots)))} of a wave) {verb_for(tail, 'take')} {format_time_ns(float(t_tail))}"
                 + (decode_trip.describe_packed(r_tail, active_tail, unit) if packed else "")
                 + (memory_parallelism.describe_cta_share(m, r_tail, tail, active_tail)
                    if (miss.runs_lockstep_round and not full_waves) or reads else "")
                 + (memory_parallelism.describe_l2_cta_share(m, r_tail, tail, active_tail)
                    if m.kind == "gpu" and m.dispatch_single is None and not full_waves else "")
                 if tail else "no tail wave: the positions fill whole waves"),
        ]
        if fav_note is not None:
            lt.terms.append(Term("favoured tail", fav_ns, fav_note, beyond_roofline=True))
        if uneven_ns:
            lt.terms.append(Term("uneven tail", uneven_ns,
                                 uneven_tail.detail(uneven, waves_ns + t_tail, format_time_ns) if positions > slots
                                 else uneven_tail.detail_one_wave(uneven, longest, t_tail, format_time_ns),
                                 beyond_roofline=True))
        if power is not None and not is_array(power.ns, power.power) and float(power.power) > 1:
            lt.terms.append(Term("power limit", power.ns, power_limit.describe(power, m, lambda x: format_time_ns(float(x))),
                                 beyond_roofline=True))
        if slices_gap:
            lt.terms.append(Term("l2 slices", slices_gap, describe_l2_slices(
                per_pos, positions, m, slices_ns, body_ns)))
        if fabric_gap:
            lt.terms.append(Term("l2 fabric", fabric_gap, describe_l2_fabric(
                per_pos, positions, m, fabric_ns, body_ns + slices_gap)))
        if rounds is not None and positions <= slots:
            lt.terms.append(Term("last round", rounds_ns,
                                 persistent_rounds.detail(rounds, tile_full, tile_last, format_time_ns),
                                 beyond_roofline=True))
        if m.dma_channels and m.dma_hold and per_pos.descriptors:
            transfer = _transfer_ns(per_pos, m, 1, units)
            held = (transfer + per_pos.descriptors * m.dram_latency) / m.dma_channels
            lt.terms.append(Term(
                "dma", 0,
                f"{format_counted(per_pos.descriptors, 'DMA descriptor')} per {unit} each hold one of "
                f"{format_counted(m.dma_channels, 'channel')} through the {format_time_ns(m.dram_latency)} round trip: "
                f"{format_time_ns(float(held))} of channel time against {format_time_ns(float(transfer))} "
                f"of transfer" + (" (the copy engine's bound)" if held > transfer else "")))
        if drifted_stream.applies(drift, full_waves, positions, slots):
            lt.terms.append(Term("drifted waves", 0, drifted_stream.describe(
                drift, full_waves, lambda x: format_time_ns(float(x))) + " (included in the waves above)"))
        if full_body is not None:
            lt.terms.append(Term("overlap", 0, row_body.describe(full_body, resident, format_time_ns, m)
                                 + " (included in the waves above)"))
        # the first full wave's lock step, or the one wave's of a launch without a full one
        lock = first_lock if (full_waves and first_lock is not None) else (None if full_waves else tail_lock)
        if lock is not None and float(lock[1].excess) > 0:
            lt.terms.append(Term("lock step", 0, lockstep_chain.describe(
                lock[1], lock[0], "the first wave" if full_waves else "the wave", format_time_ns)
                + " (included in the waves above)"))
        if local is not None and not is_array(spill.fraction):
            spill_ns = full_waves * engines.get("spill", 0) + (t_tail_spill if tail else 0)
            largest = local.largest_carveout
            where_l1 = (("the " + format_bytes(float(local.l1_free)) + " of L1 the largest shared-memory carve-out "
                         "leaves (over " + format_bytes(float(m.profile.get("local.max_carveout_above")))
                         + " of shared memory a CTA, its loader asks for it)")
                        if largest is not None and not is_array(largest) and largest else
                        f"the {format_bytes(float(local.l1_free))} of L1 that shared memory leaves"
                        if local.l1_free is not None else "no stated L1")
            lt.terms.append(Term(
                "spill", spill_ns,
                f"{format_exact_bytes(spill.bytes_per_thread, 'thread')} {'compiled' if spill.compiled else 'estimated'} in "
                f"local memory = {format_percent(spill.fraction)} of the register tiles; each op moves that share "
                f"of its register bytes through local memory"
                + ((row_spill.describe_compiled(spill.local_bytes, threads, share)
                    if spill.local_bytes is not None and spill.regs is not None else
                    row_spill.describe_estimated(*estimated, spill.regs, threads, share)
                    if estimated is not None else
                    row_spill.describe(spill.bytes_per_thread, threads, spill.regs, share, reductions)
                    if spill.regs is not None and row_spill.applies(spill.bytes_per_thread, spill.regs) else
                    f" (capped at each spilled value stored once and loaded once, under the {format_whole(spill.regs)} "
                    f"registers: 2 x {format_exact_bytes(spill.bytes_per_thread)} x {format_counted(threads, 'thread')} = "
                    f"{format_percent(share)} of the CTA's register bytes)")
                   if not is_array(share) and share != spill.fraction else "")
                + f"; working set {format_bytes(float(local.working_set))} "
                f"per SM ({format_counted(on_sm, 'CTA')} x {format_counted(threads, 'thread')}) vs {where_l1}: served from {local.level} at "
                f"{formula_rate(local.bytes_per_ns)} per SM"
                + (local_parallelism.describe_share(m, m.dram_bw_device, local_spread, "DRAM", dram=True)
                   if local.level == "DRAM" else "")
                + (f", {local_parallelism.describe_bound(local_bound)}"
                   if local_bound is not None and not is_array(local_bound.bytes_per_ns) and local_bound.bound else "")
                + " (included in the waves above)"))
            for loop in unit_node.walk():
                if loop.kind == "loop" and any(loop.mma_ops()):
                    trip = _spill_trip(loop, m, miss, warps)
                    lt.terms.append(Term("spill trip", 0, f"line {loop.line}: " + spill_traffic.describe(
                        trip, local.bytes_per_ns, local.level, miss.spill_series.get(loop.id))
                        + " (included in the waves above)"))
                    chain = _spill_chain(loop, m, miss, warps, on_sm, min(positions, units))
                    if chain is not None and not is_array(chain.ns) and chain.ns:
                        lt.terms.append(Term("spill chain", 0, f"line {loop.line}: " + spill_chain.describe(chain)
                                             + " (included in the waves above)"))
                    break
        if m.kind == "gpu":
            on_sm = min(resident, cdiv(positions, units))      # CTAs an SM holds at once
            lt.terms.extend(_mma_terms(unit_node, m, warps, on_sm))
            lt.terms.extend(_load_trip_terms(unit_node, counter, m, miss, warps, on_sm, min(positions, units),
                                             ratio(min(positions, slots), min(positions, units))))
            share = memory_parallelism.describe_share(m, min(positions, units))
            if share is not None and m.dram_per_unit is None:
                lt.terms.append(Term("sm dram share", 0, share + " (included in the waves above)"))
        for note in miss.notes.values():
            for name, ns, detail in mma_path.breakdown_terms(note, full_waves, lambda x: format_time_ns(float(x))):
                # the serial chain's and the loads' waits: time beyond the busiest engine's
                lt.terms.append(Term(name, ns, detail, beyond_roofline=True))
        if hit:
            lt.terms.append(Term("l2 reuse", 0, f"{format_percent(hit)} of gmem reads hit L2 "
                                              f"(tiles re-read by co-resident {unit}s, or by the next wave)"))
        for line in tile_walk.describe_walk(reuse):
            lt.terms.append(Term("l2 tile walk", 0, line))
        for line in l2_reuse.describe_cross(reuse):
            lt.terms.append(Term("l2 across waves", 0, line))
        for lines in miss.chain_notes.values():
            # the full waves' round, or the tail's where the launch has no full wave
            lt.terms.append(Term("trip chain", 0, (lines[0] if full_waves else lines[-1]) + " (included in the waves above)"))
        for lines in miss.command_notes.values():
            lt.terms.append(Term("command chain", 0, lines[0] if full_waves else lines[-1]))
        for lines in miss.mio_notes.values():
            # the full waves' round, or the tail's where the launch has no full wave
            line = lines[0] if full_waves else lines[-1]
            if line is not None:
                lt.terms.append(Term("mio queue", 0, line + " (included in the waves above)"))
        for batches in miss.stream_notes.values():
            # the full waves' round trip, or the tail's where the launch has no full wave
            lt.terms.append(Term("stream round trip", 0, (batches[0] if full_waves else batches[-1])[2]
                                 + " (included in the waves above)"))
        handed = reuse.handoff
        line = launch_handoff.describe(handed, lambda b: format_bytes(float(b))) if handed else None
        if line:
            lt.terms.append(Term("l2 hand-off", 0, line + " (included in the waves above)"))
        if drift_rate is not None and reuse.drift is not None and float(drift_rate.share) > 0:
            lt.terms.append(Term("l2 drift", 0, l2_reuse.describe_drift(reuse.drift, drift_rate, format_time_ns)
                                 + " (included in the waves above)"))
    return lt


def _serial_trip(node: ScopeNode) -> bool:
    """True for an innermost loop whose trip reads its own mma's result (attention's QK^T ->
    softmax -> PV: tfx.analysis.mma_path.trip_waits_for_mma); a persistent GEMM's tile loop,
    whose epilogue reads the accumulator of the k-loop inside it, is not one."""
    return (node.kind == "loop" and not any(c.kind == "loop" for c in node.walk() if c is not node)
            and mma_path.trip_waits_for_mma(node))


def _drift_possible(facts) -> bool:
    """Whether the drift re-fetch can be above 0 anywhere: at the largest rate gap (delta = 1)."""
    most = l2_reuse.drift_refetch(facts.P, 1, facts.loop_bytes, facts.room, facts.stagger, facts.waves)
    return bool((most > 0).any()) if is_array(most) else most > 0


def _drifted_life(node: ScopeNode, counter, m: Machine, miss, warps, r, active_units, lives):
    """(one CTA's own path through ``node``'s body, whether a streaming loop in it drifts) for
    tfx.analysis.drifted_stream, or None where the body is not ops and loops the loops priced:
    each op the longer of its engines but the copies' share and, for a load, one memory latency;
    each loop its life from ``lives`` (``_loop_time``)."""
    total, applies = 0, False
    for c in node.children:
        if c.kind in ("op", "capture"):
            if not c.per_exec:
                continue
            d = op_demand(c, counter, m, miss, warps)
            t = _max_engine({k: v for k, v in engine_ns(d, m, r, active_units, warps).items() if k != "copy"})
            if is_array(d.global_loads):
                t = where(d.global_loads > 0, emax(t, m.dram_latency), t)
            elif d.global_loads:
                t = emax(t, m.dram_latency)
            k = ratio(c.execs, node.execs) if not is_array(c.execs, node.execs) else c.execs / node.execs
            total = total + (t + d.link_latency) * k
        elif c.kind == "loop":
            no_trip = not is_array(c.trips, node.execs) and c.trips * node.execs == 0
            if c.id not in lives:
                if no_trip or (not is_array(c.execs) and c.execs == 0):
                    continue          # no position runs it (decode's masked tail loop at most splits)
                return None
            life, drifts = lives[c.id]
            k = 0 if no_trip else ratio(c.execs, node.execs * c.trips)
            total = total + life * k
            applies = applies | drifts if is_array(drifts) or is_array(applies) else (applies or drifts)
        else:
            return None
    return total, applies


def _tile_load_bytes(node: ScopeNode, counter):
    """Bytes of one element of the body's largest load (the tile whose layout Triton's
    coalescing sets and its elementwise ops and reductions keep), or None without one. In a
    sweep the loads' sizes are arrays, and so is the answer where the loads' elements differ
    (the largest load per configuration; the first of equal ones, as the scalar path)."""
    best, size = None, None
    for c in node.children:
        if c.kind == "op" and c.op is not None and c.op.opcode == "load":
            ty = counter.info.result_types.get(id(c.op)) if counter is not None else None
            dtype = getattr(ty, "dtype", None)
            if dtype is None:
                continue
            n = c.per_exec.get(("traffic", "rmem", "write"), 0) if isinstance(c.per_exec, dict) else 0
            element = max(dtype.bits // 8, 1)
            if size is None:
                best, size = element, n
                continue
            if element != best or is_array(best):
                best = if_else(n > size, element, best)
            size = emax(size, n)
    return best


def _straight_batch(node: ScopeNode, counter, m: Machine, miss, warps, r, active_units, successor=False):
    """One residency batch of a loop-free CTA body (tfx.analysis.row_body): its ops'
    demands, and the latency its loads wait (DRAM when any of them misses L2).
    ``successor``: a CTA takes each slot after this batch's (row_body.batch: posted stores)."""
    demands = []
    phases = []                       # each demand's phase (row_body.op_phases: reduces close them)
    phase = 0
    latency = 0
    reduce_ns = 0
    instr_lat = trip_latency.facts(m) if m.kind == "gpu" else None   # measured instruction latencies
    vector_bytes = _tile_load_bytes(node, counter)   # the loaded tile's element: the layout's vector
    for c in node.children:
        if c.kind in ("op", "capture") and c.per_exec:
            d = op_demand(c, counter, m, miss, warps)
            k = ratio(c.execs, node.execs) if not is_array(c.execs, node.execs) else c.execs / node.execs
            demands.append((d, k))
            phases.append(phase)
            if c.kind == "op" and c.op is not None and c.op.opcode == "reduce":
                phase += 1
            red = getattr(c, "per_exec_reduce", None)
            if red is not None:
                # the reduce's chain, or the CTA's shuffles at the SM's unit where they take longer
                chain_ns = row_body.reduction_chain_ns(*red, warps * 32, m, serial_fold=instr_lat is None)
                shuffles = row_body.shuffle_issue_ns(red[0], red[1], red[2] if vector_bytes is None else vector_bytes,
                                                      warps * 32, m)
                reduce_ns = reduce_ns + k * emax(chain_ns, shuffles)
            if is_array(d.global_loads, d.dram):
                lat = where(d.global_loads > 0, where(d.dram > 0, m.dram_latency, m.l2_latency), 0)
                latency = emax(latency, lat)
            elif d.global_loads:
                latency = emax(latency, m.dram_latency if d.dram else m.l2_latency)
    # the compiled binary's dependent rounds of row loads, where known (row_body.LOAD_ROUNDS): a
    # CTA alone on its SM waits for each later one; two CTAs alternate only where there is one
    rounds = row_body.compiled_rounds(counter.kernel.name, counter.env, m.isa)
    rounds_ns = row_body.later_rounds_ns(rounds, latency, r) if is_array(rounds) or rounds > 1 else 0
    first = row_body.one_round_reads(rounds, row_body.reads_first(demands, phases))
    # two CTAs of a two-round binary: their compiled order at the pipe (row_body.PAIR_CYCLES)
    # ... at one SM's even share of the device's DRAM bandwidth, the share the pair was simulated at
    pair = row_body.compiled_pair_cycle(counter.kernel.name, counter.env, m.isa,
                                        memory_parallelism.sm_dram_share(m, m.units))
    return row_body.batch(demands, latency, engine_ns, r, active_units, m, reduce_ns,
                          row_body.element_chain_phases(node, warps * 32, m, instr_lat), phases,
                          successor=successor, first_reads=first, rounds_ns=rounds_ns, pair=pair)


def _scalar(x):
    return float(x)


def _load_trip_terms(unit_node: ScopeNode, counter, m: Machine, miss, warps, resident, active_units,
                     drawing=None) -> list:
    """The load-trip floor of each pipelined loop that loads (tfx.analysis.load_trip); a loop
    node's executions count its trips, so the body's demand per execution is one trip's.
    ``drawing``: CTAs per SM whose loads draw DRAM bandwidth (memory_parallelism.drawing_per_unit)."""
    drawing = resident if drawing is None else min(drawing, resident)
    facts = load_trip.facts(m) if m.dispatch_single is None else None
    out = []
    if facts is None:
        return out
    for c in unit_node.walk():
        if c.kind != "loop" or c is unit_node or any(x.kind == "loop" for x in c.walk() if x is not c):
            continue
        stages = c.stages if c.stages is not None else 1
        if is_array(stages, c.execs) or not c.execs or not load_trip.applies(c):
            continue
        body = _trip_body(c, counter, m, miss, warps)
        private, stream = _loop_stream_shares(c, counter, m, miss, warps, body)
        plain = load_trip.dram_facts(m)
        dram_facts = load_trip.stream_facts(m, plain, stream)
        if stages < 2:
            if body.global_loads and not is_array(body.global_loads) and dram_facts is not None:
                # an unpipelined GEMM k-loop's trip (tfx.analysis.pipeline_depth.unpipelined_cycle_ns)
                first, fetch = _first_reader(c, miss), _own_transfer_ns(body, m, active_units)
                compute = _compute_one(body, m, active_units, warps)
                n_rounds = _load_rounds(c, m, warps)
                cycle = _unpipelined_cycle(n_rounds, m, first, body.global_loads, fetch, _queue_bytes(body),
                                           drawing, active_units, compute, facts, dram_facts)
                copies = _trip_copies(c, counter, m, miss, warps)
                sync = (f"; {load_trip.describe_sync(resident, copies, facts)}"
                        if load_trip.sync_load_ns(copies, facts) else "")
                out.append(Term("unpipelined trip", 0, pipeline_depth.describe_unpipelined(
                    c.line, float(first), float(body.global_loads), float(body.dram), float(fetch), float(compute),
                    float(cycle), resident, memory_parallelism.drawing_text(drawing, active_units), active_units,
                    facts, lambda x: format_time_ns(float(x)))
                    + load_rounds.describe_lockstep(_first_reader(c, miss, lockstep=False), miss.drifted)
                    + load_rounds.describe(n_rounds, cycle, first, m.l2_latency, _queue_bytes(body), drawing,
                                           active_units, load_rounds.facts(m), lambda x: format_time_ns(float(x)))
                    + sync
                    + " (included in the waves above)"))
                # the trip _loop_time queues: the cycle and the body's link latency (a GPU's
                # k-loop waits no command completions: serial_wait is a command processor's)
                wt = _unpipelined_warp_trip(c, counter, m, miss, warps, resident, facts, cycle + body.link_latency)
                if wt is not None and math.ceil(float(resident)) > 1:
                    # co-resident warp-mma CTAs queue at the sub-partitions and the load path
                    out.append(Term("warp-mma trip", 0, warp_trip.describe_unpipelined(
                        c.line, wt, cycle, lambda x: format_time_ns(float(x))) + " (included in the waves above)"))
            continue
        loads = body.global_loads
        if loads and not is_array(loads):
            out.append(Term("load trip", 0, f"line {c.line}: " +
                            load_trip.describe(float(loads), resident, facts,
                                               _trip_copies(c, counter, m, miss, warps))
                            + " (included in the waves above)"))
            wt = _warp_trip(c, counter, m, miss, warps, resident, body, stages, facts)
            if wt is not None and not is_array(wt.issue):
                # the warps issue the mma, then their copies (tfx.analysis.warp_trip)
                fc = wt.fragments             # the chain the trip was timed with (one per loop)
                out.append(Term("warp-mma trip", 0, warp_trip.describe(c.line, wt, lambda x: format_time_ns(float(x)))
                                + (fragment_chain.describe(fc, lambda x: format_time_ns(float(x)))
                                   if fc is not None and not is_array(fc.ns) else "")
                                + (lone_walk.describe(wt.walk, float(wt.walk) * _warp_mma_clock(m), _warp_mma_clock(m),
                                                      lambda x: format_time_ns(float(x))) if float(wt.walk) > 0 else "")
                                + " (included in the waves above)"))
            ct = _converting_wgmma_trip(c, counter, m, miss, warps, resident, body,
                                        lambda: engine_ns(body, m, 1, active_units, warps)["tensor"], facts)
            if ct is not None and not is_array(ct.converts, ct.tensor, ct.copies) and ct.applies:
                out.append(Term("converting trip", 0, converting_trip.describe(
                    c.line, ct, lambda x: format_time_ns(float(x))) + " (included in the waves above)"))
            if body.unpipelined and transpose_trip.warpgroup_share(c, m.inst, warps):
                one = engine_ns(body, m, 1, active_units, warps)
                t = _transposed_trip(c, counter, m, miss, warps, resident, active_units, facts, one)
                out.append(Term("transposed trip", 0, f"line {c.line}: " + transpose_trip.describe(
                    t, resident, transpose_trip.round_ns(t, resident, one["smem"], one["tensor"]))
                    + " (included in the waves above)"))
            left = _mma_left_running(c, m, warps)
            if not is_array(left) and left and not mma_path.trip_waits_for_mma(c):
                one = engine_ns(body, m, resident, active_units, warps)
                port = wgmma_port.detail(c.line, m, one["tensor"], one["smem"], _loop_mma_efficiency(c, m),
                                         lambda x: format_time_ns(float(x)))
                if port is not None and not is_array(one["tensor"], one["smem"]):
                    # the port under the warpgroup mma (tfx.analysis.wgmma_port)
                    out.append(Term("port under mma", 0, port + " (included in the waves above)"))
            behind = _trip_wgmma_ns(c, counter, m, miss, warps, active_units)
            if behind and not is_array(behind):
                # the next copies leave once the trip's warpgroup mmas are issued (tfx.analysis.copy_behind_mma)
                ops = _trip_wgmma_leaves(c, counter, m, miss, warps, active_units)
                out.append(Term("copy behind mma", 0, copy_behind_mma.detail(
                    c.line, stages, float(behind), ops, float(loads), m, facts,
                    lambda x: format_time_ns(float(x)))
                    + " (included in the waves above)"))
            dram_trip = dram_facts
            priced = _priced_trip(miss, c, drawing, active_units)
            if dram_trip is not None and body.dram and not is_array(body.dram) and priced is not None:
                # the round trip a trip with DRAM bytes waits, as the batch was priced with it
                # (tfx.analysis.memory_parallelism)
                short = memory_parallelism.describe_short_runs(m, float(body.dram), float(body.dram_lines))
                strided = strided_runs.describe(m, float(body.dram), float(_queue_bytes(body)), float(body.dram_lines))
                if strided:
                    short = (f"{short}; " if short else "") + strided
                l2_only = miss.l2_only.get(c.id, 0)
                if l2_only and not is_array(l2_only):
                    short = (f"{short}; " if short else "") + memory_parallelism.describe_l2_only(float(l2_only))
                if not is_array(stream) and stream and plain is not None and dram_trip != plain:
                    short = (f"{short}; " if short else "") + load_trip.describe_stream(m, plain, dram_trip, float(stream))
                if (not is_array(private, miss.one_wave) and private and miss.one_wave and drawing
                        and not is_array(drawing)):
                    share = memory_parallelism.describe_own_stream(m, resident, drawing, active_units, float(private))
                    if share:
                        short = (f"{short}; " if short else "") + share
                out.append(Term("memory parallelism", 0, f"line {c.line}: " + memory_parallelism.describe_round_trip(
                    float(body.dram), priced, facts, dram_trip, memory_parallelism.read_rate(m))
                    + (f"; {short}" if short else "") + " (included in the waves above)"))
            queue = _priced_queue(miss, c, resident, active_units)
            if queue is not None:
                # the walk's tiles in flight queue at the SM's load path (tfx.analysis.load_queue)
                out.append(Term("load queue", 0, load_queue.describe(c.line, queue, lambda x: format_time_ns(float(x)))
                                + " (included in the waves above)"))
    return out


def _priced_queue(miss, loop: ScopeNode, resident, active_units):
    """The load-path queue ``_loop_time`` priced ``loop`` with in the batch of ``resident`` CTAs a
    SM on ``active_units`` SMs (tfx.analysis.load_queue.LoadQueue), or None where none was."""
    for r, units, q in (miss.load_queues or {}).get(loop.id, ()):
        if float(units) == float(active_units) and math.isclose(float(r), float(resident), rel_tol=1e-12):
            return q
    return None


def _priced_trip(miss, loop: ScopeNode, drawing, active_units):
    """The loaded round trip ``_loop_time`` priced ``loop`` with in the batch the breakdown
    shows (``drawing`` CTAs a SM drawing DRAM on ``active_units`` SMs: the full wave's, or the
    one wave's of a launch without a full one), or None where none was priced."""
    for t in (miss.dram_trips or {}).get(loop.id, ()):
        # (the breakdown's share of a tail wave is exact, the priced one a float)
        if float(t.active_units) == float(active_units) and math.isclose(float(t.r), float(drawing), rel_tol=1e-12):
            return t
    return None


def _mma_efficiency(node: ScopeNode, m: Machine):
    """The tensor efficiency the model prices mma ``node`` at (its flops' dtype)."""
    for (kind, dtype, unit) in node.per_exec:
        if kind == "flops" and unit == "tensor":
            return m.tensor_efficiency(dtype)
    return m.tensor_eff


def _mma_left_running(loop: ScopeNode, m: Machine, warps):
    """1 where every mma of ``loop`` is a warpgroup mma Triton leaves running through the trip
    (mma_path.properly_async), else 0 (arrays elementwise)."""
    out = 0
    for i, c in enumerate(loop.mma_ops()):
        a = mma_path.properly_async(c, loop, m, warps)
        out = a if i == 0 else out * a
    return out


def _loop_mma_efficiency(loop: ScopeNode, m: Machine):
    """The tensor efficiency of ``loop``'s first mma (``_mma_efficiency``)."""
    for c in loop.mma_ops():
        return _mma_efficiency(c, m)
    return m.tensor_eff


def _trip_wgmma(of, loop: ScopeNode, counter, m: Machine, miss, warps, active_units):
    """``of`` (a copy_behind_mma function of the loop, the warps, each mma's tensor ns a trip and its
    efficiency) over one CTA's trip of ``loop``."""
    def tensor_ns(c):
        return engine_ns(op_demand(c, counter, m, miss, warps), m, 1, active_units, warps)["tensor"] * _trip_share(c, loop)
    return of(loop, m, warps, tensor_ns, lambda c: _mma_efficiency(c, m))


def _trip_wgmma_ns(loop: ScopeNode, counter, m: Machine, miss, warps, active_units, leave=False):
    """One CTA's properly asynchronous warpgroup mmas of a trip of ``loop`` at the tensor
    cores' own rate (tfx.analysis.copy_behind_mma.mma_ns); ``leave``: the ns into the trip at
    which the next copies leave, once those mmas are issued (copy_behind_mma.leave_ns)."""
    of = copy_behind_mma.leave_ns if leave else copy_behind_mma.mma_ns
    return _trip_wgmma(of, loop, counter, m, miss, warps, active_units)


def _trip_wgmma_leaves(loop: ScopeNode, counter, m: Machine, miss, warps, active_units) -> list:
    """Each warpgroup mma's part of the copies' leave a trip of ``loop`` (copy_behind_mma.op_leaves),
    which the breakdown's line shows beside their sum."""
    return _trip_wgmma(copy_behind_mma.op_leaves, loop, counter, m, miss, warps, active_units)


def _operand_reads_term(c: ScopeNode, m: Machine, warps, resident) -> list:
    """The ``operand reads`` line of mma ``c``: its shared-memory operands as its warps read them
    (counted by tfx.analysis.counting, Counter.shared_operand_reads; scalar analyses)."""
    r = getattr(c, "operand_reads", None)
    bw = m.onchip_bw.get(SHARED_LEVEL)
    if r is None or not bw or is_array(r.a_bytes, r.b_bytes):
        return []
    shared = tuple(level == SHARED_LEVEL for level, _ in c.mma_operands)
    read = (r.a_bytes if shared[0] else 0) + (r.b_bytes if shared[1] else 0)
    frac = float(_operand_clock_fraction(c, m, warps))
    rate = bw * frac
    at = (f"{format_exact_bytes(read)} / ({format_plain(bw / m.clock_ghz)} B/cycle x {formula_frequency(m.clock_ghz)} x {format_plain(frac)} under warp mma = "
          f"{formula_rate(rate)})" if frac != 1 else f"{format_exact_bytes(read)} / {formula_rate(bw)}")
    port = float(read) / rate
    return [Term("operand reads", 0, f"line {c.line}: " + mma_layout.describe_reads(r, c.per_exec_shape, shared)
                 + f"; {at} = {format_time_ns(port)} of the SM's shared-memory port an execution"
                 + (f", x {int(resident)} CTAs a SM = {format_time_ns(port * int(resident))} a round" if resident > 1 else "")
                 + " (in the smem engine above)")]


def _mma_terms(unit_node: ScopeNode, m: Machine, warps, resident=1) -> list:
    """How each mma is laid on the tensor cores and what its operands cost (explanations;
    their time is in the waves above)."""
    out = []
    at_efficiency = False         # an mma priced at the tensor efficiency (not the warp mma's own rate)
    for c in unit_node.walk():
        shape = getattr(c, "per_exec_shape", None)
        if c.kind != "op" or c.op is None or c.op.opcode not in opcat.MMA or shape is None:
            continue
        bits = getattr(c, "mma_bits", 16)
        dtype = next((k[1] for k in c.per_exec if k[0] == "flops"), None)
        if dtype is None or mma_engine(m.profile, dtype) == "vector":
            continue
        p = mma_layout.plan(shape, m.inst, warps, bits, getattr(c, "mma_chained", False))
        rate = m.rate("tensor", dtype) * m.tensor_efficiency(dtype)
        warp = _warp_mma(c, m, warps)
        reads = _operand_reads_term(c, m, warps, resident)
        if warp is not None:
            f16 = p._replace(k=warp.k, depth=16)            # the f16 instruction it runs
            out.append(Term("mma layout", 0, f"line {c.line}: " + mma_layout.describe(f16, shape, warps)))
            out.extend(reads)
            out.append(Term("fp8 warp mma" if warp.promoted else "warp mma", 0, f"line {c.line}: "
                            + mma_layout.describe_warp_mma(warp, warps, resident, m.warp_mma, m.clock_ghz, dtype)
                            + " (included in the waves above)"))
            for g in mma_layout.byte_gathers(c, m.inst, bits, warps):
                out.append(Term("byte gather", 0, f"line {c.line}: " + mma_layout.describe_gather(
                    g, warps, resident, _warp_mma_clock(m)) + " (included in the waves above)"))
            continue
        at_efficiency = True
        out.append(Term("mma layout", 0, f"line {c.line}: " + mma_layout.describe(p, shape, warps, float(rate))))
        out.extend(reads)
        key = f"compute.tensor.efficiency_{normalize_dtype(dtype)}"
        if m.profile.get(key, None) is not None:
            # the dtype's own sustained fraction (fp8: its cuBLAS rate against bf16's, fp8_rate)
            per_cycle = m.rate("tensor", dtype) / m.clock_ghz
            out.append(Term("tensor rate", 0, f"line {c.line}: " + mma_layout.describe_sustained_rate(
                normalize_dtype(dtype), per_cycle, m.clock_ghz, m.sustained_efficiency(dtype), key,
                m.tensor_clock_factor())))
        serial = mma_layout.serialized_wgmma(c, m.inst, bits, warps)
        facts = mma_layout.serial_wgmma_facts(m)
        if serial is not None and facts is not None and not is_array(serial.applies):
            out.append(Term("serialized wgmma", 0, f"line {c.line}: " + mma_layout.describe_serial(
                serial, shape, m.rate("tensor", dtype), resident, facts) + " (included in the waves above)"))
        for t in mma_layout.register_transposes(c, m.inst, bits, warps):
            out.append(Term("transpose", 0, f"line {c.line}: " + mma_layout.describe_transpose(t, m.clock_ghz)))
    clock = m.describe_tensor_clock()
    if clock is not None and at_efficiency:
        # the tensor rate above at the launch's busy SMs (Machine.tensor_clock_factor; the warp
        # mma runs at its own clock fraction)
        out.append(Term("power clock", 0, clock + " (included in the waves above)"))
    return out


def _latency_sets_rounds(round_bounds, batch_ns) -> bool:
    """Whether the full batch's longest loop, most of the batch's ``batch_ns``, has its round set
    by a chain (a trip's load round trip, issue and compute in series, or its CTAs' queue at the
    stations) rather than by the busiest engine's work: raising that engine's rate would not
    shorten it (``_loop_time``). A loop that is the lesser part of the batch names no bound."""
    if not round_bounds or is_array(batch_ns):
        return False
    ns, by_chain = max(round_bounds.values(), key=lambda v: v[0])
    return by_chain and 2 * ns > batch_ns


def _bound_name(engine: str, d: "Demand", m: Machine, r, active_units) -> str:
    """An engine by the roofline's names: the copy engine is bound by DRAM or by L2 (whichever
    transfer is longer) or, when its DMA channels wait out the round trip, by latency; a
    command processor is ``dispatch``; register spills go to local memory in DRAM."""
    if engine == "copy":
        if m.dma_channels and m.dma_hold and d.descriptors:
            transfer = _transfer_ns(d, m, r, active_units)
            held = (transfer + r * d.descriptors * m.dram_latency) / m.dma_channels
            if held > transfer:
                return "latency"
        # the term of _transfer_ns that sets the copy time names it (one truth: the same rates)
        dram, l2 = _transfer_terms(d, m, r, active_units)
        return "l2" if l2 is not None and l2 > dram else "dram"
    return {"spill": "dram"}.get(engine, engine)


def op_demand(node: ScopeNode, counter, m: Machine, miss: LaunchMiss, warps) -> Demand:
    """What one execution of op ``node`` asks of a unit's engines (bytes per level, flops per
    engine, DMA descriptors); ``miss`` gives each load's L2 miss ratio. The simulator prices
    its tasks with it, so both agree. Within a launch (``miss.demands``, _launch_time)
    computed once an op: the Demand returned is shared, and callers do not change it."""
    memo = miss.demands
    if memo is None:
        return _op_demand(node, counter, m, miss, warps)
    d = memo.get(node.id)
    if d is None:
        d = memo[node.id] = _op_demand(node, counter, m, miss, warps)
    return d


def _op_demand(node: ScopeNode, counter, m: Machine, miss: LaunchMiss, warps) -> Demand:
    d = Demand()
    op = node.op
    q = node.per_exec
    for (kind, a, b), amount in q.items():
        if kind == "link":
            bw, lat = m.links.get(a, (None, 0))
            if bw:
                if op.opcode != "recv":
                    d.link = d.link + amount / bw
                if op.opcode != "send":
                    d.link_in = d.link_in + amount / bw
                # a ring all-reduce over n positions is 2 (n - 1) hops; a send or recv one
                hops = 2 * (node.units.get(a, 1) - 1) if op.opcode == "allreduce" else 1
                d.link_latency = d.link_latency + lat * hops
        elif kind == "traffic":
            level = a
            if level == m.dram or level in m.global_levels:
                d.l2 = d.l2 + amount
                ratio_miss = miss.get(node.id, 1) if b == "read" else 1
                d.dram = d.dram + amount * ratio_miss
                short = _short_run_factor(op, counter, m) if b == "read" else 1
                d.dram_lines = d.dram_lines + amount * ratio_miss * short
                d.dram_busy = d.dram_busy + amount * ratio_miss * (
                    _strided_factor(op, counter, m, short) if b == "read" else 1)
                if b == "read":
                    d.global_loads = d.global_loads + amount
                    d.l2_merged = d.l2_merged + amount * miss.pair_merged.get(node.id, 0)
                    if miss.partitions > 1 and node.id in miss.side_block:
                        d.l2_far = d.l2_far + amount * ratio_miss * l2_reuse.far_fill_share(
                            ratio_miss, miss.side_block[node.id], miss.partitions)
            elif level in m.onchip_bw:
                port = ratio(amount, m.onchip_bw[level]) if not is_array(amount) else amount / m.onchip_bw[level]
                if b == "read" and op is not None and op.opcode in opcat.MMA:
                    # an mma's operands, read while it runs (Counter.shared_operand_reads); a warp
                    # mma's warps load theirs by ldmatrix with the SM at its clock under warp mma
                    # (warp_mma.clock_fraction), as the byte gathers below
                    port = port / _operand_clock_fraction(node, m, warps)
                    d.operand_reads = d.operand_reads + port
                d.smem = d.smem + port
        elif kind == "flops":
            dtype, unit = a, b
            if unit == "tensor" and mma_engine(m.profile, dtype) == "vector":
                # No tensor path for this dtype: M*N*K FMAs on the vector unit, whose rate is
                # stated in FMA flops (2 per FMA), so the 2*M*N*K flops divide by it directly;
                # no tensor instruction padding, no tensor efficiency.
                d.vector = d.vector + amount / m.rate("vector", dtype)
            elif unit == "tensor":
                shape = getattr(node, "per_exec_shape", None)
                flops = amount
                if shape is not None:
                    # a batched mma issues its M x N x K instructions once per batch entry
                    flops = _padded_flops(shape, m, warps, getattr(node, "mma_bits", 16),
                                          getattr(node, "mma_chained", False)) * getattr(node, "per_exec_batch", 1)
                rate = m.rate("tensor", dtype) * m.tensor_efficiency(dtype)
                tensor_ns = flops / rate
                pad_ns = (flops - amount) / rate
                warp = _warp_mma(node, m, warps)
                if warp is not None:
                    # a dot on the warp mma runs mma.sync at its own rate (an fp8 one as f16
                    # after converting its operands: tfx.analysis.mma_layout.warp_mma): each
                    # warp keeps its own sub-partition busy; the CTA's share of the SM is
                    # warps / sub-partitions
                    per_warp = warp.warp_ns * getattr(node, "per_exec_batch", 1)
                    share = per_warp * ratio(warps, m.warp_mma.subpartitions)
                    if is_array(warp.applies):
                        per_warp = where(warp.applies, per_warp, 0)
                        share = where(warp.applies, share, tensor_ns)
                        pad_ns = where(warp.applies, 0, pad_ns)
                    else:
                        pad_ns = 0          # the warp mma's own time holds its padding
                    d.warp_tensor = d.warp_tensor + per_warp
                    tensor_ns = share
                d.tensor = d.tensor + tensor_ns
                d.tensor_pad = d.tensor_pad + pad_ns
            elif unit == "special":
                d.special = d.special + amount / m.rate("special", rate_dtype(dtype))
            else:
                # Vector rates are stated in FMA flops (2 per lane per cycle); an elementwise
                # op or a reduction step takes one lane-cycle per element.
                d.vector = d.vector + amount / (m.rate("vector", rate_dtype(dtype)) / 2)
    spill = miss.spill
    if spill[0] is not None:
        # A spilled share f of the thread's register tiles: every op moves f of the register
        # bytes it reads and writes through local memory (a store when made, a load per use).
        frac, local_bw = spill[0], spill[1]
        rmem = sum(v for (kind, level, _), v in q.items() if kind == "traffic" and level == "rmem")
        if is_array(rmem, frac, local_bw) or rmem:
            d.spill = d.spill + frac * rmem / local_bw
    if m.kind == "gpu" and op is not None and op.opcode in opcat.MMA:
        # an 8-bit operand the warpgroup mma cannot read as stored: transposed in registers and
        # stored to shared memory with bank conflicts (tfx.analysis.mma_layout)
        for t in mma_layout.register_transposes(node, m.inst, getattr(node, "mma_bits", 16), warps):
            d.smem = d.smem + t.cycles / m.clock_ghz
            d.unpipelined = d.unpipelined + t.applies
        # ... which a warp mma gathers a byte at a time instead: the SM's shared-memory pipe
        # serves every warp's LDS.U8 in series with their mma (tfx.analysis.mma_layout.byte_gathers)
        for g in mma_layout.byte_gathers(node, m.inst, getattr(node, "mma_bits", 16), warps):
            d.tensor = d.tensor + g.wavefronts / _warp_mma_clock(m)
    if m.dispatch_single is not None and op is not None and op.opcode not in VIEWS:
        d.dispatch = d.dispatch + m.dispatch_single / m.clock_ghz
    if m.dma_channels and counter is not None and op is not None and op.opcode in ("load", "store", "copy"):
        for w in [o for o in op.operands if isinstance(o, Window)] + ([op.target] if op.target is not None else []):
            dims = counter.tensor_dims.get(w.tensor)
            if dims is not None:
                d.descriptors = d.descriptors + contiguous_runs(w, dims, counter.env)
    return d


def _operand_clock_fraction(node: ScopeNode, m: Machine, warps):
    """The SM clock, as a fraction of clock.core, at which mma ``node``'s warps read its
    operands from shared memory: warp_mma.clock_fraction where it takes the warp mma (the SM
    runs at 1783-1799 of 1980 MHz whenever mma.sync runs: the `warp mma` term), else 1; arrays
    per configuration."""
    warp = _warp_mma(node, m, warps)
    if warp is None:
        return 1
    f = m.warp_mma.clock_fraction
    return if_else(warp.applies, f, 1)


def _warp_mma_clock(m: Machine):
    """GHz of the SM while its warps run mma.sync (warp_mma.clock_fraction of clock.core)."""
    return m.clock_ghz * (m.warp_mma.clock_fraction if m.warp_mma is not None else 1)


def _walk_queues(m: Machine, miss, trip_facts, stations) -> bool:
    """Whether a pipelined GEMM k-loop's tiles in flight queue at the SM's load path
    (tfx.analysis.load_queue.applies_to): a persistent walk's trip, priced on the pointer chase,
    on a profile that states the idle floor with one tile in flight; not a serial chain's trip."""
    if trip_facts is None or stations is not None or m.dispatch_single is not None:
        return False
    d = load_trip.dram_facts(m)
    return load_queue.applies_to(miss.walk, load_trip.chase_facts(m) if d is not None and d.idle_ns is not None
                                 else None, None if d is None else d.idle_one_tile_ns)


def _queued_trip(queues, wt):
    """Whether the walk's trip is priced with its load-path queue (``_walk_queues``): not where the
    trip takes the warp mma (arrays: per configuration of a sweep)."""
    if not queues:
        return False
    if wt is None:
        return True
    return wt.applies <= 0 if is_array(wt.applies) else not wt.applies


def _load_queue(loop: ScopeNode, counter, m: Machine, miss, warps, r, stages, body, trip_facts, wt, issue_chain):
    """The walk's trip as the load path's queue sees it (tfx.analysis.load_queue.LoadQueue); its
    round is 0 where a sweep's configuration takes the warp mma (tfx.analysis.warp_trip queues
    those copies with the warps' issue)."""
    copies = load_trip.copies_port_ns(body.global_loads, _trip_copies(loop, counter, m, miss, warps), trip_facts)
    if wt is not None:
        copies = where(wt.applies > 0, 0, copies)
        issue_chain = where(wt.applies > 0, 0, issue_chain)
    return load_queue.LoadQueue(copies, issue_chain, r, stages)


def _copying_warp_mma(loop: ScopeNode, m: Machine, warps, trip_facts):
    """The warp mma of ``loop``'s dot where its warps also copy their own tiles, the trip both warp-mma
    queues price (``_warp_trip``, ``_unpipelined_warp_trip``); None where the load-trip facts do not
    apply, the device has no warp-mma facts, a TMA producer warp copies for the mma warps
    (tfx.analysis.codegen) or the dot takes the warpgroup mma."""
    if trip_facts is None or m.warp_mma is None or not m.codegen.per_thread_copies:
        return None
    return _loop_warp_mma(loop, m, warps)


def _warp_trip(loop: ScopeNode, counter, m: Machine, miss, warps, r, body, stages, trip_facts):
    """The stations of a pipelined warp-mma k-loop's trip (tfx.analysis.warp_trip), or None
    where no dot of the trip takes the warp mma, the loop is not pipelined or loads nothing."""
    warp = _copying_warp_mma(loop, m, warps, trip_facts)
    if warp is None or not (is_array(body.global_loads) or body.global_loads):
        return None
    piped = (stages >= 2) if is_array(stages) else (1 if stages >= 2 else 0)
    if not is_array(piped) and not piped:
        return None
    copies = load_trip.copies_port_ns(body.global_loads, _trip_copies(loop, counter, m, miss, warps), trip_facts)
    applies = warp.applies * piped if is_array(warp.applies, piped) else 1
    chain = _fragment_chain(loop, m, warps, stages, miss)
    converts = _warp_conversion_ns(loop, m, warps)
    return warp_trip.stations(warp.warp_ns + converts, warps, r, m.warp_mma.subpartitions, copies, applies,
                              0 if chain is None else chain.ns,
                              _lone_walk_ns(loop, m, warps, stages, miss))._replace(fragments=chain, converts=converts)


def _trip_conversions(loop: ScopeNode):
    """The conversions of ``loop``'s cast ops a CTA's trip on the special-function unit
    (``compute-cost.special.f32`` of its casts, tfx.analysis.counting); 0 where it casts nothing there."""
    amount = 0
    for c in loop.body_ops():
        if c.op.opcode == "cast":
            amount = amount + c.per_exec.get(("flops", "f32", "special"), 0)
    return amount


def _converting_wgmma_trip(loop: ScopeNode, counter, m: Machine, miss, warps, r, body, tensor_ns, trip_facts):
    """The stations of a pipelined warpgroup-mma k-loop whose dot's B operand is computed in registers
    (a register cast: tfx.analysis.converting_trip), or None where B was loaded, the dot takes no
    warpgroup mma, the code generator's warps do not copy their own tiles or the loop loads nothing.
    ``tensor_ns()``: one CTA's tensor-engine ns a trip, asked only where the trip applies."""
    if trip_facts is None or m.kind != "gpu" or not m.codegen.per_thread_copies:
        return None
    c = next(loop.mma_ops(), None)
    shape = None if c is None else getattr(c, "per_exec_shape", None)
    if shape is None or not mma_path.b_in_registers(c) or not (is_array(body.global_loads) or body.global_loads):
        return None
    amount = _trip_conversions(loop)
    p = mma_layout.plan(shape, m.inst, warps, getattr(c, "mma_bits", 16), getattr(c, "mma_chained", False))
    applies = mma_layout.path_share(p.path, "warpgroup")
    if applies is None:
        return None
    copies = load_trip.copies_port_ns(body.global_loads, _trip_copies(loop, counter, m, miss, warps), trip_facts)
    return converting_trip.stations(amount / m.rate("special", "f32"), tensor_ns(), copies, r, applies)


def _warp_conversion_ns(loop: ScopeNode, m: Machine, warps):
    """ns one warp spends a trip converting its share of ``loop``'s register casts on its sub-partition
    (docs/analysis.md, "Dequantizing casts hold the XU"): the casts' conversions a CTA's trip
    (``compute-cost.special.f32`` of the loop's cast ops, tfx.analysis.counting) over its warps, at the
    sub-partition's share of the special-function unit (``compute.special.f32`` / ``warp_mma.subpartitions``:
    4 SFU lanes of an H100 sub-partition, 8 cycles a warp instruction). A warp-mma trip's warps convert,
    mma and copy in one in-order stream (tfx.analysis.warp_trip), so these join each warp's issue time; 0
    where the loop casts nothing on the unit."""
    amount = _trip_conversions(loop)
    if not is_array(amount) and not amount:
        return 0
    return amount * m.warp_mma.subpartitions / (m.rate("special", "f32") * emax(warps, 1))


def _unpipelined_warp_trip(loop: ScopeNode, counter, m: Machine, miss, warps, r, trip_facts, single):
    """The stations of ``r`` co-resident CTAs of an unpipelined (1-stage) warp-mma k-loop
    (tfx.analysis.warp_trip.unpipelined_stations): the trip's loads into registers on the load path
    (load_trip.sync_load_ns), one CTA's unpipelined trip ``single`` its cycle alone; None where no dot
    of the loop takes the warp mma or the profile states no unpipelined load price."""
    warp = _copying_warp_mma(loop, m, warps, trip_facts)
    if warp is None:
        return None
    copies = load_trip.sync_load_ns(_trip_copies(loop, counter, m, miss, warps), trip_facts)
    if not is_array(copies) and not copies:
        return None
    converts = _warp_conversion_ns(loop, m, warps)
    return warp_trip.unpipelined_stations(warp.warp_ns + converts, warps, r, m.warp_mma.subpartitions, copies, single,
                                          warp.applies)._replace(converts=converts)


def _unpipelined_warp_round(loop: ScopeNode, counter, m: Machine, miss, warps, r, trip_facts, single, stages=1):
    """The round of ``_unpipelined_warp_trip``'s closed queue (tfx.analysis.warp_trip.round_ns), 0 where
    it does not apply. A sweep's queue is solved on its one-stage configurations alone (the rest take
    the pipelined round), whose inputs are picked out of the broadcast grid first: the mean value
    analysis iterates up to the most resident CTAs, so over the whole grid it would cost explore a
    quarter of its sweep."""
    t = _unpipelined_warp_trip(loop, counter, m, miss, warps, r, trip_facts, single)
    if t is None:
        return 0
    if not is_array(*t, stages):
        return warp_trip.round_ns(t)
    import numpy as np
    pick = (np.asarray(stages) < 2) & (np.asarray(t.applies) > 0)
    inputs = dict(issue=t.issue, copies=t.copies, delay=t.delay, resident=t.resident, walk=t.walk, applies=t.applies)
    return _solve_where(pick, inputs, lambda picked: warp_trip.round_ns(t._replace(**picked)))


def _lone_walk_ns(loop: ScopeNode, m: Machine, warps, stages, miss):
    """One warp's walk of ``loop``'s compiled k-loop a trip (tfx.analysis.lone_walk) at the SM's clock
    under warp mma: the compiled table's for the loop's censused dot (``_censused_key``), 0 where there
    is none. Computed once a loop per launch (``miss.lone_walks``), as the fragment chain is."""
    memo = miss.lone_walks
    if loop.id not in memo:
        key = _censused_key(loop, m)
        memo[loop.id] = 0 if key is None else lone_walk.cycles(key[0], warps, stages, *key[1:]) / _warp_mma_clock(m)
    return memo[loop.id]


def _censused_dot(loop: ScopeNode, m: Machine):
    """The one dot of ``loop`` where the compiled tables of Triton GEMM k-loops speak for it
    (tfx.analysis.fragment_chain, tfx.analysis.load_rounds): a GPU whose code generator's
    threads copy the tiles, a loop of one shaped dot whose operands come straight from shared
    memory (tfx.analysis.mma_path.fed_from_smem: not gemm_w8a16's or gemm_w4a16's register
    cast); else None."""
    if m.kind != "gpu" or not m.codegen.per_thread_copies:
        return None
    mmas = list(loop.mma_ops())
    c = mmas[0] if len(mmas) == 1 else None     # a GEMM k-loop's one dot (the tables' kernels)
    if getattr(c, "per_exec_shape", None) is None or not mma_path.fed_from_smem(c):
        return None
    return c


def _censused_key(loop: ScopeNode, m: Machine):
    """(shape, operand bits, B stored K-major) of ``loop``'s censused dot (``_censused_dot``), the key of
    the compiled tables (fragment_chain.counts, lone_walk.cycles, load_rounds.rounds); None where there is none."""
    c = _censused_dot(loop, m)
    if c is None:
        return None
    b_k_major = (getattr(c, "mma_k_major", None) or (None, None))[1]
    return c.per_exec_shape, getattr(c, "mma_bits", 16), bool(b_k_major)


def _fragment_chain(loop: ScopeNode, m: Machine, warps, stages, miss):
    """One warp's serialized fragment chain a trip of ``loop`` (tfx.analysis.fragment_chain):
    the compiled table's for the loop's censused dot (``_censused_dot``), at the SM's clock
    under warp mma; None where there is none or the profile lacks the ldmatrix or mma latency.
    Computed once a loop per launch (``miss.fragment_chains``), whatever batches time the loop."""
    memo = miss.fragment_chains
    if loop.id not in memo:
        memo[loop.id] = _fragment_chain_of(loop, m, warps, stages)
    return memo[loop.id]


def _spill_trip(loop: ScopeNode, m: Machine, miss, warps):
    """The bytes a trip of the spilling k-loop ``loop`` moves through local memory per CTA
    (spill_traffic.kloop_trip: the launch's spilled bytes and registers, ``miss.spill_regs``; the
    loop's warp mma; none touched where its serial warpgroup mmas fit, wgmma_serial.fits).
    Computed once a loop per launch (``miss.spill_trips``): the timing of each batch and the
    breakdown's "spill trip" line read the same one."""
    memo = miss.spill_trips
    if loop.id not in memo:
        spb, regs = miss.spill_regs
        memo[loop.id] = spill_traffic.kloop_trip(spb, warps * 32, regs, _loop_warp_mma(loop, m, warps),
                                                 wgmma_serial.fits(loop, m, warps))
    return memo[loop.id]


def _fragment_chain_of(loop: ScopeNode, m: Machine, warps, stages):
    lat = fragment_chain.facts(m)
    key = _censused_key(loop, m) if lat is not None else None
    if key is None:
        return None
    n_ldsm, n_mma = fragment_chain.counts(key[0], warps, stages, *key[1:])
    if not is_array(n_ldsm) and not n_ldsm and not n_mma:
        return None
    return fragment_chain.chain(n_ldsm, n_mma, *lat, _warp_mma_clock(m))


def _spill_chain(loop: ScopeNode, m: Machine, miss, warps, r, active_units):
    """The chain of local round trips of a spilling warp-mma k-loop compiled to 32 registers
    (tfx.analysis.spill_chain) while ``r`` CTAs a SM on ``active_units`` SMs hold their spilled
    frames (no more than the grid's CTAs: 200 CTAs at 2 a SM on 132 SMs hold 200 frames, not
    264), or None where it does not apply or the profile lacks a fact."""
    facts = miss.spill_chain
    warp = _loop_warp_mma(loop, m, warps)
    if facts is None or warp is None:
        return None
    spb, regs = miss.spill_regs
    if regs is None:
        return None
    on = spill_chain.applies(regs, spb)
    on = on & warp.applies if is_array(on, warp.applies) else (on and bool(warp.applies))
    if not is_array(on) and not on:
        return None
    threads, l2_cap, l2_ns, dram_ns, positions = facts
    slots = r * active_units
    ctas = emin(positions, slots)
    c = spill_chain.trip_chain(warp.mmas, regs, spb, spb * threads * ctas, l2_cap, l2_ns, dram_ns)
    return c._replace(ns=where(on, c.ns, 0), applies=on) if is_array(on) else c


def _loop_warp_mma(loop: ScopeNode, m: Machine, warps):
    """The warp mma of the first dot in ``loop`` (None where it takes the warpgroup mma)."""
    c = next(loop.mma_ops(), None)
    return None if c is None else _warp_mma(c, m, warps)


def _warp_mma(node: ScopeNode, m: Machine, warps):
    """The warp mma (mma.sync at its own rate) of mma ``node`` (tfx.analysis.mma_layout.warp_mma),
    or None where it keeps the tensor rate."""
    shape = getattr(node, "per_exec_shape", None)
    if m.warp_mma is None or shape is None:
        return None
    bits = getattr(node, "mma_bits", 16)
    p = mma_layout.plan(shape, m.inst, warps, bits, getattr(node, "mma_chained", False))
    loaded = mma_path.trip_loaded(node) if m.codegen.per_thread_copies else (False, False)
    return mma_layout.warp_mma(p, shape, bits, m.warp_mma, m.clock_ghz, loaded)


def _read_window(op, counter):
    """(window, tensor dims, element bits) of the one tensor window a read op moves; None where
    there is no counter or not exactly one such window."""
    if counter is None or op is None:
        return None
    windows = [o for o in op.operands if isinstance(o, Window) and o.tensor in counter.tensor_dims]
    if len(windows) != 1:
        return None
    w = windows[0]
    return w, counter.tensor_dims[w.tensor], counter.tensor_types[w.tensor].dtype.bits


def _short_run_factor(op, counter, m: Machine):
    """How much longer a read's DRAM bytes take than whole-line reads (memory_parallelism)."""
    read = _read_window(op, counter)
    if read is None:
        return 1
    w, dims, bits = read
    return memory_parallelism.short_run_factor(m, w, dims, counter.env, bits)


def _serial_wgmma_ns(loop, m: Machine, warps, r):
    """The floor a round of r CTAs takes where ptxas serializes a k-loop's warpgroup mma
    (tfx.analysis.mma_layout.serial_trip_ns), 0 where none is."""
    facts = mma_layout.serial_wgmma_facts(m)
    if facts is None:
        return 0
    out = 0
    for c in loop.mma_ops():
        dtype = next((k[1] for k in c.per_exec if k[0] == "flops"), None)
        s = mma_layout.serialized_wgmma(c, m.inst, getattr(c, "mma_bits", 16), warps)
        if s is None or dtype is None:
            continue
        peak_ns = _padded_flops(c.per_exec_shape, m, warps, getattr(c, "mma_bits", 16)) / m.rate("tensor", dtype) * _trip_share(c, loop)
        out = emax(out, mma_layout.serial_trip_ns(s, peak_ns, r if is_array(r) or r else 1, facts))
    return out


def _queue_bytes(d: Demand):
    """The DRAM bytes of a trip as the loaded round trip's queue sees them: at the device's busy
    time of whole lines, so K-major short runs that no neighbouring CTA continues count as the
    bytes they keep DRAM busy for (tfx.analysis.strided_runs)."""
    return emax(d.dram, d.dram_busy)


def _strided_factor(op, counter, m: Machine, short):
    """How much longer a read keeps the device's DRAM busy than whole-line reads: the strided-run
    factor where its short runs advance with the pipelined trip only (tfx.analysis.strided_runs),
    else ``short`` (the short-run factor)."""
    read = _read_window(op, counter)
    if read is None:
        return short
    w, dims, bits = read
    staged, other = strided_runs.index_names(counter.kernel)
    return strided_runs.factor(m, w, dims, counter.env, bits, staged, other, short)


def _padded_flops(shape, m: Machine, warps, bits=16, chained=False):
    """2*M*N*K with M, N, K rounded up to what the tensor instructions execute: on a GPU,
    the warp layout the compiler picks (tfx.analysis.mma_layout: Triton's warpgroup or warp
    mma, warps over M then N); elsewhere the instruction shape."""
    return mma_layout.plan(shape, m.inst, warps, bits, chained, gpu=m.kind == "gpu").flops


def _demand_of(node: ScopeNode, counter, m, miss, warps, positions) -> Demand:
    """Total demand of one position (all executions of the subtree, per position)."""
    d = Demand()
    for c in node.walk():
        if c.kind in ("op", "capture") and c.per_exec:
            od = op_demand(c, counter, m, miss, warps)
            d.add(od, ratio(c.execs, positions) if not is_array(c.execs, positions) else c.execs / positions)
    return d


def _estimated_share(unit_node: ScopeNode, share, spill, threads, register_bytes):
    """(share, facts): a spilled row body whose frame reaches fewer than STREAMING_REGISTERS
    registers moves the local bytes row_spill.estimated_local_bytes counts from its body, in place
    of the frame's multiple (docs/analysis.md section 8 (q)); facts (bytes, elements, rows a
    thread, per-row and vector broadcasts) for the spill line where one configuration is asked,
    else None."""
    facts = row_spill.body_facts(unit_node.body_ops())
    if facts is None:
        return share, None
    on = row_spill.estimate_applies(spill.bytes_per_thread, spill.regs)
    if not is_array(on) and not on:
        return share, None
    elements, rows, per_row, vectors = facts
    per_thread = elements / threads
    held = row_spill.rows_per_thread(rows, elements / emax(rows, 1e-30), ratio(threads, 32))
    local_bytes = row_spill.estimated_local_bytes(per_thread, held, spill.regs, per_row, vectors)
    estimated = row_spill.compiled_share(local_bytes, threads, register_bytes)
    if is_array(on, estimated, share):
        return where(on, estimated, share), None
    return estimated, (local_bytes, per_thread, held, per_row, vectors)


def _reductions(node: ScopeNode) -> int:
    """The reduce ops of one position's body (a row kernel's row statistics)."""
    return sum(1 for c in node.walk() if c.kind == "op" and c.op is not None and c.op.opcode == "reduce")


def _register_bytes(node: ScopeNode, positions):
    """Register bytes the ops of one position read and write (their counted rmem traffic)."""
    total = 0
    for c in node.walk():
        if c.kind in ("op", "capture") and c.per_exec:
            rmem = sum(v for (kind, level, _), v in c.per_exec.items() if kind == "traffic" and level == "rmem")
            total = total + rmem * (c.execs / positions if is_array(c.execs, positions) else ratio(c.execs, positions))
    return total


def _miss_share(body: Demand):
    """The share of a trip's L2 traffic that misses to DRAM (arrays elementwise)."""
    if is_array(body.dram, body.l2):
        return body.dram / emax(body.l2, 1e-30)
    return ratio(body.dram, body.l2) if body.l2 else 1


def _streaming_facts(loop, m: Machine):
    """(load-trip facts, loaded DRAM round trip) for a GPU loop that streams global loads,
    or None where the profile states either not (tfx.analysis.load_trip)."""
    if m.kind != "gpu" or m.dispatch_single is not None or not load_trip.streams(loop):
        return None
    f, d = load_trip.facts(m), load_trip.dram_facts(m)
    return (f, d) if f is not None and d is not None else None


def _unpipelined_stream(loop, m: Machine, stages, trip_chain, body: Demand):
    """(stream facts, load-trip facts, the unloaded DRAM latency) where a warp-mma streaming trip
    (``trip_chain``) may run at one stage and the profile states them, else None
    (tfx.analysis.decode_trip.unpipelined_round_ns)."""
    if trip_chain is None or not (is_array(body.global_loads) or body.global_loads):
        return None
    if not is_array(stages, trip_chain.ns) and not (stages < 2 and trip_chain.ns):
        return None
    f, t, chase = decode_trip.facts(m), load_trip.facts(m), decode_trip.dram_chase_ns(m)
    return None if f is None or t is None or chase is None else (f, t, chase)


def l2_slices_ns(per_pos: Demand, positions, m: Machine):
    """ns the L2 slices need for a launch's traffic at their device-wide data rate, or None where
    the profile states none: every position's reads less the copies a TPC pair merges before the
    slices (l2_reuse.pair_merged_share), the fills from DRAM and the stores, over
    ``memory.l2.slice_bandwidth``. A device resource: no SM's share, one floor for the launch's
    waves. Source: calibration/h200/measured/l2_groupm_s14-s18 (bench/l2_slices.py): the slices'
    sectors from the SMs plus DRAM's bytes reach 10.0-10.8 TB/s at do_bench's times in 9 of 33
    grouped launches, none past it (docs/analysis.md, "The L2 slices' data ceiling")."""
    if m.l2_slice_bw is None:
        return None
    return positions * per_pos.l2_slices / m.l2_slice_bw


def l2_fabric_ns(per_pos: Demand, positions, m: Machine):
    """ns the fabric between the L2 partitions needs for a launch's far fills, or None where the
    profile states no ``memory.l2.fabric_bandwidth``: every position's DRAM reads that a far
    partition fills again from the line's home partition (l2_reuse.far_fill_share) over the
    fabric's device-wide rate. A device resource, one floor for the launch's waves, past the
    slices' (l2_slices_ns). Source (a lower bound): half of SDPA's 17.18 GB decode read in
    3.65886 ms, 2.35 TB/s (calibration/h200/measured/attention_triton_decode.csv); Nsight's far
    sectors (lts__t_sectors_srcunit_ltcfabric x 32 B) over do_bench's time reach 2.04-2.23 TB/s
    in the four l2_groupm_s14-s26c launches whose Nsight time (SM clock locked) is within 4% of
    do_bench's (docs/analysis.md, "The L2 fabric's far fills")."""
    if m.l2_fabric_bw is None:
        return None
    return positions * per_pos.l2_far / m.l2_fabric_bw


def describe_l2_fabric(per_pos: Demand, positions, m: Machine, fabric_ns, before_ns) -> str:
    """The breakdown's line of the L2 fabric's floor (l2_fabric_ns), with its values."""
    dram = positions * per_pos.dram
    far = positions * per_pos.l2_far
    return (f"the far L2 partition fills {formula_bytes(float(far))} of the "
            f"{formula_bytes(float(dram))} from DRAM ({format_percent(float(ratio(far, dram)) if dram else 0)}) "
            f"across the fabric: {formula_bytes(float(far))} / {format_bandwidth_per_ns(m.l2_fabric_bw)} = "
            f"{format_time_ns(float(fabric_ns))}, past the waves' and slices' {format_time_ns(float(before_ns))}")


def describe_l2_slices(per_pos: Demand, positions, m: Machine, slices_ns, waves_ns) -> str:
    """The breakdown's line of the L2 slices' floor (l2_slices_ns), with its values."""
    copied = positions * per_pos.global_loads
    merged = positions * per_pos.l2_merged
    total = positions * per_pos.l2_slices
    filled = positions * per_pos.dram - positions * (per_pos.l2 - per_pos.global_loads)
    stored = total - (copied - merged) - filled
    return (f"the L2 slices move {formula_bytes(float(copied))} of reads less "
            f"{formula_bytes(float(merged))} a TPC pair merges ({format_percent(float(ratio(merged, copied)) if copied else 0)}) "
            f"+ {formula_bytes(float(filled))} filled from DRAM + {formula_bytes(float(stored))} stored = "
            f"{formula_bytes(float(total))} / {format_bandwidth_per_ns(m.l2_slice_bw)} = "
            f"{format_time_ns(float(slices_ns))}, past the waves' {format_time_ns(float(waves_ns))}")


def _load_latency(body: Demand, m: Machine):
    """ns a trip's load waits: one L2 latency on a hit and one DRAM latency on a miss."""
    miss_ratio = _miss_share(body)
    return miss_ratio * m.dram_latency + (1 - miss_ratio) * m.l2_latency


def _serial_transfer_ns(d: Demand, m: Machine, active_units, miss):
    """ns one CTA's copies of a serial trip take after their latency: the first wave's at the
    slower of the SM's shares and its port, the drifted CTAs' at the DRAM share and the port
    (tfx.analysis.pipeline_depth.serial_copy_transfer_ns)."""
    return pipeline_depth.serial_copy_transfer_ns(m, d.global_loads, _transfer_ns(d, m, 1, active_units),
                                                  _transfer_ns(d, m, 1, active_units, l2_share=False),
                                                  miss.drifted)


def _transfer_terms(d: Demand, m: Machine, r, active_units, l2_share=True, dram_bw=None, draw=None,
                    l2_draw=None):
    """(DRAM ns, L2 ns or None) of r positions' traffic at the unit's shares: the two terms
    whose longer is ``_transfer_ns`` and whose longer names the copy bound (``_bound_name``).
    L2 is None where the profile states no L2 rate or ``l2_share`` is False; ``dram_bw``: the
    DRAM rate a unit gets, where not its share; ``draw``: the CTAs an SM drawing DRAM on average
    where the device shares it among CTAs, not SMs (a decode tail wave:
    memory_parallelism.cta_share_weight; None: the SMs' even shares)."""
    if dram_bw is None:
        # the profile's rate a unit, else the active units' share, at most one SM's own DRAM
        # rate (tfx.analysis.memory_parallelism)
        dram_bw = m.dram_per_unit if m.dram_per_unit is not None else memory_parallelism.sm_dram_share(
            m, active_units, memory_parallelism.cta_share_weight(r, draw))
    dram = r * emax(d.dram, d.dram_lines) / dram_bw
    if m.l2_bw_device is None or not l2_share:
        return dram, None
    # ``l2_draw``: the CTAs an SM drawing L2 on average where the L2 serves the CTAs, not the
    # SMs (a launch of one wave or less, _loop_time): the busiest SM's r CTAs draw r / l2_draw
    # even SM shares (memory_parallelism.cta_share_weight)
    l2_bw = m.l2_bw_device / active_units
    if l2_draw is not None:
        weight = memory_parallelism.cta_share_weight(r, l2_draw)
        l2_bw = l2_bw * weight if is_array(weight) or weight != 1 else l2_bw
    return dram, r * d.l2 / l2_bw


def _transfer_ns(d: Demand, m: Machine, r, active_units, l2_share=True, dram_bw=None, draw=None, l2_draw=None):
    """ns the unit's share of DRAM (and L2, unless ``l2_share`` is False) bandwidth needs for
    r positions' traffic; ``dram_bw``: the DRAM rate a unit gets, where not its share; ``draw``:
    as ``_transfer_terms``."""
    dram, l2 = _transfer_terms(d, m, r, active_units, l2_share, dram_bw, draw, l2_draw)
    return dram if l2 is None else emax(dram, l2)


def _own_transfer_ns(d: Demand, m: Machine, active_units):
    """ns one trip's bytes take at the rates one SM gets while its tile is in flight: its DRAM
    bytes at the SM's own DRAM rate (memory_parallelism.own_dram_rate: the ceiling, not the
    device's share) and its L2 bytes at its share of the L2, as ``_transfer_ns`` counts them
    (whole-line bytes, one position); the transfer of the loaded DRAM round trip's idle floor."""
    own = None if m.dram_per_unit is not None else memory_parallelism.own_dram_rate(m, active_units)
    return _transfer_ns(d, m, 1, active_units, dram_bw=own)


def _walk_transfer(d: Demand, m: Machine, active_units, miss):
    """A persistent walk's ``_own_transfer_ns``, its first round's tiles in lock step at it and
    the tiles after it (``miss.walk_drifted``), whose CTAs' trips have drifted apart, with their
    L2 bytes at the SM's port (tfx.analysis.pipeline_depth.walk_transfer)."""
    own = None if m.dram_per_unit is not None else memory_parallelism.own_dram_rate(m, active_units)
    return pipeline_depth.walk_transfer(
        m, d.global_loads, _own_transfer_ns(d, m, active_units),
        _transfer_ns(d, m, 1, active_units, l2_share=False, dram_bw=own), miss.walk_drifted, miss.walk_rounds)


def engine_ns(d: Demand, m: Machine, r, active_units, warps=None, draw=None, read_only=False,
              l2_draw=None) -> dict:
    """ns each engine of one unit needs for r concurrent positions each demanding d.

    The copy engine takes the longer of the transfer and its DMA channels' occupancy:
    every descriptor holds a channel for its transfer, plus the memory round trip when
    ``dma.hold_channel_for_round_trip``, ``dma.channels`` at a time. Given the positions'
    ``warps``, a warp mma (``d.warp_tensor`` per warp) takes the busiest
    sub-partition's warps, ceil(r x warps / sub-partitions), not their average. ``draw``: as
    ``_transfer_terms`` (None: the SMs' even DRAM shares). ``read_only``: the positions' DRAM
    bytes are a read-only stream (a decode trip's K and V), at the device's read-only rate
    (tfx.analysis.memory_parallelism.read_stream_share), not the copy's."""
    dram_bw = None
    if read_only and m.dram_per_unit is None:
        dram_bw = memory_parallelism.read_stream_share(m, active_units, memory_parallelism.cta_share_weight(r, draw))
    copy = _transfer_ns(d, m, r, active_units, dram_bw=dram_bw, draw=draw, l2_draw=l2_draw)
    if m.dma_channels and m.dma_hold:
        held = r * d.descriptors * m.dram_latency
        copy = emax(copy, (copy + held) / m.dma_channels) if is_array(held) or held else copy
    tensor = r * d.tensor
    if warps is not None and m.warp_mma is not None and (is_array(d.warp_tensor) or d.warp_tensor):
        sub = m.warp_mma.subpartitions
        busiest = mma_layout.busiest_subpartition_warps(warps, r, sub)
        tensor = tensor + (busiest - ratio(r * warps, sub)) * d.warp_tensor
    return {"copy": copy, "tensor": tensor, "smem": r * d.smem, "vector": r * d.vector,
            "special": r * d.special, "dispatch": r * d.dispatch, "spill": r * d.spill,
            "link": r * emax(d.link, d.link_in)}


def _max_engine(e: dict):
    out = 0
    for v in e.values():
        out = emax(out, v)
    return out


def _scope_time(node: ScopeNode, counter, m: Machine, miss, warps, r, active_units, positions,
                in_composite=False, draw=None):
    """(ns for r concurrent positions to run ``node``'s body once per position, engine ns).

    ``in_composite``: ``node`` lies inside a ``composite`` block, whose one command replaces
    the single-op dispatches of everything inside it (see ``_composite_dispatch``). ``draw``:
    CTAs a SM whose loads draw DRAM together with these (``_loop_time``; None: r).
    """
    total = 0
    engines = {e: 0 for e in ENGINES}
    for c in node.children:
        if c.kind in ("op", "capture"):
            if not c.per_exec:
                continue
            d = op_demand(c, counter, m, miss, warps)
            if in_composite:
                d = dataclasses.replace(d, dispatch=0)      # op_demand's is shared: a copy
            e = engine_ns(d, m, r, active_units, warps)
            t = _max_engine(e)
            # A load's latency overlaps the other resident positions' transfers (and the next
            # wave's): the op takes the longer of its transfer and one latency. The first
            # latency of the launch is paid once, in the launch's fill term.
            if not is_array(d.global_loads):
                if d.global_loads:
                    t = emax(t, m.dram_latency)
            else:
                t = where(d.global_loads > 0, emax(t, m.dram_latency), t)
            # A transfer between positions lands one link latency after it leaves.
            t = t + d.link_latency
            k = ratio(c.execs, node.execs) if not is_array(c.execs, node.execs) else c.execs / node.execs
            total = total + t * k
            for name, v in e.items():
                engines[name] = engines[name] + v * k
        elif c.kind == "loop":
            t, e = _loop_time(c, counter, m, miss, warps, r, active_units, in_composite, draw)
            # ratio, not "/": a loop that runs no trip at some parameter point (flash_prefill's
            # stage 1 at S < BLOCK_M) has 0 executions over 0 trips and adds 0, not NaN
            # (a loop with no trip anywhere takes t = 0; its k would divide by 0 trips)
            no_trip = not is_array(c.trips, node.execs) and c.trips * node.execs == 0
            k = 0 if no_trip else ratio(c.execs, node.execs * c.trips)
            total = total + t * k
            if miss.loop_ns is not None:
                miss.loop_ns[c.id] = t * k
            for name, v in e.items():
                engines[name] = engines[name] + v * k
        else:  # nested mesh (warps/threads), composite, call: their ops run in this scope's order
            inner = in_composite or (c.kind == "composite" and _composite_dispatch(m) is not None)
            t, e = _scope_time(c, counter, m, miss, warps, r, active_units, positions, inner, draw)
            if c.kind == "composite" and inner and not in_composite:
                # ONE command for the whole block, loops inside included: its dispatch is one
                # more engine demand, overlapping like an op's.
                cost = _composite_dispatch(m) * r
                e["dispatch"] = e["dispatch"] + cost
                t = emax(t, cost)
            k = ratio(c.execs, node.execs) if not is_array(c.execs, node.execs) else c.execs / node.execs
            if c.kind == "mesh":
                k = 1  # positions of an inner mesh run concurrently inside one unit
            total = total + t * k
            for name, v in e.items():
                engines[name] = engines[name] + v * k
    return total, engines


def _composite_dispatch(m: Machine):
    """ns to dispatch one composite command, or None where single-op dispatch is not modelled."""
    if m.dispatch_single is None or m.dispatch_composite is None:
        return None
    return m.dispatch_composite / m.clock_ghz


def _per(a, b):
    """a / b for execution counts, scalar or array (0 where b is 0)."""
    if is_array(a, b):
        return a / emax(b, 1)
    return ratio(a, b) if b else 0


def _composite_dispatch_delta(node: ScopeNode, ref_execs, m: Machine, inside=False):
    """Dispatch ns to add per execution of a node with ``ref_execs`` executions for the
    composites in ``node``'s subtree: each outermost one pays ``dispatch.composite`` once per
    execution, and every op inside it (each of its executions there, loops included) loses
    its single-op dispatch. ``inside``: ``node`` itself lies in a composite (no cost here)."""
    comp = _composite_dispatch(m)
    if comp is None:
        return 0
    single = m.dispatch_single / m.clock_ghz
    delta = 0
    stack = [(node, inside)]
    while stack:
        x, ins = stack.pop()
        if x.kind == "composite" and not ins:
            delta = delta + comp * _per(x.execs, ref_execs)
            ins = True
        elif ins and x.kind == "op" and x.per_exec and x.op is not None and x.op.opcode not in VIEWS:
            delta = delta - single * _per(x.execs, ref_execs)
        stack.extend((ch, ins) for ch in x.children)
    return delta


def _trip_chain(loop: ScopeNode, counter, m: Machine, miss, warps, active_units, in_composite):
    """(ns of one trip's carried chain, commands that wait on a producer, the chain's engine ns,
    the dispatch cycles of each of the chain's commands that waits a completion latency and its
    dispatch) of a loop on a command processor.

    The chain is the ops that depend, directly or through other ops, on a carried value:
    trip j+1's chain starts only when trip j's has finished, so no pipelining beats it (the
    loop's recurrence bound). Outside a composite every command of the chain is dispatched
    only ``dispatch.completion_latency`` after its producer finishes; inside one the
    scheduler chains tiles in the engine. The waiting commands are those that read the
    result of the command dispatched just before them (the previous trip's last one for
    the first): in order, that one cannot have finished yet (an older producer mostly has).
    A composite in the body is one command made of its ops.
    """
    late = set(getattr(loop.region, "carry", ()) or ())
    outside = not in_composite

    def counted(x):               # an op that executes (views count nothing but alias a value)
        return x.kind == "op" and x.op is not None and (x.per_exec or x.op.opcode in VIEWS)

    def ops_of(node):
        return [x for x in node.walk() if counted(x)]

    commands = []                 # (its ops, dispatch cycles) per command, in issue order
    for c in loop.children:
        if counted(c):
            commands.append(([c], m.dispatch_single))
        elif c.kind == "composite":
            commands.append((ops_of(c), m.dispatch_composite or m.dispatch_single))
    chain = work = 0
    waiting = 0
    dispatched: list = []         # the dispatch cycles of each chain command that waits (single or composite)
    previous: set = set()         # the last command's results and their views
    for trip in (0, 1):           # the second trip counts (the first sets `previous`)
        for ops, dispatch in commands:
            if len(ops) == 1 and ops[0].op.opcode in VIEWS:
                op = ops[0].op
                reads = op.value_reads()
                if op.result and any(n in late for n in reads):
                    late.add(op.result)
                if op.result and any(n in previous for n in reads):
                    previous.add(op.result)
                continue
            made: set = set()
            waits = False
            cmd_late = False
            for x in ops:
                op = x.op
                reads = op.value_reads()
                if any(n in previous and n not in made for n in reads):
                    waits = True
                if any(n in late for n in reads):
                    if op.result:
                        late.add(op.result)
                    if trip and op.opcode not in VIEWS:
                        cmd_late = True
                        one = engine_ns(op_demand(x, counter, m, miss, warps), m, 1, active_units, warps)
                        one.pop("dispatch", None)
                        work = work + _max_engine(one)
                if op.result:
                    made.add(op.result)
            if trip:
                waiting += waits
                if cmd_late and outside:
                    dispatched.append(dispatch)
            previous = made
    chain = work + sum(m.completion_ns + d / m.clock_ghz for d in dispatched)
    return chain, waiting, work, dispatched


def _describe_command_chain(loop: ScopeNode, m: Machine, chain, work, dispatched: list, tensor, trips) -> str:
    """The breakdown's line for a command processor's carried chain (``_trip_chain``): its work,
    each of its commands' completion latency and dispatch (a single op's or a composite's),
    against the tensor engine's trip."""
    fmt = lambda x: format_time_ns(float(x))
    n = len(dispatched)
    cmds = "its command" if n == 1 else f"each of its {n} commands"
    kinds = {d: dispatched.count(d) for d in dict.fromkeys(dispatched)}
    fact = lambda d: "dispatch.single_op" if d == m.dispatch_single else "dispatch.composite"
    trip = float(chain) + float(m.iteration_ns)
    sets = ("the chain sets the trip" if trip > tensor else "the engine's work sets the trip")
    return (f"loop at line {loop.line}: each trip's carried chain (the ops that read what the last trip "
            f"wrote) runs {fmt(work)} of work, then {cmds} waits for the in-order command processor to "
            f"see its producer finish, {format_count(float(m.completion_ns) * m.clock_ghz)} cycles "
            f"(dispatch.completion_latency), and its own dispatch, "
            + " or ".join(f"{format_count(d)} ({fact(d)})" for d in kinds) + f": {fmt(work)}"
            + "".join(f" + {k} x {fmt(m.completion_ns + d / m.clock_ghz)}" for d, k in kinds.items())
            + (f" + {fmt(m.iteration_ns)} of bookkeeping" if m.iteration_ns else "")
            + f" = {fmt(trip)} a trip against the tensor engine's {fmt(tensor)}: {sets} "
            f"(each of the loop's {format_count(trips)} trips; included in the waves above)")


class _Command(NamedTuple):
    """One command of a trip, as the in-order recurrence sees it."""

    reads: list                   # values it reads (views resolved to what they alias)
    writes: list                  # values it writes
    fills_buffer: bool            # a load: it overwrites the buffer its readers read
    engine: str                   # what it occupies: copy, link, link_in, tensor, ..., composite
    busy: Any                     # ns it occupies that engine
    duration: Any                 # ns from its start to its result (on-chip port included)
    latency: Any                  # ns more before a transfer's data lands
    dispatch: Any                 # ns the processor spends issuing it


def _op_command(c: ScopeNode, reads, counter, m: Machine, miss, warps, active_units) -> _Command:
    op = c.op
    d = op_demand(c, counter, m, miss, warps)
    one = engine_ns(d, m, 1, active_units, warps)
    units = {k[2] if k[2] != "tensor" else mma_engine(m.profile, k[1])
             for k in c.per_exec if k[0] == "flops"}
    if op.opcode in ("load", "store", "copy"):
        engine, busy, lat = "copy", _transfer_ns(d, m, 1, active_units), m.dram_latency
    elif op.opcode in ("send", "recv", "allreduce"):
        engine = "link_in" if op.opcode == "recv" else "link"
        busy, lat = one["link"], d.link_latency
    else:
        engine = "tensor" if "tensor" in units else "special" if units == {"special"} else "vector"
        busy, lat = one["tensor"] + one["vector"] + one["special"], 0
    return _Command(reads, [op.result] if op.result else [], op.opcode in ("load", "copy") and bool(op.result),
                    engine, busy, emax(busy, one["smem"]), lat, m.dispatch_single / m.clock_ghz)


def _composite_command(c: ScopeNode, root_of: dict, counter, m: Machine, miss, warps, active_units) -> _Command:
    """A composite as one command: its scheduler streams its ops in n sub-tiles of the tensor
    instruction's height (as the simulator does), so it takes the longer of its transfers and
    its compute, one sub-tile of the shorter, and one memory latency when it loads."""
    reads, writes, compute, copy, loads, rows = [], [], 0, 0, False, 1
    for x in c.walk():
        if x.kind != "op" or x.op is None:
            continue
        xr = [root_of.get(n, n) for n in x.op.value_reads()]
        if x.op.opcode in VIEWS:
            if x.op.result and xr:
                root_of[x.op.result] = xr[0]
            continue
        if not x.per_exec:
            continue
        reads.extend(n for n in xr if n not in writes)
        if x.op.result:
            writes.append(x.op.result)
        ty = counter.info.result_types.get(id(x.op)) if counter is not None else None
        if ty is not None and ty.shape:
            try:
                rows = emax(rows, ty.shape[0].evaluate(counter.env))
            except TfxError:          # an extent that depends on an index: no sub-tiling from it
                pass
        one = engine_ns(op_demand(x, counter, m, miss, warps), m, 1, active_units, warps)
        if x.op.opcode in ("load", "store", "copy"):
            copy = copy + one["copy"]
            loads = True
        else:
            compute = compute + emax(one["tensor"] + one["vector"] + one["special"], one["smem"])
    n = emin(emax(cdiv(rows, m.inst[0] or 1), 1), 64)
    dur = emax(compute, copy) + emin(compute, copy) / n + (m.dram_latency if loads else 0)
    return _Command(reads, writes, False, "composite", dur, dur, 0,
                    (m.dispatch_composite or m.dispatch_single) / m.clock_ghz)


def _in_order_trips(loop: ScopeNode, counter, m: Machine, miss, warps, active_units):
    """(period, span of one trip) of a serial loop on an in-order command processor, or None
    when the body holds anything but ops and loop-free composites.

    The command processor issues the body's commands in order, one dispatch each; a command
    that reads a value (through views), overwrites a loaded buffer still being read, or
    rewrites a value still being written waits for that command to finish and
    ``dispatch.completion_latency`` more; it then starts once its engine is free (loads and
    stores share the DMA and the DRAM transfer, send and recv the link's two directions) and
    finishes after its time there, plus the memory or link latency for transfers. A
    composite is one command (``_composite_command``). Three trips of that recurrence: the
    period is the third trip's first dispatch less the second's, the span the first trip's
    length. Arithmetic over the loop's ops only (arrays of parameter values too).
    """
    kids = [c for c in loop.children if not (c.kind == "op" and c.op is None)]
    if any(c.kind not in ("op", "capture", "composite") for c in kids):
        return None
    if any(x.kind in ("loop", "mesh", "call") for c in kids if c.kind == "composite" for x in c.walk()):
        return None
    root_of: dict = {}            # a view's value -> the value it aliases
    cmds: list[_Command] = []
    for c in kids:
        if c.kind == "composite":
            cmds.append(_composite_command(c, root_of, counter, m, miss, warps, active_units))
        elif c.kind == "op" and c.op is not None:
            reads = [root_of.get(n, n) for n in c.op.value_reads()]
            if c.op.opcode in VIEWS:
                if c.op.result and reads:
                    root_of[c.op.result] = reads[0]
            elif c.per_exec:
                cmds.append(_op_command(c, reads, counter, m, miss, warps, active_units))
    if not cmds:
        return None
    rt = m.completion_ns
    free: dict = {}               # engine -> when it is free
    writer: dict = {}             # value -> finish of its last writer
    readers: dict = {}            # value -> finishes of the commands that read it since
    first, last_end = [], []
    t = 0                         # when the dispatcher is free
    for _ in range(3):
        end = 0
        for i, cmd in enumerate(cmds):
            waits = [writer[n] for n in cmd.reads if n in writer]
            for n in cmd.writes:
                waits.extend(readers.get(n, ()) if cmd.fills_buffer else [writer[n]] if n in writer else [])
            ready = t
            for f in waits:
                ready = emax(ready, f + rt)
            if i == 0:
                first.append(ready)
            t = ready + cmd.dispatch
            start = emax(t, free.get(cmd.engine, 0))
            free[cmd.engine] = start + cmd.busy
            finish = start + cmd.duration + cmd.latency
            for n in cmd.reads:
                readers.setdefault(n, []).append(finish)
            for n in cmd.writes:
                writer[n] = finish
                readers[n] = []
            end = emax(end, finish)
        last_end.append(end)
    return first[2] - first[1], last_end[0] - first[0]


def _trip_share(c, loop):
    """Executions of op ``c`` per execution of ``loop``: its count in one trip (arrays
    elementwise, where a loop no position runs counts as one execution)."""
    return ratio(c.execs, loop.execs) if not is_array(c.execs, loop.execs) else c.execs / emax(loop.execs, 1)


def _trip_copies(loop: ScopeNode, counter, m: Machine, miss, warps):
    """One CTA's copies in a trip of ``loop`` by width and row length
    (tfx.analysis.load_trip.trip_copies), over its global loads; once a launch (the load floor,
    the warp-mma trip and the unpipelined one all read them, for every batch)."""
    return _once_a_launch(miss, ("copies", loop.id), lambda: _count_trip_copies(loop, counter, m, miss, warps))


def _count_trip_copies(loop: ScopeNode, counter, m: Machine, miss, warps):
    total = load_trip.TripCopies()
    if counter is None:
        return total
    for c in loop.load_ops():
        if not c.per_exec:
            continue
        windows = [o for o in c.op.operands if isinstance(o, Window) and o.tensor in counter.tensor_types]
        if len(windows) != 1:
            continue
        per_exec = op_demand(c, counter, m, miss, warps).global_loads
        tile = per_exec * _trip_share(c, loop)
        elem = counter.tensor_types[windows[0].tensor].dtype.bits / 8
        dims = counter.tensor_dims.get(windows[0].tensor)
        # the tile's contiguous rows: its bytes over its runs (short rows cost a copy each)
        row = per_exec / contiguous_runs(windows[0], dims, counter.env) if dims is not None else None
        total = total + load_trip.trip_copies(tile, 32 * warps, elem, row)
    return total


def _load_rounds(loop: ScopeNode, m: Machine, warps):
    """The dependent load rounds of an unpipelined trip of ``loop`` (tfx.analysis.load_rounds):
    the compiled table's for the loop's dot under a code generator whose threads copy the tiles
    (Triton), else 1."""
    key = _censused_key(loop, m)
    return 1 if key is None else load_rounds.rounds(*key, warps)


def _unpipelined_cycle(n_rounds, m: Machine, first, loaded_bytes, fetch, dram_bytes, r, active_units, compute,
                       facts, dram_facts, dram_base=None, dram_slope=None):
    """One CTA's unpipelined GEMM trip: its load rounds at the pointer chase's DRAM latency where
    the profile states it (tfx.analysis.load_rounds), else one loaded round trip
    (tfx.analysis.pipeline_depth.unpipelined_cycle_ns). ``dram_base``, ``dram_slope``: the loaded
    line's, where a sweep varies them (a weight stream's share: load_trip.stream_facts)."""
    if dram_base is not None:
        dram_facts = dram_facts._replace(base_ns=dram_base, slope_ns_per_byte_ns=dram_slope)
    return load_rounds.cycle_ns(n_rounds, m.l2_latency, first, loaded_bytes, fetch, dram_bytes, r, active_units,
                                compute, facts, dram_facts, load_rounds.facts(m))


# _unpipelined_cycle's inputs that a sweep may vary (the rest, the machine and the facts, are one)
_CYCLE_ELEMENTWISE = ("n_rounds", "first", "loaded_bytes", "fetch", "dram_bytes", "r", "active_units", "compute",
                      "dram_base", "dram_slope")


def _unpipelined_cycle_where(one_stage, args):
    """``_unpipelined_cycle(**args())`` where ``one_stage`` holds, the only configurations whose
    round it prices (``_loop_time`` takes the pipelined round elsewhere): None where it holds
    nowhere; for a sweep, the cycle solved on those configurations alone (``_solve_where``) and 0
    at the others. ``args`` returns its arguments by name; its pieces are elementwise
    (load_rounds.cycle_ns' bisection too) in the inputs of ``_CYCLE_ELEMENTWISE``."""
    if not is_array(one_stage):
        return _unpipelined_cycle(**args()) if one_stage else None
    import numpy as np
    if not np.any(one_stage):
        return None
    kw = args()
    return _solve_where(one_stage, {k: kw[k] for k in _CYCLE_ELEMENTWISE},
                        lambda picked: _unpipelined_cycle(**{**kw, **picked}))


def _solve_where(pick, inputs: dict, solve):
    """``solve(inputs)`` for a sweep, worked out where ``pick`` holds alone and 0 elsewhere: its
    one-stage configurations, where a solver that iterates (a bisection, a mean value analysis)
    would cost explore much of its sweep over the whole broadcast grid. ``solve`` is elementwise
    in ``inputs`` (scalars or arrays that broadcast together), so each configuration gets the
    float it gets over the whole sweep. Where ``pick`` varies along one axis of the grid (STAGES'),
    each input takes that axis' picked slice and keeps its other broadcast axes; else every input
    is broadcast to the grid and masked."""
    import numpy as np
    arrays = {k: np.asarray(v) if is_array(v) else v for k, v in inputs.items()}
    pick = np.asarray(pick)
    shape = np.broadcast(pick, *(v for v in arrays.values() if is_array(v))).shape
    pad = lambda v: v.reshape((1,) * (len(shape) - v.ndim) + v.shape)   # noqa: E731
    pick = pad(pick)
    axes = [i for i, n in enumerate(pick.shape) if n > 1]
    out = np.zeros(shape)
    if not pick.any():
        return out
    if len(axes) == 1:
        # the picked slice of the one axis the pick varies along
        axis = axes[0]
        index = np.flatnonzero(pick.reshape(-1))
        picked = {k: np.take(pad(v), index, axis=axis) if is_array(v) and pad(v).shape[axis] > 1 else v
                  for k, v in arrays.items()}
        at = tuple(index if i == axis else slice(None) for i in range(len(shape)))
    else:
        at = np.broadcast_to(pick, shape)
        picked = {k: np.broadcast_to(v, shape)[at] if is_array(v) else v for k, v in arrays.items()}
    out[at] = solve(picked)
    return out


def _first_reader(loop: ScopeNode, miss, lockstep=True):
    """The chance an unpipelined trip waits DRAM's latency: that it first reads one of its tiles
    (memory_parallelism.first_reader_share over its global loads' miss ratios), or, for the
    first wave's CTAs, which start together, that a co-reader's request of the same tile is
    pending (tfx.analysis.load_rounds.lockstep_share)."""
    loads = [c for c in loop.load_ops() if c.per_exec]
    first = memory_parallelism.first_reader_share([miss.get(c.id, 1) for c in loads])
    return load_rounds.lockstep_share(first, miss.drifted) if lockstep else first


def _compute_one(body: Demand, m: Machine, active_units, warps):
    """One CTA's ns a trip on every engine but the copy (what follows its loads in series). The
    mma's operand reads at the shared-memory port (``body.operand_reads``) overlap its tensor
    work (each warp's ldmatrix of the next k-step under the mma of this one; a wgmma reads its
    operands as it runs), so those two count as max(tensor, reads); the port's other work (the
    copies' writes) stays in series."""
    e = engine_ns(body, m, 1, active_units, warps)
    return sum(v for k, v in e.items() if k != "copy") - emin(e["tensor"], body.operand_reads)


def _trip_body(loop: ScopeNode, counter, m: Machine, miss, warps) -> Demand:
    """One trip's demand: each op of the loop's body at its executions per trip."""
    body = Demand()
    for c in loop.walk():
        if c is not loop and c.kind in ("op", "capture") and c.per_exec:
            body.add(op_demand(c, counter, m, miss, warps), _trip_share(c, loop))
    return body


def _loop_body(loop: ScopeNode, counter, m: Machine, miss, warps, in_composite) -> Demand:
    """One trip's demand as ``_loop_time`` prices it: the body's ops (``_trip_body``), its
    composites one command each (``_composite_dispatch_delta``) and a spilled mma state's
    local traffic."""
    body = _trip_body(loop, counter, m, miss, warps)
    body.dispatch = body.dispatch + _composite_dispatch_delta(loop, loop.execs, m, in_composite)
    frac, local_rate, _, _ = miss.spill
    if frac is not None and any(loop.mma_ops()):
        # Values the compiler evicted across a k-loop are its mma state: every trip reloads
        # and re-stores all of them, whatever share of one op's bytes that is, priced where they
        # live (local_memory): from L1 at its rate where the resident CTAs' frames fit what the
        # shared-memory carve-out leaves, else from L2 (DRAM when the machine's spilled bytes
        # exceed L2) at the rate the SMs' own local loads and stores reach it.
        # On the warp mma a spilled accumulator is touched at every k-step of the trip
        # (tfx.analysis.spill_traffic). That count replaces the body ops' per-op share: the
        # SASS loads every spilled word once a trip (calibration/h200/measured/spill_sass),
        # not a share of each op's operands.
        # A serial attention trip whose warpgroup mmas fit the registers touches none of them
        # (tfx.analysis.spill_traffic: the compile spills what the trip does not read).
        body.spill = _spill_trip(loop, m, miss, warps).bytes_per_trip / local_rate
    return body


def _once_a_launch(miss, key, make):
    """``make()``, worked out once a launch (``miss.loop_parts[key]``): what pricing a loop
    reads that no batch changes (its trip's demand, one CTA's compute and dependent path), where
    the full wave, the tail and the drift's lone CTA price the same loops. ``key`` names the
    part and the loop, and the CTAs an SM where the part depends on them."""
    kept = miss.loop_parts
    if key not in kept:
        kept[key] = make()
    return kept[key]


def _trip_compute_ns(c, loop, counter, m: Machine, miss, warps, active_units, resident=1):
    """One CTA's tensor + vector + special-function ns of op ``c`` in one trip of ``loop``:
    alone, or its share of a round of ``resident`` CTAs (a warp mma's busiest sub-partition)."""
    one = engine_ns(op_demand(c, counter, m, miss, warps), m, resident, active_units, warps)
    return ratio(one["tensor"] + one["vector"] + one["special"], resident) * _trip_share(c, loop)


def _weight_stream_shares(loop, counter, m: Machine, miss, warps, body: Demand):
    """(private, stream): the shares of a k-loop trip's DRAM bytes (``body.dram``) that its CTA
    alone reads, and of those the ones whose rows the neighbouring CTA's continue. A load is
    private where the launch reads its tensor less than twice over (its bytes a trip x its
    executions < 2 x the tensor's footprint): B of a GEMM with M <= BM, every weight byte read
    by one CTA; B of a larger M is read cdiv(M, BM) times. Its rows are continued unless the
    window's contiguous axis advances with the pipelined trip only (tfx.analysis.strided_runs:
    fp8's K-major BT, kloop's A). The stream share counts a co-read tile's bytes too in a launch
    of one wave (``LaunchMiss.one_wave``): its co-readers start together, so DRAM sees its rows
    once, continued by the neighbouring tiles, as a private stream's; unless they drift apart
    (GROUP_M = 1 co-readers on unrelated SMs in different rate classes, ``LaunchMiss.drift``:
    the later reader re-fetches, tfx.analysis.l2_reuse.drift_refetch) (docs/analysis.md, "Co-read
    B in a launch of one wave"). Both 0 where the trip reads no DRAM byte (docs/analysis.md, "A
    weight stream's round trip")."""
    private = stream = 0
    staged, other = strided_runs.index_names(counter.kernel)
    for c in loop.load_ops():
        if not c.per_exec:
            continue
        read = _read_window(c.op, counter)
        if read is None:
            continue
        w, dims, bits = read
        d = op_demand(c, counter, m, miss, warps)
        footprint = bits / 8
        for x in dims:
            footprint = footprint * x
        reads = d.global_loads * c.execs
        once = where(reads < 2 * footprint, 1.0, 0.0) if is_array(reads, footprint) else float(reads < 2 * footprint)
        dram = d.dram * _trip_share(c, loop)
        private = private + dram * once
        if not strided_runs.advances_with_trip_only(w, staged, other):
            stream = stream + dram * _stream_factor(once, _read_together(c, miss))
    if is_array(body.dram, private, stream):
        import numpy as np
        total = np.asarray(body.dram, dtype=float)
        safe = np.where(total > 0, total, 1)
        return (np.where(total > 0, np.asarray(private, dtype=float) / safe, 0.0),
                np.where(total > 0, np.asarray(stream, dtype=float) / safe, 0.0))
    if not body.dram:
        return 0, 0
    return min(ratio(private, body.dram), 1), min(ratio(stream, body.dram), 1)


def _read_together(c, miss):
    """Whether the co-readers of load ``c``'s tile read it together: a launch of one wave, unless
    ``c`` is a column tile whose co-reader pairs drift apart (``LaunchMiss.drift``: its share of
    pairs in different rate classes above 0). Arrays elementwise."""
    if miss.drift is None or c.id not in miss.drift.ops:
        return miss.one_wave
    apart = miss.drift.P
    if is_array(apart, miss.one_wave):
        return where(apart > 0, False, miss.one_wave)
    return miss.one_wave and not apart > 0


def _stream_factor(once, together):
    """1 where a load is read once or its co-readers read it together, else ``once`` (0): arrays
    elementwise."""
    if is_array(once, together):
        return where(together, 1.0, once)
    return 1.0 if together else once


def _loop_stream_shares(loop, counter, m: Machine, miss, warps, body: Demand):
    """``_weight_stream_shares`` of a loop's body, worked out once a launch: the one-wave DRAM
    share, the loaded line (load_trip.stream_facts) and the write-back all read it."""
    return _once_a_launch(miss, ("weight stream", loop.id),
                          lambda: _weight_stream_shares(loop, counter, m, miss, warps, body))


def _transposed_trip(loop, counter, m: Machine, miss, warps, r, active_units, trip_facts, one):
    """One CTA's serial trip of a k-loop with a register-transposed operand
    (tfx.analysis.transpose_trip): each load's loaded round trip with one tile in flight, the
    transposed operand's byte stores and one CTA's mma."""
    dram_trip = load_trip.dram_facts(m)
    l2_only = miss.l2_only.get(loop.id, 0)

    def round_trip_ns(c):
        d = Demand()
        d.add(op_demand(c, counter, m, miss, warps), _trip_share(c, loop))
        fetch = _own_transfer_ns(d, m, active_units) if dram_trip is not None else _transfer_ns(d, m, 1, active_units)
        if dram_trip is None:
            return load_trip.round_trip_ns(_load_latency(d, m), d.global_loads, fetch, trip_facts)
        return load_trip.loaded_round_trip_ns(
            m.l2_latency, memory_parallelism.trip_miss(d.dram, d.l2, l2_only), d.global_loads, fetch, _queue_bytes(d),
            r, active_units, 2, trip_facts, dram_trip)
    stores = 0
    for c in loop.walk():
        if c.kind == "op" and c.op is not None and c.op.opcode in opcat.MMA:
            for t in mma_layout.register_transposes(c, m.inst, getattr(c, "mma_bits", 16), warps):
                stores = stores + t.cycles / m.clock_ghz * _trip_share(c, loop)
    stages = loop.stages if loop.stages is not None else 1
    return transpose_trip.trip(loop, m.inst, warps, stages, round_trip_ns, stores, one["tensor"])


def _note_round_bound(miss, loop: ScopeNode, trips, round_ns, e, work=None) -> None:
    """Keep, for the launch's ``bound_by``, the first (the full batch's) pricing of a loop: its
    trips' ns and whether its round is longer than its busiest engine's work: ``work``, the
    engines' own before a chain's floor raised one of them (a serial trip's chain, the CTAs'
    queue at the sub-partitions: those set a round by latency, not by an engine's rate), else
    the engines as priced."""
    sink = miss.round_bounds       # None in a pricing the breakdown does not show (NOTE_SINKS)
    if sink is not None and loop.id not in sink:
        sink[loop.id] = (trips * round_ns, bool(round_ns > (_max_engine(e) if work is None else work) * (1 + 1e-9)))


def _note_write_back_slack(miss, loop: ScopeNode, round_ns, dram_round, stages, e) -> None:
    """Keep, for the launch's write-back (launch_handoff.unhidden_write_back), a pipelined loop's round, its DRAM
    side's round (the loaded DRAM round trip over the S - 1 tiles in flight, or the DRAM share the copy engine
    prices, whichever is longer) and the DRAM bytes its CTAs drawing read a round; in the pricings the breakdown
    shows (``round_bounds``), the last one of a batch. An unpipelined trip (S = 1) waits its DRAM round trip in
    series and hides none: its DRAM side is its round."""
    if dram_round is None or miss.round_bounds is None:
        return
    loaded, bytes_round = dram_round
    side = where(stages >= 2, emax(loaded / emax(stages - 1, 1), e["copy"]), round_ns)
    miss.write_back_slack[loop.id] = (round_ns, side, bytes_round)


def _note_outer_round_bound(miss, loop: ScopeNode, ns) -> None:
    """An outer loop (a persistent kernel's tile loop) for the launch's ``bound_by``: its trips'
    ns, and what sets the rounds of its longest inner loop (``_note_round_bound``)."""
    sink = miss.round_bounds
    if sink is None or loop.id in sink or is_array(ns):
        return
    inner = [sink[c.id] for c in loop.walk() if c is not loop and c.kind == "loop" and c.id in sink]
    if inner:
        sink[loop.id] = (ns, max(inner, key=lambda v: v[0])[1])


def _loop_time(loop: ScopeNode, counter, m: Machine, miss, warps, r, active_units, in_composite=False, draw=None):
    """ns of all trips of one execution of ``loop`` for r concurrent positions.

    Composites in the body are one command per execution (``dispatch.composite``) instead of
    their ops' single-op dispatches; inside a composite (``in_composite``) the body's ops
    dispatch nothing. ``draw``: CTAs a SM whose loads draw DRAM together with these
    (memory_parallelism.drawing_per_unit: a tail wave's are fewer than r a SM; the GROUP_M = 1
    drift's lone CTA queues behind its wave's b); None: r.
    """
    if not is_array(loop.execs) and loop.execs == 0:
        # no position runs it (its bounds meet everywhere, e.g. causal blocks below the
        # diagonal of a one-block sequence): it takes no time, and each per-trip ratio
        # below would divide by its 0 executions
        return 0, {}
    trips = loop.trips
    if any(c.kind == "loop" for c in loop.walk() if c is not loop):
        # An outer loop (a persistent kernel's tile loop): each trip runs its body in order,
        # the inner loops with their own pipelines.
        per_trip, engines = _scope_time(loop, counter, m, miss, warps, r, active_units, loop.execs,
                                        in_composite, draw)
        _note_outer_round_bound(miss, loop, trips * per_trip)
        return trips * per_trip, {k: v * trips for k, v in engines.items()}
    body = _once_a_launch(miss, ("body", loop.id), lambda: _loop_body(loop, counter, m, miss, warps, in_composite))
    spilled_state = miss.spill[0] is not None and any(loop.mma_ops())
    stages = loop.stages if loop.stages is not None else 1
    stages = if_else(stages == 0, 1, stages)
    # a warp-mma streaming trip (decode's KV loop; tfx.analysis.decode_trip.trip_chain, below)
    own_stream = None
    if (m.dispatch_single is None and m.kind == "gpu" and mma_path.trip_waits_for_mma(loop)
            and load_trip.streams(loop)):
        own_stream = _once_a_launch(miss, ("chain", loop.id), lambda: decode_trip.trip_chain(
            loop, m, warps, body.global_loads, decode_trip.chain_facts(m), stages))
    e = engine_ns(body, m, r, active_units, warps)
    # a launch of one wave or less: its CTAs start together and each keeps the same tiles in
    # flight through the same L2 round trip, so the L2 serves the CTAs drawing, not the SMs:
    # the busiest SM's r CTAs draw r / draw even SM shares of it (a tail of 224 CTAs on 132 SMs,
    # 2 on 92 of them, moves 224 CTAs' copies, not 2 x 132; calibration/h200/measured/l2_dirty_s23)
    l2_draw = None
    if (m.dispatch_single is None and m.kind == "gpu" and draw is not None
            and (is_array(miss.one_wave) or miss.one_wave)):
        l2_draw = draw
        dram_draw = None             # the SMs' even DRAM shares
        if own_stream is None and load_trip.applies(loop):
            # a GEMM k-loop of a launch of one wave or less: its CTAs start together and each keeps
            # the same tiles in flight through the same loaded round trip, so DRAM serves their
            # weight stream's bytes among the CTAs drawing, as a decode launch's (below), and the
            # bytes of tiles several CTAs co-read at the SMs' even share
            # (memory_parallelism.own_stream_draw: a share 0 draws the even share)
            private = _loop_stream_shares(loop, counter, m, miss, warps, body)[0]
            if is_array(private) or private:
                dram_draw = memory_parallelism.own_stream_draw(r, draw, private)
        drawn = engine_ns(body, m, r, active_units, warps, dram_draw, l2_draw=draw)["copy"]
        e["copy"] = where(miss.one_wave, drawn, e["copy"]) if is_array(miss.one_wave) else drawn
    if own_stream is not None:
        # a warp-mma streaming trip (decode's KV loop) reads K and V and stores nothing: its
        # bytes stream at DRAM's read-only rate (tfx.analysis.memory_parallelism.read_stream_share)
        # ... and DRAM serves the CTAs drawing, not the SMs, so a tail wave's busiest SM draws its
        # r CTAs' shares (tfx.analysis.memory_parallelism.cta_share_weight), at most the SM's own
        # ceiling: in a launch of one wave or less, whose CTAs start together, and in a tail after
        # full waves, whose CTAs stream at one rate wherever they sit once they run (Little's law:
        # each keeps S - 1 tiles in flight through the same loaded round trip; docs/analysis.md 8,
        # "a decode tail after full waves", session 29)
        read = engine_ns(body, m, r, active_units, warps, draw, read_only=True, l2_draw=l2_draw)["copy"]
        e["copy"] = where(own_stream.ns > 0, read, e["copy"]) if is_array(own_stream.ns, read) else read
        miss.read_streams[loop.id] = own_stream.ns > 0 if is_array(own_stream.ns) else True
        # ... at rates measured from a clean L2 (latency_read_s16, stream_depth_s16/s17's clean
        # rows): timed after do_bench's clear its launch pays the dirty lines' write-back
        miss.pays_write_back[loop.id] = miss.read_streams[loop.id]
    one = engine_ns(body, m, 1, active_units, warps)
    if spilled_state:
        # ... and the rest of the trip waits for it: the reloads feed the mma, its results are
        # stored (tfx.analysis.spill_traffic.in_series)
        trip = _spill_trip(loop, m, miss, warps)
        rest = emax(emax(e["tensor"], e["smem"]), e["copy"])
        series = miss.spill_series
        if series is not None and loop.id not in series and not is_array(r, rest, e["spill"]):
            series[loop.id] = (e["spill"], rest, r)
        spill_alone = e["spill"]
        # (none where the trip touches no spilled word: trip.untouched)
        e["spill"] = spill_traffic.in_series(e["spill"], e["tensor"], e["smem"], e["copy"]) * (1 - trip.untouched)
        chain = _spill_chain(loop, m, miss, warps, r, active_units)
        if chain is not None:
            # ... and a 32-register loop waits each reload's round trip in turn (tfx.analysis.spill_chain)
            e["spill"] = emax(e["spill"], chain.ns)
    else:
        spill_alone = None        # no spilled mma state in series with the trip
    # the CTAs per SM whose loads draw DRAM bandwidth (drawn_batch's; a tail wave's are fewer than r x SMs)
    r_draw = r if draw is None else draw
    serial_wait = 0
    stations = None               # a serial trip's station demands (GPU, tfx.analysis.chain_overlap)
    unpiped_wait = 0              # an unpipelined serial chain's load wait a round (GPU)
    unpiped_text = None           # ... an unpipelined streaming trip's, as decode_trip prices it (the breakdown)
    depth_delay = 0               # a 2-stage serial chain's exposed copy round trip (tfx.analysis.pipeline_depth)
    depth_trip = depth_async = chain_no_depth = 0
    engines_alone = None          # the engines' own work before any chain's floor (the round's bound, GPU)
    depth_split = None            # ... its first-wave and drifted parts (the breakdown)
    path_ns, path_steps, throughput_one, path_one = 0, (), 0, 0   # a serial trip's dependent path (GPU)
    trip_chain = None             # a warp-mma streaming trip's in-order chain (tfx.analysis.decode_trip)
    chain_round = 0               # ... and a round of its r co-resident CTAs
    # the tensor engine's round without the unpipelined load wait / the 2-stage depth delay (the
    # breakdown's notes; GPU): every other floor on e["tensor"] is folded into them too
    tensor_no_wait = tensor_no_depth = None
    if m.dispatch_single is not None:
        # A command processor: no trip beats the carried chain (with its completion
        # latencies outside a composite); a composite's scheduler streams the loop one trip
        # deep with double-buffered loads, so its engines overlap across trips; a serial
        # single-op trip waits one completion latency per command that waits on a producer.
        chain, waiting, chain_work, dispatched = _trip_chain(loop, counter, m, miss, warps, active_units, in_composite)
        command_notes = miss.command_notes
        if command_notes is not None and dispatched and not is_array(chain, e["tensor"]):
            command_notes.setdefault(loop.id, []).append(_describe_command_chain(
                loop, m, chain, chain_work, dispatched, float(e["tensor"]), trips))
        e["tensor"] = emax(e["tensor"], chain + m.iteration_ns)
        if in_composite:
            stages = emax(stages, 2) if is_array(stages) else max(stages, 2)
        else:
            serial_wait = waiting * m.completion_ns
    else:
        # One position's tensor, vector and special-function work depend on each other within
        # a trip (softmax waits for QK^T, PV waits for softmax): they serialize inside a CTA.
        # So a round lasts at least one position's sum; where a trip waits for its own mma,
        # the co-resident CTAs' chains share the tensor and SIMT stations in random order
        # (tfx.analysis.chain_overlap: a closed queue solved by mean value analysis).
        chain_one = one["tensor"] + one["vector"] + one["special"] + m.iteration_ns
        serial = m.kind == "gpu" and mma_path.trip_waits_for_mma(loop)
        # where one CTA's trip is short of work its dependent path at the measured
        # instruction latencies sets it (tfx.analysis.trip_latency); the resident CTAs'
        # paths overlap (one issues while another waits), their throughput does not
        throughput_one = chain_one
        # each of a CTA's warpgroups runs the path over its own rows: its share of each op
        # (tfx.analysis.mma_path.warpgroups)
        groups = mma_path.warpgroups(loop, m, warps)

        # one CTA's compute ns of op c a trip, once an op a launch: the trip's paths and chains
        # below read it again and again (no batch changes it: _trip_compute_ns of one CTA)
        trip_ns: dict[int, Any] = _once_a_launch(miss, ("compute", loop.id), dict)

        def compute_ns(c):
            v = trip_ns.get(id(c))
            if v is None:
                v = trip_ns[id(c)] = _trip_compute_ns(c, loop, counter, m, miss, warps, active_units)
            return v

        def group_compute_ns(c):
            return compute_ns(c) / groups
        # the trip's dependent path and its exposed latency, one walk (tfx.analysis.trip_latency)
        path_ns, path_steps, path_exposed, path_waited = _once_a_launch(
            miss, ("path", loop.id), lambda: trip_latency.walk(loop, m, warps, group_compute_ns))
        path_one = path_ns + m.iteration_ns
        if serial and load_trip.streams(loop):
            # a warp-mma streaming trip (decode's KV loop) is one in-order instruction stream a
            # warp issues (at least the compiled binary's schedule at its stage count), plus its
            # warps' shared-memory reads at the SM's port
            # (tfx.analysis.decode_trip.trip_chain; calibration/h200/measured/decode_sass)
            trip_chain = own_stream
            if trip_chain is not None:
                # not a lock-step round unless the one-stage pricing below says so (the tail packs)
                miss.runs_lockstep_round[loop.id] = False
                path_one = emax(path_one, trip_chain.ns)
                # r co-resident CTAs: each other CTA's shared-memory traffic passes the one port
                # (tfx.analysis.decode_trip.round_ns)
                chain_round = decode_trip.round_ns(trip_chain, r if is_array(r) or r else 1)
        if serial and (is_array(body.global_loads) or body.global_loads):
            # an unpipelined trip (STAGES = 1): the resident CTAs wait for their loads
            # together once a round, then run their chains (tfx.analysis.mma_path.unpipelined_wait)
            unpiped_lat = _load_latency(body, m)
            unpiped_fetch = _serial_transfer_ns(body, m, active_units, miss)
            # the copies' round trip: the issue and wait chain, the latency, the bytes at the
            # slower of the SM's port and its share (tfx.analysis.pipeline_depth.round_trip_ns)
            unpiped_trip = pipeline_depth.round_trip_ns(m, unpiped_lat, body.global_loads, unpiped_fetch)
            stream = _streaming_facts(loop, m)
            if stream is not None:
                # the resident CTAs' loads in flight together at the loaded DRAM round trip,
                # issued at the end of their chains (tfx.analysis.load_trip.streaming_round_trip_ns)
                # Little's law over the whole round: where the chain is known (a warp-mma
                # streaming trip, tfx.analysis.decode_trip) the CTAs draw their bytes once per
                # chain + round trip, not once per round trip
                unpiped_trip = emax(unpiped_trip, load_trip.streaming_round_trip_ns(
                    chain_round, m.l2_latency, _miss_share(body), body.global_loads, unpiped_fetch, body.dram,
                    r_draw, active_units, 1, *stream) - chain_round)
            unpiped_wait = mma_path.unpipelined_wait(stages, unpiped_trip, 0)
        if serial:
            def smem_ns(c):       # one CTA's shared-memory port ns of op c a trip
                return op_demand(c, counter, m, miss, warps).smem * _trip_share(c, loop)
            def turn_ns(c):       # one CTA's turn on the tensor cores among the r resident
                return _trip_compute_ns(c, loop, counter, m, miss, warps, active_units, r if is_array(r) or r else 1)
            # each CTA's turn on the tensor cores is its share of the round's: a warp mma's CTAs
            # run on their own sub-partitions, the busiest of which sets the round (r CTAs of
            # one or two warps share them, tfx.analysis.mma_layout.warp_mma), so a CTA's turn is
            # not all its time alone; a warpgroup mma's share is its time alone
            tensor_turn = ratio(e["tensor"], r) if is_array(r) or r else one["tensor"]
            def simt_ns(c):       # one CTA's vector + special-function ns of op c a trip
                alone = engine_ns(op_demand(c, counter, m, miss, warps), m, 1, active_units, warps)
                return (alone["vector"] + alone["special"]) * _trip_share(c, loop)
            def make_stations():
                return chain_overlap.stations(loop, m, warps, {**one, "tensor": tensor_turn}, turn_ns,
                                              path_exposed, smem_ns, simt_ns, r if is_array(r) or r else 1)
            # (a batch of other CTAs an SM, or a sweep's, has its own)
            stations = make_stations() if is_array(r) else _once_a_launch(miss, ("stations", loop.id, r), make_stations)
            if is_array(body.global_loads) or body.global_loads:
                # at 2 stages the copies' round trip, less the mmas left running, is a delay of
                # each CTA's chain that the other CTAs' chains fill (tfx.analysis.pipeline_depth)
                depth_trip = pipeline_depth.round_trip_ns(m, _load_latency(body, m), body.global_loads,
                                                          _serial_transfer_ns(body, m, active_units, miss))
                depth_async = _once_a_launch(miss, ("async", loop.id),
                                             lambda: pipeline_depth.async_mma_ns(loop, m, warps, compute_ns))
                depth_delay = pipeline_depth.exposed_ns(stages, depth_trip, depth_async, _miss_share(body))
                fill = pipeline_depth.fill_bytes_per_ns(m)
                if fill is not None:
                    # the first wave's CTAs wait the round trip at their L2 share less PV; those
                    # started after it, drifted apart, the lead PV does not cover and the bytes
                    # at the drifted fill rate (tfx.analysis.pipeline_depth.drifted_exposed_ns)
                    lat = _load_latency(body, m)
                    depth_trip = pipeline_depth.round_trip_ns(m, lat, body.global_loads, pipeline_depth.serial_copy_transfer_ns(
                        m, body.global_loads, _transfer_ns(body, m, 1, active_units),
                        _transfer_ns(body, m, 1, active_units, l2_share=False), 0))
                    depth_lead = pipeline_depth.round_trip_ns(m, lat, 0, 0)
                    depth_first = pipeline_depth.exposed_ns(stages, depth_trip, depth_async, _miss_share(body))
                    depth_late = pipeline_depth.drifted_exposed_ns(stages, depth_lead, depth_async, body.global_loads,
                                                                   fill, _miss_share(body))
                    depth_delay = (1 - miss.drifted) * depth_first + miss.drifted * depth_late
                    depth_split = (depth_first, depth_late, depth_lead, body.global_loads, fill)
            # a CTA of fewer warps than the SM's sub-partitions holds only some of them: each
            # station as that many servers (chain_overlap.subpartition_servers)
            chain_no_depth = emax(chain_overlap.cycle_ns(stations.tensor, stations.simt, stations.delay, r,
                                                         stations.servers),
                                  emax(path_one, chain_round)) + unpiped_wait
            chain = emax(chain_overlap.cycle_ns(stations.tensor, stations.simt, stations.delay + depth_delay, r,
                                                stations.servers),
                         emax(path_one, chain_round)) + unpiped_wait
            unpiped_stream = _unpipelined_stream(loop, m, stages, trip_chain, body)
            if unpiped_stream is not None:
                # an unpipelined streaming trip (decode's KV loop at STAGES = 1): the chains in
                # lock step, then the K and the V copy group's round trips (each its latency and
                # bytes through the SM's port), not one latency and the tile at the SM's DRAM share:
                # that share stays the round's throughput bound (tfx.analysis.decode_trip.unpipelined_round_ns)
                stream_f, trip_f, chase = unpiped_stream
                unpiped = decode_trip.unpipelined_round_ns(
                    trip_chain, r if is_array(r) or r else 1,
                    _miss_share(body), m.l2_latency, body.l2, body.global_loads,
                    m.l2_bw_device / active_units, decode_trip.first_wait_share(loop), trip_f.overhead_ns, chase,
                    stream_f)
                lock_base = chain - unpiped_wait
                applies = (stages < 2) & (trip_chain.ns > 0)
                # the co-resident CTAs end their trips together: a following wave takes an SM's
                # slots together (tfx.analysis.decode_trip.packed_tail)
                miss.runs_lockstep_round[loop.id] = applies
                if is_array(applies, unpiped.ns, lock_base):
                    unpiped_wait = where(applies, emax(unpiped.ns - lock_base, 0), unpiped_wait)
                    chain_no_depth = where(applies, emax(unpiped.ns, lock_base), chain_no_depth)
                    chain = where(applies, emax(unpiped.ns, lock_base), chain)
                elif applies:
                    unpiped_wait = max(unpiped.ns - lock_base, 0)
                    chain = chain_no_depth = max(unpiped.ns, lock_base)
                    unpiped_text = decode_trip.describe_unpipelined(unpiped, r or 1, trip_chain)
            chain_notes = miss.chain_notes
            if trip_chain is not None and chain_notes is not None and not is_array(trip_chain.ns, r) and trip_chain.ns:
                chain_notes.setdefault(loop.id, []).append(decode_trip.describe_chain(loop.line, trip_chain, r or 1))
        else:
            # a GEMM k-loop whose warpgroup mma Triton leaves running (mma_path.properly_async):
            # the trip's bookkeeping is issued while the mma runs (tfx.analysis.copy_behind_mma)
            left_running = _mma_left_running(loop, m, warps)
            chain = chain_no_depth = if_else(
                left_running, emax(one["tensor"], m.iteration_ns) + one["vector"] + one["special"], chain_one)
            # ... whose copies fly under it: the trip's operand reads and copies share the SM's
            # shared-memory port on the tensor cores' clock (tfx.analysis.wgmma_port)
            e["smem"] = if_else(left_running, wgmma_port.trip_ns(m, e["tensor"], e["smem"],
                                                                  _loop_mma_efficiency(loop, m)), e["smem"])
        engines_alone = _max_engine(e)
        tensor_no_wait = emax(e["tensor"], chain - unpiped_wait)
        tensor_no_depth = emax(e["tensor"], chain_no_depth)
        e["tensor"] = emax(e["tensor"], chain)
        serial_mma = _serial_wgmma_ns(loop, m, warps, r)
        if is_array(serial_mma) or serial_mma:
            # a warpgroup mma whose instructions ptxas serializes: each CTA's trip waits out
            # every wgmma's latency (tfx.analysis.mma_layout.serialized_wgmma)
            e["tensor"] = emax(e["tensor"], serial_mma)
            tensor_no_wait = emax(tensor_no_wait, serial_mma)
            tensor_no_depth = emax(tensor_no_depth, serial_mma)
    has_loads = body.global_loads
    trip_facts = load_trip.facts(m) if m.dispatch_single is None and load_trip.applies(loop) else None
    wt = None
    # a persistent walk's tiles in flight queue at the SM's load path (tfx.analysis.load_queue)
    queues = _walk_queues(m, miss, trip_facts, stations)
    if trip_facts is not None:
        # one CTA's pipelined trip: its chain plus its bytes through the SM's L2 port
        # (tfx.analysis.load_trip); r co-resident CTAs share the port
        e["copy"] = emax(e["copy"], load_trip.floor_ns(body.global_loads, r, stages, trip_facts,
                                                       _trip_copies(loop, counter, m, miss, warps)))
        if engines_alone is not None:
            # the r CTAs' copies issued through the SM's load path are that path's work (an engine's)
            engines_alone = emax(engines_alone, e["copy"])
        wt = _warp_trip(loop, counter, m, miss, warps, r, body, stages, trip_facts)
        warp_round = None if wt is None else warp_trip.round_ns(wt)
        if warp_round is not None:
            # the warps issue the mma themselves, then their copies, in series; the resident
            # CTAs queue at the sub-partitions and the load path (tfx.analysis.warp_trip); and
            # each warp's shared-memory requests wait at the SM's MIO pipe behind the other
            # CTAs' (warp_trip.mio_round_ns: over the engines' round, the smem engine its pipe)
            before_mio = emax(warp_round, _max_engine(e))
            warp_round = warp_trip.mio_round_ns(before_mio, one["smem"], r, warps, wt.applies)
            mio_notes = miss.mio_notes
            if mio_notes is not None and not is_array(before_mio, one["smem"], r, wt.applies) and wt.applies:
                # (none for a lone CTA, which waits for none: its round is the engines')
                mio_notes.setdefault(loop.id, []).append(warp_trip.describe_mio(
                    loop.line, before_mio, one["smem"], r, warps, lambda x: format_time_ns(float(x)))
                    if math.ceil(r) > 1 else None)
            e["tensor"] = emax(e["tensor"], warp_round)
            if tensor_no_wait is not None:
                tensor_no_wait = emax(tensor_no_wait, warp_round)
                tensor_no_depth = emax(tensor_no_depth, warp_round)
        ct = _converting_wgmma_trip(loop, counter, m, miss, warps, r, body, lambda: one["tensor"], trip_facts)
        if ct is not None:
            # a warpgroup-mma trip that converts its operand first: each CTA converts, mmas (waited out)
            # and copies in series; the resident CTAs queue at the three (tfx.analysis.converting_trip)
            conv_round = converting_trip.round_ns(ct)
            e["tensor"] = emax(e["tensor"], conv_round)
            if tensor_no_wait is not None:
                tensor_no_wait = emax(tensor_no_wait, conv_round)
                tensor_no_depth = emax(tensor_no_depth, conv_round)
    lat = _load_latency(body, m)
    fetch = _transfer_ns(body, m, 1, active_units)      # one trip's bytes at the SM's shares
    # One trip's loads in flight: a latency plus their transfer, or the DMA channels' held
    # occupancy where that is longer (it already includes the round trips).
    in_flight = emax(lat + fetch, one["copy"])
    if stations is not None:
        # a serial trip's copies: the latency, then their bytes at the SM's port where the
        # launch's CTAs drift apart (tfx.analysis.pipeline_depth.serial_copy_transfer_ns, at
        # least the port's time wherever the profile states the load-trip facts)
        in_flight = lat + _serial_transfer_ns(body, m, active_units, miss)
    serial_chain = 0
    dram_round = None              # (the loaded DRAM round trip, the DRAM bytes a round of the CTAs drawing)
    unpiped_cycle = None           # an unpipelined GEMM k-loop's trip (tfx.analysis.pipeline_depth)
    if trip_facts is not None:
        # a GEMM k-loop: the load's round trip includes the chain that issues it and its bytes
        # through the SM's port (tfx.analysis.load_trip)
        # (a weight stream's line: load_trip.stream_facts)
        stream = 0 if stations is not None else _loop_stream_shares(loop, counter, m, miss, warps, body)[1]
        dram_trip = load_trip.stream_facts(m, load_trip.dram_facts(m), stream)
        if stations is None and dram_trip is not None:
            # the weight stream's line was measured per trip, launch-free (stream_depth's
            # (t(256 trips) - t(64 trips)) / 192): no launch it prices has do_bench's dirty-L2
            # write-back in it, so timed after an L2 clear (analyze's l2_clear) such a launch pays
            # it (tfx.analysis.launch_handoff.dirty_write_back_ns; docs/analysis.md, "A weight
            # stream's round trip")
            miss.pays_write_back[loop.id] = stream
        if dram_trip is None or stations is not None:
            in_flight = emax(in_flight, load_trip.round_trip_ns(
                lat, body.global_loads, fetch, trip_facts))
        if dram_trip is not None:
            # its DRAM part waits longer the more bandwidth the SMs draw (a loaded round trip,
            # solved with the trip time: tfx.analysis.load_trip.loaded_round_trip_ns); this
            # measured round trip replaces the one estimated DRAM latency (700 ns on the H200,
            # which bound one SM's trips above the idle round trip they were measured at:
            # docs/analysis.md, "The measured round trip replaces the estimated latency")
            # (its idle floor's transfer at the SM's own DRAM rate: _own_transfer_ns)
            chase = load_trip.chase_facts(m) if miss.walk else None
            # a walk's tiles after its first round drift apart: their L2 bytes at the SM's port
            # (pipeline_depth.walk_transfer)
            walk_parts = None if chase is None else _walk_transfer(body, m, active_units, miss)
            loaded = load_trip.loaded_trip(
                m.l2_latency, memory_parallelism.trip_miss(body.dram, body.l2, miss.l2_only.get(loop.id, 0)),
                body.global_loads,
                _own_transfer_ns(body, m, active_units) if walk_parts is None else walk_parts.ns, _queue_bytes(body),
                r_draw, active_units, stages, trip_facts, dram_trip, chase,
                queued=_queued_trip(queues, wt), walk_transfer=walk_parts)
            in_flight = emax(one["copy"] if stations is None else in_flight, loaded.ns)
            # the DRAM round trip and the bytes its CTAs drawing read a round (_note_write_back_slack)
            dram_round = (loaded.ns, body.dram * r_draw * active_units)
            if miss.dram_trips is not None and not is_array(*loaded):
                # the breakdown's memory-parallelism line renders this one (_load_trip_terms)
                miss.dram_trips.setdefault(loop.id, []).append(loaded)
        serial_chain = trip_facts.overhead_ns
        if dram_trip is not None:
            # unpipelined (S = 1): chain, round trip and compute in series, DRAM when the trip
            # first reads one of its tiles or, in the first wave, a co-reader's fill of it is
            # pending (tfx.analysis.pipeline_depth.unpipelined_cycle_ns, load_rounds.lockstep_share)
            # (only where the loop has one stage: elsewhere the pipelined round is the trip's)
            unpiped_cycle = _unpipelined_cycle_where(
                stages < 2, lambda: dict(
                    n_rounds=_load_rounds(loop, m, warps), m=m, first=_first_reader(loop, miss),
                    loaded_bytes=body.global_loads, fetch=_own_transfer_ns(body, m, active_units), dram_bytes=_queue_bytes(body), r=r_draw,
                    active_units=active_units, compute=_compute_one(body, m, active_units, warps),
                    facts=trip_facts, dram_facts=dram_trip, dram_base=dram_trip.base_ns,
                    dram_slope=dram_trip.slope_ns_per_byte_ns))
    if m.kind == "gpu" and (is_array(body.unpipelined) or body.unpipelined):
        # An operand whose load the compiler does not pipeline (an 8-bit operand transposed in
        # registers, tfx.analysis.mma_layout): each trip loads it to registers, waits out the
        # latency, stores it transposed to its one shared buffer and runs the mma that reads
        # it before the next trip may overwrite that buffer. One position's trip is that chain;
        # co-resident positions overlap theirs, so the round is at least one chain.
        chain = lat + fetch + one["smem"] + one["tensor"]
        wgmma = transpose_trip.warpgroup_share(loop, m.inst, warps)
        if trip_facts is not None and (is_array(wgmma) or wgmma):
            # on the warpgroup path no load is in flight across its trips: each load's round
            # trip, the byte stores and the waited mma in series (tfx.analysis.transpose_trip)
            t = _transposed_trip(loop, counter, m, miss, warps, r, active_units, trip_facts, one)
            kn_round = transpose_trip.round_ns(t, r if is_array(r) or r else 1, one["smem"], one["tensor"])
            chain = if_else(wgmma, kn_round, chain)
        e["smem"] = emax(e["smem"], if_else(body.unpipelined > 0, chain, 0))
    # Where a pipelined trip's prefetch waits behind its compute: Triton issues the copies of
    # trip i+S-1 after the compute its warps wait for (tfx.analysis.mma_path.prefetch_wait),
    # so each load's issue-to-use chain is that compute plus latency and transfer, spread over
    # S-1 trips: with period T, T = waited + max(0, lat + fetch - (S-2) T), i.e.
    # T = max(engines, (waited + lat + fetch) / (S-1)). docs/analysis.md works it out.
    issue_chain = in_flight
    waited = 0
    waited_overlap = 0            # what a CTA's warpgroups overlap of it (chain_overlap.prefetch_overlap_ns)
    if m.kind == "gpu" and m.dispatch_single is None:
        def trip_tensor_ns(c):
            return (engine_ns(op_demand(c, counter, m, miss, warps), m, 1, active_units, warps)["tensor"]
                    * _trip_share(c, loop))
        waited = _once_a_launch(miss, ("prefetch", loop.id), lambda: mma_path.prefetch_wait(
            loop, m, warps, trip_tensor_ns, one["vector"] + one["special"]))
        if trip_facts is not None and not serial:
            # a GEMM k-loop's next copies leave after the trip's warpgroup mma, then make their
            # L2 round trip (tfx.analysis.copy_behind_mma)
            in_flight = emax(in_flight, copy_behind_mma.chain_ns(
                _trip_wgmma_ns(loop, counter, m, miss, warps, active_units, leave=True), body.global_loads, m,
                trip_facts))
        if stations is not None:
            # a CTA's warpgroups run the chain side by side: the copies leave when the later one
            # is past its compute, its QK^T under the other's softmax (chain_overlap.prefetch_overlap_ns)
            waited_mma = _once_a_launch(miss, ("prefetch mma", loop.id), lambda: mma_path.prefetch_wait(
                loop, m, warps, trip_tensor_ns, 0))
            waited_overlap = chain_overlap.prefetch_overlap_ns(waited, waited_mma, stations.groups)
            waited = waited - waited_overlap
        reduced = waited
        if serial:
            # the prefetch leaves after the trip's dependent path (tfx.analysis.trip_latency)
            waited = emax(waited, path_waited)
            if stations is not None:
                # ... and after the rest of the chain: Triton issues the copies last in the trip
                # (tfx.analysis.chain_overlap.issue_ns)
                waited = emax(waited, chain_overlap.issue_ns(loop, m, warps, stations, compute_ns))
        stream_facts = decode_trip.facts(m) if serial and load_trip.streams(loop) else None
        one_chain = None
        if trip_chain is not None:
            # Triton issues a streaming trip's next copies last, after the warp's whole in-order
            # chain (decode_sass), so they leave when the CTA's chain ends: with r co-resident
            # CTAs sharing the port, after the round (tfx.analysis.decode_trip.round_ns), unless
            # the round trip lets them queue (co_resident_wait_ns, below)
            one_chain = emax(waited, trip_chain.ns)
            waited = emax(waited, chain_round)
        if stream_facts is not None:
            # a streaming serial trip (decode's KV loop): the copies' round trip at the loaded DRAM
            # latency, solved with the trip time, and the tile at the SM's own rate, not its share
            # of the device (tfx.analysis.decode_trip); a tail wave draws with its own CTAs (r_draw);
            # where the trip waits for its copy groups one at a time, the first group's round trip
            # (decode_trip.first_wait_share)
            first_share = 1
            if trip_chain is not None:
                first_share = decode_trip.first_wait_share(loop)
                if is_array(trip_chain.ns):   # a sweep: only where the chain applies (as the scalar path)
                    first_share = where(trip_chain.ns > 0, first_share, 1)
            stream_args = (waited, _miss_share(body), m.l2_latency, emax(body.dram, body.dram_lines), body.l2,
                           body.global_loads, m.l2_bw_device / active_units, r_draw, active_units, stages, stream_facts,
                           first_share)
            queue_text = ""
            if trip_chain is not None:
                # r co-resident CTAs whose trips wait for their copies queue at the port rather
                # than keep the round's lock step (tfx.analysis.decode_trip.co_resident_wait_ns)
                lockstep = waited
                waited = decode_trip.co_resident_wait_ns(
                    one_chain, lockstep, trip_chain, r, stages, lambda w: decode_trip.round_trip_ns(w, *stream_args[1:]))
                stream_args = (waited,) + stream_args[1:]
                if not is_array(waited, lockstep, r, stages):
                    queue_text = decode_trip.describe_queue(one_chain, lockstep, waited, trip_chain, r, stages)
            in_flight = decode_trip.round_trip_ns(*stream_args)
            stream_notes = miss.stream_notes
            if stream_notes is not None and not is_array(*stream_args[:-2], stream_args[-1]) and stages >= 2:
                stream_notes.setdefault(loop.id, []).append(
                    (r, active_units, decode_trip.describe(loop.line, *stream_args) + queue_text))
        issue_chain = in_flight + waited
        if stations is not None and depth_split is not None:
            # at 2 stages the copies a trip waits for leave after its waited compute and arrive
            # PV and the exposed wait later: the chain's depth delay prices that wait, so the
            # prefetch's in-flight copies are no longer than it (tfx.analysis.pipeline_depth);
            # not where a warp-mma streaming trip's in-order chain sets them (decode_trip)
            no_chain = True if trip_chain is None else trip_chain.ns <= 0
            depth_issue = waited + depth_async + depth_delay
            if is_array(stages, issue_chain, depth_issue, no_chain):
                issue_chain = where((stages == 2) & no_chain, emin(issue_chain, depth_issue), issue_chain)
            elif stages == 2 and no_chain:
                issue_chain = min(issue_chain, depth_issue)
            in_flight = issue_chain - waited       # (the breakdown's prefetch line)
        if not is_array(waited, reduced) and waited != reduced:
            waited_overlap = 0    # the path or the rest of the chain sets it (the breakdown's words)
    # A serial single-op loop on a command processor: the in-order recurrence of its trips.
    in_order = (_in_order_trips(loop, counter, m, miss, warps, active_units)
                if m.dispatch_single is not None and not in_composite else None)
    queued = None
    if queues:
        # the walk's S-1 tiles in flight a CTA collide at the SM's load path between its two
        # floors (tfx.analysis.load_queue): the round is the closed queue's cycle over S-1
        q = _load_queue(loop, counter, m, miss, warps, r, stages, body, trip_facts, wt, issue_chain)
        queued = load_queue.round_ns(q)
        if miss.load_queues is not None and not is_array(*q):
            miss.load_queues.setdefault(loop.id, []).append((r, active_units, q))
    if is_array(stages, has_loads, trips) or is_array(*e.values()):
        piped_round = emax(_max_engine(e), issue_chain / emax(stages - 1, 1) * (has_loads > 0))
        if queued is not None:
            piped_round = emax(piped_round, queued * (has_loads > 0))
        if in_order is not None:
            serial_round = emax(_max_engine(e), in_order[0])
            serial_fill = emax(in_order[1] - in_order[0], 0)
        else:
            single = (lat * (has_loads > 0) + sum(engine_ns(body, m, 1, active_units, warps).values()) + serial_wait
                      + body.link_latency + serial_chain)
            if unpiped_cycle is not None:
                single = where(has_loads > 0, unpiped_cycle + serial_wait + body.link_latency, single)
                # co-resident warp-mma CTAs queue at the sub-partitions and the load path
                # (tfx.analysis.warp_trip.unpipelined_stations)
                single = emax(single, _unpipelined_warp_round(loop, counter, m, miss, warps, r, trip_facts,
                                                              single, stages) * (has_loads > 0))
            single = unpipelined_chain.floor_ns(single, stations)     # (tfx.analysis.unpipelined_chain)
            serial_round, serial_fill = emax(_max_engine(e), single), 0
        round_ns = where(stages >= 2, piped_round, serial_round)
        fill = where(stages >= 2, lat * (has_loads > 0) + e["copy"] / emax(r, 1), serial_fill)
        _note_write_back_slack(miss, loop, round_ns, dram_round, stages, e)
    elif stages >= 2:
        # Little's law: S-1 tiles in flight, each taking a latency plus its own transfer.
        round_ns = emax(_max_engine(e), issue_chain / (stages - 1) if has_loads else 0)
        if queued is not None and has_loads:
            round_ns = emax(round_ns, queued)
        _note_round_bound(miss, loop, trips, round_ns, e, engines_alone)
        _note_write_back_slack(miss, loop, round_ns, dram_round, stages, e)
        fill = (lat + e["copy"] / r) if has_loads else 0
        notes = miss.notes
        if notes is not None and m.dispatch_single is None and loop.id not in notes:
            # What each mechanism adds to a round, for the breakdown: the chains of the
            # resident CTAs in turn (over the engines and one CTA's chain), then the prefetch
            # issued behind the compute (over the loads' plain S-1-deep pipeline).
            plain_loads = in_flight / (stages - 1) if has_loads else 0
            base = emax(emax(engines_alone, emax(chain_one, path_one)), plain_loads)
            with_chain = emax(_max_engine(e), plain_loads)
            without_depth = emax(_max_engine({**e, "tensor": tensor_no_depth}), plain_loads)
            notes[loop.id] = mma_path.LoopNote(
                line=loop.line, trips=trips, resident=r, tensor=one["tensor"], vector=one["vector"],
                special=one["special"], overhead=m.iteration_ns, serial=serial, engines=engines_alone,
                in_flight=in_flight, waited=waited, stages=stages, waited_overlap=waited_overlap,
                chain_ns=trips * (without_depth - base), prefetch_ns=trips * (round_ns - with_chain),
                path_ns=path_ns, path_steps=path_steps, throughput=throughput_one,
                stations=stations, chain_round=chain_no_depth if serial else 0,
                depth=(depth_trip, depth_async, _miss_share(body), depth_delay, chain if serial else 0,
                       trips * (with_chain - emax(without_depth, base)), depth_split), drifted=miss.drifted,
                loop=loop, machine=m, warps=warps)
    elif in_order is not None:
        round_ns = emax(_max_engine(e), in_order[0])
        fill = emax(in_order[1] - in_order[0], 0)
    else:
        single = ((lat if has_loads else 0) + sum(engine_ns(body, m, 1, active_units, warps).values()) + serial_wait
                  + body.link_latency + serial_chain)
        if unpiped_cycle is not None and has_loads:
            single = unpiped_cycle + serial_wait + body.link_latency
            # co-resident warp-mma CTAs queue at the sub-partitions and the load path
            # (tfx.analysis.warp_trip.unpipelined_stations)
            single = emax(single, _unpipelined_warp_round(loop, counter, m, miss, warps, r, trip_facts, single))
        # a serial chain's trip is its load wait, then its chains: the one-CTA sum of every engine
        # is no floor (tfx.analysis.unpipelined_chain)
        one_cta, single = single, unpipelined_chain.floor_ns(single, stations)
        round_ns = emax(_max_engine(e), single)
        fill = 0
        _note_round_bound(miss, loop, trips, round_ns, e, engines_alone)
        notes = miss.notes
        if notes is not None and m.dispatch_single is None and unpiped_wait and loop.id not in notes:
            # what the round's load wait adds over the chains in turn (the breakdown)
            without = emax(_max_engine({**e, "tensor": tensor_no_wait}), single)
            notes[loop.id] = mma_path.WaitNote(
                line=loop.line, trips=trips, resident=r, chain=chain - unpiped_wait, latency=unpiped_lat,
                transfer=unpiped_fetch, wait_ns=trips * (round_ns - without), drifted=miss.drifted,
                wait=unpiped_wait, one_cta=one_cta if unpipelined_chain.applies(stations) else None,
                text=unpiped_text)
    total = fill + trips * round_ns
    lives = miss.loop_life
    if lives is not None and trip_chain is not None:
        # one CTA's own path through a pipelined streaming trip, for the waves whose CTAs drift
        # apart: its first tiles' latency, then each trip the longer of its chain's round (every
        # engine but the copies' share) and its copies' round trip (tfx.analysis.drifted_stream)
        own = _max_engine({k: v for k, v in e.items() if k not in ("copy", "spill")})
        if spill_alone is not None:
            # a spilling trip's local traffic in series with its chain, not with the copies' share
            own = emax(own, spill_traffic.in_series(spill_alone, e["tensor"], e["smem"], 0))
        life = drifted_stream.loop_life_ns(lat * (has_loads > 0), trips, own,
                                           issue_chain / emax(stages - 1, 1) * (has_loads > 0))
        if is_array(stages, trip_chain.ns, life, total):
            applies = (stages >= 2) & (trip_chain.ns > 0)
            lives[loop.id] = (where(applies, life, total), applies)
        else:
            applies = bool(stages >= 2 and trip_chain.ns)
            lives[loop.id] = (life if applies else total, applies)
    return total, {k: v * trips for k, v in e.items()}
