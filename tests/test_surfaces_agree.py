"""Every surface reads one result (session 14 audit): for every bundled kernel on every bundled
profile, the bound, the predicted time, the occupancy (CTAs per SM and the limiter) and the peak
memory are the same numbers in

* ``tfx analyze --json`` (``metrics``) and its text (the summary block),
* ``tfx simulate --json`` (``analysis``),
* ``tfx explore --json`` (``current``: the configuration the user is looking at, and ``sweep``:
  that configuration as the sweep's vectorized analysis priced it),
* ``tfx occupancy --json`` given the analysis's per-CTA resources,
* the explorer through its headless core (tfx.tui.core.run_job's analysis, the header's words,
  the Explore pane's marker ``explore_point``),

and a pair that ``tfx analyze`` refuses is refused by every command with the same line. Every
knob and parameter the user set appears in every JSON. The expected values are the other
surfaces' own: the test asserts agreement, and each comparison fails on a surface that names,
rounds or leaves out a number differently (the past complaints: three answers for one kernel's
bound; simulate's ``predicted_ns`` beside analyze's ``performance.predicted_ns``; knobs missing
from a JSON).
"""

from __future__ import annotations

import json

import pytest

from tfx.analysis.analyze import HEADLINE_METRICS
from tfx.bundled import bundled_dir, bundled_kernel
from tfx.cli.main import main
from tfx.present import formatting as fmt

KERNELS = sorted(p.name for p in bundled_dir("kernels").glob("*.tile"))
PROFILES = sorted(p.stem for p in bundled_dir("hw_profiles").glob("*.toml"))


def cli(capsys, *argv) -> tuple[int, str, str]:
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return rc, out, err


def headline(m: dict) -> dict:
    """The headline of analyze's metrics: HEADLINE_METRICS it has, then every memory.peak."""
    out = {k: m[k] for k in HEADLINE_METRICS if k in m}
    out.update({k: v for k, v in m.items() if k.startswith("memory.peak.")})
    return out


