"""Memory-level parallelism of pipelined loads on a GPU (docs/analysis.md, "memory-level parallelism").

A pipelined loop keeps S-1 tiles in flight per CTA; by Little's law its SM moves bytes in flight /
round trip. Three measured facts of the H200 decide how fast that is when a grid cannot fill
the machine or its tiles stream from DRAM (calibration/h200/measured/mlp, bench/h200/
measure_mlp.py: the k-loop of kernels/gemm.tile on 1, 8, 16, 33, 66 and 132 SMs, 1-5 stages,
every byte from DRAM once; each CTA recorded its %smid, one CTA per SM):

* **One SM's DRAM rate** (``pipeline.sm_dram_bandwidth_per_cycle``). An SM brings DRAM bytes
  in at most ~41 B/cycle (81.5 B/ns at 1.98 GHz) however many tiles it has in flight: with 4-5
  stages of 24-40 KB tiles on 1-16 SMs a trip takes tile bytes / 70-90 B/ns, not the 128.7 B/ns
  its L2 port reaches (``pipeline.sm_load_bandwidth_per_cycle``). When all SMs pull, their share
  of the device bandwidth (4238 GB/s / 132 = 32 B/ns) is below it; when few do (a decode step
  at batch 1 on 8-32 SMs, a small grid), it is the SM's ceiling: ``sm_dram_share``.
* **The idle round trip** (``pipeline.dram_round_trip_idle``). A tile's DRAM round trip with
  no other traffic is ~557 ns beyond the trip's chain and its bytes at the SM's DRAM ceiling
  (median of the six latency-bound runs on one SM: 504-659 ns; the transfer the model adds on
  one SM is that ceiling's, so the fact is taken net of it), not the 205 ns intercept
  of the loaded line (``dram_round_trip_unloaded``) fitted on 132-SM rows above 1.2 TB/s: the
  round trip only grows with load above the idle one (``tfx.analysis.load_trip``).
* **Short runs from DRAM** (``memory.gmem.bandwidth_short_runs``). Reads whose contiguous runs
  are shorter than a 128-byte line (a bf16 tile row of 32 elements: 64 B) reach 3.2 TB/s at
  best (k-loops of 64-byte rows on 132 SMs x 1-14 CTAs: 1.0-3.2 TB/s), against 4.1-4.3 TB/s for
  128-byte and longer rows: such a read's DRAM bytes take copy bandwidth / 3.2 TB/s = 1.32x
  their time (``short_run_factor``; the DRAM bytes counted stay the same).
* **A trip waits for its slowest load**. ``cp.async.wait_group`` waits for the whole stage.
  The L2 hits of ``tfx.analysis.l2_reuse`` are co-resident CTAs of one wave reading a tile at
  the same k-step as the CTA whose read misses: their requests merge with that miss and wait
  for DRAM too. So a trip with any DRAM bytes waits the DRAM round trip, whatever share of
  its bytes hit (``trip_miss``); the hit share still saves DRAM bandwidth.

Works on numpy arrays of parameter values (sweeps).
"""

from __future__ import annotations

from typing import Any

from tfx.analysis.numbers import emax, emin, is_array, ratio
from tfx.hw.units import FORMULA_DIGITS, format_bandwidth, format_count, format_counted, format_percent, format_time_ns as T, formula_bytes as B, formula_rate as BW, formula_frequency
from tfx.hw.units import format_plain, format_whole, formula_share, formula_slope


def sm_dram_bytes_per_ns(m) -> float | None:
    """One SM's DRAM ceiling in B/ns, or None where the profile states none (GPU only)."""
    per_cycle = m.profile.get("pipeline.sm_dram_bandwidth_per_cycle", None)
    if per_cycle is None or m.kind != "gpu":
        return None
    return per_cycle * m.clock_ghz


