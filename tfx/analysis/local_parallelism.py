"""Spilled registers in DRAM with few warps a SM: local traffic bound by its latency or by its
measured rate past L2.

A loop-free (row) body whose spilled values live past L2 moves them between the SM and
DRAM in rounds: each warp issues a run of local loads, waits for them, works, stores the
results and goes on. With enough warps on the SM their rounds overlap and the traffic runs
at the SM's DRAM share; with few, each warp's round is mostly waiting, and the SM draws
less. One SM's warps are the customers of a closed queue (tfx.analysis.closed_queue, exact
mean value analysis): each round asks ``round_bytes`` of the SM's DRAM share (service
``D = round_bytes / share``) and spends ``Z`` (latency and issue) away from it; ``n``
warps move ``n x round_bytes / cycle(n)`` B/ns, at most the share.

Measured (calibration/h200/measured/spill_local, bench/h200/measure_spill_local.cu): a
per-thread array past L2 (138-554 MB a machine) walked in runs of 8 LDL.64, add, 8 STL.64
(4,096 B a warp a round) moves 10.0 B/ns per SM at 2 warps, 16.46 at 4, 22-24 at 8 and
22-28 at 16-32. ``local.dram_warp_round`` is the ``Z`` at which the queue over the
profile's DRAM share gives the 4-warp rate (docs/analysis.md section 6, *local traffic
bound by latency*). The issue-15 Triton rmsnorm and softmax configurations that spill
everything (32-64 registers, under one wave) move their SASS's local and global bytes at
2.1 TB/s (16 B/ns a SM) at 4 warps a SM, 2.6-2.9 TB/s at 8, 3.0-3.5 at 16-62.

Past L2 the local traffic also stays under what the benchmark measured (``ceiling``:
``local.dram_bandwidth_8_warps`` per SM at 8 warps or fewer, ``local.dram_bandwidth`` at 16 or
more, geometric between), below the DRAM share: the rate is the least of the rate the traffic
had, that ceiling and the queue's, and the breakdown names whichever of the two binds
(``describe``). The ceiling applies where the profile states the ceiling but not the round.

Spilled values that fit L2 come back the same way at L2's pace (``l2_latency_bound``: the queue
over the SM's L2 share, ``local.l2_bandwidth`` / SMs, with ``local.l2_warp_round``): spill_local's
walk in L2 draws 28.9 B/ns a SM at 2 warps, 46.8 at 4 and 55.2-55.8 at 8.

A launch under one wave (``spread`` > 1) leaves SMs idle or holds fewer CTAs on some: the
machine's spilled traffic is one queue whose customers are all its warps, so its rate is the
full machine's at as many warps a SM of all SMs as the launch holds (``warps / spread``), and
the busiest SM draws its warps' part of it, ``spread`` x that a SM (``_bounded``,
``machine_ceiling``), within its own local path (``path_ceiling``) and its share of DRAM
(``device_share``). Measured (bench/spill_machine_warps.py over calibration/h200/measured/issue15:
the rmsnorm and softmax launches of one wave that spill to DRAM, the machine's local rate their
measured times imply): at about 4 warps a SM of all SMs, 2.14 TB/s where the busiest SM holds
1-1.1x its share and 1.87 where it holds over 2.5x (32 CTAs of 16 warps); at about 8, 2.63 and
2.68 (1.5-2.5x); at 16, 3.13 and 3.39 (1.1-1.5x). A fixed share a SM would have the machine's rate
fall as 1 / spread; it priced those launches 15-110% slow.

Only for bodies without an mma: a spilling k-loop reloads its accumulator beside the mma
and is priced by tfx.analysis.spill_traffic.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from tfx.analysis.closed_queue import cycle_ns
from tfx.analysis.numbers import emax, emin, is_array, where
from tfx.hw.units import FORMULA_DIGITS, format_bandwidth, format_time_ns, formula_bytes, formula_rate
from tfx.hw.units import format_plain, format_whole


class LatencyBound(NamedTuple):
    """Local traffic of ``warps`` warps a SM against the SM's DRAM share."""

    warps: Any                 # warps of the resident CTAs on one SM
    round_bytes: float         # local bytes one warp moves a round
    round_ns: float            # Z: the rest of a round (latency, issue)
    share_bytes_per_ns: Any    # the SM's DRAM share (its L2 share where level is "L2")
    bytes_per_ns: Any          # what the warps draw: min(share, warps x round_bytes / cycle, machine's part)
    level: str = "DRAM"        # where the spilled values live
    # a launch under one wave (``spread`` > 1, ``_bounded``): the machine's queue at its warps,
    # ``warps / spread`` a SM of all ``units`` SMs over the full machine's share
    # ``machine_share``, draws ``machine_bytes_per_ns`` a SM of all of them
    spread: Any = 1
    machine_share: Any = None
    machine_bytes_per_ns: Any = None
    units: Any = None

    @property
    def bound(self):
        return self.bytes_per_ns < self.share_bytes_per_ns * (1 - 1e-9)


