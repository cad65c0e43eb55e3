"""The pipeline simulator: hand-derived schedules, steady state, roofline, traces, sip findings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tfx.analysis.analyze import analyze
from tfx.cli.main import main
from tfx.errors import TfxError
from tfx.hw import load_profile
from tfx.lang import parse_file
from tfx.sim import simulate

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data" / "sim"
TINY = str(DATA / "tiny.tile")
TINY_HW = str(DATA / "tiny_sip.toml")
KERNELS = sorted((ROOT / "kernels").glob("*.tile"))


def run(path, hw, kernel=None, params=None, knobs=None, **kw):
    a = analyze(parse_file(str(path)), kernel, load_profile(hw).with_knobs(knobs), params=params or {})
    return simulate(a, **kw)


def ev(r, engine):
    tl = r.timeline
    i = tl.engines.index(engine)
    return [(s, e, tl.labels[l], tile) for (s, e, g, l, tile, u) in tl.events if g == i]


# ---------------------------------------------------------------- hand-derived schedule

NO_RT = {"dispatch.completion_latency": "0"}


def test_two_tiles_two_stages_exact_schedule():
    """tiny.tile on tiny_sip.toml (1 PE, 1 GHz, HBM 16 B/ns + 100 ns latency, TCM 1024 B/cycle,
    tensor 256 flop/cycle, vector 128 flop/cycle = 64 lanes, dispatch 10 ns / command,
    2 DMA channels released after the transfer, launch 1000 ns), with the command processor
    seeing a command finish at once (dispatch.completion_latency = 0).

    Per op: a, b, C tiles are 32x32 bf16 = 2048 B -> 128 ns on the DRAM server, land
    100 ns later; mma 2*32^3 = 65536 flop / 256 = 256 ns (TCM 12 KiB = 12 ns, hidden);
    zeros 4 KiB TCM = 4 ns; cast 1024 elements / 64 lanes = 16 ns.

    Issue order (software pipelined, stages 2): zeros, a0, b0 (prologue), a1, b1, mma0, mma1,
    cast, store. Relative to the launch (t=1000 absolute):
      zeros  dispatch [0,10]   vector [10,14]
      a0     dispatch [10,20]  DRAM [20,148]   lands 248
      b0     dispatch [20,30]  DRAM [148,276]  lands 376
      a1     dispatch [30,40]  DRAM [276,404]  lands 504
      b1     dispatch [40,50]  DRAM [404,532]  lands 632
      mma0   waits b0 (data 50->376), dispatch [376,386], tensor [386,642]
      mma1   waits mma0 (hazard 386->642), dispatch [642,652], tensor [652,908]
      cast   waits mma1 (hazard 652->908), dispatch [908,918], vector [918,934]
      store  waits cast (hazard 918->934), dispatch [934,944], DRAM [944,1072], ack 1172
    Makespan 1000 + 1172 = 2172.
    """
    r = run(TINY, TINY_HW, knobs=NO_RT)
    assert r.makespan_ns == 2172
    assert r.commands == 9
    tensor = ev(r, "tensor")
    assert [(s, e) for s, e, *_ in tensor] == [(1386, 1642), (1652, 1908)]
    assert [t for *_, t in tensor] == [0, 1]
    copy = ev(r, "copy")
    assert [e for s, e, *_ in copy] == [1248, 1376, 1504, 1632, 2172]
    vec = ev(r, "vector")
    assert [(s, e) for s, e, *_ in vec] == [(1010, 1014), (1918, 1934)]
    disp = ev(r, "dispatch")
    assert [s - 1000 for s, *_ in disp] == [0, 10, 20, 30, 40, 376, 642, 908, 934]
    st = r.stalls
    assert st["data"] == 326
    assert st["hazard"] == 256 + 256 + 16
    assert st["buffer"] == 0
    assert r.engines["tensor"]["busy_ns"] == 512
    assert r.engines["copy"]["busy_ns"] == 5 * 128
    assert r.engines["dispatch"]["busy_ns"] == 90
    # by op: mma0 waited 326 for b0's data, mma1 256 on mma0, cast 256 on mma1, store 16 on
    # the cast; each command's engine idled 10 ns while it was dispatched (two loads of a,
    # two of b, two mmas: 20 each)
    assert r.stalls_by_op() == [
        ("%acc = mma", "data", 326), ("%acc = mma", "hazard", 256), ("%c = cast", "hazard", 256),
        ("%a = load", "dispatch", 20), ("%acc = mma", "dispatch", 20), ("%b = load", "dispatch", 20),
        ("store", "hazard", 16), ("%acc = zeros", "dispatch", 10), ("%c = cast", "dispatch", 10),
        ("store", "dispatch", 10)]
    assert sum(ns for *_, ns in r.stalls_by_op()) == sum(st.values())


def test_completion_latency_delays_every_waiting_command():
    """The same schedule with tiny_sip's inherited dispatch.completion_latency = 50 cycles: a
    command that waited on another is dispatched 50 ns after that one finished.
      mma0   b0 lands 376, seen 426: dispatch [426,436], tensor [436,692]
      mma1   seen 742: dispatch [742,752], tensor [752,1008]
      cast   seen 1058: dispatch [1058,1068], vector [1068,1084]
      store  seen 1134: dispatch [1134,1144], DRAM [1144,1272], ack 1372
    Makespan 2372; data stall 50 -> 426 = 376, hazard 306 + 306 + 66 = 678."""
    r = run(TINY, TINY_HW)
    assert r.makespan_ns == 2372
    assert [(s, e) for s, e, *_ in ev(r, "tensor")] == [(1436, 1692), (1752, 2008)]
    assert [s - 1000 for s, *_ in ev(r, "dispatch")] == [0, 10, 20, 30, 40, 426, 742, 1058, 1134]
    assert r.stalls["data"] == 376 and r.stalls["hazard"] == 678


def test_ring_slot_holds_the_in_order_command_processor():
    """With 4 trips and 2 stages, a2's buffer is a0's: the in-order command processor issues
    a2 only once mma0 (a0's reader) has finished, and every later command waits behind it.
    Completion latency 0: mma0 [386,642]; a2 dispatch [642,652], b2 [652,662], mma1
    [662,672] then tensor [672,928]; the dispatcher was free at 386: buffer stall 256."""
    r = run(TINY, TINY_HW, params={"TRIPS": 4}, knobs=NO_RT)
    tensor = ev(r, "tensor")
    assert [(s - 1000, e - 1000) for s, e, *_ in tensor[:2]] == [(386, 642), (672, 928)]
    disp = [s - 1000 for s, e, lab, t in ev(r, "dispatch") if lab == "%a = load" and t == 2]
    assert disp == [642]
    assert r.stalls["buffer"] >= 256
    r50 = run(TINY, TINY_HW, params={"TRIPS": 4})
    mma0_end = ev(r50, "tensor")[0][1]
    assert [s for s, e, lab, t in ev(r50, "dispatch") if lab == "%a = load" and t == 2] == [mma0_end + 50]


def test_gpu_ring_slot_waits_in_the_copy_queue():
    """A GPU has no command processor: the load into a busy ring slot is issued in order and
    waits in the copy queue (a semaphore) while later commands go ahead."""
    r = run(ROOT / "kernels" / "gemm.tile", "h200_sxm", params={"M": 128, "N": 128, "K": 1024})
    copy = ev(r, "copy")
    tensor = ev(r, "tensor")
    # the load of tile 3 (STAGES 3) starts no earlier than mma 0, the reader of its slot, ends
    a3 = [s for s, e, lab, t in copy if lab == "%a = load" and t == 3]
    assert a3 and a3[0] >= tensor[0][1]
    assert r.stalls["buffer"] >= 0 and r.dispatch_ns == 0


def test_single_buffered_load_waits_for_its_readers():
    """STAGES = 1: one buffer per load, so a1 overwrites a0's only when mma0 has read it.
    Completion latency 0. zeros [0,10]/[10,14]; a0 [10,20] lands 248; b0 [20,30] lands 376;
    mma0 waits b0: dispatch [376,386], tensor [386,642]; a1 waits mma0 (buffer 386 -> 642):
    dispatch [642,652], DRAM [652,780], lands 880; b1 [652,662], DRAM [780,908], lands 1008;
    mma1 waits b1 (data 662 -> 1008): [1008,1018], tensor [1018,1274]; cast [1274,1284],
    [1284,1300]; store [1300,1310], DRAM [1310,1438], ack 1538. Makespan 2538."""
    r = run(TINY, TINY_HW, params={"STAGES": 1}, knobs=NO_RT)
    assert r.makespan_ns == 2538
    assert [(s - 1000, e - 1000) for s, e, *_ in ev(r, "tensor")] == [(386, 642), (1018, 1274)]
    st = r.stalls
    assert st["buffer"] == 256 and st["data"] == 346 + 346 and st["hazard"] == 256 + 16


def test_steady_state_equals_formula():
    """Stall-free steady state: with 4 stages and 4x HBM the loads stay ahead, and the tensor
    recurrence sets the period. In trip k the command processor issues a_(k+3), b_(k+3) (their
    buffers were read by mma_(k-1)) and mma_k (it reads mma_(k-1)'s acc), so mma_k starts
    completion latency + 3 dispatches after mma_(k-1) ends: 256 + 0 + 30 = 286 ns per trip, or
    256 + 50 + 30 = 336 with tiny_sip's 50-cycle completion latency. Makespan = launch + fill +
    trips x period + tail, fill and tail the same for any trip count."""
    for knobs, period in ((NO_RT, 286), ({}, 336)):
        knobs = dict(knobs, **{"memory.hbm.bandwidth": "x4"})
        spans = {t: run(TINY, TINY_HW, params={"TRIPS": t, "STAGES": 4}, knobs=knobs).makespan_ns
                 for t in (8, 16, 32)}
        assert spans[16] - spans[8] == 8 * period
        assert spans[32] - spans[16] == 16 * period
        fill_tail = spans[8] - 8 * period
        assert spans[32] == fill_tail + 32 * period


TINY_COMPOSITE = """
kernel tinyc {
  param TRIPS = 2 in 1..64

  tensor A : bf16[TRIPS * 32, 32] @hbm in
  tensor B : bf16[TRIPS * 32, 32] @hbm in
  tensor C : bf16[32, 32] @hbm out

  mesh cube[1] as (c) capture(A, B, C) {
    mesh pe[1] as (p) capture(A, B, C) {
      %acc = zeros f32[32, 32] @tcm
      composite stream {
        loop k = 0 to TRIPS carry(%acc) capture(A, B) {
          %a = load A[k * 32 : 32, :] -> tcm
          %b = load B[k * 32 : 32, :] -> tcm
          %acc = mma %a, %b, %acc
        }
      }
      %c = cast %acc to bf16
      store %c -> C[0 : 32, :]
    }
  }
}
"""


def test_composite_streams_a_whole_loop(tmp_path):
    """tiny.tile's loop (no stages) inside ONE composite, on tiny_sip.toml (composite dispatch
    50 ns, completion latency 50 ns). 32-row tiles: one sub-tile per op. Relative to the launch:
      zeros     dispatch [0,10], vector [10,14]
      composite waits zeros (seen 64): dispatch [64,114]; its tasks queue at 114
      a0 DRAM [114,242] lands 342; b0 [242,370] lands 470; a1 [370,498] lands 598 (its
      buffer is the ring's second: no wait); b1 waits a channel (released at 370), DRAM
      [498,626] lands 726
      mma0 [470,726]; mma1 reads mma0's acc in the engine: [726,982] (no round trip)
      cast      waits the composite (seen 1032): dispatch [1032,1042], vector [1042,1058]
      store     seen 1108: dispatch [1108,1118], DRAM [1118,1246], ack 1346
    4 commands (zeros, composite, cast, store), 80 ns of dispatch, makespan 2346. With 3
    trips a2 reuses a0's buffer: it starts when mma0 ends (726)."""
    path = tmp_path / "tinyc.tile"
    path.write_text(TINY_COMPOSITE)
    r = run(path, TINY_HW)
    assert r.makespan_ns == 2346
    assert r.commands == 4 and r.dispatch_ns == 80
    assert [(s - 1000, e - 1000) for s, e, *_ in ev(r, "tensor")] == [(470, 726), (726, 982)]
    assert [e - 1000 for s, e, *_ in ev(r, "copy")] == [342, 470, 598, 726, 1346]
    assert [s - 1000 for s, *_ in ev(r, "dispatch")] == [0, 64, 1032, 1108]
    r3 = run(path, TINY_HW, params={"TRIPS": 3})
    a2 = [s - 1000 for s, e, lab, t in ev(r3, "copy") if lab == "%a = load" and t == 2]
    assert a2 == [726]
    assert r3.commands == 4


def test_integer_times_and_sorted_events():
    r = run(TINY, TINY_HW, params={"TRIPS": 8})
    starts = [e[0] for e in r.events]
    assert starts == sorted(starts)
    assert all(isinstance(x, int) for e in r.events for x in e[:2])
    assert r.timeline.events_in(0, 10 ** 9, unit=0) == r.events
    arr = r.timeline.as_array()
    assert len(arr) == len(r.events) and arr["end"].max() == r.makespan_ns


def test_tiles_cap_extrapolates():
    full = run(TINY, TINY_HW, params={"TRIPS": 64})
    capped = run(TINY, TINY_HW, params={"TRIPS": 64}, tiles=8)
    assert len(capped.events) < len(full.events)
    assert abs(capped.makespan_ns - full.makespan_ns) / full.makespan_ns < 0.1


def test_tiles_cap_counts_commands_and_work_exactly():
    """Capped at 16 of 64 blocks, the decode kernels still report every command and all the
    work of the uncapped stream (a composite around the KV loop stays ONE command); the
    makespan is extrapolated."""
    for kernel, commands in (("decode_attention_single_op", 1045), ("decode_attention_composite", 22)):
        full = run(SIP_ATTN, "sip", kernel, events=False)
        capped = run(SIP_ATTN, "sip", kernel, events=False, tiles=16)
        assert capped.commands == full.commands == commands
        assert capped.engines["tensor"]["busy_ns"] == full.engines["tensor"]["busy_ns"]
        assert capped.dispatch_ns == full.dispatch_ns
        assert abs(capped.makespan_ns - full.makespan_ns) / full.makespan_ns < 0.02


def test_full_mode_reports_per_unit_totals():
    """sip_gemm at 128^3 tiles: 1024 output tiles on 64 PEs = 16 each, and the PEs share
    nothing, so every PE runs the representative PE's schedule. --full simulates all 64 and
    reports per unit (device totals / 64): the same commands (16 x (zeros + 32 x (2 loads +
    mma) + cast + store) = 16 x 99 = 1584), busy time and efficiency as the representative
    run, not 64 times them."""
    rep = run(SIP_GEMM, "sip", events=False)
    full = run(SIP_GEMM, "sip", events=False, full=True)
    assert rep.commands == full.commands == 16 * (1 + 32 * 3 + 2)
    assert rep.engines["tensor"]["busy_ns"] == full.engines["tensor"]["busy_ns"]
    assert rep.pipeline_efficiency == pytest.approx(full.pipeline_efficiency)
    assert full.pipeline_efficiency <= 1.0


def test_full_mode_counts_a_gpu_dram_server_per_unit_share():
    """copy.tile on h200_sxm at N = 2^24: 2^24 bf16 read + written = 2 x 33,554,432 B =
    67,108,864 B over one DRAM server at 4.8 TB/s x 0.883 = 4238.4 B/ns: at least
    67,108,864 / 4238.4 = 15,834 ns of the server. --full reports each unit's share of that
    server (units x each transfer's time at the device's bandwidth, as the representative
    mode counts it), so the copy engine is the bottleneck and busy most of the kernel, not
    1/132 of it."""
    full = run(ROOT / "kernels" / "copy.tile", "h200_sxm", params={"N": 1 << 24}, full=True, events=False)
    assert full.engines["copy"]["busy_ns"] >= 67_108_864 / (4800 * 0.883)
    assert full.bottleneck_engine == "copy"
    assert 0.8 < full.pipeline_efficiency <= 1.0


def test_full_mode_gpu_dram_server_runs_at_the_device_bandwidth():
    """--full on a GPU: every SM's transfers cross one DRAM server at the device's bandwidth
    (4.8 TB/s x 0.883 = 4238.4 B/ns), not at one SM's own ceiling (41 B/cycle x 1.98 GHz =
    81 B/ns: tfx.analysis.memory_parallelism, which binds only when few SMs pull). copy.tile
    at N = 2^24, BLOCK 4096: 4096 positions, each loads and stores 4096 bf16 = 8192 B, each
    transfer ceil(8192 / 4238.4) = ceil(1.93) = 2 ns of the server (at one SM's ceiling it
    would be 101 ns): 8192 transfers = 16,384 ns of server. The last transfer lands 700 ns
    (the DRAM latency) after its turn; the server idles at most one round trip (stores wait
    for their loads to land). After the 3,000 ns launch:
    16,384 + 700 <= makespan - 3,000 <= 16,384 + 700 + 700."""
    full = run(ROOT / "kernels" / "copy.tile", "h200_sxm", params={"N": 1 << 24}, full=True)
    assert full.launches[0].launch_ns == 3000
    assert 16_384 + 700 <= full.makespan_ns - 3000 <= 16_384 + 1400
    copies = [e for e in full.timeline.events if full.timeline.engines[e[2]] == "copy"]
    assert len(copies) == 8192
    assert copies[0][:2] == (3000, 3000 + 2 + 700)      # the first: 2 ns of server, 700 to land


def test_full_mode_matches_representative_on_one_unit():
    a = run(TINY, TINY_HW)
    b = run(TINY, TINY_HW, full=True)
    assert b.mode == "full" and a.mode == "representative"
    assert a.makespan_ns == b.makespan_ns


# ---------------------------------------------------------------- roofline over every kernel

def _profile_for(module):
    from tfx.ir.nodes import MeshRegion, walk
    levels = {s.level for k in module.kernels for s in walk(k.body) if isinstance(s, MeshRegion)}
    return "sip" if levels & {"pe", "cube"} else "h200_sxm"


def _cases():
    out = []
    for path in KERNELS:
        try:
            module = parse_file(str(path))
        except TfxError as err:
            out.append(pytest.param(path, None, marks=pytest.mark.skip(reason=f"does not parse: {err}")))
            continue
        for k in module.kernels:
            out.append(pytest.param(path, k.name, id=f"{path.name}:{k.name}"))
    return out


@pytest.mark.parametrize("path,kernel", _cases())
def test_never_beats_roofline(path, kernel):
    module = parse_file(str(path))
    hw = _profile_for(module)
    try:
        a = analyze(module, kernel, load_profile(hw))
    except TfxError as err:
        pytest.skip(f"analysis refuses it on {hw}: {err}")
    r = simulate(a, events=False)
    ideal = a.metrics["roofline.ideal_ns"]
    assert r.makespan_ns >= ideal, (r.makespan_ns, ideal)
    assert r.commands > 0


# ---------------------------------------------------------------- trace and CLI

def test_chrome_trace_structure(tmp_path):
    out = tmp_path / "t.json"
    rc = main(["simulate", TINY, "--hw", TINY_HW, "--trace", str(out), "--json", "--no-events",
               "--knob", "dispatch.completion_latency=0"])
    assert rc == 0
    d = json.loads(out.read_text())
    evs = d["traceEvents"]
    x = [e for e in evs if e["ph"] == "X"]
    meta = [e for e in evs if e["ph"] == "M"]
    assert {e["name"] for e in meta} >= {"process_name", "thread_name"}
    names = {e["args"]["name"] for e in meta if e["name"] == "thread_name"}
    assert {"dispatch", "copy", "tensor", "vector"} <= names
    assert len(x) == 18
    for e in x:
        assert {"name", "ts", "dur", "pid", "tid"} <= set(e)
        assert e["dur"] >= 0
    mma = [e for e in x if e["name"] == "%acc = mma" and e["tid"] == 2]
    assert mma[0]["ts"] == pytest.approx(1.386) and mma[0]["dur"] == pytest.approx(0.256)


def test_cli_json(capsys):
    assert main(["simulate", TINY, "--hw", TINY_HW, "--json", "--knob", "dispatch.completion_latency=0"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["makespan_ns"] == 2172 and d["time_unit"] == "ns"
    assert {"engines", "stalls", "events", "commands", "pipeline_efficiency", "analysis"} <= set(d)
    assert d["engines"]["tensor"]["busy_ns"] == 512
    assert d["events"][0] == {"engine": "dispatch", "start": 1000, "end": 1010, "op": "%acc = zeros",
                              "tile": 0, "unit": 0}
    assert main(["simulate", TINY, "--hw", TINY_HW, "--json", "--no-events"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert "events" not in d and d["event_count"] == 18


def test_cli_json_events_streamed_one_per_line(capsys):
    """--json writes the events as pre-encoded lines (SimResult.events_json_chunks), one
    object per line after the indented summary: the document reads back exactly as
    to_json(), key order included, and an op label with a quote stays valid JSON."""
    assert main(["simulate", TINY, "--hw", TINY_HW, "--json", "--knob", "dispatch.completion_latency=0"]) == 0
    text = capsys.readouterr().out
    r = run(TINY, TINY_HW, knobs=NO_RT)
    d = json.loads(text)
    assert d == json.loads(json.dumps(r.to_json())) and list(d) == list(r.to_json())
    lines = text.splitlines()
    start = lines.index('  "events": [')
    assert lines[start + 1] == ('    {"engine":"dispatch","start":1000,"end":1010,"op":"%acc = zeros",'
                                '"tile":0,"unit":0},')
    assert len(lines) == start + 1 + 18 + 2          # 18 events, "  ]" and "}"
    r.timeline.labels[0] = 'say "hi"'
    assert json.loads(r.events_json_lines()[0])["op"] == 'say "hi"'



def test_events_json_chunks_split_and_large_numbers():
    """The JSON lines come in chunks of ``step`` (18 events, step 5: 5 + 5 + 5 + 3) that
    together are ``events_json_lines()``, each line the compact encoding of its event's
    object; a tile or unit number past the 4096-entry text table (5000, -1) is formatted
    as it is, not looked up."""
    r = run(TINY, TINY_HW, knobs=NO_RT)
    chunks = list(r.events_json_chunks(step=5))
    assert [len(c) for c in chunks] == [5, 5, 5, 3]
    lines = [line for c in chunks for line in c]
    assert lines == r.events_json_lines()
    expect = [json.dumps(e, separators=(",", ":")) for e in r.to_json()["events"]]
    assert lines == expect
    s, t, e, lb, _, _ = r.timeline.events[7]
    r.timeline.events[7] = (s, t, e, lb, 5000, -1)
    big = list(r.events_json_chunks(step=5))[1]
    assert json.loads(big[2])["tile"] == 5000 and json.loads(big[2])["unit"] == -1
    assert big[:2] == lines[5:7] and big[3:] == lines[8:10]

def test_cli_text(capsys):
    assert main(["simulate", TINY, "--hw", TINY_HW, "--set", "TRIPS=4"]) == 0
    out = capsys.readouterr().out
    assert "makespan" in out and "tensor" in out and "representative" in out


def test_cli_refusals(capsys):
    assert main(["simulate", TINY, "--hw", TINY_HW, "--tiles", "0"]) == 2
    assert "--tiles" in capsys.readouterr().err
    assert main(["simulate", TINY, "--hw", TINY_HW, "--knob", "dma.nonsense=1"]) == 2


# ---------------------------------------------------------------- links between positions

LINKS = str(DATA / "links.tile")
LINKS_HW = str(DATA / "tiny_sip_2pe.toml")


def test_send_and_recv_use_the_link_both_ways_at_once():
    """links.tile `swap` on tiny_sip_2pe (2 PEs; HBM 16 B/ns + 100 ns; PE-to-PE link 16 B/ns
    each way + 100 ns; dispatch 10 ns; completion latency 50 ns; launch 1000 ns). A 32x32
    bf16 tile is 2048 B: 128 ns on HBM or on the link.
      a     dispatch [0,10]   HBM [10,138]  lands 238
      send  waits a (seen 288): dispatch [288,298], link out [298,426], lands 526
      recv  reads nothing: dispatch [298,308]; the inbound direction is free (full duplex):
            [308,436], lands 536
      add   waits b (seen 586): dispatch [586,596]; 1024 elements / 128 bf16 lanes = 8 ns,
            TCM 6 KiB = 6 ns: [596,604]
      store waits c (seen 654): dispatch [654,664], HBM [664,792], lands 892
    Makespan 1000 + 892 = 1892. Stalls: data 288 - 10 = 278 (send on the load), hazard
    586 - 308 = 278 (add on the recv) + 654 - 596 = 58 (store on the add)."""
    r = run(LINKS, LINKS_HW, "swap")
    assert r.makespan_ns == 1892
    link = [(s - 1000, e - 1000, lab) for s, e, lab, t in ev(r, "link")]
    assert link == [(298, 526, "send"), (308, 536, "%b = recv")]
    assert r.engines["link"]["busy_ns"] == 256
    assert r.stalls["data"] == 278 and r.stalls["hazard"] == 278 + 58


def test_allreduce_pays_the_ring_hops():
    """links.tile `reduce`: a ring all-reduce over 2 PEs moves 2 (n - 1) / n = 1 x 2048 B
    each way (128 ns) and crosses 2 (n - 1) = 2 hops of 100 ns.
      a         dispatch [0,10], HBM [10,138], lands 238
      allreduce waits a (seen 288): dispatch [288,298], link [298,426], lands 626
      store     seen 676: dispatch [676,686], HBM [686,814], lands 914
    Makespan 1914. The analysis sums the ops outside loops: load max(128, latency 100) = 128
    + all-reduce 128 + 200 + store 128 = 584, plus launch 1000 and fill 100 = 1684."""
    r = run(LINKS, LINKS_HW, "reduce")
    assert r.makespan_ns == 1914
    assert [(s - 1000, e - 1000) for s, e, *_ in ev(r, "link")] == [(298, 626)]
    a = analyze(parse_file(LINKS), "reduce", load_profile(LINKS_HW))
    assert a.metrics["performance.predicted_ns"] == 1684
    assert a.metrics["memory.traffic.link.pe.total"] == 2 * 2048


def test_link_bandwidth_is_a_knob():
    """Doubling the link (32 B/ns) halves the swap's link transfers (64 ns each): the add
    waits for b landing at 308 + 64 + 100 = 472, so everything after moves 64 ns earlier:
    1892 - 64 = 1828."""
    r = run(LINKS, LINKS_HW, "swap", knobs={"links.pe_pe.bandwidth": "x2"})
    assert r.makespan_ns == 1828


def test_a_transfer_no_link_carries_is_named_not_silently_free():
    """h200_sxm states links only at device scope (NVLink, PCIe): a send between CTAs finds
    no link, and the analysis says so instead of pricing it at zero without a word."""
    a = analyze(parse_file(str(DATA / "cluster_swap.tile")), None, load_profile("h200_sxm"))
    assert any("no link of h200_sxm joins the positions of `cta`" in w for w in a.warnings)
    ok = analyze(parse_file(LINKS), "swap", load_profile(LINKS_HW))
    assert not [w for w in ok.warnings if "no link" in w]


# ---------------------------------------------------------------- the two sip findings

SIP_GEMM = ROOT / "kernels" / "sip_gemm.tile"
SIP_ATTN = ROOT / "kernels" / "sip_decode_attention.tile"
SMALL = {"TM": 32, "TN": 3072, "TK": 32}


@pytest.mark.parametrize("params", [SMALL, {}], ids=["32x3072x32", "128x128x128"])
def test_sip_gemm_held_dma_channel_costs_efficiency(params):
    """Held for the HBM round trip, a channel serves one descriptor per ~700 ns; released
    after the transfer it serves the next at once. Descriptors are contiguous runs: an A tile
    is TM rows of TK*2 B, a B tile TK rows of TN*2 B."""
    held = run(SIP_GEMM, "sip", params=params, knobs={"dma.hold_channel_for_round_trip": "1"})
    rel = run(SIP_GEMM, "sip", params=params, knobs={"dma.hold_channel_for_round_trip": "0"})
    assert held.pipeline_efficiency < rel.pipeline_efficiency
    assert held.makespan_ns > rel.makespan_ns
    assert held.stalls["data"] > rel.stalls["data"]


def test_sip_gemm_small_tile_finding_magnitude():
    """The reported finding: 32x3072x32 tiles, pipeline efficiency 88% released, 53% held.

    One k-step on the sip profile: the mma is 2 x 32 x 3072 x 32 = 6,291,456 flop / 2048
    flop/ns = 3072 ns (the bottleneck: TCM 1024 B/cycle and HBM 256 B/ns are faster).
    Its DMA: 32 A rows of 64 B + 32 B rows of 6 KiB = 64 descriptors, 2048 + 196608 B =
    776 ns of transfer.
    Held: each descriptor holds one of 8 channels for its transfer + the 700 ns round trip:
    (64 x 700 + 776) / 8 = 5697 ns per k-step at least, efficiency <= 3072 / 5697 = 53.9%;
    with at most one completion wait (250) and 3 dispatches (24) more per k-step, >= 3072 /
    5971 = 51.4%.
    Released: the DMA (776 ns + 700 latency, double buffered) hides under the mma, and each
    mma waits for the previous one's completion (250 ns) and 3 dispatches (a, b, mma: 24 ns):
    <= 3072 / 3346 = 91.8%; the 4 tiles' fills, casts and stores cost a little more (>= 88%).
    """
    held = run(SIP_GEMM, "sip", params=SMALL, knobs={"dma.hold_channel_for_round_trip": "1"}, events=False)
    rel = run(SIP_GEMM, "sip", params=SMALL, knobs={"dma.hold_channel_for_round_trip": "0"}, events=False)
    assert 3072 / 5971 < held.pipeline_efficiency <= 3072 / 5697
    assert 0.88 < rel.pipeline_efficiency <= 3072 / 3346
    # 4 tiles x 128 k-steps x 3072 ns of MACs per PE, the same either way
    assert held.engines["tensor"]["busy_ns"] == rel.engines["tensor"]["busy_ns"] == 4 * 128 * 3072


def test_sip_gemm_small_tile_counts():
    """32x3072x32 at M=N=K=4096: 128 x 2 = 256 output tiles over 64 PEs = 4 per PE, 128
    k-steps each. Commands per PE: 4 x (zeros + 128 x (2 loads + mma) + cast + store) = 1548.
    DMA descriptors: per k-step 32 A rows + 32 B rows; per tile 32 C rows:
    4 x (128 x 64 + 32) = 32896."""
    r = run(SIP_GEMM, "sip", params=SMALL)
    assert r.commands == 1548
    assert r.launches[0].batches[0].descriptors == 32896


def test_sip_decode_attention_composite_cuts_commands():
    """Per PE at CTX = 128K: 16384 tokens = 64 blocks of 256.
    Single-op attention launch: 5 setup commands (load q, fill, 3 zeros) + 64 blocks x 16
    (22 ops less 6 free views: transpose, 3 reshapes, 2 broadcasts) + 3 stores = 1032.
    Composite attention launch: the same 5 + ONE composite for the whole KV loop + 3 stores = 9.
    The merge launch adds 13 to both on the representative PE (3 loads, 9 vector/special ops:
    reduce max, sub, exp2, mul, reduce sum, mul, reduce sum, div, cast; 1 store; its 7 views
    are free). Totals 1045 and 22: 47.5x fewer commands; dispatch 1045 x 8 = 8360 ns against
    21 x 8 + 40 = 208 ns."""
    single = run(SIP_ATTN, "sip", "decode_attention_single_op", events=False)
    comp = run(SIP_ATTN, "sip", "decode_attention_composite", events=False)
    # one composite per block: 5 + 64 + 3 = 72, plus the merge's 13 = 85 (the report: 94);
    # dispatch (5 + 3 + 13) x 8 + 64 x 40 = 168 + 2560 = 2728 ns
    blocks = run(SIP_ATTN, "sip", "decode_attention_block_composites", events=False)
    assert [b.commands for ls in blocks.launches for b in ls.batches] == [72, 13]
    assert blocks.commands == 85 and blocks.dispatch_ns == 2728
    assert [b.commands for ls in single.launches for b in ls.batches] == [1032, 13]
    assert [b.commands for ls in comp.launches for b in ls.batches] == [9, 13]
    assert single.commands == 1045 and comp.commands == 22
    assert single.dispatch_ns == 8360 and comp.dispatch_ns == 208


def test_sip_decode_attention_composite_is_faster():
    """The reported finding: 128K-context decode, composite commands 2.08x faster.

    Per PE 64 blocks; each block's two mmas pad 4 query rows to the 32-row MAC array:
    2 x (32 x 128 x 256 x 2 / 2048) = 2048 ns of tensor work. Two launches of 5 us each.
    Composite: the blocks stream (q.K^T of block j+1 beside block j's softmax), tensor bound:
    64 x 2048 = 131072 ns + 10 us of launches, and at most 20 us more for fill, setup,
    stores and the merge launch: [141072, 161072].
    Single-op: per block the tensor work plus 9 commands that each wait for the command just
    before them (250 ns completion latency + 8 ns dispatch): 64 x (2048 + 9 x 258) =
    279680 + 10000 launches = 289680 at least; at most the loads' round trip
    (700 + 512 ns per block) more, 64 x 1212 = 77568: <= 367248 + the merge's 9 us.
    So the speed-up lies in [289680 / 161072, ...] = [1.80, ...]; it is 2.07 here. Its
    makespan grows with the completion latency, the composite's hardly."""
    single = run(SIP_ATTN, "sip", "decode_attention_single_op", events=False).makespan_ns
    comp = run(SIP_ATTN, "sip", "decode_attention_composite", events=False).makespan_ns
    assert 141072 <= comp <= 161072
    assert 289680 <= single <= 367248 + 9000
    assert 2.0 < single / comp < 2.2
    runs = {}
    for rt in ("0", "100"):
        knobs = {"dispatch.completion_latency": rt}
        runs[rt] = [run(SIP_ATTN, "sip", k, knobs=knobs, events=False).makespan_ns
                    for k in ("decode_attention_single_op", "decode_attention_composite")]
    assert runs["0"][0] < runs["100"][0] < single
    assert runs["100"][1] - runs["0"][1] < 0.01 * runs["0"][1]


def test_sip_decode_attention_composite_pipelines_the_blocks():
    """Inside the composite the scheduler streams the 64 blocks one trip deep: the K/V DMA
    of a block runs while earlier blocks compute, and the tensor engine runs block j+1's
    q.K^T (it depends on no carried value) before block j's P.V (which waits for block j's
    softmax and the carried acc), so it does not idle while the softmax runs. Block 0 has
    no carried value from inside the composite: its P.V goes first. No dispatch event lies
    between blocks."""
    r = run(SIP_ATTN, "sip", "decode_attention_composite")
    first = {}
    for s, e, lab, t in ev(r, "tensor"):
        first.setdefault((lab, t), s)
    assert first[("%acc = mma", 0)] < first[("%s = mma", 1)]
    for j in range(1, 63):
        assert first[("%s = mma", j + 1)] < first[("%acc = mma", j)], j
    k_landed = {}                 # block -> when its first K sub-tile lands (the mma streams)
    for s, e, lab, t in ev(r, "copy"):
        if lab == "%k = load":
            k_landed[t] = min(e, k_landed.get(t, e))
    assert all(k_landed[j] <= first[("%s = mma", j)] for j in range(64))
    disp = ev(r, "dispatch")
    first_tensor = ev(r, "tensor")[0][0]
    last_tensor = [s for s, e, lab, t in ev(r, "tensor") if t == 63][-1]
    assert not [d for d in disp if first_tensor < d[0] < last_tensor]


# ---------------------------------------------------------------- dependencies across a call

CALLED_MMA = """
kernel step {
  tensor A : bf16[32, 32] @tcm in
  tensor B : bf16[32, 32] @tcm in
  tensor ACC : f32[32, 32] @tcm in

  %out = mma A[:, :], B[:, :], ACC[:, :]
  return %out
}

kernel caller {
  tensor X : bf16[32, 32] @hbm in
  tensor W : bf16[32, 32] @hbm in
  tensor D : bf16[32, 32] @hbm in
  tensor C : bf16[32, 32] @hbm out
  tensor E : bf16[32, 32] @hbm out

  mesh cube[1] as (c) capture(X, W, D, C, E) {
    mesh pe[1] as (p) capture(X, W, D, C, E) {
      %acc = zeros f32[32, 32] @tcm
      %a = load X[:, :] -> tcm
      %b = load W[:, :] -> tcm
      %out = load D[:, :] -> tcm
      %r = call step(%a, %b, %acc)
      %c = cast %r to bf16
      store %c -> C[:, :]
      store %out -> E[:, :]
    }
  }
}
"""


def test_a_called_kernel_waits_for_the_values_passed_to_it(tmp_path):
    """step's mma reads its tensors A, B, ACC, which are the caller's %a, %b, %acc: it must
    wait for the load of %b. And step's own %out is not the caller's %out (a third load).
    tiny_sip, completion latency 0 (numbers as in test_two_tiles_two_stages_exact_schedule:
    2048 B = 128 ns on the DRAM server + 100 ns latency, mma 256 ns, 10 ns per command):
      zeros  dispatch [0,10]   vector [10,14]
      a      dispatch [10,20]  DRAM [20,148]   lands 248
      b      dispatch [20,30]  DRAM [148,276]  lands 376
      out    dispatch [30,40]  DRAM [276,404]  lands 504
      mma    waits b (data 40 -> 376), dispatch [376,386], tensor [386,642]
    (Not linked to %a and %b, the mma sees no writer of A or B and runs at [50,306]; sharing
    the caller's name %out, as the simulator used to, it waits for that load instead: dispatch
    [504,514], tensor [514,770].)
      cast   reads %r = step's %out: waits the mma (hazard), dispatch [642,652], vector
             1024 elements / 64 lanes = 16 ns: [652,668]
      store C  dispatch [668,678], DRAM [678,806], ack 906
      store E  dispatch [678,688], DRAM [806,934], ack 1034
    Launch 1000: the mma runs [1386,1642], makespan 1000 + 1034 = 2034."""
    path = tmp_path / "called.tile"
    path.write_text(CALLED_MMA)
    r = run(path, TINY_HW, knobs=NO_RT)
    assert [(s, e) for s, e, *_ in ev(r, "tensor")] == [(1386, 1642)]
    assert [(s, e) for s, e, lab, _ in ev(r, "vector") if lab == "%c = cast"] == [(1652, 1668)]
    assert r.makespan_ns == 2034


def test_gap_reason_names_every_stall_kind_with_its_share(capsys):
    """The prediction-vs-simulation gap names every stall kind with stall time, largest
    first, with its share, the same in text and JSON (issue 14 item 2).

    tiny.tile's hand-derived schedule (test_two_tiles_two_stages_exact_schedule): data 326
    (mma0 waits for b0), hazard 256 + 256 + 16 = 528 (mma1, cast, store), dispatch 90
    (engines idle while 9 commands are dispatched: 20 + 20 + 20 + 10 + 10 + 10), buffer 0.
    All stall time 326 + 528 + 90 = 944 ns: hazard 528 / 944 = 55.93%, data 326 / 944 =
    34.53%, dispatch 90 / 944 = 9.53%; buffer has none and is not named."""
    from tfx.present.simulation import comparison_lines
    from tfx.sim.result import stall_shares
    # ties keep the STALLS order (data, buffer, dispatch, hazard); zero kinds are left out
    assert stall_shares({"data": 300, "buffer": 100, "dispatch": 0, "hazard": 100}) == [
        ("data", 300, 0.6), ("buffer", 100, 0.2), ("hazard", 100, 0.2)]
    r = run(TINY, TINY_HW, knobs=NO_RT)
    assert main(["simulate", TINY, "--hw", TINY_HW, "--json", "--no-events",
                 "--knob", "dispatch.completion_latency=0"]) == 0
    cmp = json.loads(capsys.readouterr().out)["analysis"]
    assert [(k["kind"], k["ns"]) for k in cmp["gap_stalls"]] == [("hazard", 528), ("data", 326), ("dispatch", 90)]
    assert [k["share"] for k in cmp["gap_stalls"]] == [528 / 944, 326 / 944, 90 / 944]
    assert cmp["gap_ns"] == 2172 - cmp["performance.predicted_ns"] != 0
    gap = cmp["gap_ns"]
    assert comparison_lines(r)[-1] == (
        f"gap: simulated {'+' if gap > 0 else '-'}{abs(gap):.2f} ns ({2172 / cmp['performance.predicted_ns']:.2f}x the "
        "prediction): stalls the closed form averages: hazard 55.9% (528.00 ns), data 34.5% (326.00 ns), "
        "dispatch 9.5% (90.00 ns) of 944.00 ns summed over engines")