def sm_dram_share(m, active_units, weight=1) -> Any:
    """B/ns of DRAM one unit reaches while ``active_units`` pull: its share of the device's
    sustained bandwidth, ``weight`` times the even share (``cta_share_weight``: a decode tail's
    busiest SM), at most one SM's own ceiling (``sm_dram_bytes_per_ns``)."""
    share = m.dram_bw_device / active_units
    if is_array(weight) or weight != 1:
        share = share * weight
    cap = sm_dram_bytes_per_ns(m)
    return share if cap is None else emin(share, cap)


def read_rate(m) -> float:
    """The device's DRAM B/ns for a read-only stream (``Machine.dram_read_bw_device``), the
    copy's (``dram_bw_device``) where the profile states none."""
    read = getattr(m, "dram_read_bw_device", None)
    return m.dram_bw_device if read is None else read


def describe_read_stream(m) -> str:
    """The clause of a launch whose decode trip streams at DRAM's read-only rate
    (``read_stream_share``), '' where the profile states no read-only rate."""
    read = getattr(m, "dram_read_bw_device", None)
    if read is None or m.dram_per_unit is not None:
        return ""
    eff = m.profile.get(f"memory.{m.dram}.read_efficiency")
    return (f"; its K and V stream at DRAM's read-only rate {BW(read)} ({BW(read / eff)} x {format_plain(eff)}), "
            f"not a copy's {BW(m.dram_bw_device)} (calibration/h200/measured/latency_read_s16)")


def read_stream_share(m, active_units, weight=1) -> Any:
    """B/ns of DRAM one unit reaches while ``active_units`` pull a read-only stream (a split-KV
    decode trip's K and V: no stores in the loop): ``sm_dram_share`` at the device's read-only
    rate (``memory.<dram>.read_efficiency`` x its bandwidth, ``Machine.dram_read_bw_device``),
    not the copy's (``efficiency``: half a copy's bytes are writes, and DRAM turns its bus
    around between them). Measured (calibration/h200/measured/latency_read_s16): 396 and 528
    CTAs reading saturate at 4,527 and 4,514 GB/s where the copy reaches 4,238 GB/s (0.9404 and
    0.883 of 4.8 TB/s). The copy's share where the profile states no read-only rate."""
    if getattr(m, "dram_read_bw_device", None) is None:
        return sm_dram_share(m, active_units, weight)
    share = read_rate(m) / active_units
    if is_array(weight) or weight != 1:
        share = share * weight
    cap = sm_dram_bytes_per_ns(m)
    return share if cap is None else emin(share, cap)


def cta_share_weight(r, draw) -> Any:
    """How many even SM shares of DRAM the busiest SM of a tail wave draws when the device
    shares its bandwidth among the CTAs, not the SMs: its r CTAs against the ``draw`` CTAs an
    SM drawing on average (``drawing_per_unit``), r / draw, 1 where the wave is whole (draw =
    r) or ``draw`` is None. 192 CTAs on 132 SMs (2 on 60 SMs, 1 on 72): the busiest SM's 2 CTAs
    draw 2 / 192 of DRAM, 2 / (192 / 132) = 1.375 SM shares, where the waves model gave each
    SM 1 / 132 and priced the launch as 2 x 132 = 264 CTAs' bytes at the device's rate.

    Each pipelined CTA keeps its S - 1 tiles in flight and all of them wait the same loaded
    round trip at DRAM's queue, so by Little's law each CTA streams at the same rate whichever
    SM it sits on (decode16's finding: a decode SM's rate is DRAM's, not its bytes in
    flight's). Measured (calibration/h200/measured/decode_timeline_s17, run24 B16 HQ32
    SKV16384, BLOCK_N 32, 4 warps): 256 CTAs at 3 stages (2 on 124 SMs, 1 on 8) live 253.7 us
    on the shared SMs and 235.2 alone (median), 0.93x, where SM shares would give the lone CTA
    twice the paired CTAs' rate (0.5x); 512 CTAs at 2 stages (4 on 116 SMs, 3 on 16): 253.8
    against 244.8, 0.96x (SM shares 0.75x). Only a launch of one wave or less, whose CTAs start
    together: a tail after full waves starts as the first waves' slots free, unevenly by SM
    (decode_timeline_s17's 1.29-wave launch: a tail CTA alone on its SM lives 52.9 us, six
    packed on one 125.0 us each, neither equal shares nor the SMs'), and keeps the SMs' even
    shares (tfx.analysis.performance, LaunchMiss.one_wave). Arrays elementwise."""
    if draw is None:
        return 1
    if is_array(r, draw):
        return emax(ratio(r, draw), 1)
    return max(ratio(r, draw), 1) if draw else 1


