"""The simulator's exact shortcuts: what they replicate equals what the event loop computes.

``tfx.sim.event_loop.SHORTCUTS`` off simulates every event; on, a periodic steady state is
jumped over (``tfx.sim.fast_forward.PeriodicFastForward``) and its events repeated. The
results must be the same event for event; these tests also check that a jump happened (a
comparison without one would prove nothing) and, on tiny.tile, that the period the jump
repeats is the one derived by hand.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tfx.analysis.analyze import analyze
from tfx.hw import load_profile
from tfx.lang import parse_file
from tfx.sim import event_loop, fast_forward, simulate

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data" / "sim"
TINY = str(DATA / "tiny.tile")
TINY_HW = str(DATA / "tiny_sip.toml")
GEMM = str(ROOT / "kernels" / "gemm.tile")
APPLY = fast_forward.PeriodicFastForward._apply
SNAPSHOT = fast_forward.PeriodicFastForward._snapshot


def simulate_with_jumps(monkeypatch, path, hw, params, knobs=None, shortcuts=True, full=False):
    """(result, the fast-forward's jumps: (dT, m, {position: (dc, dt)}, dtile) each)."""
    jumps = []

    def recording_apply(self, a, T, dT, m, shifts, dtile):
        jumps.append((dT, m, dict(shifts), dtile))
        return APPLY(self, a, T, dT, m, shifts, dtile)

    monkeypatch.setattr(fast_forward.PeriodicFastForward, "_apply", recording_apply)
    monkeypatch.setattr(event_loop, "SHORTCUTS", shortcuts)
    a = analyze(parse_file(path), None, load_profile(hw).with_knobs(knobs), params=params)
    return simulate(a, full=full), jumps


def same_result(r, r0):
    assert r.makespan_ns == r0.makespan_ns
    assert r.n_events == r0.n_events
    assert r.timeline.events == r0.timeline.events
    assert r.to_json(events=False) == r0.to_json(events=False)


# tiny_sip.toml: 1 PE, dispatch 10 ns a command, tensor 256 flop/cycle at 1 GHz, HBM 16 B/ns
# (x4 here: 64 B/ns) + 100 ns, 2 DMA channels released after the transfer, launch 1000 ns.
FAST_HBM = {"memory.hbm.bandwidth": "x4"}
NO_RT = dict(FAST_HBM, **{"dispatch.completion_latency": "0"})


@pytest.mark.parametrize("knobs,period", [(NO_RT, 286), (FAST_HBM, 336)])
def test_tiny_steady_state_jump_repeats_the_hand_derived_period(monkeypatch, knobs, period):
    """tiny.tile, 64 trips, 4 stages. Each trip is 3 commands and 3 tasks (mma_k, and the
    loads a_(k+3), b_(k+3) into the buffers mma_(k-1) read), so a period of one trip shifts
    commands and tasks by 3 and the loop tile by 1. The tensor recurrence sets the period:
    mma_k is dispatched when mma_(k-1) has ended and the command processor has seen it
    (completion latency 0 or 50 ns) and issued a_(k+3), b_(k+3) and mma_k (3 x 10 ns), so
    the period is 256 + 0 + 30 = 286 ns, or 256 + 50 + 30 = 336 ns (the same recurrence as
    test_sim.test_steady_state_equals_formula). The jump repeats whole periods of exactly
    that; every event equals the one the event loop computes without the shortcut."""
    r, jumps = simulate_with_jumps(monkeypatch, TINY, TINY_HW, {"TRIPS": 64, "STAGES": 4}, knobs)
    assert jumps, "the steady state was not jumped over: nothing was replicated"
    for dT, m, shifts, dtile in jumps:
        assert dT % period == 0
        assert shifts == {0: (3 * (dT // period), 3 * (dT // period))} and dtile == dT // period
        assert m >= 1
    r0, none = simulate_with_jumps(monkeypatch, TINY, TINY_HW, {"TRIPS": 64, "STAGES": 4}, knobs,
                                   shortcuts=False)
    assert none == []
    same_result(r, r0)


def test_tiny_schedule_through_the_jump_is_the_hand_derived_one(monkeypatch):
    """The replicated events themselves, derived by hand (completion latency 0, HBM 64 B/ns:
    a 32x32 bf16 tile is 2048 B = 32 ns on the DRAM server, lands 100 ns later).
    Relative to the launch at 1000: zeros dispatched [0,10]; the 8 prologue loads a0 b0 a1
    b1 a2 b2 a3 b3 dispatched at 10, 20, ..., 80, each [+10]; the DRAM server takes a0
    [20,52] (lands 152), b0 [52,84] (lands 184), ... mma0 waits b0: dispatched [184,194],
    tensor [194,450]. From then on mma_k is [194 + 286k, 450 + 286k] while trip k still
    issues loads (a_(k+3) for k + 3 <= 63: k <= 60): mma60 ends 450 + 286 x 60 = 17610.
    mma_61..63 have no loads before them: each is dispatched [end of the previous, +10],
    256 + 10 = 266 ns apart: mma61 [17620, 17876], mma62 [17886, 18142], mma63 [18152,
    18408]; absolute, the launch's 1000 added: [18620, 18876], [18886, 19142], [19152, 19408].
    cast dispatched [19408,19418], vector [19418,19434]; store dispatched [19434,19444],
    DRAM [19444,19476], lands 19576: the makespan."""
    r, jumps = simulate_with_jumps(monkeypatch, TINY, TINY_HW, {"TRIPS": 64, "STAGES": 4}, NO_RT)
    assert jumps
    tl = r.timeline
    tensor = [(s, e) for s, e, g, *_ in tl.events if tl.engines[g] == "tensor"]
    expected = [(1194 + 286 * k, 1450 + 286 * k) for k in range(61)]
    expected += [(18620 + 266 * j, 18876 + 266 * j) for j in range(3)]
    assert tensor == expected
    assert r.makespan_ns == 19576


@pytest.mark.parametrize("hw,params", [
    ("h200_sxm", {"M": 1024, "N": 1024, "K": 4096}),     # one wave, shared DRAM
    ("a100_sxm", {"M": 2048, "N": 2048, "K": 2048}),     # three waves, the last one partial
])
def test_gemm_full_jumps_equal_the_event_loop(monkeypatch, hw, params):
    """Every SM of the device with one shared DRAM server: the jumps' events, counters and
    stalls equal the event loop's, event for event."""
    r, jumps = simulate_with_jumps(monkeypatch, GEMM, hw, params, full=True)
    assert jumps
    r0, _ = simulate_with_jumps(monkeypatch, GEMM, hw, params, shortcuts=False, full=True)
    same_result(r, r0)


def test_search_budget_counts_events_not_seconds(monkeypatch):
    """How far the fast-forward searches before giving up is counted in events, so a machine
    that writes states down slowly (here: 20 ms more per state) jumps exactly where a fast
    one does. gemm 4096x2048x2048 on a100_sxm --full reaches the budget (a drifting state)."""
    params = {"M": 4096, "N": 2048, "K": 2048}
    _, jumps = simulate_with_jumps(monkeypatch, GEMM, "a100_sxm", params, full=True)

    def slow_snapshot(self, T):
        time.sleep(0.02)
        return SNAPSHOT(self, T)

    monkeypatch.setattr(fast_forward.PeriodicFastForward, "_snapshot", slow_snapshot)
    _, slow_jumps = simulate_with_jumps(monkeypatch, GEMM, "a100_sxm", params, full=True)
    assert jumps and slow_jumps == jumps
