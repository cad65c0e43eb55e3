"""The SM clock a serial-chain launch (attention) settles at under the board's power limit
(docs/analysis.md section 8, "the power limit's clock").

The H200's power controller keeps the board under its limit by lowering the SM clock. Dynamic
power is C V^2 f, and V follows f in the DVFS range, so at the limit it goes as f^a with a =
``compute.tensor.power_clock_exponent`` (3: calibration/h200/measured/gemm_clock_s15). What
switches is the data: the same flash-attention launches on zeros keep 1,965-1,980 MHz where on
random data they fall to 1,710-1,860 (calibration/h200/measured/attn_s19/power), and their time
rises by the clock's ratio (64 x 64 w4 s3: 5.008 / 4.302 ms = 1.164 against 1,972.5 / 1,710 MHz
= 1.153). The power at clock.core comes from the tensor datapath and from the bytes the SMs pull
through the L2, so as a share of the limit

    P = (tensor_busy + power.l2_traffic_power x l2_busy) / power.tensor_share_at_limit

with ``tensor_busy`` the share of the launch's time its SMs' tensor cores are busy at their
sustained rate (the launch's tensor ns over its SMs and its time) and ``l2_busy`` the share of
memory.l2.bandwidth its global traffic draws; where P > 1 the clock falls to clock.core x
P^(-1/a). The controller acts on the load sustained over tens of milliseconds, not within a
launch (calibration/h200/measured/attn_power_s20): the campaigns' kernel launched back to back
from idle keeps clock.core for 39.8-126 ms, the earliest onset ``power.response_time``; a launch
timed by do_bench over 25 ms from idle keeps it (B1-B4, 0.56-2.2 ms: random / zeros 1.000-1.021)
and the same launch timed over bench()'s further ten launches takes the limit's clock (B8 1.064
and 1.167, B16 1.079 and 1.195: 128 x 64 w8 s4, 64 x 64 w4 s3). So the timing condition sets it:
a serving step (analyze's default) is a sustained load and its launch runs at the lower clock
throughout, body / clock; a launch timed by the campaigns' harness (analyze's l2_clear: do_bench)
runs at it only where the load the harness has sustained before its median timed launch
(``harness_load_ns``) reaches ``power.response_time``, at clock.core otherwise. The serial chain's
trips are on the SM: tensor, SIMT and their latencies all count cycles, so the launch stretches
by the clocks' ratio.

Only launches with a serial chain (a trip that reads its own mma's result: attention's QK^T ->
softmax -> PV, tfx.analysis.mma_path.trip_waits_for_mma) take it: their trips are priced from
cycle counts at clock.core and microbenchmarks of short launches that run unthrottled, while a
GEMM's tensor rate (compute.tensor.efficiency: cuBLAS at 8192^3 on random data, sustained) was
measured at the limit already. Everything is scalar or numpy arithmetic (explore's sweeps).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from tfx.analysis.numbers import emax, emin, is_array, ratio, where


class PowerFacts(NamedTuple):
    tensor_share: float       # power.tensor_share_at_limit
    l2_power: float           # power.l2_traffic_power
    response_ns: float        # power.response_time: the sustained load before the clock falls
    exponent: float           # compute.tensor.power_clock_exponent


class PowerClock(NamedTuple):
    tensor_busy: Any          # share of the SMs' time their tensor cores are busy
    l2_busy: Any              # share of memory.l2.bandwidth the launch's traffic draws
    power: Any                # P: dynamic power at clock.core over the limit
    clock: Any                # f / clock.core, at most 1
    body_ns: Any              # the launch's time at clock.core (waves, tail, their excess)
    ns: Any                   # what the lower clock adds to it
    load_ns: Any = None       # the load sustained before the timed launch (harness_load_ns); None: a serving step's, sustained


def facts(m) -> PowerFacts | None:
    """The profile's power facts, or None where it states any of them not (then every launch
    runs at clock.core) or off a GPU."""
    if m.kind != "gpu":
        return None
    p = m.profile
    got = [p.get(k, None) for k in ("power.tensor_share_at_limit", "power.l2_traffic_power",
                                    "power.response_time", "compute.tensor.power_clock_exponent")]
    if any(v is None for v in got):
        return None
    return PowerFacts(*got)


def power_share(tensor_busy, l2_busy, f: PowerFacts) -> Any:
    """The launch's dynamic power at clock.core as a share of the limit (arrays elementwise)."""
    return (tensor_busy + f.l2_power * l2_busy) / f.tensor_share


def clock_share(power, f: PowerFacts) -> Any:
    """f / clock.core under the limit: P^(-1/a) where P > 1, else 1 (arrays elementwise)."""
    return emin(emax(power, 1) ** (-1 / f.exponent), 1)


#: The campaigns' harness (bench/h200/measure_accuracy.py bench(), analyze's l2_clear):
#: triton.testing.do_bench(warmup=5, rep=25) estimates a launch's time over 5 launches, warms up
#: for 5 ms, times 25 ms of launches and reports their median; a launch over 2.5 ms it times
#: again the same way over rep = 10 launches.
HARNESS_ESTIMATE_LAUNCHES = 5
HARNESS_WARMUP_NS = 5e6
HARNESS_WINDOW_NS = 25e6
HARNESS_RETIME_OVER_NS = 2.5e6
HARNESS_RETIME_LAUNCHES = 10


