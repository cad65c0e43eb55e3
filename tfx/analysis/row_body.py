"""A CTA body without a loop (row kernels: rmsnorm, softmax, copy): resident CTAs overlap.

A row kernel's CTA runs one straight chain: load its rows, compute on them (reductions,
elementwise), store the result; no software pipeline. One CTA alone waits a memory
latency for its loads, moves its bytes, computes, and moves its result, in that order. The
other CTAs resident on the same SM are independent of it and are at other points of the
same chain, so the SM's engines serve all of them at once: while one CTA computes, another
one's loads are in flight. Over a residency batch of r CTAs the SM is busy for the longer of

    throughput  the busiest engine over the r CTAs' summed demand; the memory pipe carries
                the global transfers and the local-memory (spill) traffic together, since
                both are the SM's own loads and stores through its L1 to L2 and DRAM
    chain       one CTA's serial path: one memory latency (its loads issue together: none
                waits on another's value), then every op's own engine time one after
                another (its loads' transfer, compute, spill traffic, its stores' transfer)

and, between those two bounds, the r CTAs queueing at the memory pipe: each needs it for
its own transfer (service D = its bytes at the SM's share) and spends the rest of its chain
(Z = latency, compute, reductions) alone, a closed queue of r customers solved by mean value
analysis (``mva_cycle``; the machine-repairman model). One CTA gives D + Z (the chain), many
give r x D (the throughput); two CTAs mostly wait on each other (a row kernel at one or two
CTAs per SM runs 20-30% over its bytes on the H200: calibration/h200/measured/issue15), except
two whose DRAM reads all go out in one round at their start, which alternate: one's transfer
under the other's compute, max(2 D, D + Z) a pair (``alternation_ns``, ``one_round_reads``);
the compiled binaries whose tile loads in two rounds run their pair in the order their SASS
issues its later loads, weight row and stores into the SM's first-come-first-served pipe, a cycle
tabulated from the compiles (``PAIR_CYCLES``). This is Little's law on the CTA slots: r CTAs each taking ``chain`` finish r per chain,
unless an engine saturates first. It is the rule an unpipelined loop's round already
follows (tfx.analysis.performance._loop_time: max(engines, latency + one position's
engines)), applied to a body that runs once. Without it the body's ops were summed, each
at the r CTAs' demand, as if the CTAs ran in lock step and no CTA computed while another
loaded: a bandwidth-bound row kernel was priced at its bytes plus all of its compute.

The first wave. The CTAs of the first full wave do not overlap: the launch starts them
all at once and they run the same chain, so they all load, then all compute, then all
store, as a launch of one wave does (``applies``), and are priced op by op like it. Only
the CTAs that follow start when a slot frees, at the times the first ones finish, and
those times are spread by the first wave's queue at the memory pipe (its CTAs' loads are
served one after another): from the second wave on the CTAs are at different points of
the chain and overlap (``waves_ns``). A launch of a few waves is mostly its first wave (a
softmax of 2.6 waves at 12 CTAs per SM: calibration/h200/measured/issue15); one of many
waves is mostly overlap, and a launch of just over one wave no longer jumps from the lock
step to the overlap.

Source for the mechanism: Hong and Kim, "An analytical model for a GPU architecture with
memory-level and thread-level parallelism awareness", ISCA 2009 (memory warp parallelism:
memory periods of different warps overlap; a warp's own computation and memory period do
not); the CUDA C++ Best Practices Guide, "Occupancy" (resident warps hide each other's
latency).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from tfx.analysis import closed_queue, cta_launch
from tfx.analysis.numbers import cdiv, ceil_log2, emax, emin, if_else, is_array, where
from tfx.hw.units import format_counted, format_plain

VIEWS = ("reshape", "transpose", "broadcast", "return")
# engines one CTA's chain waits on, in the order its ops run them
CHAIN_ENGINES = ("copy", "spill", "tensor", "smem", "vector", "special", "dispatch", "link")
WARP = 32
VECTOR_BYTES = 16          # one thread's vector access: the compiler's blocked layout gives each
                           # thread 16 B of a row per access (Triton: sizePerThread = 16 B / element)


def applies(body, profile) -> bool:
    """A GPU CTA body of ops only (no loop, nested mesh, composite or call) that loads from
    global memory: the straight chain this module prices.

    The caller applies it to launches of more than one wave. The overlap is a steady state:
    CTAs drift apart because each finished one is replaced at its own time. The CTAs of a
    single wave all start at once and run the same chain in lock step (all load, then all
    compute, then all store), which the per-op pricing describes: a launch of one wave or
    less (a split-KV merge of B x HKV CTAs) keeps it."""
    if profile.kind != "gpu":
        return False
    has_load = False
    for c in body.children:
        if c.kind not in ("op", "capture"):
            return False
        if c.kind == "op" and c.op is not None and c.op.opcode == "load":
            has_load = True
    return has_load


class BodyTime(NamedTuple):
    """One residency batch of a straight CTA body."""

    ns: Any                       # max(throughput, chain)
    throughput: Any               # the busiest engine over the r CTAs (memory = copy + spill)
    bound: str                    # that engine's name ("memory" for copy + spill)
    chain: Any                    # one CTA's serial path
    latency: Any                  # the memory latency in the chain (0 without loads)
    chain_parts: dict             # engine -> ns of one CTA's chain
    queued: Any = 0               # the r CTAs queueing at the memory pipe (mva_cycle)
    dram_ns: Any = 0              # the r CTAs' DRAM bytes at the SM's DRAM share
    l2_ns: Any = 0                # all their global bytes at the SM's share of L2
    launch_floor: Any = 0         # r CTA launches at the SM's launch interval (cta_launch)
    posted: Any = 0               # one CTA's stores at its port to L2 (posted; 0 where not)
    service: Any = 0              # one CTA's time at the memory pipe (the queue's D)
    think: Any = 0                # the rest of its chain (the queue's Z)
    alternating: Any = False      # two CTAs alternate at the memory pipe (``alternation_ns``)
    paired: Any = 0               # the compiled pair's cycle over 2 x service (``PAIR_CYCLES``), where it set the queue


def reduction_chain_ns(elements, extent, elem_bytes, threads, m, serial_fold=True):
    """ns of one reduce's dependent chain in one CTA (0 where the profile states no
    ``pipeline.dependent_issue``). The CTA's threads cover the reduced axis in 16-byte
    vectors: ``t = min(threads, extent / (16 / element bytes))`` threads per output, each
    folding its ``extent / t`` elements one after another (a serial chain of dependent
    adds: the compiler may not reassociate float adds), then a butterfly of log2(lanes)
    warp shuffles (each a shared-memory crossbar trip plus the add), and where the axis
    spans w > 1 warps the partials go through shared memory: store, barrier, load, log2(w)
    more steps, and the result back to every thread (store, barrier, load): four
    shared-memory latencies and the steps. Several outputs per thread interleave, so they
    add throughput (the vector engine), not chain. ``serial_fold=False`` leaves the fold
    out: ``element_chain_ns`` counts it with the ops that feed it."""
    dep_cycles = m.profile.get("pipeline.dependent_issue", None)
    if dep_cycles is None:
        return 0
    dep = dep_cycles / m.clock_ghz
    smem = m.profile.memory_levels().get("smem")
    smem_lat = (smem.latency_ns or 0) if smem is not None else 0
    per_vector = max(VECTOR_BYTES // max(elem_bytes, 1), 1)
    t = emin(threads, emax(cdiv(extent, per_vector), 1))
    serial = cdiv(extent, t) - 1
    lanes = emin(t, WARP)
    warps = cdiv(t, WARP)
    steps = ceil_log2(lanes)
    cross = 4 * smem_lat + ceil_log2(warps) * (smem_lat + dep)
    cross = if_else(warps > 1, cross, 0)
    return (serial * dep if serial_fold else 0) + steps * (smem_lat + dep) + cross


def shuffle_issue_ns(elements, extent, vector_bytes, threads, m):
    """ns one CTA's warp shuffles of one reduce hold the SM's shuffle unit (0 where the profile
    states no ``pipeline.shuffle_results_per_cycle``).

    The layout is the one Triton gives the loaded tile (its coalescing pass, Coalesce.cpp):
    each thread holds ``v = min(16 / vector_bytes, max(elements / threads, 1))`` elements side
    by side (``vector_bytes``: the loaded element's bytes), the threads fill the reduced axis
    first, ``t = min(threads, extent / v)`` a row, and each thread holds ``max(outputs x t /
    threads, 1)`` of the reduce's ``elements / extent`` outputs. Every output a thread holds
    takes log2(min(t, 32)) butterfly shuffles, so the CTA's warps issue ``warps x held x
    log2(lanes)`` shfl.sync, each 32 / rate cycles of the SM's unit (CUDA C++ Programming
    Guide, arithmetic instruction throughput: 32 shuffle results a cycle per SM on compute
    capability 9.0). A CTA holding many rows a thread on many warps waits that issue, not the
    shuffles' latency: Triton 3.6.0's softmax on 16 warps issues 88 SHFL a thread at [8, 4096]
    and 28 at [2, 16384] (2 x 8 x 5 and 2 x 2 x 5 butterfly steps, 8 cross-warp)."""
    rate = m.profile.get("pipeline.shuffle_results_per_cycle", None)
    if rate is None:
        return 0
    v = emax(emin(emax(VECTOR_BYTES // emax(vector_bytes, 1), 1), elements // threads), 1)
    t = emin(threads, emax(cdiv(extent, v), 1))
    held = emax(emax(elements // emax(extent, 1), 1) * t // threads, 1)
    steps = ceil_log2(emin(t, WARP))
    return cdiv(threads, WARP) * held * steps * (WARP / rate) / m.clock_ghz


def op_latency_cycles(opcode, lat):
    """Cycles from an elementwise op's operand to its result, at the measured latencies
    (``instruction_latency``; the conventions of tfx.analysis.trip_latency): exp2 one ``ex2``,
    exp its base-2 scaling and the ``ex2`` (``fma + ex2``), any other elementwise op one
    ``fma``; views and the ops that do no work on the vector unit take none."""
    if opcode in VIEWS or opcode in ("load", "store", "zeros", "fill", "iota", "reduce"):
        return 0
    if opcode == "exp2":
        return lat.ex2
    if opcode == "exp":
        return lat.fma + lat.ex2
    return lat.fma


def element_chain_ns(body, threads, m, lat):
    """ns of the dependent chain one thread runs to feed the body's reductions (0 without
    ``lat``, the profile's ``instruction_latency`` facts, or without a reduce).

    A thread holds ``n = elements / t`` of a reduce's operand (``t = min(threads, elements /
    (16 / element bytes))``: the 16-byte vectors it loaded, every row of the CTA's tile it
    covers). A warp issues its instructions in order, and each element's value reaches the
    reduction through the elementwise ops between the loaded tile (or a broadcast row
    statistic) and the reduce, then the dependent add (or max) into the thread's
    accumulator: ``n x (feed + fma)`` cycles, feed the sum of those ops' latencies along the
    longest operand path (``op_latency_cycles``). Where the warp shares its sub-partition with
    others they fill its stalls, so the CTA's compute takes the longer of this chain and its
    issue time (``batch``: the ``element chain`` part is the excess). Measured
    (calibration/h200/measured/row_phases, finding 3): softmax's max/exp/sum pass costs 40-50
    SM cycles per element a thread holds at 1-2 CTAs per SM, whether those elements are one
    row (BLOCK_M = 1) or two (BLOCK_M = 2: 64 elements 47 cycles, 128 elements 40), against
    the 4 x 4 + 21 = 37 of cast, max, sub, exp and add here; the SFU's rate would give 2."""
    chains = element_chain_phases(body, threads, m, lat)
    total = 0
    for v in chains:
        total = total + v
    return total


