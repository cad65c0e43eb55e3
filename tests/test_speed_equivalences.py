"""What the keystroke speed-ups (bench/keystroke_speed.py) keep equal: each shortcut answers as
the long way did."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tfx.analysis.analyze import analyze
from tfx.analysis.occupancy import OccupancyLimits, compute_occupancy
from tfx.hw import load_profile
from tfx.lang import parse_file
from tfx.tui import core

ROOT = Path(__file__).resolve().parent.parent


def test_memory_levels_are_built_once_a_profile_and_knobs_make_their_own():
    p = load_profile("h200_sxm")
    assert p.memory_level("gmem") is p.memory_level("gmem")
    # a knob makes a new profile with its own levels: gmem's 4.8 TB/s halved is 2.4 TB/s there
    q = p.with_knobs({"memory.gmem.bandwidth": "/2"})
    assert q.memory_level("gmem").bandwidth * 2 == p.memory_level("gmem").bandwidth
    assert p.memory_levels()["gmem"] is p.memory_level("gmem")
    # the levels' dict is built once a profile too (the scope rooflines ask it ~100 times); the
    # knobbed profile's is its own, with gmem at 4.8e12 / 2 = 2.4e12 B/s
    assert p.memory_levels() is p.memory_levels() and q.memory_levels() is not p.memory_levels()
    assert q.memory_levels()["gmem"].bandwidth == 2.4e12


def test_a_profile_remembers_paths_unit_counts_and_rates_and_a_pickle_carries_none():
    """Profile.canonical_path, units_of, memory_bandwidth and peak_flops_per_s answer from what
    they worked out at the first ask (an analysis asks ~1,000 times): hbm is an alias of gmem on
    the H200, which has 132 SMs (its hierarchy.sm.count under the device). A pickled profile
    (the worker's outcome) starts without them and works them out again."""
    import pickle
    p = load_profile("h200_sxm")
    assert p.canonical_path("memory.hbm.bandwidth") == "memory.gmem.bandwidth"
    assert p.get("memory.hbm.bandwidth") == p.get("memory.gmem.bandwidth") == 4.8e12
    assert p.units_of("sm") == p.units_of("sm") == 132
    assert p._canonical and p._units
    # gmem at 4.8 TB/s is one device-scoped level: the aggregate is the same 4.8e12 B/s, asked twice
    assert p.memory_bandwidth("gmem", aggregate=True) == p.memory_bandwidth("hbm", aggregate=True) == 4.8e12
    q = pickle.loads(pickle.dumps(p))
    assert not q._canonical and not q._units and not q._levels and not q._rates and q._all_levels is None
    assert q.units_of("sm") == 132 and q.canonical_path("memory.hbm.latency") == "memory.gmem.latency"


def test_the_hint_budget_without_a_second_analysis():
    # tfx open's Roofline pane: the budget for one more CTA a SM, from the occupancy of the same
    # resources under the hint, is what a whole analysis with occupancy_hint gave (gemm's defaults:
    # 2 CTAs a SM, the hint 3, which shared memory and registers block: 233,472 B a SM / 3 - 1,024 B
    # reserved a CTA = 76,800 B a CTA; the estimated 192 registers (docs/analysis.md section 6)
    # against 3 CTAs of 4 warps, 3 warps a sub-partition: 16,384 / 3 = 5,461 -> 5,376 (a multiple
    # of 256) a warp = 168 a thread)
    module = parse_file(ROOT / "kernels" / "gemm.tile")
    profile = load_profile("h200_sxm")
    a = analyze(module, None, profile)
    hint = a.occupancy.blocks_per_sm + 1
    assert hint == 3
    whole = analyze(module, None, profile, occupancy_hint=hint).occupancy.hint_budget
    assert compute_occupancy(OccupancyLimits.from_profile(profile), a.occupancy.resources, hint).hint_budget == whole
    out = core.run_job(core.Job(1, str(ROOT / "kernels" / "gemm.tile"), None, None, "h200_sxm"))
    assert out.hint == 3 and out.hint_note == ("rerun with 168 registers/thread (no spill assumed) and "
                                               "76,800 B shared memory/CTA")


def test_an_edit_leaves_the_hint_rerun_to_the_roofline_pane_and_it_reads_as_the_worker_s():
    """An edit while the IR pane is shown runs one analysis (the hint rerun is half as much
    again); the Roofline pane, drawn later, reruns it from the pickled outcome (as it comes back
    from the worker process) with the same values as the worker's whole job. gemm at STAGES=4
    keeps 4 x (128x64 + 64x128) x 2 B = 131,072 B of shared memory per CTA: 1 CTA fits the SM's
    233,472 B, the hint is 2, which leaves 233,472 / 2 - 1,024 = 115,712 B per CTA."""
    import pickle

    from tests.test_tui_support import GEMM, make_app, run

    async def go():
        app = make_app()
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            assert app.active_pane == "ir"
            job = app.analysis_job(app.generation + 1)
            assert job.later_hint
            job = replace(job, params=(("STAGES", 4),))
            out = pickle.loads(pickle.dumps(core.run_job(job)))
            assert out.hint_pending and out.hinted is None and out.hint is None
            app.params["STAGES"] = 4
            app.jobs.generation["analysis"] = job.generation
            app.apply(out)
            assert app.outcome.hint_pending            # not drawn: not computed
            await pilot.press("3")                     # the Roofline pane
            await pilot.pause()
            assert not app.outcome.hint_pending
            whole = core.run_job(replace(job, later_hint=False))
            assert (out.hint, out.hint_note) == (whole.hint, whole.hint_note) == (
                2, "rerun with 115,712 B shared memory/CTA")
            assert out.hinted.metrics == whole.hinted.metrics
            # while the Roofline pane is shown an edit's job reruns the hint in the worker
            assert not app.analysis_job(app.generation + 1).later_hint
    run(go())


def test_one_walk_of_a_trip_gives_its_path_and_exposed_latency_as_two_did():
    """tfx.analysis.performance walks a serial trip once for its dependent path, the path's
    exposed latency and the path its warps wait for (trip_latency.walk), where it walked it three
    times (critical_path_ns, exposed_ns, and critical_path_ns waited_only), asking each op's ns
    once in a walk. gqa_decode at 2 warps, every op 10 ns of work: its two dots are warp mmas
    (mma.sync), neither properly async, so the waited path is the whole path."""
    from tfx.analysis import trip_latency
    from tfx.analysis.machine import Machine
    profile = load_profile("h200_sxm")
    p = {"B": 1, "HQ": 32, "HKV": 8, "SKV": 131072, "D": 128, "SPLITS": 8, "BLOCK_N": 128,
         "WARPS": 2, "STAGES": 3}
    a = analyze(parse_file(ROOT / "kernels" / "gqa_decode.tile"), None, profile, p, check=False)
    loop = next(c for c in a.root.walk() if c.kind == "loop" and c.line == 60)   # the KV loop
    m = Machine(profile, "cta")
    asked = []

    def op_ns(c):
        asked.append(id(c))
        return 10.0
    ns, steps, exposed, waited = trip_latency.walk(loop, m, 2, op_ns)
    assert sorted(asked) == sorted(set(asked)) and len(asked) == len(loop.body_ops())
    assert (ns, steps) == trip_latency.critical_path_ns(loop, m, 2, op_ns)
    assert exposed == trip_latency.exposed_ns(loop, m, 2, op_ns)
    assert ns > 0 and exposed > 0 and steps
    assert waited == ns


def test_the_waited_path_leaves_out_a_properly_async_mma():
    """flash_attention's KV trip on 4 warps, every op 7.5 ns of work: its PV (line 72) is a
    properly async warpgroup mma and ends the whole path, so the path the warps wait for is
    shorter than the whole, by at most PV's cost (another chain, the row sum's, may end later
    than the path before PV)."""
    from tfx.analysis import mma_path, trip_latency
    from tfx.analysis.machine import Machine
    profile = load_profile("h200_sxm")
    a = analyze(parse_file(ROOT / "kernels" / "flash_attention.tile"), None, profile, check=False)
    loop = next(c for c in a.root.walk() if c.kind == "loop" and c.line == 49)
    m = Machine(profile, "cta")
    pv = next(c for c in loop.mma_ops() if c.line == 72)
    assert mma_path.properly_async(pv, loop, m, 4) == 1
    walked = trip_latency.walk(loop, m, 4, lambda c: 7.5)
    assert walked.steps[-1][0].startswith("mma line 72")
    assert walked.ns - walked.steps[-1][2] <= walked.waited_ns < walked.ns


def test_an_mma_plan_of_ints_is_remembered_and_a_sweep_s_is_computed():
    """mma_layout.plan: one configuration's plan is kept (an analysis asks for the same dots'
    plans ~250 times). gemm's 128x128x64 dot on 4 warps with the H200's m64n8k16: the warpgroup
    path (4 warps, M a multiple of 64, N of 8, K >= 16), warpsPerTileV3 4 x 1 (4 x 1 < 4 warps is
    false: no doubling), M = ceil(128 / (16 x 4)) x 64 = 128, N = ceil(128 / 8) x 8 = 128,
    K = ceil(64 / 16) x 16 = 64. A sweep's plan (warps an array) is per configuration: 8 warps
    double M once (4 x 1 < 8 and 128 > 16 x 4): 8 x 1, M = ceil(128 / 128) x 128 = 128."""
    import numpy as np

    from tfx.analysis import mma_layout
    p = mma_layout.plan((128, 128, 64), (64, 8, 16), 4)
    assert p == mma_layout.MmaPlan("warpgroup", 4, 1, 128, 128, 64, 16)
    assert mma_layout.plan((128, 128, 64), (64, 8, 16), 4) is p
    swept = mma_layout.plan((128, 128, 64), (64, 8, 16), np.array([4, 8]))
    assert swept.path.tolist() == ["warpgroup", "warpgroup"]
    assert swept.warps_m.tolist() == [4, 8] and swept.warps_n.tolist() == [1, 1]
    assert swept.m.tolist() == [128, 128] and swept.n.tolist() == [128, 128]


def test_the_full_wave_and_the_tail_share_what_no_batch_changes(monkeypatch):
    """flash_prefill at its defaults launches 4 x 32 x 4096/128 = 4,096 CTAs, one an SM (8 warps):
    31 full waves of 132 and a tail of 4,096 - 31 x 132 = 4 CTAs, one on each of 4 SMs. Both
    batches price the two serial loops (stage 1 below the diagonal, stage 2 across it); a loop's
    dependent path (trip_latency.walk) is the same in each and is walked once a launch: 2 walks,
    where there were 2 x 2. Its stations depend on the CTAs an SM, 1 in both: 2 as well, not 4.
    The prediction is the one the walks of each batch gave (every golden report is unchanged)."""
    from tfx.analysis import chain_overlap, trip_latency
    counts = {"walk": 0, "stations": 0}

    def counted(name, f):
        def g(*args, **kw):
            counts[name] += 1
            return f(*args, **kw)
        return g
    monkeypatch.setattr(trip_latency, "walk", counted("walk", trip_latency.walk))
    monkeypatch.setattr(chain_overlap, "stations", counted("stations", chain_overlap.stations))
    a = analyze(parse_file(ROOT / "kernels" / "flash_prefill.tile"), None, load_profile("h200_sxm"))
    (lt,) = a.launches
    assert (lt.positions, lt.units, lt.resident, lt.full_waves, lt.tail_positions) == (4096, 132, 1, 31, 4)
    assert counts == {"walk": 2, "stations": 2}


def test_the_tensors_each_scope_touches_gathered_from_the_leaves_up():
    """kernels/gemm.tile: the k-loop loads A (line 26) and B (line 27), the CTA then stores C (line
    31); each scope's set is its own op's windows and its children's: the loop's {A, B}, the mesh's
    and the kernel's {A, B, C}, the zeros, mma and cast none (what each scope's roofline prices DRAM
    at, and the Traffic pane's footprint column). One pass over the tree, where each scope walked
    its subtree again."""
    from tfx.analysis.analyze import tensors_touched_by_scope
    a = analyze(parse_file(ROOT / "kernels" / "gemm.tile"), None, load_profile("h200_sxm"))
    by_id = tensors_touched_by_scope(a.root)
    touched = {n.label: by_id[n.id] for n in a.root.walk()}
    assert touched == {"kernel gemm": {"A", "B", "C"}, "mesh cta": {"A", "B", "C"}, "%acc = zeros": set(),
                       "loop k": {"A", "B"}, "%a = load": {"A"}, "%b = load": {"B"}, "%acc = mma": set(),
                       "%c = cast": set(), "store": {"C"}}


def test_a_kernel_of_one_launch_scans_its_live_bytes_once(monkeypatch):
    """The peak live bytes of the whole kernel and of each launch (memory.peak_live): gemm's body
    is its one launch (one mesh region), whose peaks are the kernel's, so the scan runs once, where
    it ran twice; gqa_decode has two launches (the split-KV pass and the merge): the whole kernel
    and each of its launches, 3 scans."""
    from tfx.analysis import memory
    scans = []
    real = memory.peak_live
    monkeypatch.setattr(memory, "peak_live",
                        lambda *args, **kw: scans.append(len(args)) or real(*args, **kw))
    # each scan by its positional arguments: (root, counter) the whole kernel, (root, counter,
    # stmts) a launch (each also given the loops' buffers by keyword: tfx.analysis.smem_buffers)
    for name, expected in (("gemm", [2]), ("gqa_decode", [2, 3, 3])):
        scans.clear()
        analyze(parse_file(ROOT / "kernels" / f"{name}.tile"), None, load_profile("h200_sxm"))
        assert scans == expected