def spread(units, on_sm, positions, slots) -> Any:
    """How many times its even share of the machine's warps the busiest SM holds:
    ``units x on_sm / min(positions, slots)`` (``on_sm``: the CTAs it holds at once). 1 where the
    launch fills every slot; a grid under one wave leaves SMs idle (32 CTAs on 132 SMs: 4.125)
    or gives some SMs one CTA more than others (160 CTAs: 132 x 2 / 160 = 1.65)."""
    return units * on_sm / emin(positions, slots)


def path_ceiling(m):
    """B/ns one SM's local loads and stores move at most, wherever the values live: its L1 rate
    (``local.l1_bandwidth_per_cycle``, 32 B/cycle: measured with the values in L1,
    calibration/h200/measured/spill_local); a local access past L1 crosses the same load/store
    path. None where the profile states no L1 rate."""
    per_cycle = m.profile.get("local.l1_bandwidth_per_cycle", None)
    return None if per_cycle is None else per_cycle * m.clock_ghz


def own_ceilings(m, dram=False) -> list:
    """The SM's own ceilings on its local traffic that the profile states: its local path
    (``path_ceiling``) and, past L2, its DRAM ceiling (memory_parallelism.sm_dram_bytes_per_ns)."""
    from tfx.analysis.memory_parallelism import sm_dram_bytes_per_ns
    return [c for c in (path_ceiling(m), sm_dram_bytes_per_ns(m) if dram else None) if c is not None]


def device_share(m, device_bytes_per_ns, spread_=1, dram=False):
    """B/ns of a device-wide rate (L2's or DRAM's) the busiest SM's local traffic reaches: its
    warps' part, ``spread_`` x the even share ``rate / SMs`` (the busiest SM of a launch under
    one wave holds more of the machine's warps: ``spread``), at most its own ceilings
    (``own_ceilings``). The even share sits under both on every sm_90 profile (32.1 and 55.8 B/ns
    against 63.4), so a full launch draws the even share; a profile that states neither ceiling
    keeps the even share (what one SM alone can take of the device it does not say)."""
    even = device_bytes_per_ns / m.units
    if not is_array(spread_) and spread_ == 1:
        return even
    caps = own_ceilings(m, dram)
    if not caps:
        return even
    share = even * spread_
    for cap in caps:
        share = emin(share, cap)
    return share


def describe_share(m, device_bytes_per_ns, spread_, level, dram=False) -> str:
    """The clause naming the busiest SM's share of a launch under one wave ('' for a full one)."""
    if is_array(spread_) or spread_ == 1 or not own_ceilings(m, dram):
        return ""
    from tfx.analysis.memory_parallelism import sm_dram_bytes_per_ns
    even = device_bytes_per_ns / m.units
    got = float(device_share(m, device_bytes_per_ns, spread_, dram))
    text = (f" (under one wave the busiest SM holds {format_plain(float(spread_))} x its even share of the machine's "
            f"warps: {format_bandwidth(device_bytes_per_ns * 1e9, FORMULA_DIGITS)} of {level} / "
            f"{format_whole(m.units)} SMs x {format_plain(float(spread_))} = {formula_rate(even * spread_)}")
    if got < even * spread_ * (1 - 1e-9):
        path, own = path_ceiling(m), sm_dram_bytes_per_ns(m) if dram else None
        if path is not None and (own is None or path <= own):
            text += (f", at most its local path's {formula_rate(path)} (local.l1_bandwidth_per_cycle "
                     f"{format_plain(m.profile.get('local.l1_bandwidth_per_cycle'))} B/cycle)")
        else:
            text += f", at most its own DRAM ceiling {formula_rate(own)}"
    return text + ")"


def facts(profile):
    """(round bytes, round ns) from the profile, or None where it states neither."""
    round_bytes = profile.get("local.dram_round_bytes_per_warp", None)
    round_ns = profile.get("local.dram_warp_round", None)
    if round_bytes is None or round_ns is None:
        return None
    return float(round_bytes), float(round_ns)