def element_chain_phases(body, threads, m, lat) -> list:
    """``element_chain_ns`` per phase: entry k is the chain that feeds the (k+1)-th reduce in
    program order, ns (an empty list without ``lat``). Phase k holds the ops after the k-th
    reduce up to and including the (k+1)-th: a warp issues its instructions in order (CUDA
    C++ Programming Guide, "SIMT Architecture": a warp executes one common instruction at a
    time), and the ops after a reduce wait for its result, which reaches the threads through
    shuffles and, where the reduced axis spans warps, a ``bar.sync`` that no warp passes
    before all have arrived (PTX ISA, "bar"). So a phase's chain overlaps only that phase's
    issue (``batch``: the ``element chain`` part sums each phase's excess), not the issue of
    the ops after its reduce (softmax's normalization, rmsnorm's scaling and store)."""
    if lat is None:
        return []
    feed: dict = {}
    chains: list = []
    total = 0
    for c in body.children:
        op = c.op if c.kind == "op" else None
        if op is None:
            continue
        reads = op.value_reads()
        arrive = 0
        for name in reads:
            arrive = emax(arrive, feed.get(name, 0))
        red = getattr(c, "per_exec_reduce", None)
        if red is not None and c.per_exec:
            elements, _, elem_bytes = red
            per_vector = max(VECTOR_BYTES // max(elem_bytes, 1), 1)
            t = emin(threads, emax(cdiv(elements, per_vector), 1))
            k = c.execs / body.execs
            total = total + k * cdiv(elements, t) * (arrive + lat.fma)
        if op.opcode == "reduce":
            chains.append(total / m.clock_ghz)
            total = 0
        if op.result:
            own = 0 if op.opcode in ("load", "reduce") else op_latency_cycles(op.opcode, lat)
            feed[op.result] = 0 if op.opcode in ("load", "reduce") else arrive + own
    return chains


def _is_load(d) -> bool:
    """An op that reads global memory (at some point of a sweep): its transfer starts with the
    CTA's loads, before the compute; the others' (stores) after it."""
    if is_array(d.global_loads):
        import numpy as np
        return bool(np.any(np.asarray(d.global_loads) > 0))
    return bool(d.global_loads)


def _summed(demands, pick):
    """One demand holding the DRAM and L2 bytes of the ``pick``ed ops together (per CTA): their
    DRAM bytes, L2 bytes, global reads and the reads a TPC pair merges, so that the slices' bytes
    the demand derives from them (``Demand.l2_slices``) are the ops' own."""
    total = None
    for d, k in demands:
        if not pick(d):
            continue
        if total is None:
            total = type(d)()
        total.dram = total.dram + d.dram * k
        total.l2 = total.l2 + d.l2 * k
        total.global_loads = total.global_loads + d.global_loads * k
        total.l2_merged = total.l2_merged + d.l2_merged * k
        total.l2_far = total.l2_far + d.l2_far * k
    return total


def transfer_parts(total, engine_ns, m, r, active_units):
    """(DRAM ns, L2 ns) of r CTAs' summed transfer ``total``, each priced alone by the copy
    engine: its DRAM bytes at the SM's DRAM rate, all of its global bytes at its share of L2."""
    dram_only, l2_only = type(total)(), type(total)()
    dram_only.dram = total.dram
    l2_only.l2 = total.l2
    return engine_ns(dram_only, m, r, active_units)["copy"], engine_ns(l2_only, m, r, active_units)["copy"]


def reads_first(demands, phases) -> bool:
    """Every op of the body that reads global memory lies before its first reduce (in phase 0
    of ``element_chain_phases``): the CTA issues all its reads at its start and its chain after
    them touches no global memory (softmax, a copy; not the measured rmsnorm, whose weight row
    is loaded after the row sum)."""
    return not any(p > 0 and _is_load(d) for (d, _), p in zip(demands, phases))


def alternation_ns(service, think):
    """ns for two CTAs on one SM to complete a cycle each when they alternate at the memory
    pipe: each one's transfer (``service``) runs while the other spends the rest of its chain
    (``think``) away from it, so the pair takes the longer of the pipe's two transfers and one
    CTA's own path, ``max(2 x service, service + think)``.

    Requests at the pipe are served in the order they arrive. A CTA that issues all its reads
    at its start (``reads_first``) and starts even a little after the other has its requests
    behind the other's: the earlier one's transfer ends first, it computes while the later one's
    transfer runs, and its successor's reads queue behind that transfer, so any offset grows
    until one CTA's compute lies under the other's transfer (the first wave, started together,
    runs in lock step: ``waves_ns``). Measured (calibration/h200/measured/row_cta, finding
    (3); docs/analysis.md 8 (s)): softmax at 16 warps cycles two CTAs in 1.05-1.08 x the DRAM
    time of their bytes at N = 1024-16384, where the mean value analysis of the queue gives
    1.24; row_codegen: rmsnorm with its weight row loaded first, two one-row CTAs a SM (6144 x
    16384, 8 and 16 warps) 101.8 and 102.2 us, 2 x service over its 23.27 waves and the launch
    98.7 us. A chain that reads DRAM again after its first data arrived does not keep the
    alternation: the measured rmsnorm with the weight row after the row sum runs 128.0-132.1 us
    there, and its binaries at (1, 16) and (1, 8) load their X tile in two rounds (``LOAD_ROUNDS``),
    while the campaigns' one-round rmsnorm binaries alternate though their weight row (an L2 hit)
    is read after the sum (``one_round_reads``); nor one that reloads spilled values from local
    memory after it; those keep the queue (``mva_cycle``), or where the compiled two-round binary
    is known its pair cycle (``PAIR_CYCLES``)."""
    return emax(2 * service, service + think)


def batch(demands, latency, engine_ns, r, active_units, m, reduce_ns=0,
          element_ns=0, phases=None, successor=False, first_reads=False,
          rounds_ns=0, pair=0) -> tuple[BodyTime, dict]:
    """The batch time of r resident CTAs; ``demands`` are (per-exec Demand, executions per
    CTA) of the body's ops, ``engine_ns(d, m, r, active_units)`` prices one demand.

    The memory pipe has two resources that work at the same time: the SM's share of DRAM
    moves the bytes that miss L2 and its share of L2 moves all of them, so the CTAs'
    transfers take the longer of the two over their summed bytes (the roofline's rule over
    memory levels), not the sum of each op's longer one: rmsnorm's weight row, read by every
    CTA, hits L2 and streams beside the rows' DRAM traffic instead of after it. In the chain
    a CTA's loads issue together and move together (the longer of their DRAM bytes at the
    DRAM share and their bytes over the SM's port to L2), and so do its stores. Its compute
    takes the longer of its issue (vector and SFU work at the SM's rates) and the dependent
    chain its threads run to feed the reductions (``element_chain_ns``): the ``element
    chain`` part is that chain's excess over the issue time. Given ``phases`` (each demand's
    phase, parallel to ``demands``) and ``element_ns`` per phase (``element_chain_phases``),
    the excess is taken phase by phase: the sum over k of max(0, chain_k - issue_k).

    ``successor``: the batch is followed by more CTAs in its slots (a full wave of a launch
    that fills more). Then one CTA alone on its SM (r = 1) posts its stores: a store writes no
    register, so no later instruction waits on it (the SASS sets a read barrier on its source
    registers only), and the CTA's slot frees once its stores have left the SM at its port to
    L2; the L2 is write-back (Jia et al., "Dissecting the NVIDIA Volta GPU Architecture via
    Microbenchmarking", 2018), so the write-back to DRAM drains while the next CTA loads. Its chain holds its stores' bytes at
    that port instead of their DRAM time, and it queues behind no other CTA (its cycle is
    that chain); the throughput bound still moves every byte through DRAM. Measured
    (calibration/h200/measured/row_phases, finding (a); cta_cost): one 16-warp rmsnorm CTA a
    SM issues its 64 KB of stores in 1.15 us and the next CTA starts 0.35 us later, a 4.44 us
    cycle for 128 KB of DRAM traffic (4.08 us at the SM's share), where the serial chain
    with the stores at their DRAM time gave 5.81. At two or more CTAs a SM the other CTAs'
    loads compete with the drain in the same pipe, which the queue (``mva_cycle``) prices
    with the stores in each CTA's service; a tail batch has no successor and keeps them.

    ``first_reads``: the CTA's DRAM reads all go out in one round at its start
    (``one_round_reads``). Then two CTAs a SM with a successor, and no spill traffic in their
    chain, alternate at the memory pipe (``alternation_ns``) instead of queueing.

    ``rounds_ns``: the wait for the later dependent rounds of the row loads (``later_rounds_ns``),
    a part of one CTA's chain (``later load rounds``).

    ``pair``: the compiled two-round binary's pair cycle over 2 x service (``compiled_pair_cycle``,
    0 where not known). Two such CTAs a SM with a successor, and no spill traffic, cycle in
    ``pair x 2 x service`` in place of the queue (``PAIR_CYCLES``)."""
    engines: dict = {}
    chain_parts = {e: 0 for e in CHAIN_ENGINES}
    chain_parts["reduce"] = reduce_ns
    for d, k in demands:
        for name, v in engine_ns(d, m, r, active_units).items():
            engines[name] = engines.get(name, 0) + v * k
        one = engine_ns(d, m, 1, active_units)
        for name in CHAIN_ENGINES:
            if name != "copy":
                chain_parts[name] = chain_parts[name] + one.get(name, 0) * k
    if phases is None:
        chain_parts["element chain"] = emax(element_ns - chain_parts["vector"] - chain_parts["special"], 0)
    else:
        # per phase (element_chain_phases): the chain feeding its reduce against the vector and
        # SFU issue of that phase's ops only; the ops after the last reduce add issue alone
        issue = [0] * len(element_ns)
        for (d, k), p in zip(demands, phases):
            if p < len(issue):
                one = engine_ns(d, m, 1, active_units)
                issue[p] = issue[p] + (one.get("vector", 0) + one.get("special", 0)) * k
        excess = 0
        for chain_p, issue_p in zip(element_ns, issue):
            excess = excess + emax(chain_p - issue_p, 0)
        chain_parts["element chain"] = excess
    chain_parts["later load rounds"] = rounds_ns
    dram_ns = l2_ns = posted = 0
    total = _summed(demands, lambda d: True)
    if total is not None:
        engines["copy"] = engine_ns(total, m, r, active_units)["copy"]
        dram_ns, l2_ns = transfer_parts(total, engine_ns, m, r, active_units)
        for stores, group in ((False, _summed(demands, _is_load)), (True, _summed(demands, lambda d: not _is_load(d)))):
            if group is None:
                continue
            one = engine_ns(group, m, 1, active_units)["copy"]
            if m.l2_bw_device is not None:
                # one SM's own port to L2 caps its transfer however few SMs share DRAM: the
                # L2 bandwidth over all SMs (a tail of 8 CTAs does not get 1/8 of the device)
                port = group.l2 / (m.l2_bw_device / m.units)
                if stores and successor:
                    # one CTA alone on its SM posts its stores: their bytes leave at its port
                    # to L2, the write-back to DRAM drains under its successor's loads
                    posted = if_else(r == 1, port, 0)
                    one = if_else(r == 1, port, emax(one, port))
                else:
                    one = emax(one, port)
            chain_parts["copy"] = chain_parts["copy"] + one
    memory = engines.get("copy", 0) + engines.get("spill", 0)
    candidates = {"memory": memory}
    for name, v in engines.items():
        if name not in ("copy", "spill"):
            candidates[name] = v
    throughput = 0
    bound = "memory"
    for name, v in candidates.items():
        if is_array(v, throughput):
            throughput = emax(throughput, v)
            bound = ""
        elif v > throughput:
            throughput, bound = v, name
    chain = latency
    for v in chain_parts.values():
        chain = chain + v
    # The r CTAs share the SM's memory pipe and each spends the rest of its chain alone:
    # a closed queue of r customers (mean value analysis, the machine-repairman model)
    service = emax(memory / r, chain_parts["copy"] + chain_parts["spill"])
    think = chain - chain_parts["copy"] - chain_parts["spill"]
    queued = mva_cycle(r, service, think)
    alternating = False
    paired = 0
    if successor:
        # two CTAs a SM with no spill traffic in their chain (spilled values reloaded after the
        # reduction are reads in the chain as well: row_spill) cycle as a pair at the memory pipe
        no_spill = chain_parts["spill"] <= 0
        two = (r == 2) & no_spill if is_array(r, no_spill) else (r == 2 and bool(no_spill))
        if is_array(first_reads) or first_reads:
            # ... whose reads all precede their compute: they alternate
            alternating = two & first_reads if is_array(two, first_reads) else two
            queued = if_else(alternating, alternation_ns(service, think), queued)
        if is_array(pair) or pair > 0:
            # ... of a two-round binary: the compiled order at the FIFO pipe (PAIR_CYCLES)
            paired = where(two & (pair > 0), pair, 0) if is_array(two, pair) else (pair if two else 0)
            queued = if_else(paired > 0, paired * 2 * service, queued)
    if successor:
        # one CTA queues behind no other: its cycle is its chain (the stores posted in it)
        queued = if_else(r == 1, chain, queued)
    # the SM starts its r CTAs no faster than its launch rate (tfx.analysis.cta_launch)
    launch_floor = cta_launch.floor_ns(r, m)
    ns = emax(emax(emax(throughput, chain), queued), launch_floor)
    return BodyTime(ns, throughput, bound, chain, latency, chain_parts, queued, dram_ns, l2_ns,
                    launch_floor, posted, service, think, alternating, paired), engines


# The compiled row kernels whose row tile loads in more than one dependent round (Triton 3.6.0,
# sm_90, the binaries of bench/h200/triton_kernels.py that the issue-15 campaigns time and
# kernels/rmsnorm.tile and kernels/softmax.tile describe; calibration/h200/measured/row_sass_counts/
# load_rounds.csv, bench/h200/row_load_rounds.py): (kernel, N, BLOCK_M, WARPS) -> rounds. A
# thread's loads issue in program order and an instruction that touches an outstanding load's
# registers waits for its data, so a load placed after such an instruction goes out one DRAM
# round trip later: ptxas issues 8 of (8, 8) at N = 4096's 16 vectors, unpacks their bf16 into
# the registers the next 8 are loaded into, then issues those; (8, 16) at 4096 issues its 8th
# after the first row's butterfly, into the 4th's registers. Every other non-spilling compiled
# configuration (104 more) loads its tile in one round.
LOAD_ROUNDS = {
    ("rmsnorm", 1024, 8, 2): 2, ("rmsnorm", 1024, 8, 4): 2, ("rmsnorm", 1024, 16, 4): 2,
    ("rmsnorm", 1024, 16, 16): 2, ("rmsnorm", 2048, 1, 1): 2, ("rmsnorm", 2048, 4, 2): 2,
    ("rmsnorm", 2048, 8, 4): 2, ("rmsnorm", 2048, 8, 8): 2, ("rmsnorm", 2048, 8, 16): 2,
    ("rmsnorm", 2048, 16, 8): 2, ("rmsnorm", 4096, 4, 4): 2, ("rmsnorm", 4096, 8, 8): 2,
    ("rmsnorm", 4096, 8, 16): 2, ("rmsnorm", 8192, 1, 2): 2, ("rmsnorm", 8192, 2, 8): 2,
    ("rmsnorm", 8192, 4, 8): 2, ("rmsnorm", 16384, 1, 4): 2, ("rmsnorm", 16384, 1, 8): 2,
    ("rmsnorm", 16384, 1, 16): 2, ("rmsnorm", 16384, 2, 8): 2, ("rmsnorm", 32768, 1, 8): 2,
    ("softmax", 1024, 2, 1): 2, ("softmax", 1024, 4, 1): 2, ("softmax", 1024, 8, 1): 3,
    ("softmax", 1024, 8, 2): 2, ("softmax", 1024, 8, 4): 2, ("softmax", 2048, 2, 1): 2,
    ("softmax", 2048, 4, 1): 2, ("softmax", 2048, 4, 2): 2, ("softmax", 2048, 8, 4): 2,
    ("softmax", 2048, 8, 8): 2, ("softmax", 4096, 1, 1): 2, ("softmax", 4096, 2, 1): 3,
    ("softmax", 4096, 4, 4): 2, ("softmax", 4096, 8, 8): 2, ("softmax", 4096, 8, 16): 2,
    ("softmax", 8192, 1, 2): 2, ("softmax", 8192, 4, 8): 2, ("softmax", 16384, 1, 4): 2,
    ("softmax", 32768, 1, 8): 2, ("softmax", 32768, 1, 16): 2,
}


# The kernels whose binaries the table covers, and the configurations it covers: every one the
# issue-15 campaigns draw (bench/h200/measure_accuracy.py: N a power of two from 1,024 to 32,768,
# BLOCK_M and WARPS each 1, 2, 4, 8 or 16; row_sass_counts compiled all 260, 145 of them spill-free).
ROUNDS_KERNELS = ("rmsnorm", "softmax")
ROUNDS_ISA = "sm_90"            # the binaries' instruction set: another device runs other code
ROUNDS_N = (1024, 2048, 4096, 8192, 16384, 32768)
ROUNDS_TILE = (1, 2, 4, 8, 16)


def _binary_config(kernel: str, env: dict, isa: str | None):
    """``env``'s (N, BLOCK_M, WARPS) where a table of compiled sm_90 row binaries could hold
    ``kernel`` (the profile's ``isa`` is the binaries', ``ROUNDS_ISA``, and ``kernel`` one of
    ``ROUNDS_KERNELS``), else None."""
    if isa != ROUNDS_ISA or kernel not in ROUNDS_KERNELS:
        return None
    try:
        return env["N"], env["BLOCK_M"], env["WARPS"]
    except KeyError:
        return None


def _table_value(table: dict, kernel: str, n, bm, w, otherwise) -> Any:
    """``table``'s value for ``kernel`` at (n, bm, w), ``otherwise`` where it holds none
    (arrays elementwise: ``otherwise`` an array or a scalar)."""
    if not is_array(n, bm, w):
        return table.get((kernel, int(n), int(bm), int(w)), otherwise)
    out = otherwise
    for (k, kn, kbm, kw), value in table.items():
        if k == kernel:
            out = where((n == kn) & (bm == kbm) & (w == kw), value, out)
    return out


def compiled_rounds(kernel: str, env: dict, isa: str | None) -> Any:
    """The dependent rounds in which the compiled kernel ``kernel`` at ``env``'s N, BLOCK_M and
    WARPS loads its row tile (``LOAD_ROUNDS``; 1 for the other covered configurations), 0 where
    the binary is not known: another kernel, a configuration the table does not cover, or a
    device whose instruction set ``isa`` (the profile's ``isa``) is not the binaries'
    (``ROUNDS_ISA``) (arrays elementwise)."""
    config = _binary_config(kernel, env, isa)
    if config is None:
        return 0
    n, bm, w = config
    if not is_array(n, bm, w):
        if int(n) not in ROUNDS_N or int(bm) not in ROUNDS_TILE or int(w) not in ROUNDS_TILE:
            return 0
        return _table_value(LOAD_ROUNDS, kernel, n, bm, w, 1)
    import numpy as np
    known = np.isin(n, ROUNDS_N) & np.isin(bm, ROUNDS_TILE) & np.isin(w, ROUNDS_TILE)
    return _table_value(LOAD_ROUNDS, kernel, n, bm, w, where(known, 1, 0))


def one_round_reads(rounds, first_reads) -> Any:
    """Whether a CTA's DRAM reads all go out in one round at its start, so that two CTAs on an SM
    alternate at the memory pipe (``alternation_ns``): where the compiled binary is known
    (``compiled_rounds`` above 0) it is, when its row tile loads in one round (its reads after the
    reduction, rmsnorm's weight row, hit L2: every CTA reads the same N x 2 bytes); elsewhere
    ``first_reads`` (``reads_first``: every read of the body comes before its first reduce).
    Measured (docs/analysis.md 8 (x)): at two CTAs a SM the campaigns' rmsnorm configurations
    whose tile loads in one round cycle at 1.01-1.16 x their DRAM time ((2, 4) and (2, 16) at N =
    8192, (4, 8) and (4, 16) at 4096, (16, 8) at 1024), those in two rounds at 1.17-1.37 ((1, 16)
    and (1, 8) at 16384, (8, 8) and (8, 16) at 2048, (16, 16) at 1024, (2, 8) at 8192)."""
    if is_array(rounds):
        return where(rounds == 0, first_reads, rounds == 1)
    return first_reads if rounds == 0 else rounds == 1


def later_rounds_ns(rounds, latency, r) -> Any:
    """ns a CTA alone on its SM (r = 1) waits for the later dependent rounds of its row loads:
    each one more memory latency, ``(rounds - 1) x latency``, for no other CTA moves bytes
    through its SM while it waits. With two or more CTAs a SM the others' transfers run under
    that wait: 0 (arrays elementwise). Measured (docs/analysis.md 8 (w), (x)): one CTA a SM,
    rmsnorm (8, 16) at N = 4096 (second round of one vector) cycles in 5,386 ns where the one-
    round chain is priced 4,635 (+751, the DRAM latency 700); ncu_rows_s17's warps of the
    two-round kernels wait 2.70-3.01 us on their loads against 1.48-1.79 for the one-round ones.
    """
    return if_else(r == 1, emax(rounds - 1, 0) * latency, 0)


# The steady cycle of two CTAs a SM of the compiled row binaries whose tile loads in two dependent
# rounds (``LOAD_ROUNDS``), over 2 D (D: one CTA's X and Y bytes at one SM's DRAM share), from their
# SASS (Triton 3.6.0, sm_90, the binaries of ``LOAD_ROUNDS``; calibration/h200/measured/row_pair_sim/
# pair_cycles.csv and pair_cycles_h100.csv, bench/h200/row_pair_cycles.py): session 25's `slots`
# simulation (bench/h200/row_sass_sim.py) of one scheduler holding WARPS / 4 warps of each of the two
# CTA slots, issuing the compiled instructions in order at the profile's measured latencies, the tile's
# loads and the stores through one first-come-first-served pipe at the SM's DRAM share with the data
# 700 ns after service, rmsnorm's weight row from L2 (200 ns), a slot refilled as its CTA exits. Every
# configuration the campaigns hold at two CTAs a SM with a two-round tile, non-spilling:
# (kernel, N, BLOCK_M, WARPS) -> (cycle / 2 D at the share PAIR_SHARES[0], ... at PAIR_SHARES[1]).
# The pair's excess over 2 D is latency the second round exposes, so it shrinks as D grows: at the
# H100 SXM5's share (3,350 x 0.883 / 132 = 22.41 B/ns) rmsnorm (8, 16) at 2048 cycles in 1.1166 x 2 D,
# at the H200's (4,238.4 / 132 = 32.11) in 1.2032. Where the table holds a configuration the queue
# (``mva_cycle``) is not what sets its pair (docs/analysis.md 8 (ai)).
PAIR_SHARES = (22.409, 32.109)     # B/ns a SM: the H100 SXM5's and the H200's DRAM share
PAIR_CYCLES = {
    ("rmsnorm", 1024, 16, 4): (1.1518, 1.2352), ("rmsnorm", 1024, 16, 16): (1.1089, 1.1927),
    ("rmsnorm", 2048, 8, 8): (1.1175, 1.1959), ("rmsnorm", 2048, 8, 16): (1.1166, 1.2032),
    ("rmsnorm", 8192, 2, 8): (1.1326, 1.2141), ("rmsnorm", 16384, 1, 4): (1.0515, 1.1406),
    ("rmsnorm", 16384, 1, 8): (1.1050, 1.2012), ("rmsnorm", 16384, 1, 16): (1.1668, 1.2757),
    ("softmax", 2048, 8, 8): (1.2260, 1.3474),
}


def pair_at_share(cycles: tuple, share: float) -> float:
    """A ``PAIR_CYCLES`` entry at one SM's DRAM share ``share`` (B/ns): linear between the two
    simulated shares, held at the nearer one outside them (the simulation ran at those two).
    *Worked example*: rmsnorm (8, 16) at 2048, (1.1166, 1.2032), at 27.259 B/ns (halfway):
    1.1166 + 0.5 x (1.2032 - 1.1166) = 1.1599."""
    lo, hi = PAIR_SHARES
    t = min(max((share - lo) / (hi - lo), 0.0), 1.0)
    return cycles[0] + t * (cycles[1] - cycles[0])


def compiled_pair_cycle(kernel: str, env: dict, isa: str | None, share: float) -> Any:
    """The compiled two-round binary's cycle of two CTAs a SM over 2 D (``PAIR_CYCLES``) at one SM's
    DRAM share ``share`` (B/ns; ``pair_at_share``), 0 where the table holds none: another kernel or
    configuration, or a device whose instruction set ``isa`` is not the binaries' (``ROUNDS_ISA``)
    (arrays elementwise)."""
    config = _binary_config(kernel, env, isa)
    if config is None:
        return 0
    table = {key: pair_at_share(cycles, share) for key, cycles in PAIR_CYCLES.items()}
    return _table_value(table, kernel, *config, 0)


# The warp instructions one warp of the compiled row kernels issues (Triton 3.6.0, sm_90, the same
# binaries as ``LOAD_ROUNDS``; calibration/h200/measured/row_sass_counts/counts.csv, every instruction
# up to the last EXIT, predicated ones included: the kernels are loop-free, so the static count is
# what a warp executes; Nsight Compute's smsp__inst_executed on the H200 matches it exactly for the
# eight kernels of calibration/h200/measured/ncu_rows_s15): (kernel, N, BLOCK_M, WARPS) -> count,
# all 270 configurations the issue-15 campaigns drew, spilling ones included (their local loads and
# stores are instructions a warp issues too).
INSTRUCTIONS = {
    ("rmsnorm", 1024, 1, 1): 287, ("rmsnorm", 1024, 1, 2): 181, ("rmsnorm", 1024, 1, 4): 120,
    ("rmsnorm", 1024, 1, 8): 94, ("rmsnorm", 1024, 1, 16): 83, ("rmsnorm", 1024, 2, 1): 483,
    ("rmsnorm", 1024, 2, 2): 292, ("rmsnorm", 1024, 2, 4): 187, ("rmsnorm", 1024, 2, 8): 136,
    ("rmsnorm", 1024, 2, 16): 111, ("rmsnorm", 1024, 4, 1): 879, ("rmsnorm", 1024, 4, 2): 516,
    ("rmsnorm", 1024, 4, 4): 323, ("rmsnorm", 1024, 4, 8): 207, ("rmsnorm", 1024, 4, 16): 135,
    ("rmsnorm", 1024, 8, 1): 1780, ("rmsnorm", 1024, 8, 2): 964, ("rmsnorm", 1024, 8, 4): 595,
    ("rmsnorm", 1024, 8, 8): 349, ("rmsnorm", 1024, 8, 16): 206, ("rmsnorm", 1024, 16, 1): 6466,
    ("rmsnorm", 1024, 16, 2): 1981, ("rmsnorm", 1024, 16, 4): 1139, ("rmsnorm", 1024, 16, 8): 633,
    ("rmsnorm", 1024, 16, 16): 348, ("rmsnorm", 2048, 1, 1): 540, ("rmsnorm", 2048, 1, 2): 307,
    ("rmsnorm", 2048, 1, 4): 183, ("rmsnorm", 2048, 1, 8): 122, ("rmsnorm", 2048, 1, 16): 96,
    ("rmsnorm", 2048, 2, 1): 917, ("rmsnorm", 2048, 2, 2): 504, ("rmsnorm", 2048, 2, 4): 294,
    ("rmsnorm", 2048, 2, 8): 189, ("rmsnorm", 2048, 2, 16): 138, ("rmsnorm", 2048, 4, 1): 1777,
    ("rmsnorm", 2048, 4, 2): 904, ("rmsnorm", 2048, 4, 4): 518, ("rmsnorm", 2048, 4, 8): 325,
    ("rmsnorm", 2048, 4, 16): 209, ("rmsnorm", 2048, 8, 1): 6714, ("rmsnorm", 2048, 8, 2): 2034,
    ("rmsnorm", 2048, 8, 4): 966, ("rmsnorm", 2048, 8, 8): 597, ("rmsnorm", 2048, 8, 16): 351,
    ("rmsnorm", 2048, 16, 1): 13398, ("rmsnorm", 2048, 16, 2): 8326, ("rmsnorm", 2048, 16, 4): 1983,
    ("rmsnorm", 2048, 16, 8): 1141, ("rmsnorm", 2048, 16, 16): 635, ("rmsnorm", 4096, 1, 1): 1050,
    ("rmsnorm", 4096, 1, 2): 566, ("rmsnorm", 4096, 1, 4): 309, ("rmsnorm", 4096, 1, 8): 185,
    ("rmsnorm", 4096, 1, 16): 124, ("rmsnorm", 4096, 2, 1): 2033, ("rmsnorm", 4096, 2, 2): 940,
    ("rmsnorm", 4096, 2, 4): 506, ("rmsnorm", 4096, 2, 8): 296, ("rmsnorm", 4096, 2, 16): 191,
    ("rmsnorm", 4096, 4, 1): 6398, ("rmsnorm", 4096, 4, 2): 1967, ("rmsnorm", 4096, 4, 4): 906,
    ("rmsnorm", 4096, 4, 8): 520, ("rmsnorm", 4096, 4, 16): 327, ("rmsnorm", 4096, 8, 1): 14474,
    ("rmsnorm", 4096, 8, 2): 8273, ("rmsnorm", 4096, 8, 4): 1961, ("rmsnorm", 4096, 8, 8): 968,
    ("rmsnorm", 4096, 8, 16): 599, ("rmsnorm", 4096, 16, 2): 16121, ("rmsnorm", 4096, 16, 4): 8336,
    ("rmsnorm", 4096, 16, 8): 1985, ("rmsnorm", 4096, 16, 16): 1247, ("rmsnorm", 8192, 1, 1): 2373,
    ("rmsnorm", 8192, 1, 2): 1093, ("rmsnorm", 8192, 1, 4): 574, ("rmsnorm", 8192, 1, 8): 322,
    ("rmsnorm", 8192, 1, 16): 198, ("rmsnorm", 8192, 2, 1): 7688, ("rmsnorm", 8192, 2, 2): 2049,
    ("rmsnorm", 8192, 2, 4): 958, ("rmsnorm", 8192, 2, 8): 523, ("rmsnorm", 8192, 2, 16): 312,
    ("rmsnorm", 8192, 4, 1): 14874, ("rmsnorm", 8192, 4, 2): 8441, ("rmsnorm", 8192, 4, 4): 2014,
    ("rmsnorm", 8192, 4, 8): 932, ("rmsnorm", 8192, 4, 16): 546, ("rmsnorm", 8192, 8, 2): 16748,
    ("rmsnorm", 8192, 8, 4): 8460, ("rmsnorm", 8192, 8, 8): 2024, ("rmsnorm", 8192, 8, 16): 1196,
    ("rmsnorm", 8192, 16, 4): 16433, ("rmsnorm", 8192, 16, 8): 8516,
    ("rmsnorm", 8192, 16, 16): 2933, ("rmsnorm", 16384, 1, 1): 5475, ("rmsnorm", 16384, 1, 2): 2477,
    ("rmsnorm", 16384, 1, 4): 1107, ("rmsnorm", 16384, 1, 8): 588, ("rmsnorm", 16384, 1, 16): 333,
    ("rmsnorm", 16384, 2, 1): 15234, ("rmsnorm", 16384, 2, 2): 7956, ("rmsnorm", 16384, 2, 4): 2075,
    ("rmsnorm", 16384, 2, 8): 975, ("rmsnorm", 16384, 2, 16): 541, ("rmsnorm", 16384, 4, 2): 16887,
    ("rmsnorm", 16384, 4, 4): 8490, ("rmsnorm", 16384, 4, 8): 2052, ("rmsnorm", 16384, 4, 16): 1162,
    ("rmsnorm", 16384, 8, 4): 16880, ("rmsnorm", 16384, 8, 8): 8260,
    ("rmsnorm", 16384, 8, 16): 4449, ("rmsnorm", 16384, 16, 8): 16974,
    ("rmsnorm", 16384, 16, 16): 8967, ("rmsnorm", 32768, 1, 1): 12037,
    ("rmsnorm", 32768, 1, 2): 7597, ("rmsnorm", 32768, 1, 4): 2525, ("rmsnorm", 32768, 1, 8): 1131,
    ("rmsnorm", 32768, 1, 16): 610, ("rmsnorm", 32768, 2, 2): 17299, ("rmsnorm", 32768, 2, 4): 8036,
    ("rmsnorm", 32768, 2, 8): 2128, ("rmsnorm", 32768, 2, 16): 1177,
    ("rmsnorm", 32768, 4, 4): 16942, ("rmsnorm", 32768, 4, 8): 8614,
    ("rmsnorm", 32768, 4, 16): 4629, ("rmsnorm", 32768, 8, 8): 17023,
    ("rmsnorm", 32768, 8, 16): 8414, ("rmsnorm", 32768, 16, 16): 17367,
    ("softmax", 1024, 1, 1): 433, ("softmax", 1024, 1, 2): 269, ("softmax", 1024, 1, 4): 177,
    ("softmax", 1024, 1, 8): 135, ("softmax", 1024, 1, 16): 116, ("softmax", 1024, 2, 1): 844,
    ("softmax", 1024, 2, 2): 496, ("softmax", 1024, 2, 4): 310, ("softmax", 1024, 2, 8): 181,
    ("softmax", 1024, 2, 16): 139, ("softmax", 1024, 4, 1): 1668, ("softmax", 1024, 4, 2): 952,
    ("softmax", 1024, 4, 4): 578, ("softmax", 1024, 4, 8): 318, ("softmax", 1024, 4, 16): 181,
    ("softmax", 1024, 8, 1): 3316, ("softmax", 1024, 8, 2): 1864, ("softmax", 1024, 8, 4): 1114,
    ("softmax", 1024, 8, 8): 592, ("softmax", 1024, 8, 16): 318, ("softmax", 1024, 16, 1): 8401,
    ("softmax", 1024, 16, 2): 3922, ("softmax", 1024, 16, 4): 2186, ("softmax", 1024, 16, 8): 1140,
    ("softmax", 1024, 16, 16): 592, ("softmax", 2048, 1, 1): 823, ("softmax", 2048, 1, 2): 462,
    ("softmax", 2048, 1, 4): 273, ("softmax", 2048, 1, 8): 181, ("softmax", 2048, 1, 16): 139,
    ("softmax", 2048, 2, 1): 1617, ("softmax", 2048, 2, 2): 877, ("softmax", 2048, 2, 4): 500,
    ("softmax", 2048, 2, 8): 314, ("softmax", 2048, 2, 16): 185, ("softmax", 2048, 4, 1): 3208,
    ("softmax", 2048, 4, 2): 1710, ("softmax", 2048, 4, 4): 956, ("softmax", 2048, 4, 8): 582,
    ("softmax", 2048, 4, 16): 322, ("softmax", 2048, 8, 1): 8661, ("softmax", 2048, 8, 2): 3607,
    ("softmax", 2048, 8, 4): 1868, ("softmax", 2048, 8, 8): 1118, ("softmax", 2048, 8, 16): 596,
    ("softmax", 2048, 16, 1): 19788, ("softmax", 2048, 16, 2): 11917,
    ("softmax", 2048, 16, 4): 3926, ("softmax", 2048, 16, 8): 2190, ("softmax", 2048, 16, 16): 1144,
    ("softmax", 4096, 1, 1): 1609, ("softmax", 4096, 1, 2): 854, ("softmax", 4096, 1, 4): 466,
    ("softmax", 4096, 1, 8): 277, ("softmax", 4096, 1, 16): 185, ("softmax", 4096, 2, 1): 3189,
    ("softmax", 4096, 2, 2): 1651, ("softmax", 4096, 2, 4): 881, ("softmax", 4096, 2, 8): 504,
    ("softmax", 4096, 2, 16): 318, ("softmax", 4096, 4, 1): 8516, ("softmax", 4096, 4, 2): 3649,
    ("softmax", 4096, 4, 4): 1714, ("softmax", 4096, 4, 8): 960, ("softmax", 4096, 4, 16): 586,
    ("softmax", 4096, 8, 1): 22462, ("softmax", 4096, 8, 2): 11942, ("softmax", 4096, 8, 4): 3612,
    ("softmax", 4096, 8, 8): 1872, ("softmax", 4096, 8, 16): 1122, ("softmax", 4096, 16, 2): 22856,
    ("softmax", 4096, 16, 4): 11921, ("softmax", 4096, 16, 8): 3930,
    ("softmax", 4096, 16, 16): 2376, ("softmax", 8192, 1, 1): 3456, ("softmax", 8192, 1, 2): 1647,
    ("softmax", 8192, 1, 4): 867, ("softmax", 8192, 1, 8): 479, ("softmax", 8192, 1, 16): 290,
    ("softmax", 8192, 2, 1): 10254, ("softmax", 8192, 2, 2): 3788, ("softmax", 8192, 2, 4): 1667,
    ("softmax", 8192, 2, 8): 897, ("softmax", 8192, 2, 16): 520, ("softmax", 8192, 4, 1): 22493,
    ("softmax", 8192, 4, 2): 11403, ("softmax", 8192, 4, 4): 3714, ("softmax", 8192, 4, 8): 1740,
    ("softmax", 8192, 4, 16): 986, ("softmax", 8192, 8, 2): 24684, ("softmax", 8192, 8, 4): 12089,
    ("softmax", 8192, 8, 8): 3682, ("softmax", 8192, 8, 16): 2163, ("softmax", 8192, 16, 4): 24289,
    ("softmax", 8192, 16, 8): 12035, ("softmax", 8192, 16, 16): 5516,
    ("softmax", 16384, 1, 1): 8866, ("softmax", 16384, 1, 2): 3405, ("softmax", 16384, 1, 4): 1660,
    ("softmax", 16384, 1, 8): 880, ("softmax", 16384, 1, 16): 492, ("softmax", 16384, 2, 1): 20887,
    ("softmax", 16384, 2, 2): 11332, ("softmax", 16384, 2, 4): 3823, ("softmax", 16384, 2, 8): 1685,
    ("softmax", 16384, 2, 16): 916, ("softmax", 16384, 4, 2): 22835,
    ("softmax", 16384, 4, 4): 11525, ("softmax", 16384, 4, 8): 3772,
    ("softmax", 16384, 4, 16): 1983, ("softmax", 16384, 8, 4): 24643,
    ("softmax", 16384, 8, 8): 11715, ("softmax", 16384, 8, 16): 5321,
    ("softmax", 16384, 16, 8): 25545, ("softmax", 16384, 16, 16): 12436,
    ("softmax", 32768, 1, 1): 17810, ("softmax", 32768, 1, 2): 9007, ("softmax", 32768, 1, 4): 3554,
    ("softmax", 32768, 1, 8): 1682, ("softmax", 32768, 1, 16): 900, ("softmax", 32768, 2, 2): 22638,
    ("softmax", 32768, 2, 4): 11426, ("softmax", 32768, 2, 8): 3694,
    ("softmax", 32768, 2, 16): 2025, ("softmax", 32768, 4, 4): 22932,
    ("softmax", 32768, 4, 8): 11163, ("softmax", 32768, 4, 16): 5893,
    ("softmax", 32768, 8, 8): 23806, ("softmax", 32768, 8, 16): 12388,
    ("softmax", 32768, 16, 16): 26354, ("softmax", 65536, 1, 2): 18024,
    ("softmax", 65536, 1, 4): 9081, ("softmax", 65536, 1, 8): 3523, ("softmax", 65536, 1, 16): 1875,
    ("softmax", 65536, 2, 4): 22770, ("softmax", 65536, 2, 8): 11152,
    ("softmax", 65536, 2, 16): 5790, ("softmax", 65536, 4, 8): 23508,
    ("softmax", 65536, 4, 16): 12627, ("softmax", 65536, 8, 16): 25110,
}


def compiled_instructions(kernel: str, env: dict, isa: str | None) -> Any:
    """The warp instructions one warp of the compiled kernel ``kernel`` at ``env``'s N, BLOCK_M and
    WARPS issues (``INSTRUCTIONS``), 0 where the binary is not known: another kernel, a
    configuration the table does not hold, or a device whose instruction set ``isa`` is not the
    binaries' (``ROUNDS_ISA``) (arrays elementwise)."""
    config = _binary_config(kernel, env, isa)
    return 0 if config is None else _table_value(INSTRUCTIONS, kernel, *config, 0)


def issue_floor_ns(instructions, r, warps, subpartitions, clock_ghz) -> Any:
    """ns the busiest warp scheduler of an SM holding r CTAs of ``warps`` warps takes to issue
    their instructions, ``instructions`` a warp: a sub-partition issues one warp instruction a
    cycle and no more (calibration/h200/measured/row_sass_counts, finding 1: its issue-active
    cycles equal its instructions executed to 1.3%), and the SM's warps are spread over its
    ``subpartitions`` schedulers, so the busiest holds ceil(r x warps / subpartitions):
    ``ceil(r x warps / subpartitions) x instructions / clock`` (0 without a count)."""
    return cdiv(r * warps, subpartitions) * instructions / clock_ghz


def waves_ns(full_waves, first_ns, batch_ns):
    """ns of a launch's full waves: the first in lock step (``first_ns``, its ops priced one
    after another at the resident CTAs' demand), the other ``full_waves - 1`` overlapping
    (``batch_ns`` each); 0 without a full wave."""
    if is_array(full_waves, first_ns, batch_ns):
        return where(full_waves >= 1, first_ns + (full_waves - 1) * batch_ns, 0)
    return first_ns + (full_waves - 1) * batch_ns if full_waves >= 1 else 0


def describe_waves(full_waves, first_ns, batch_ns, fmt) -> str:
    """The waves line of a straight body: the first full wave in lock step, then the
    overlapping batches, with values."""
    if full_waves < 1:
        return "no full wave"
    first = f"the first wave in lock step {fmt(float(first_ns))} (its CTAs start together)"
    if full_waves == 1:
        return first
    return (f"{first} + {format_counted(full_waves - 1, 'full wave')} overlapping x {fmt(float(batch_ns))} = "
            f"{fmt(float(waves_ns(full_waves, first_ns, batch_ns)))}")


def mva_cycle(r, service, think):
    """ns for each of r customers to complete one cycle of (queue at one server taking
    ``service`` each, then ``think`` alone), by exact mean value analysis
    (tfx.analysis.closed_queue, one station). Between the asymptotes max(r x service,
    service + think); 0 where r is 0."""
    cycle = closed_queue.cycle_ns(r, (service,), think)
    return if_else(r >= 1, cycle, 0)


def describe(bt: BodyTime, r, fmt, m=None) -> str:
    """The breakdown line: the batch is the longest of the throughput, one CTA's chain and
    the r CTAs' queue at the memory pipe, with values; where the SM's CTA launch rate sets
    it (``m`` given), the launch floor's words (tfx.analysis.cta_launch) end the line."""
    parts = " + ".join(f"{name} {fmt(float(v))}" for name, v in bt.chain_parts.items() if float(v) > 0)
    if float(bt.posted) > 0:
        parts += (f" (its stores posted: {fmt(float(bt.posted))} at its port to L2, the write-back to DRAM "
                  f"under the next CTA's loads)")
    ctas = format_counted(r, "CTA")
    # the queue lies between the two bounds; the longer bound names what limits the batch
    side = "chain" if float(bt.chain) > float(bt.throughput) else "throughput"
    memory = ""
    if bt.bound == "memory" and float(bt.l2_ns) > 0:
        memory = f": max(DRAM {fmt(float(bt.dram_ns))}, L2 {fmt(float(bt.l2_ns))})"
        spill = float(bt.throughput) - max(float(bt.dram_ns), float(bt.l2_ns))
        if spill > 0.005:
            memory += f" + spill {fmt(spill)}"
    if not is_array(bt.alternating) and bt.alternating:
        queue = (f"{ctas} alternating at the memory pipe (each CTA's DRAM reads go out in one round at its "
                 f"start: one's transfer runs under the other's compute), max(2 x {fmt(float(bt.service))}, "
                 f"{fmt(float(bt.service))} + {fmt(float(bt.think))}) = {fmt(float(bt.queued))}")
    elif not is_array(bt.paired) and float(bt.paired) > 0:
        queue = (f"{ctas} of the compiled two-round binary at the memory pipe (its tile's later loads, "
                 f"weight row and stores in their compiled order through one first-come-first-served "
                 f"pipe: PAIR_CYCLES), {format_plain(float(bt.paired))} x 2 x {fmt(float(bt.service))} = {fmt(float(bt.queued))}")
    else:
        queue = f"queue of {ctas} {fmt(float(bt.queued))} at the memory pipe"
    line = (f"{ctas} resident per SM, overlapping: batch = max(throughput {fmt(float(bt.throughput))} "
            f"({bt.bound} over {ctas}{memory}), one CTA's chain {fmt(float(bt.chain))} = latency "
            f"{fmt(float(bt.latency))} + {parts}, {queue})")
    if m is not None and float(bt.launch_floor) > max(float(bt.throughput), float(bt.chain), float(bt.queued)):
        return f"{line}; {cta_launch.describe(r, m, fmt)}"
    return f"{line} = {fmt(float(bt.ns))}, bound by the {side}"