def own_stream_draw(r, draw, own) -> Any:
    """The ``draw`` (CTAs an SM drawing DRAM, ``drawing_per_unit``) at which ``sm_dram_share``'s
    weight (``cta_share_weight``) gives the busiest SM of a one-wave GEMM launch its DRAM rate,
    where a share ``own`` of its trip's DRAM bytes are a weight stream (every byte read by one
    CTA: tfx.analysis.performance._weight_stream_shares) and the rest tiles several CTAs co-read.
    The stream's bytes come at the CTAs' share (r / draw even SM shares, as a decode launch's:
    each CTA keeps the same tiles in flight through the same loaded round trip, so by Little's law
    each streams at the same rate whichever SM it sits on), the co-read bytes at the SMs' even
    share (which co-reader draws DRAM for a tile depends on which asks first). In time:
    1 / w_eff = own / w + (1 - own), returned as draw = r / w_eff (so that cta_share_weight(r,
    draw) = w_eff). *Worked example*: 448 CTAs on 132 SMs (draw 448 / 132 = 3.3939), 4 on the
    busiest: w = 4 / 3.3939 = 1.1786; own = 1: draw 3.3939; own = 0.5: 1 / w_eff = 0.5 / 1.1786 +
    0.5 = 0.9242, draw = 4 x 0.9242 = 3.6970. ``draw`` None: None. Arrays elementwise."""
    if draw is None:
        return None
    w = cta_share_weight(r, draw)
    return r * (own / w + (1 - own))


def own_dram_rate(m, active_units) -> Any:
    """B/ns one SM brings its own tile in from DRAM while it is in flight: its ceiling
    (``sm_dram_bytes_per_ns``) however many SMs pull, not its share of the device's bandwidth
    (``sm_dram_share``); the share where the profile states no ceiling. The share is a throughput
    bound, which the copy engine already enforces on a round (r x bytes / share); the waiting it
    stands for when every SM pulls is the queueing of the loaded round trip
    (tfx.analysis.load_trip.loaded_round_trip_ns). So the idle floor of that round trip, fitted
    with the tile at one SM's ceiling (``pipeline.dram_round_trip_idle``), keeps the ceiling:
    with the share as well the 2-stage k-loops of 20-40 KB tiles on 132 SMs (one tile in
    flight a CTA) were priced 14-26% slow (calibration/h200/measured/kloop, docs/analysis.md
    section 8, "The idle round trip")."""
    cap = sm_dram_bytes_per_ns(m)
    return sm_dram_share(m, active_units) if cap is None else cap


def drawing_per_unit(drawing, r, active_units) -> Any:
    """CTAs per SM whose loads draw DRAM bandwidth together: the CTAs in flight over the SMs
    they run on. A full wave holds r on every SM; a tail wave of t CTAs holds ceil(t / SMs) on
    the busiest SM (which sets its time) but draws with t CTAs, not ceil(t / SMs) x SMs:
    224 CTAs on 132 SMs are 1.70 per SM, not 2. ``drawing`` None: r."""
    if drawing is None:
        return r
    return emin(drawing / active_units, r) if is_array(drawing, r, active_units) else min(drawing / active_units, r)


def first_reader_share(load_misses) -> Any:
    """The chance that an unpipelined trip waits on DRAM: that it is the first reader of one of
    its tiles, 1 - prod(1 - m) over its loads' miss ratios m (a load whose tile is read by n
    CTAs of the wave and fetched from DRAM once misses for 1 / n of them; a tile read by one
    CTA, B of a GEMM with M <= BM, misses always). An unpipelined trip requests its tiles only
    when it needs them, so the tile's other readers come later than its round trip and hit
    L2 (tfx.analysis.pipeline_depth.unpipelined_cycle_ns). Arrays elementwise."""
    none = 1
    for miss in load_misses:
        none = none * (1 - miss)
    return 1 - none