def l2_facts(profile):
    """(round bytes, round ns) of local traffic served from L2, or None where the profile states
    no ``local.l2_warp_round`` (the round's bytes are the same walk's,
    ``local.dram_round_bytes_per_warp``)."""
    round_bytes = profile.get("local.dram_round_bytes_per_warp", None)
    round_ns = profile.get("local.l2_warp_round", None)
    if round_bytes is None or round_ns is None:
        return None
    return float(round_bytes), float(round_ns)


def rate(warps, share_bytes_per_ns, round_bytes, round_ns):
    """B/ns one SM's ``warps`` warps move local bytes at, the closed queue's throughput
    ``warps x round_bytes / cycle(warps)`` (at most the share; one warp at least)."""
    service = round_bytes / share_bytes_per_ns
    n = emax(warps, 1)
    if is_array(n):
        import numpy as np
        n = np.rint(np.asarray(n, dtype=float))
    else:
        n = round(float(n))
    cycle = cycle_ns(n, [service], round_ns)
    return emin(n * round_bytes / cycle, share_bytes_per_ns)


def _bounded(f, warps, share_bytes_per_ns, level, spread_, machine_share, units):
    """The LatencyBound of ``warps`` warps a SM over the SM's share; for a launch under one wave
    (``machine_share`` given: the full machine's share), at most its part of the machine's queue:
    the machine's warps as ``warps / spread_`` a SM of all ``units`` SMs, whose queue over the
    full machine's share draws so much a SM of all, ``spread_`` x that for the busiest SM."""
    if f is None:
        return None
    round_bytes, round_ns = f
    got = rate(warps, share_bytes_per_ns, round_bytes, round_ns)
    if machine_share is None:
        return LatencyBound(warps, round_bytes, round_ns, share_bytes_per_ns, got, level)
    machine = rate(warps / spread_, machine_share, round_bytes, round_ns)
    got = emin(got, machine * spread_)
    return LatencyBound(warps, round_bytes, round_ns, share_bytes_per_ns, got, level, spread_, machine_share,
                        machine, units)


def latency_bound(profile, warps, share_bytes_per_ns, spread_=1, machine_share=None, units=None) -> LatencyBound | None:
    """The rate of a row body's local traffic at DRAM for ``warps`` warps a SM (a launch under
    one wave: ``spread_``, ``machine_share``, ``_bounded``)."""
    return _bounded(facts(profile), warps, share_bytes_per_ns, "DRAM", spread_, machine_share, units)


def l2_latency_bound(profile, warps, l2_share_bytes_per_ns) -> LatencyBound | None:
    """The rate of a row body's local traffic served from L2 for ``warps`` warps a SM: the
    same closed queue over the SM's L2 share with the L2 round's ``local.l2_warp_round``."""
    return _bounded(l2_facts(profile), warps, l2_share_bytes_per_ns, "L2", 1, None, None)


def describe(lb: LatencyBound) -> str:
    w = float(lb.warps) if not is_array(lb.warps) else lb.warps
    own = rate(w, lb.share_bytes_per_ns, lb.round_bytes, lb.round_ns)
    text = (f"{format_whole(w)} warps a SM, each moving {formula_bytes(lb.round_bytes)} a round "
            f"({format_time_ns(lb.round_bytes / float(lb.share_bytes_per_ns))} at the SM's {lb.level} share "
            f"{formula_rate(lb.share_bytes_per_ns)}, {format_time_ns(lb.round_ns)} of latency "
            f"and issue): a closed queue of {format_whole(w)} draws {formula_rate(own)}")
    if lb.machine_share is not None and float(lb.bytes_per_ns) < float(own) * (1 - 1e-9):
        n = w / float(lb.spread)
        text += (f"; but the machine's warps are one queue: {format_plain(n)} a SM of all "
                 f"{format_whole(lb.units)} SMs (the busiest holds {format_plain(float(lb.spread))} x its share), "
                 f"whose queue of {format_whole(max(round(n), 1))} over the full machine's share "
                 f"{formula_rate(lb.machine_share)} draws {formula_rate(lb.machine_bytes_per_ns)} a SM: "
                 f"{formula_rate(lb.machine_bytes_per_ns)} x {format_plain(float(lb.spread))} = "
                 f"{formula_rate(lb.bytes_per_ns)} for the busiest")
    return text