def harness_load_ns(body_ns) -> Any:
    """The load the campaigns' harness has sustained when its median timed launch starts, for a
    launch of ``body_ns``: 5 T + 5 ms + 25 ms / 2 where it times 25 ms once (T <= 2.5 ms); over
    2.5 ms the whole first call, 5 T + 5 ms + 25 ms, then 5 T + 5 ms + 10 T / 2 of the second,
    whose median it reports (arrays elementwise)."""
    first = HARNESS_ESTIMATE_LAUNCHES * body_ns + HARNESS_WARMUP_NS
    again = first + HARNESS_WINDOW_NS + HARNESS_ESTIMATE_LAUNCHES * body_ns + HARNESS_WARMUP_NS \
        + HARNESS_RETIME_LAUNCHES * body_ns / 2
    return where(body_ns > HARNESS_RETIME_OVER_NS, again, first + HARNESS_WINDOW_NS / 2)


def stretched_ns(body_ns, clock, f: PowerFacts, load_ns=None) -> Any:
    """The launch's time at the lower clock, body / ``clock``, where the load sustained before it
    (``load_ns``; None: a serving step's, sustained) reaches ``power.response_time``; else the
    body at clock.core (arrays elementwise)."""
    if load_ns is None:
        return body_ns / clock
    return where(load_ns >= f.response_ns, body_ns / clock, body_ns)


def launch(m, tensor_ns_per_position, l2_bytes_per_position, positions, body_ns,
           timed: bool = False) -> PowerClock | None:
    """The power clock of a launch whose positions each keep their SM's tensor cores busy
    ``tensor_ns_per_position`` (at the sustained rate) and move ``l2_bytes_per_position``
    through the L2, over ``body_ns`` at clock.core; ``timed``: timed by the campaigns' harness
    (analyze's l2_clear; harness_load_ns), else a serving step's sustained load. None where the
    profile has no power facts."""
    f = facts(m)
    if f is None:
        return None
    tensor_busy = ratio(tensor_ns_per_position * positions, m.units * emax(body_ns, 1e-30))
    l2_bw = getattr(m, "l2_bw_device", None)
    l2_busy = ratio(l2_bytes_per_position * positions, l2_bw * emax(body_ns, 1e-30)) if l2_bw else 0
    power = power_share(tensor_busy, l2_busy, f)
    clock = clock_share(power, f)
    load = harness_load_ns(body_ns) if timed else None
    return PowerClock(tensor_busy, l2_busy, power, clock, body_ns, stretched_ns(body_ns, clock, f, load) - body_ns,
                      load)


def describe(pc: PowerClock, m, fmt) -> str:
    """The breakdown's words (scalars): the busy shares, the power, the clock, the stretch."""
    from tfx.hw.units import format_percent, format_plain, formula_frequency
    f = facts(m)
    clock_ghz = m.clock_ghz
    head = (f"power at {formula_frequency(clock_ghz)}: (tensor cores busy {format_percent(float(pc.tensor_busy))} + "
            f"{format_plain(f.l2_power)} x L2 traffic {format_percent(float(pc.l2_busy))} of its bandwidth) / "
            f"{format_plain(f.tensor_share)} (power.tensor_share_at_limit) = {format_plain(float(pc.power))} of the limit")
    if float(pc.power) <= 1:
        return head + ": under it, the launch keeps the clock"
    tail = (f"; the clock falls to {format_plain(float(pc.power))}^(-1/{format_plain(f.exponent)}) = "
            f"{format_plain(float(pc.clock))} x {formula_frequency(clock_ghz)} = {formula_frequency(clock_ghz * float(pc.clock))} "
            f"(compute.tensor.power_clock_exponent)")
    body, resp = fmt(pc.body_ns), fmt(f.response_ns)
    if pc.load_ns is None:
        when = f"; a serving step's load is sustained past the controller's response ({resp}, power.response_time)"
    else:
        t = float(pc.body_ns)
        n, w, win, k = HARNESS_ESTIMATE_LAUNCHES, fmt(HARNESS_WARMUP_NS), fmt(HARNESS_WINDOW_NS), HARNESS_RETIME_LAUNCHES
        parts = (f"{n} x {body} + {w} + {win} + {n} x {body} + {w} + {k} x {body} / 2"
                 if t > HARNESS_RETIME_OVER_NS else f"{n} x {body} + {w} + {win} / 2")
        when = f"; do_bench's median timed launch starts after {parts} = {fmt(pc.load_ns)} of load"
        if float(pc.load_ns) < f.response_ns:
            return head + tail + when + f", within the controller's response ({resp}, power.response_time): " \
                "it is timed at the full clock"
        when += f", past the controller's response ({resp}, power.response_time)"
    return head + tail + when + f": {body} / {format_plain(float(pc.clock))} - {body} = {fmt(pc.ns)}"