def drawing_text(r, active_units) -> str:
    """'132 SMs x 2 CTAs', or for a tail wave's fractional share '224 CTAs on 132 SMs'."""
    if float(r) == int(r):
        return f"{format_counted(int(active_units), 'SM')} x {format_counted(int(r), 'CTA')}"
    return f"{format_whole(float(r) * active_units)} CTAs on {int(active_units)} SMs"


def trip_miss(dram_bytes, l2_bytes, l2_only=0) -> Any:
    """The share of a trip's round trip spent waiting on DRAM: 1 when any of its bytes come
    from DRAM (the trip waits for its slowest load; its L2 hits merge with a co-resident
    CTA's miss of the same step), 0 when all hit; less the share ``l2_only`` of trips whose
    every tile the previous wave left in L2 (tfx.analysis.l2_reuse.cross_wave_share): they
    have no miss to merge with and wait the L2 round trip."""
    if is_array(dram_bytes, l2_bytes, l2_only):
        import numpy as np
        return (np.where(np.asarray(dram_bytes) > 0, 1.0, 0.0) * (np.asarray(l2_bytes) * 0 + 1)
                * (1 - np.asarray(l2_only, dtype=float)))
    return (1.0 - l2_only) if dram_bytes else 0.0


def past_dram(drawn, dram_rate) -> str:
    """The clause for a solved round trip whose draw (B/ns) passes ``dram_rate``, the most DRAM delivers (the read-only
    rate, ``read_rate``); '' where it does not, or no rate is given. The line is solved as if the launch could draw what
    its bytes in flight ask; a draw past DRAM's rate says DRAM's bandwidth gives the round a longer floor than this
    round trip does."""
    if dram_rate is None or drawn <= dram_rate * 1.005:
        return ""
    return f"; that draw passes the {BW(dram_rate)} DRAM delivers: DRAM's bandwidth bounds the round above this"