def ceiling(profile, warps, share_bytes_per_ns, units):
    """B/ns one SM's local loads and stores past L2 reach with ``warps`` warps a SM, as measured
    (calibration/h200/measured/spill_local: runs of 8 LDL.64, add, 8 STL.64, working sets
    138-1107 MB a machine): ``local.dram_bandwidth_8_warps`` / SMs at 8 warps or fewer (median
    22.84 B/ns, where the queue over the DRAM share says 27.7), ``local.dram_bandwidth`` / SMs
    at 16 or more (25.57, against the share 32.1), geometric in log2 of the warps between (the
    8-warp figure is ``local.dram_bandwidth``'s where the profile states only that); never above
    the share. The share where the profile does not state ``local.dram_bandwidth``."""
    many = profile.get("local.dram_bandwidth", None)
    if many is None:
        return share_bytes_per_ns
    few = profile.get("local.dram_bandwidth_8_warps", None)
    many = many / 1e9 / units
    few = few / 1e9 / units if few is not None else many
    import numpy as np
    w = np.clip(np.log2(np.maximum(np.asarray(warps, dtype=float), 1.0)), 3.0, 4.0) - 3.0
    got = emin(few * (many / few) ** w, share_bytes_per_ns)
    return got if is_array(warps, share_bytes_per_ns) else float(got)


def _describe_ceiling(profile, warps, units) -> str:
    """The measured fact(s) behind ``ceiling`` at ``warps`` warps a SM, with their values."""
    many = profile.get("local.dram_bandwidth", None)
    few = profile.get("local.dram_bandwidth_8_warps", None)
    n = round(float(warps))

    def fact(name, value):
        return f"{name} {format_bandwidth(value, FORMULA_DIGITS)} / {units} SMs = {format_bandwidth(value / units, FORMULA_DIGITS)}"
    if few is None or n >= 16:
        return fact("local.dram_bandwidth", many) + (" (16 warps or more)" if few is not None else "")
    if n <= 8:
        return fact("local.dram_bandwidth_8_warps", few) + " (8 warps or fewer)"
    return (f"between {fact('local.dram_bandwidth_8_warps', few)} at 8 warps and "
            f"{fact('local.dram_bandwidth', many)} at 16, geometric in log2 of the warps")


def machine_ceiling(profile, warps, spread_, units, share_bytes_per_ns):
    """The measured ``ceiling`` of the busiest SM of a launch under one wave: the machine's at
    its warps as ``warps / spread_`` a SM of all ``units`` SMs, ``spread_`` x that a SM, at most
    the SM's ``share_bytes_per_ns`` (``device_share``): ``ceiling`` itself where ``spread_`` is 1."""
    got = emin(ceiling(profile, warps / spread_, float("inf"), units) * spread_, share_bytes_per_ns)
    return got if is_array(got) else float(got)


def _describe_machine_ceiling(profile, warps, spread_, units) -> str:
    """``_describe_ceiling`` for the busiest SM of a launch under one wave (``machine_ceiling``)."""
    n = warps / spread_
    per = ceiling(profile, n, float("inf"), units)
    return (f"the machine's warps are {format_plain(n)} a SM of all {format_whole(units)} SMs (the busiest "
            f"holds {format_plain(spread_)} x its share), where it moves "
            + _describe_ceiling(profile, n, units)
            + f"; x {format_plain(spread_)} = {formula_rate(per * spread_)} for the busiest SM")


class LocalBound(NamedTuple):
    """What sets the rate of a row body's local traffic at DRAM: the least of the rate it had
    (``before_bytes_per_ns``), the measured ``ceiling`` past L2 and the closed queue's rate
    (``queue``, None where the profile states no round)."""

    warps: Any
    before_bytes_per_ns: Any
    queue: LatencyBound | None
    ceiling_bytes_per_ns: Any
    ceiling_fact: str | None     # the facts behind the ceiling (None: the ceiling is the share)
    bytes_per_ns: Any            # the rate the traffic runs at

    @property
    def binding(self):
        """"queue", "ceiling" or None (the rate the traffic had stands); scalars only."""
        got = float(self.bytes_per_ns)
        if got >= float(self.before_bytes_per_ns) * (1 - 1e-9):
            return None
        if self.queue is not None and self.queue.bound and float(self.queue.bytes_per_ns) <= got * (1 + 1e-9):
            return "queue"
        return "ceiling" if self.ceiling_fact is not None else None

    @property
    def bound(self):
        return self.binding is not None


