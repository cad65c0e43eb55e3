"""A warp-mma k-loop trip: the warps issue their mma, then their copies, in series
(docs/analysis.md, section 8, "warp-mma trip").

On the warpgroup mma (wgmma) a CTA's warps issue the trip's mma and it runs on the tensor
cores by itself while the same warps issue the next stage's copies: the tensor cores and the
SM's load path overlap, and a round of r CTAs takes the longer of the two (the engines' max).
On the warp mma (mma.sync: 2-warp CTAs, or BM < 64) there is nothing to run by itself: each
warp's instruction stream is the mma (per k-step its ldmatrix, the fp8 -> f16 conversions and
the mma.sync, the warp's sub-partition busy for their whole issue time,
tfx.analysis.mma_layout.warp_mma), and Triton's trip issues the next stage's cp.async copies
at its end (calibration/h200/measured/fp8_mma, fp8_64x64x128_w2_s5.sass.txt: after the k-steps'
LDSM, F2FP and HMMA a CTA barrier, then the 16 LDGSTS of the next stage among the trip's last
two HMMA; fp8_16x32x64_w4_s2.sass.txt the same on 4 warps). Those copies pass the SM's one load path, which all
resident CTAs share (tfx.analysis.load_trip: 16-byte copies at the port's 128.7 B/ns, copies of
rows of 64 B or less at 7.06 ns and narrow copies at 8.3 ns per warp-wide instruction); a warp
waits for its copies to be taken before its next instruction. So one CTA's trip is its issue
time, then its copies' time on the load path, and the CTA barrier of the next trip starts its
warps together again.

r co-resident CTAs doing that share two stations in no fixed order: a closed queueing network
(tfx.analysis.closed_queue, exact mean value analysis, as the attention chains of
tfx.analysis.chain_overlap) of r customers, the CTAs, each trip through

* the sub-partitions (``issue``): a CTA's share of the busiest sub-partition's round,
  ``busiest x warp_ns / r`` (busiest = ceil(r x warps / 4) warps,
  mma_layout.busiest_subpartition_warps), so that r CTAs saturate it at the warp-mma round
  the engines already price;
* the load path (``copies``): the CTA's copies (load_trip.copies_port_ns);
* a delay (``delay``): the rest of one CTA's own issue time, its warps' tiles side by side on
  their sub-partitions (``ceil(warps / 4) x warp_ns`` in all) beyond its queued share.

One CTA alone takes its issue time plus its copies; many saturate the busier station:
cycle(r) -> max(busiest x warp_ns, r x copies). Between the two the CTAs' copies and issue
collide. Held-out (issue15 gemm_fp8 8192x8192x4096, 64x128x64 on 2 warps, 4 stages, 4 CTAs a SM,
measured 1.1245 ms: about 1,129 ns a round of 64 trips over 15.5 waves) the engines' max gave
865.3 ns (the busiest sub-partition's two warps), the network gives 1,048.2 ns.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from tfx.analysis import closed_queue
from tfx.analysis.mma_layout import busiest_subpartition_warps
from tfx.analysis.numbers import cdiv, ceil_int, emax, is_array, ratio, where, where_applies
from tfx.hw.units import format_counted, format_counted_verb, format_percent


class WarpTrip(NamedTuple):
    """One CTA's demands a trip of a warp-mma k-loop (ns), and what they come from."""

    issue: Any            # its queued share of the busiest sub-partition: busiest x warp_ns / resident
    copies: Any           # its copies on the SM's load path
    delay: Any            # the rest of its own issue time: ceil(warps / 4) x warp_ns - issue
    resident: Any         # CTAs on the SM
    busiest: Any          # warps on the busiest sub-partition
    warp_ns: Any          # one warp's mma issue time a trip (mma_layout.warp_mma)
    own_warps: Any        # ceil(warps / 4): one CTA's warps on each of its sub-partitions
    applies: Any = 1      # 1 where the dot takes the warp mma (arrays: per configuration), else 0
    chain: Any = 0        # one warp's serialized fragment chain a trip (tfx.analysis.fragment_chain), 0: none
    fragments: Any = None  # ... and the fragment_chain.Chain it is the time of (the breakdown's clause), None: none
    walk: Any = 0         # a lone warp's compiled k-loop a trip (tfx.analysis.lone_walk), 0: none or not alone
    converts: Any = 0     # of warp_ns: the warp's conversions of the trip's register casts (special-function lanes)


