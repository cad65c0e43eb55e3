"""Serialized warpgroup mmas: a serial trip whose mma registers do not fit a thread
(docs/analysis.md, section 8, "Serialized warpgroup mmas").

A warpgroup mma (wgmma.mma_async) keeps its accumulator, and an A operand read from
registers (attention's P in PV), in the issuing threads' registers while it runs. Where a
trip's warpgroup mmas together need more registers than a thread may have (255 on sm_90:
``occupancy.max_regs_per_thread``), ptxas cannot keep the asynchronous pipeline and waits
for every instruction before issuing the next: "(C7511) Potential Performance Loss:
wgmma.mma_async instructions are serialized due to insufficient register resources for the
wgmma pipeline" (calibration/h200/measured/wgmma_serial/README.md: Triton 3.6's flash-attention
kernel of the issue-15 rows compiled for sm_90a; every HGMMA followed by
``WARPGROUP.DEPBAR.LE gsb0, 0x0`` at 128 x 128 on 4 warps for D = 128, 32 of each a trip,
and for D = 64; never where the registers fit, even at 255 compiled registers with spills:
128 x 64 on 4 warps at D = 128, 64 x 128 at 4 and 8 warps).

The registers counted (``Trip.registers``), per thread, over the trip's warpgroup mmas:
each accumulator, ``M x N / threads`` fp32 values (every warp of a chained dot on M,
tfx.analysis.mma_layout), and each A operand fed from registers, ``M x K x bits / 32 /
threads``. At 128 x 128 on 4 warps, D = 128: S 128 + O 128 + P 64 = 320 > 255; D = 64:
128 + 64 + 64 = 256 > 255 (serialized); 128 x 64 at D = 128: 64 + 128 + 32 = 224 (not).

What it costs (``_extra_cycles``): each instruction of a serialized mma waits for its own
result before the next issues. Measured (bench/h200/measure_wgmma_serial.py,
calibration/h200/measured/wgmma_serial/wgmma_serial.csv: one warpgroup, one CTA a SM,
``G`` wgmma a waited group): m64n128k16 from shared memory (SS) takes 65.5 ns a waited
instruction against 36.7 ns a step in groups of 2-8 (102.1, 173.6, 322.9 ns): 28.8 ns =
57 cycles a wait (``instruction_latency.wgmma_serial``, m64n64k16: 30.4 ns); with A from
registers (RS, PV) 62.5 against 38.1 ns a step: 24.4 ns = 48 cycles
(``instruction_latency.wgmma_serial_rs``). A dot of ``n`` instructions per warpgroup (its
64-row slabs x k-steps) waits ``n - 1`` times more than the one wait for its result a
non-serialized dot already has on the trip's path (tfx.analysis.trip_latency).

What hides it (``_hidden_ns``): the warpgroup's slabs (64 rows each, ``M / 64 /
warpgroups``) run independent chains; ptxas interleaves one slab's softmax between another
slab's serialized mma instructions (the SASS of 128 x 128 on 4 warps, D = 128: PV of rows
0-63 issued between the exp2s of rows 64-127), so up to ``(slabs - 1) / slabs`` of the
trip's vector and special-function work fills the waits.

Not the fp8 fact (``pipeline.wgmma_serial_latency``, 42 cycles; tfx.analysis.mma_layout's
serialized fp8 trip): the two are different quantities, not two latencies of one instruction.
57 cycles is one waited wgmma's latency past its own pipelined step, one warpgroup alone on the
SM. The fp8 trips are 8-warp CTAs, two warpgroups whose serialized instructions share the
tensor pipe, and a second warpgroup fills that wait (wgmma_serial.csv at r = 2 warpgroups a SM:
m64n128k16 waited singly 73.2 ns a pair of instructions against 71.7 pipelined, max(2 x 36.7,
36.7 + 28.8) = 73.4; at m64n64k16, whose 17.9 ns step cannot cover the wait, 50.2 against
35.8: max(35.8, 48.3)). The 42 is the slope of a two-constant fit over the trip's flops at the
SM's peak rate (500 + 42 cycles an instruction a warpgroup issues): of it, 2 x 128 x (1 / 0.876
- 1) = 36.2 cycles are the two warpgroups' m64n256k32 instructions run at the wgmma clock
(pipeline.wgmma_clock_fraction) rather than the peak the fit assumed; the serialized fp8
trip's cost over its pipelined peer sits in the 500-cycle intercept (the trip's chain in series
with an mma no longer left in flight), not in a per-instruction wait. Here the waits count in
full only where one warpgroup holds several 64-row slabs (4 warps: 128 x 128), which is what
C7511 serializes among the issue-15 rows.

A serialized mma is not left running either: Triton's properly async PV waits too
(tfx.analysis.mma_path.properly_async). GEMM k-loops are not touched here: their single
accumulator is a spill question (tfx.analysis.spill_traffic). Everything is int/float or
numpy arithmetic (explore's vectorized sweeps). A trip's mmas are laid out once (``trip``) and every
function reads that plan.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from tfx.analysis import mma_layout, mma_path
from tfx.analysis.numbers import emax, emin, is_array
from tfx.hw.units import format_plain

WARPGROUP_ROWS = mma_path.WARPGROUP_ROWS
ACC_BITS = 32              # fp32 accumulators


def facts(m):
    """(SS wait, RS wait) cycles, or None where the profile states them not (the term is off)."""
    ss = m.profile.get("instruction_latency.wgmma_serial", None)
    rs = m.profile.get("instruction_latency.wgmma_serial_rs", None)
    cap = m.profile.get("occupancy.max_regs_per_thread", None)
    if ss is None or rs is None or cap is None or m.kind != "gpu":
        return None
    return ss, rs, cap


class Mma(NamedTuple):
    """One shaped mma of the trip, laid out once (tfx.analysis.mma_layout.plan)."""

    node: Any
    plan: Any                 # mma_layout's plan: padded M, N, K and the instruction depth
    group: Any                # 1 where it runs as a warpgroup mma, else 0 (arrays elementwise)
    a_in_registers: bool      # A fed from registers (RS: attention's P in PV)
    instructions: Any         # wgmma a warpgroup issues for it: 64-row slabs x k-steps


class Trip(NamedTuple):
    """A trip's warpgroup mmas as ptxas sees them: each laid out once per (loop, machine, warps)."""

    mmas: tuple               # Mma per shaped mma, in walk order
    registers: Any            # a thread's registers for them in flight (module docstring)
    slabs: Any                # 64-row slabs of the scores' mma a warpgroup holds