def describe_round_trip(dram_bytes, t, f, d, dram_rate=None) -> str:
    """One line for the breakdown: the DRAM round trip a trip with DRAM bytes waits, solved
    with the trip time, as the model priced it (``t``: tfx.analysis.load_trip.LoadedTrip, the
    inputs and the value of tfx.analysis.load_trip.loaded_round_trip_ns), and the round it
    sets; ``dram_rate``: the most DRAM delivers, B/ns (``past_dram``). ``t.dram_bytes``: the DRAM bytes as the queue
    counts them (tfx.analysis.strided_runs), ``dram_bytes`` the trip's own. Where a share of the trips waits the L2 round trip instead
    (``t.miss`` < 1, ``trip_miss``), each branch is that mix: miss x DRAM's + (1 - miss) x L2's."""
    miss = float(t.miss)
    s1 = max(t.stages - 1, 1)
    queued, loaded_bytes, fetch_ns, r, active_units = (float(t.dram_bytes), float(t.loaded_bytes),
                                                       float(t.transfer_ns), t.r, t.active_units)
    round_trip_ns = float(t.ns)
    drawn = active_units * r * queued / (round_trip_ns / s1)
    if getattr(t, "chase", None) is not None and d.idle_ns is not None:
        wait = describe_chase(t, f, d, drawn)
        return (f"{B(dram_bytes)} of the trip's {B(loaded_bytes)} come from DRAM, so the trip waits the DRAM "
                f"round trip (its hits merge with a co-resident CTA's miss of the same step); a persistent "
                f"walk's CTAs stream reads only, so its DRAM part is the idle round trip plus the queueing of "
                f"a DRAM pointer chase under a read-only stream: {T(f.overhead_ns)} of chain + {wait} = "
                f"{T(round_trip_ns)} (solved with the trip time: {drawing_text(r, active_units)} x {B(queued)}"
                f"{' of whole-line DRAM time' if queued > dram_bytes * (1 + 1e-9) else ''} per "
                f"{T(round_trip_ns / s1)}); {format_counted(s1, 'tile')} in flight: a round takes at least {T(round_trip_ns / s1)}"
                + past_dram(drawn, dram_rate))
    line = d.base_ns + d.slope_ns_per_byte_ns * drawn
    port = loaded_bytes / f.port_bytes_per_ns
    lat = float(t.lat)
    mixed = miss < 1
    # the line was fitted with only the port time subtracted, so it holds the rest of the
    # transfer; the idle round trip was fitted with the transfer at one SM's ceiling
    # (load_trip.loaded_round_trip_ns): the larger of the two branches binds
    text = f"{T(d.base_ns)} + {formula_slope(d.slope_ns_per_byte_ns)} x {BW(drawn)} drawn = {T(line)}"
    if mixed:
        line = miss * line + (1 - miss) * lat
        text = f"{formula_share(miss, 4)} x ({text}) + {formula_share(1 - miss, 4)} x {T(lat)} of L2 = {T(line)}"
    loaded = f"{text} + {B(loaded_bytes)} / {BW(f.port_bytes_per_ns)} = {T(line + port)}"
    if d.idle_ns is not None:
        # the floor the trip was priced on: with one tile in flight, the one measured so (load_trip.one_tile_floor)
        floor = d.idle_ns if getattr(t, "idle_ns", None) is None else float(t.idle_ns)
        name = "idle" if floor == d.idle_ns else "idle with one tile in flight"
        if mixed:
            idle_ns = miss * floor + (1 - miss) * lat
            idle_text = f"{formula_share(miss, 4)} x {name} {T(floor)} + {formula_share(1 - miss, 4)} x {T(lat)} of L2"
        else:
            idle_ns, idle_text = floor, f"{name} {T(floor)}"
        idle = f"{idle_text} + max({T(fetch_ns)}, {T(port)}) = {T(idle_ns + max(fetch_ns, port))}"
        wait = f"max({loaded}, {idle})"
    else:
        wait = loaded
    return (f"{B(dram_bytes)} of the trip's {B(loaded_bytes)} come from DRAM, so the trip waits the DRAM "
            f"round trip (its hits merge with a co-resident CTA's miss of the same step): "
            f"{T(f.overhead_ns)} of chain + {wait} = {T(round_trip_ns)} "
            f"(solved with the trip time: {drawing_text(r, active_units)} x {B(queued)}"
            f"{' of whole-line DRAM time' if queued > dram_bytes * (1 + 1e-9) else ''} per "
            f"{T(round_trip_ns / s1)}); {format_counted(s1, 'tile')} in flight: a round takes at least {T(round_trip_ns / s1)}"
            + past_dram(drawn, dram_rate))


def describe_chase(t, f, d, drawn) -> str:
    """The round trip's wait on the read-only pointer chase (tfx.analysis.load_trip.
    chase_round_trip_ns): the idle floor with its transfer, then the chase's excess at the draw
    between the two measured points it lies between (or along the last segment beyond)."""
    miss = float(t.miss)
    lat = float(t.lat)
    pts = t.chase.points
    l0 = pts[0][1]
    port = float(t.loaded_bytes) / f.port_bytes_per_ns
    fetch_ns = float(t.transfer_ns)
    n = next((i for i, (a, b) in enumerate(zip(pts, pts[1:])) if drawn < b[0]), len(pts) - 2)
    (ba, la), (bb, lb) = pts[n], pts[n + 1]
    q = la - l0 + (drawn - ba) * (lb - la) / (bb - ba)
    where = "between" if drawn < bb else "along the last segment past"
    chase = (f"the chase's {T(la)} at {BW(ba)} and {T(lb)} at {BW(bb)} ({where} them at {BW(drawn)} drawn: "
             f"{T(la + q - (la - l0))}) less its idle {T(l0)} = {T(q)}")
    idle_ns = d.idle_ns if getattr(t, "idle_ns", None) is None else float(t.idle_ns)
    if miss < 1:
        idle = (f"{formula_share(miss, 4)} x (idle {T(idle_ns)} + {chase}) + {formula_share(1 - miss, 4)} x "
                f"{T(lat)} of L2")
    else:
        idle = f"idle {T(idle_ns)} + {chase}"
    w = getattr(t, "walk_transfer", None)
    if w is not None and float(w.drifted) > 0:
        from tfx.analysis.pipeline_depth import describe_walk_transfer
        return f"{idle} + max({T(fetch_ns)}, {T(port)}) ({describe_walk_transfer(w)})"
    return f"{idle} + max({T(fetch_ns)}, {T(port)})"