def stations(warp_ns, warps, resident, subpartitions, copies_ns, applies=1, chain_ns=0, walk_ns=0) -> WarpTrip:
    """The trip's stations for ``resident`` CTAs of ``warps`` warps whose warps each issue
    ``warp_ns`` of mma a trip and whose copies take ``copies_ns`` of the SM's load path
    (arrays elementwise). ``resident`` counts whole CTAs, at least one. ``chain_ns``: each
    warp's serialized fragment chain (tfx.analysis.fragment_chain): its own time a trip is at
    least that latency, which the sub-partition spends idle, so the delay is the longer of its
    own issue and its chain, beyond its queued share. ``walk_ns``: one warp's walk of its
    compiled k-loop (tfx.analysis.lone_walk), kept where the busiest sub-partition holds one
    warp (a warp alone: nothing issues while it waits), a floor of the round (``round_ns``)."""
    r = emax(ceil_int(resident), 1)
    busiest = busiest_subpartition_warps(warps, r, subpartitions)
    own = cdiv(warps, subpartitions)
    issue = ratio(warp_ns * busiest, r)
    delay = emax(emax(warp_ns * own, chain_ns) - issue, 0)
    walk = where(busiest <= 1, walk_ns, 0) if is_array(busiest, walk_ns) else (walk_ns if busiest <= 1 else 0)
    return WarpTrip(issue, copies_ns, delay, r, busiest, warp_ns, own, applies, chain_ns, walk=walk)


def unpipelined_stations(warp_ns, warps, resident, subpartitions, copies_ns, single_ns, applies=1) -> WarpTrip:
    """The stations of an unpipelined (1-stage) warp-mma k-loop's trip (docs/analysis.md, section 8,
    "The unpipelined warp-mma trip"): ``stations``' sub-partition share, the trip's loads into
    registers on the SM's load path (``copies_ns``: tfx.analysis.load_trip.sync_load_ns) and, as the
    delay, the rest of one CTA's unpipelined trip ``single_ns`` (its chain, round trip and compute in
    series: tfx.analysis.pipeline_depth.unpipelined_cycle_ns) beyond those two, so that one CTA alone
    cycles in ``single_ns`` (arrays elementwise)."""
    t = stations(warp_ns, warps, resident, subpartitions, copies_ns, applies)
    return t._replace(delay=emax(single_ns - t.issue - copies_ns, 0))


def round_ns(t: WarpTrip) -> Any:
    """A round of the resident CTAs' trips: the cycle of the closed network (module
    docstring); 0 where the dot does not take the warp mma."""
    cycle = emax(closed_queue.cycle_ns(t.resident, [t.issue, t.copies], t.delay), t.walk)
    return where_applies(t.applies, cycle)


def _converts(t: WarpTrip, fmt) -> str:
    """The breakdown's clause for the warps' conversions of the trip's casts, '' where there are none."""
    if not float(t.converts) > 0:
        return ""
    return (f"convert their share of the trip's casts on their sub-partitions' special-function lanes "
            f"({fmt(t.converts)} a warp, in its {fmt(t.warp_ns)}), ")


def describe(line, t: WarpTrip, fmt) -> str:
    """One line of the breakdown (scalar trips)."""
    r = int(t.resident)
    return (f"line {line}: the warps {_converts(t, fmt)}issue the mma themselves (mma.sync), then the next stage's copies "
            f"on the SM's load path, in series: {format_counted_verb(r, 'CTA', 'take')} turns at the sub-partitions (each "
            f"{int(t.busiest)} x {fmt(t.warp_ns)} / {r} = {fmt(t.issue)}) and the load path (each "
            f"{fmt(t.copies)}), each CTA's own issue beyond its turn "
            + (f"max({int(t.own_warps)} x {fmt(t.warp_ns)}, its warps' fragment chain {fmt(t.chain)}) - "
               if float(t.chain) > 0 else f"{int(t.own_warps)} x {fmt(t.warp_ns)} - ")
            + f"{fmt(t.issue)} = {fmt(t.delay)}: a closed queue of {format_counted(r, 'CTA')} (mean value analysis) "
            + (f"cycles in {fmt(closed_queue.cycle_ns(t.resident, [t.issue, t.copies], t.delay))}, at least the "
               f"lone warps' compiled loop {fmt(t.walk)} (below): {fmt(round_ns(t))} a round" if float(t.walk) > 0
               else f"cycles in {fmt(round_ns(t))} a round"))