def describe_bound(b: LocalBound) -> str:
    """The breakdown's words for the bound that sets the rate (scalars; "" where none binds)."""
    if b.binding == "queue":
        return "bound by latency: " + describe(b.queue)
    if b.binding == "ceiling":
        return (f"bound by the measured rate of local traffic past L2 at {format_whole(b.warps)} warps a SM: "
                f"{b.ceiling_fact}")
    return ""


def in_local_memory(m, local, warps, spread_=1):
    """(``local`` with its rate capped where the spilled values live in DRAM, a LocalBound or
    None). ``local``: performance.LocalMemory of the launch; ``warps``: the warps its resident
    CTAs put on the busiest SM; ``spread_``: how many times its even share of the machine's
    warps that SM holds (``spread``; 1: a full launch). Past L2 the rate is at most the measured
    ``ceiling`` and, where the profile states the round, the closed queue's ``latency_bound``:
    under one wave, the machine's at its warps (``machine_ceiling``, ``_bounded``)."""
    if m.kind != "gpu":
        return local, None
    local, l2_bound = _at_l2(m, local, warps)
    share = device_share(m, m.dram_bw_device, spread_, dram=True)
    top = machine_ceiling(m.profile, warps, spread_, m.units, share)
    under_a_wave = is_array(spread_) or spread_ != 1
    lb = latency_bound(m.profile, warps, share, spread_, m.dram_bw_device / m.units if under_a_wave else None,
                       m.units)
    if lb is None and m.profile.get("local.dram_bandwidth", None) is None:
        return local, l2_bound
    at_dram = local.at_dram      # where performance.local_memory put the values
    capped = emin(local.bytes_per_ns, top)
    at_dram_rate = where(at_dram, capped, local.bytes_per_ns)
    bounded = local._replace(bytes_per_ns=apply(at_dram_rate, lb, at_dram))
    if not (is_array(at_dram) or at_dram):
        return bounded, l2_bound
    fact = (None if m.profile.get("local.dram_bandwidth", None) is None or is_array(warps, spread_)
            else _describe_ceiling(m.profile, warps, m.units) if spread_ == 1
            else _describe_machine_ceiling(m.profile, warps, spread_, m.units))
    return bounded, LocalBound(warps, local.bytes_per_ns, lb, top, fact, bounded.bytes_per_ns)


def _at_l2(m, local, warps):
    """(``local`` with the L2 closed queue's rate where its values live in L2, past L1; a
    LocalBound for a scalar launch the queue binds, else None). Measured
    (calibration/h200/measured/spill_local, local8 under 17 MB a machine): the walk draws
    28.9 B/ns a SM at 2 warps, 46.8 at 4, 55.2-55.8 at 8, which the queue over the SM's L2
    share (``local.l2_bandwidth`` / SMs) with ``local.l2_warp_round`` gives (28.83, 46.84,
    55.55)."""
    if m.profile.get("local.l2_bandwidth", None) is None:
        return local, None
    # a SM's own rate: the machine's local traffic in L2 (7.36 TB/s at 8 warps a SM) stays well
    # under what the slices serve global loads at (memory.l2), so an idle SM leaves the others none
    l2_share = m.profile.get("local.l2_bandwidth") / 1e9 / m.units
    lb = l2_latency_bound(m.profile, warps, l2_share)
    if lb is None:
        return local, None
    if local.dram_mask is None:
        if local.level != "L2":
            return local, None
        got = emin(local.bytes_per_ns, lb.bytes_per_ns)
        bound = LocalBound(warps, local.bytes_per_ns, lb, local.bytes_per_ns, None, got)
        return local._replace(bytes_per_ns=got), (bound if bound.bound else None)
    import numpy as np
    in_l1 = (np.asarray(local.working_set) <= np.asarray(local.l1_free) if local.l1_free is not None
             else np.zeros_like(np.asarray(local.dram_mask), dtype=bool))
    at_l2 = ~np.asarray(in_l1, dtype=bool) & ~np.asarray(local.dram_mask, dtype=bool)
    return local._replace(bytes_per_ns=where(at_l2, emin(local.bytes_per_ns, lb.bytes_per_ns),
                                             local.bytes_per_ns)), None


def apply(bytes_per_ns, lb: LatencyBound | None, at_dram):
    """``bytes_per_ns`` where the local traffic is not at DRAM, else the latency-bound rate
    (at most ``bytes_per_ns``: past L2, the measured ``ceiling`` of local traffic)."""
    if lb is None:
        return bytes_per_ns
    return where(at_dram, emin(lb.bytes_per_ns, bytes_per_ns), bytes_per_ns)