@pytest.mark.parametrize("kernel", KERNELS)
def test_every_surface_reads_one_headline(kernel, capsys):
    path = bundled_kernel(kernel)
    for profile in PROFILES:
        rc, out, err = cli(capsys, "analyze", path, "--hw", profile, "--json")
        if rc != 0:
            # refused: by every command, in the same words
            assert rc == 2, err
            first = err.splitlines()[0]
            for argv in (("simulate", path, "--hw", profile, "--json", "--no-events", "--tiles", "1"),
                         ("explore", path, "--hw", profile, "--json", "--top", "0")):
                rc2, _, err2 = cli(capsys, *argv)
                assert (rc2, err2.splitlines()[0]) == (2, first), (argv, err2)
            continue
        data = json.loads(out)
        head = headline(data["metrics"])
        gpu = data["occupancy"] is not None
        # the headline is there: a time, its bound, the roofline's, a peak; CTAs/SM on a GPU
        must = {"performance.predicted_ns", "performance.bound_by", "roofline.ideal_ns", "roofline.bound_by"}
        if gpu:
            must |= {"occupancy.blocks_per_sm", "occupancy.limiter", "occupancy.occupancy_pct"}
        assert must <= set(head), (profile, sorted(must - set(head)))
        assert any(k.startswith("memory.peak.") for k in head), profile

        # tfx simulate --json: the analysis's headline under the same names, nothing else named so
        rc, out, err = cli(capsys, "simulate", path, "--hw", profile, "--json", "--no-events", "--tiles", "1")
        assert rc == 0, err
        sim = json.loads(out)
        assert {k: v for k, v in sim["analysis"].items() if k in head or k.startswith(
            ("performance.", "roofline.", "occupancy.", "memory."))} == head, profile
        assert "predicted_ns" not in sim["analysis"] and "roofline_ideal_ns" not in sim["analysis"]
        assert (sim["parameters"], sim["knobs"]) == (data["parameters"], data["knobs"])

        # tfx explore --json: the current configuration, and the sweep's own row of it (a
        # one-value sweep of the last parameter at its value: the space is that configuration)
        from tfx.lang import parse_file
        last = parse_file(str(path)).kernel(data["kernel"]).params[-1].name
        rc, out, err = cli(capsys, "explore", path, "--hw", profile, "--json", "--top", "1",
                           "--sweep", f"{last}={data['parameters'][last]}")
        assert rc == 0, err
        cur = json.loads(out)["current"]
        assert {k: cur[k] for k in head} == head, profile
        assert not set(cur) & (set(HEADLINE_METRICS) - set(head))
        assert (cur["parameters"], cur["knobs"], cur["index"]) == (data["parameters"], data["knobs"], 0)
        row = cur["sweep"]
        assert row["predicted_ns"] == head["performance.predicted_ns"], profile
        if gpu:
            res = data["occupancy"]["resources"]
            assert row["blocks_per_sm"] == head["occupancy.blocks_per_sm"], profile
            assert row["smem_per_cta"] == res["smem_dynamic"] + res["smem_static"], profile
            # no bundled kernel declares shared memory beyond its tiles: the table's smem/CTA is
            # the summary's 'smem ... peak' (memory.peak.smem; 0 where the kernel has none)
            assert row["smem_per_cta"] == head.get("memory.peak.smem", 0), profile
            assert row["regs_per_thread"] == res["regs_per_thread"], profile
            # the explorer's spill mark (`1†`) is the analysis' spilled words
            assert row["spilled_registers"] == data["metrics"].get("occupancy.spilled_registers", 0), profile
            assert row["feasible"] == (head["occupancy.blocks_per_sm"] > 0), profile

            # tfx occupancy --json on the analysis's resources: the same CTAs per SM and limiter
            rc, out, err = cli(capsys, "occupancy", "--hw", profile, "--threads", res["threads"],
                               "--regs", res["regs_per_thread"], "--smem", res["smem_dynamic"],
                               "--static-smem", res["smem_static"], "--json")
            assert rc == 0, err
            occ = json.loads(out)
            occ = occ[0] if isinstance(occ, list) else occ
            assert (occ["blocks_per_sm"], occ["limiter"]) == (
                head["occupancy.blocks_per_sm"], head["occupancy.limiter"]), profile

        # tfx analyze's text: the predicted time, its bound and the occupancy in the same words
        rc, text, err = cli(capsys, "analyze", path, "--hw", profile)
        assert rc == 0, err
        assert (f"  predicted {fmt.ns(head['performance.predicted_ns'])} (bound by "
                f"{head['performance.bound_by']})   roofline {fmt.ns(head['roofline.ideal_ns'])}, bound by "
                f"{head['roofline.bound_by']} ") in text
        assert f"the schedule is bound by {head['performance.bound_by']}" in text
        if gpu:
            assert f"  occupancy: {fmt.ctas_per_sm(head['occupancy.blocks_per_sm'])}" in text

        # the explorer's headless core: the same analysis, header and Explore-pane marker
        from tfx.present.analysis_report import headline as header
        from tfx.present.analysis_report import headline_of
        from tfx.tui import core
        outcome = core.run_job(core.Job(1, str(path), None, None, profile))
        assert outcome.error is None, outcome.error
        a = outcome.analysis
        assert a.headline_metrics() == head, profile
        assert header(a) == headline_of(sim["analysis"]) == headline_of(cur)
        assert header(a)["bound"] == head["performance.bound_by"]
        # the Roofline pane's words (tfx.tui.widgets.roofline, the text it draws at any width)
        from tfx.tui.widgets.roofline import roofline_text
        pane = roofline_text(outcome).plain
        assert (f"Predicted {fmt.ns(head['performance.predicted_ns'])}  (bound by "
                f"{head['performance.bound_by']}, ") in pane, profile
        assert f"Roofline  bound by {head['roofline.bound_by']}\n" in pane
        if gpu:
            assert f"Occupancy {fmt.ctas_per_sm(head['occupancy.blocks_per_sm'])}" in pane
            # the register estimate's line where it set the registers: the text's and the pane's
            # one line, its total the JSON's (no bundled kernel declares its registers)
            from tfx.present.analysis_report import estimated_registers_line
            registers = estimated_registers_line(a)
            assert registers is not None, profile
            assert f"    {registers}\n" in text and f"  {registers}\n" in pane, profile
            assert registers.endswith(f" = {fmt.count(data['register_estimate']['total'])}"), profile
        point = core.explore_point(a)
        assert point == (row["predicted_ns"], row["smem_per_cta"] if gpu else point[1]), profile