def describe_unpipelined(line, t: WarpTrip, single_ns, fmt) -> str:
    """One line of the breakdown for ``unpipelined_stations`` (scalar trips)."""
    r = int(t.resident)
    return (f"line {line}: STAGES = 1 on the warp mma: each CTA loads its tiles into registers, waits, then its warps "
            f"{_converts(t, fmt)}issue the mma themselves (mma.sync); {format_counted_verb(r, 'CTA', 'take')} turns at the sub-partitions "
            f"(each {int(t.busiest)} x {fmt(t.warp_ns)} / {r} = {fmt(t.issue)}) and the load path (each "
            f"{fmt(t.copies)} of loads into registers), the rest of a CTA's own trip {fmt(single_ns)} - "
            f"{fmt(t.issue)} - {fmt(t.copies)} = {fmt(t.delay)} its own: a closed queue of "
            f"{format_counted(r, 'CTA')} (mean value analysis) cycles in {fmt(round_ns(t))} a round")


def mio_round_ns(round_ns, pipe_ns, resident, warps, applies=1) -> Any:
    """A round of ``resident`` co-resident warp-mma CTAs with their warps' waits at the SM's
    shared-memory (MIO) pipe: ``round_ns`` the round without them (the queue above and the
    engines), ``pipe_ns`` one CTA's time a trip on that pipe (the smem engine alone: its copies
    written to shared memory and its ldmatrix reads, at 128 B a cycle). Arrays elementwise.

    Every shared-memory instruction of a warp (cp.async's write, ldmatrix, lds) passes the SM's
    one MIO queue and L1/shared data pipe; a warp whose request finds the pipe busy waits
    (Nsight Compute Kernel Profiling Guide, warp stall reasons: mio_throttle, a full MIO queue,
    and short_scoreboard, a wait on an MIO result; calibration/h200/measured/l2_groupm_s17t:
    0.02 -> 1.27 and 0.76 -> 1.99 stall cycles an instruction from 3.4 to 7 CTAs an SM of the
    same 32x64x32 two-warp tile). Requests of fixed service (a 512-byte request, 4 wavefronts)
    meeting a pipe busy a share rho = n x pipe_ns / T of the round T wait rho / (2 (1 - rho))
    of their service on average (M/D/1, Pollaczek-Khinchine); a warp's requests are its share
    pipe_ns / warps of its CTA's pipe time, whatever their size; of the work ahead of them the
    other n - 1 CTAs' share (n - 1) / n (one CTA's own reads run under its own mma: a lone CTA
    waits for none). So

        T = T0 + (n - 1) / n x pipe_ns / (2 warps) x rho / (1 - rho),  rho = n x pipe_ns / T,

    i.e. (T - T0)(T - b) = a b with b = n x pipe_ns, a = (n - 1) / n x pipe_ns / (2 warps):

        T = (T0 + b + sqrt((T0 - b)^2 + 2 (n - 1) pipe_ns^2 / warps)) / 2,

    max(T0, b) at n = 1 (the smem engine, already a floor), above both where both near; 0 where
    the dot does not take the warp mma (``applies``, as ``round_ns``)."""
    n = emax(ceil_int(resident), 1)
    b = n * pipe_ns
    q = 2 * (n - 1) * pipe_ns * pipe_ns / warps
    if is_array(round_ns, pipe_ns, n, warps, applies):
        import numpy as np
        t0 = np.asarray(round_ns, dtype=float)
        t = (t0 + b + np.sqrt((t0 - b) ** 2 + q)) / 2
        return np.where(np.asarray(applies) > 0, t, 0)
    if not applies:
        return 0
    t0 = float(round_ns)
    return (t0 + float(b) + math.sqrt((t0 - float(b)) ** 2 + float(q))) / 2


def describe_mio(line, round_ns, pipe_ns, resident, warps, fmt) -> str:
    """The breakdown's ``mio queue`` line (scalars)."""
    n = max(int(math.ceil(float(resident))), 1)
    t = mio_round_ns(round_ns, pipe_ns, n, warps)
    rho = n * float(pipe_ns) / t
    return (f"line {line}: each warp's shared-memory requests (copies' writes, ldmatrix reads) wait at the "
            f"SM's MIO pipe behind the other CTAs' (M/D/1): {format_counted(n, 'CTA')} x {fmt(pipe_ns)} "
            f"= {fmt(n * float(pipe_ns))} of pipe a round, busy {format_percent(rho)}; the round "
            f"{fmt(round_ns)} + {n - 1} / {n} x {fmt(pipe_ns)} / (2 x {int(warps)} warps) x "
            f"{format_percent(rho)} / (1 - {format_percent(rho)}) = {fmt(t)}")