def describe_cta_share(m, r, drawing, active_units) -> str:
    """The tail wave's clause where a decode launch of one wave or less has its busiest SM draw
    DRAM by its CTAs (``cta_share_weight`` over 1; scalars), else ''."""
    if m.dram_per_unit is not None or not drawing:
        return ""
    draw = drawing_per_unit(drawing, r, active_units)
    if cta_share_weight(r, draw) <= 1:
        return ""
    # at DRAM's read-only rate, as the decode trip's copy engine prices it (read_stream_share)
    rate, even = read_stream_share(m, active_units, cta_share_weight(r, draw)), read_stream_share(m, active_units)
    if rate <= even:              # one SM's ceiling binds either way
        return ""
    device = read_rate(m)
    capped = rate < int(r) * device / int(drawing) * (1 - 1e-9)
    return (f"; DRAM serves the {format_counted(int(drawing), 'CTA')} drawing, not the "
            f"{format_counted(int(active_units), 'SM')}: the busiest SM's {format_counted(int(r), 'CTA')} draw "
            f"{format_count(int(r))} x {BW(device)} / {format_count(int(drawing))}"
            + (f", at most one SM's {BW(rate)}" if capped else f" = {BW(rate)}")
            + f", not {BW(even)} (calibration/h200/measured/decode_timeline_s17)")


def describe_l2_cta_share(m, r, drawing, active_units) -> str:
    """The tail wave's clause where a launch of one wave or less has its busiest SM draw the L2
    by its CTAs, not its SM's even share (``cta_share_weight`` over 1; scalars; the copy engine's
    L2 term, tfx.analysis.performance._loop_time), else ''. Each CTA keeps the same tiles in
    flight through the same L2 round trip, so by Little's law the L2 serves the CTAs drawing
    alike, wherever they sit: 224 CTAs on 132 SMs (2 on 92, 1 on 40) move 224 CTAs' copies at the
    device's rate, not 2 x 132. Measured (calibration/h200/measured/l2_dirty_s23,
    bm_sweep_dirty.csv, 128x14336x4096 128x64x64 w4 s4 G1, 224 CTAs): 35.62-38.94 us clean
    (median 36.96) against the CTAs' 224 x 64 trips x 24,576 B / 11 TB/s = 32.03 us + the
    launch's 3.7 us = 35.73 us, where the SMs' shares give 264 CTAs' bytes, 37.75 + 3.7 = 41.45 us."""
    l2 = getattr(m, "l2_bw_device", None)
    if l2 is None or not drawing or not active_units:
        return ""
    draw = drawing_per_unit(drawing, r, active_units)
    if cta_share_weight(r, draw) <= 1:
        return ""
    rate, even = int(r) * l2 / int(drawing), l2 / int(active_units)
    return (f"; the L2 serves the {format_counted(int(drawing), 'CTA')} drawing, not the "
            f"{format_counted(int(active_units), 'SM')}: the busiest SM's {format_counted(int(r), 'CTA')} draw "
            f"{format_count(int(r))} x {BW(l2)} / {format_count(int(drawing))} = {BW(rate)}, not {BW(even)} "
            f"(calibration/h200/measured/l2_dirty_s23)")