def test_every_knob_and_parameter_the_user_set_is_in_every_json(capsys):
    """gemm with --set BM=64 and --knob hbm.bandwidth=x2 (its canonical path memory.gmem.bandwidth,
    tfx.hw.knobs): every JSON names both (explore: the knob, BM as fixed and in the current
    configuration; diff: side b's; occupancy: the knob; run: the parameters)."""
    gemm = bundled_kernel("gemm.tile")
    knobs = {"memory.gmem.bandwidth": "x2"}
    sets = ("--set", "BM=64", "--knob", "hbm.bandwidth=x2")
    outs = {}
    for name, argv in (("analyze", ("analyze", gemm, "--json")),
                       ("simulate", ("simulate", gemm, "--json", "--no-events", "--tiles", "1")),
                       ("explore", ("explore", gemm, "--json", "--top", "1"))):
        rc, out, err = cli(capsys, *argv, *sets)
        assert rc == 0, err
        outs[name] = json.loads(out)
    for name in ("analyze", "simulate"):
        assert outs[name]["knobs"] == knobs and outs[name]["parameters"]["BM"] == 64, name
    ex = outs["explore"]
    assert ex["knobs"] == knobs and ex["fixed"]["BM"] == 64
    assert ex["current"]["knobs"] == knobs and ex["current"]["parameters"] == outs["analyze"]["parameters"]
    assert all(e["params"].get("BM", 64) == 64 for e in ex["top"])
    rc, out, err = cli(capsys, "diff", gemm, gemm, "--set-b", "BM=64", "--knob-b", "hbm.bandwidth=x2", "--json")
    assert rc == 0, err
    b = json.loads(out)["b"]
    assert b["knobs"] == knobs and b["parameters"]["BM"] == 64
    rc, out, err = cli(capsys, "occupancy", "--threads", "128", "--regs", "32", "--knob",
                       "occupancy.max_blocks_per_sm=16", "--json")
    assert rc == 0, err
    occ = json.loads(out)
    assert (occ[0] if isinstance(occ, list) else occ)["knobs"] == {"occupancy.max_blocks_per_sm": "16"}
    for argv in (("hw", "show", "h200_sxm"), ("model", "latency", "--model", "llama3.2-1b")):
        rc, out, err = cli(capsys, *argv, "--knob", "hbm.bandwidth=x2", "--json")
        assert rc == 0, err
        assert json.loads(out)["knobs"] == knobs, argv
    # copy.tile (N = 1024 elements, BLOCK 4096 by default): run names its parameters as analyze does
    rc, out, err = cli(capsys, "run", bundled_kernel("copy.tile"), "--set", "N=1024", "--json")
    assert rc == 0, err
    run = json.loads(out)
    assert run["parameters"]["N"] == 1024 and "params" not in run


def test_the_current_configuration_is_the_sweeps_row_of_it():
    """gemm.tile's defaults (BM = BN = 128, BK 64, 4 warps, 3 stages, GROUP_M 8) in the full
    default space: ``current.index`` decodes to those values, and the sweep's row there is the
    one the chunk holding it priced (the same numbers as the analysis). With a --sweep that
    leaves BM = 128 out, the configuration is not in the space: index and sweep are None, the
    analysis's headline is still given."""
    from tfx.explore import explore
    from tfx.hw import load_profile
    from tfx.lang import parse_file
    module = parse_file(str(bundled_kernel("gemm.tile")))
    h200 = load_profile("h200_sxm")
    r = explore(module, None, h200, fixed={"M": 4096, "N": 4096, "K": 4096}, top=1, chunk_size=500)
    cur = r.current
    assert r.config(cur["index"])["params"] == dict(BM=128, BN=128, BK=64, WARPS=4, STAGES=3, GROUP_M=8)
    assert cur["sweep"]["predicted_ns"] == cur["performance.predicted_ns"]
    assert cur["sweep"]["smem_per_cta"] == cur["memory.peak.smem"] == (128 + 128) * 64 * 2 * 3   # 98,304 B
    r = explore(module, None, h200, sweeps={"BM": [64, 256]}, top=1)
    assert (r.current["index"], r.current["sweep"]) == (None, None)
    assert r.current["parameters"]["BM"] == 128 and r.current["occupancy.blocks_per_sm"] >= 1