def trip(loop, m, warps) -> Trip:
    """The trip's mmas, each planned once (every function below reads this)."""
    threads = 32 * warps
    groups = mma_path.warpgroups(loop, m, warps)
    scores = mma_path.scores(loop)
    mmas, registers, slabs = [], 0, 1
    for c in mma_path.shaped_mmas(loop):
        p = mma_layout.plan(c.per_exec_shape, m.inst, warps, getattr(c, "mma_bits", 16),
                            getattr(c, "mma_chained", False))
        group = mma_path.on_warpgroup(p, m)
        rs = mma_path.a_in_registers(c)
        row_slabs = emax(p.m // WARPGROUP_ROWS // groups, 1)
        mmas.append(Mma(c, p, group, rs, row_slabs * (p.k // p.depth)))
        acc = p.m * p.n * ACC_BITS // 32 / threads
        a = p.m * p.k * getattr(c, "mma_bits", 16) // 32 / threads if rs else 0
        registers = registers + group * (acc + a)
        if c is scores:
            slabs = row_slabs
    return Trip(tuple(mmas), registers, slabs)


def _serialized(t: Trip, loop, m):
    f = facts(m)
    if f is None or not mma_path.trip_waits_for_mma(loop):
        return 0
    over = t.registers > f[2]
    if is_array(over):
        import numpy as np
        return np.asarray(over, dtype=np.int64)
    return int(bool(over))


def _extra_cycles(x: Mma, serial, f):
    wait = f[1] if x.a_in_registers else f[0]
    return x.group * serial * emax(x.instructions - 1, 0) * wait


def _waits_ns(t: Trip, loop, m):
    f = facts(m)
    if f is None:
        return 0
    serial = _serialized(t, loop, m)
    total = 0
    for x in t.mmas:
        total = total + _extra_cycles(x, serial, f)
    return total / m.clock_ghz


def _hidden_ns(t: Trip, waits, simt_ns):
    return emin(waits, (t.slabs - 1) / t.slabs * simt_ns)


def serialized(loop, m, warps):
    """1 where ptxas serializes the trip's warpgroup mmas (a serial trip whose mma registers
    exceed a thread's: module docstring), else 0 (arrays elementwise)."""
    if facts(m) is None or not mma_path.trip_waits_for_mma(loop):
        return 0
    return _serialized(trip(loop, m, warps), loop, m)


def fits(loop, m, warps):
    """1 where a serial trip's warpgroup mmas (every shaped mma of the trip on the warpgroup
    mma) fit a thread's registers, so ptxas keeps them in flight, else 0 (arrays
    elementwise); 0 where the facts are not stated or the loop is no serial chain. What a
    compile that still spills puts in local memory then is not the trip's state
    (tfx.analysis.spill_traffic.kloop_trip's ``untouched``)."""
    f = facts(m)
    if f is None or not mma_path.trip_waits_for_mma(loop):
        return 0
    t = trip(loop, m, warps)
    if not t.mmas:
        return 0
    on_group = 1
    for x in t.mmas:
        on_group = on_group * x.group
    under = t.registers <= f[2]
    if is_array(under, on_group):
        import numpy as np
        return np.asarray(np.asarray(under) & (np.asarray(on_group) > 0), dtype=np.int64)
    return int(bool(under) and bool(on_group))


def detail(line, loop, m, warps, simt_ns, fmt) -> str:
    """The breakdown's text (scalars)."""
    f = facts(m)
    t = trip(loop, m, warps)
    waits = _waits_ns(t, loop, m)
    parts = []
    for x in t.mmas:
        n = x.instructions
        parts.append(f"line {x.node.line}: {int(n)} wgmma a warpgroup, {int(n) - 1} more waits x "
                     f"{f[1] if x.a_in_registers else f[0]} cycles "
                     f"({'A from registers' if x.a_in_registers else 'shared memory'})")
    s = int(t.slabs)
    return (f"loop at line {line}: the trip's warpgroup mmas hold {format_plain(t.registers)} "
            f"registers a thread (accumulators + register-fed A) > {int(f[2])}: ptxas waits for each "
            f"instruction (C7511); " + "; ".join(parts) + f" = {fmt(waits)} a trip, of which "
            f"the other {s - 1} of {s} row slabs' SIMT work hides {fmt(_hidden_ns(t, waits, simt_ns))} "
            f"(({s} - 1) / {s} x {fmt(simt_ns)}) (included in the serial chain)")


def added_ns(loop, m, warps, simt_ns):
    """ns the serialized waits add to one CTA's chain a trip: waits less what is hidden."""
    t = trip(loop, m, warps)
    waits = _waits_ns(t, loop, m)
    return emax(waits - _hidden_ns(t, waits, simt_ns), 0)


__all__ = ["serialized", "fits", "added_ns", "detail", "facts", "trip", "Trip", "Mma"]