def describe_own_stream(m, r, draw, active_units, private) -> str:
    """The clause of a one-wave GEMM launch whose weight stream DRAM serves among the CTAs
    (``own_stream_draw``; scalars; ``draw`` the CTAs an SM drawing on average, as
    ``drawing_per_unit`` gives it), '' where the busiest SM draws no more than its even share."""
    if m.dram_per_unit is not None or not draw:
        return ""
    private, r = float(private), float(r)
    w = float(cta_share_weight(r, draw))
    if w <= 1:
        return ""
    eff = r / float(own_stream_draw(r, draw, private))
    rate, even = sm_dram_share(m, active_units, eff), sm_dram_share(m, active_units)
    if rate <= even:
        return ""
    mix = "" if private >= 1 - 1e-9 else (
        f", {format_percent(private)} of its DRAM bytes the stream's and the rest co-read at the even share: "
        f"1 / ({formula_share(private, 4)} / {formula_share(w, 4)} + {formula_share(1 - private, 4)}) = "
        f"{formula_share(eff, 4)}")
    return (f"one wave: DRAM serves the weight stream among the {drawing_text(draw, active_units)} drawing, not "
            f"the SMs: the busiest SM's {format_counted(int(r), 'CTA')} draw {format_count(int(r))} / "
            f"{formula_share(draw, 4)} = {formula_share(w, 4)} even shares{mix}: {BW(rate)}, not {BW(even)} "
            f"(memory_parallelism.own_stream_draw; calibration/h200/measured/cta_timeline_s19)")


def describe_share(m, active_units) -> str | None:
    """One line for the breakdown where one SM's DRAM ceiling binds (few SMs pull), else None."""
    cap = sm_dram_bytes_per_ns(m)
    if cap is None or is_array(active_units):
        return None
    share = m.dram_bw_device / active_units
    if share <= cap:
        return None
    return (f"{BW(m.dram_bw_device)} of DRAM over {format_counted(int(active_units), 'SM')} pulling would be {BW(share)} "
            f"each, but one SM brings at most {BW(cap)} "
            f"({format_plain(m.profile.get('pipeline.sm_dram_bandwidth_per_cycle'))} B/cycle x {formula_frequency(m.clock_ghz)}): "
            f"the grid reaches {BW(active_units * cap)} of DRAM at most")


def short_run_factor(m, window, dims, env, bits) -> Any:
    """DRAM time of a read in runs shorter than a line over that of whole lines: the copy
    bandwidth over ``memory.<dram>.bandwidth_short_runs`` where the window's contiguous run
    (its innermost extent that is not a whole row) is under ``line`` bytes; 1 otherwise or
    where the profile states no such fact."""
    short = m.profile.get(f"memory.{m.dram}.bandwidth_short_runs", None)
    if short is None or m.kind != "gpu":
        return 1
    from tfx.analysis.dma import contiguous_run_bytes
    run_bytes = contiguous_run_bytes(window, dims, env, bits)
    if run_bytes is None:
        return 1
    slow = m.dram_bw_device / (short / 1e9)
    if is_array(run_bytes):
        import numpy as np
        return np.where(np.asarray(run_bytes) < 128, slow, 1.0)
    return slow if run_bytes < 128 else 1


def describe_l2_only(l2_only) -> str:
    """A clause for the breakdown: the share of trips that wait the L2 round trip instead."""
    return (f"{format_percent(l2_only)} of the trips find every tile left in L2 by the previous wave (no miss to "
            f"merge with) and wait the L2 round trip instead: the trip's miss share is {format_percent(1 - l2_only)}")


def describe_short_runs(m, dram_bytes, line_rate_bytes) -> str | None:
    """A clause for the breakdown where some DRAM reads come in runs shorter than a line."""
    short = m.profile.get(f"memory.{m.dram}.bandwidth_short_runs", None)
    if short is None or not dram_bytes or line_rate_bytes <= dram_bytes * (1 + 1e-9):
        return None
    return (f"its DRAM reads in runs under 128 B come at {format_bandwidth(short, FORMULA_DIGITS)}, not {BW(m.dram_bw_device)}: "
            f"{B(dram_bytes)} take the time of {B(line_rate_bytes)} of whole lines")
