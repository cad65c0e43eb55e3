"""The model screen's headless core (tfx.tui.deployment.core): no screen, no Textual."""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import pytest

from tfx.errors import TfxError
from tfx.tui.deployment import core


def test_core_does_not_import_textual():
    code = ("import sys; from tfx.tui.deployment import core; "
            "o = core.run_job(core.Job('latency', 1, core.make_knobs('llama3.1-8b'))); assert o.error is None; "
            "print(','.join(sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_nudge_doubles_halves_and_cycles():
    k = core.Knobs(model="llama3.1-8b", tp=4)
    assert core.nudge(k, "tp", 2).tp == 8
    assert core.nudge(k, "tp", 0.5).tp == 2
    assert core.nudge(core.Knobs(tp=1), "tp", 0.5).tp == 1          # never below 1
    assert core.nudge(core.Knobs(ctx=3), "ctx", 0.5).ctx == 1
    assert core.nudge(k, "mode", 2).mode == "prefill"
    assert core.nudge(core.nudge(k, "mode", 2), "mode", 2).mode == "decode"
    assert core.nudge(k, "kv_shard", 0.5).kv_shard == "seq"
    assert core.nudge(k, "tp_place", 2).tp_place == "node"          # GPU placements on h200_nvl8
    assert core.nudge(core.Knobs(hw="sip"), "tp_place", 2).tp_place == "device"
    from tfx.model.presets import list_models
    models = list_models()
    assert core.nudge(k, "model", 2).model == models[(models.index("llama3.1-8b") + 1) % len(models)]


def test_parse_value():
    k = core.Knobs(ctx=8192, tp=4)
    assert core.parse_value(k, "ctx", "128k").ctx == 131072
    assert core.parse_value(k, "ctx", "32_768").ctx == 32768
    assert core.parse_value(k, "tp", "x2").tp == 8
    assert core.parse_value(k, "tp", "/4").tp == 1
    assert core.parse_value(k, "mode", "prefill").mode == "prefill"
    assert core.parse_value(k, "model", "models/x.toml").model == "models/x.toml"
    for field, text, msg in [("tp", "abc", "expected an integer"), ("tp", "0", ">= 1"), ("tp", "1.5", "whole"),
                             ("tp", "/3", "whole"), ("mode", "decod", "did you mean decode"),
                             ("model", "llama9", "unknown"), ("ctx", " ", "empty")]:
        with pytest.raises(TfxError, match=msg):
            core.parse_value(k, field, text)


def test_changed_and_short_labels():
    a = core.Knobs(tp=1)
    b = core.Knobs(tp=8, cp=4, cp_ring="q", kv_shard="seq")
    assert core.changed(a, b) == ["TP 1 -> 8", "CP 1 -> 4", "kv shard heads -> seq", "cp ring kv -> q"]
    assert b.short_label() == "tp8 cp4 kv=seq ring=q"
    assert a.short_label() == "tp1"
    assert core.short_config("tp8 cp1 pp1 dp1 ep1") == "tp8"
    assert core.short_config("tp1 cp4 pp1 dp1 ep1 ring=kv") == "cp4"
    assert core.short_config("tp1 cp4 pp1 dp1 ep1 ring=q") == "cp4 ring=q"
    assert core.make_knobs("llama3.1-70b", config="tp=8,cp=2").short_label() == "tp8 cp2"


def _fake(lat, weights, devices=1, fits=True):
    return SimpleNamespace(latency_ns=lat, memory={"weights": weights, "kv_cache": 0.0, "activations": 0.0,
                                                   "workspace": 0.0},
                           devices=devices, fits=fits, capacity=100.0)


def test_diff_line():
    old, new = _fake(11.57e6, 2 * 2**30), _fake(9.80e6, 2**30)
    line = core.diff_line(old, new, core.Knobs(tp=4), core.Knobs(tp=8))
    # 2 * 2**30 = 2,147,483,648 B = 2.15 GB; 2**30 = 1,073,741,824 B = 1.07 GB (decimal prefixes)
    assert line == "TP 4 -> 8: latency 11.57 ms -> 9.80 ms (-15.3%); mem/dev 2.15 GB -> 1.07 GB (-50.0%)"
    assert core.diff_line(old, old) == "nothing moved"


def test_bars():
    assert core.bar(0.5, 10) == "█" * 5
    assert core.bar(0.0625, 10) == "▋"            # 0.625 cells = 5 eighths
    assert core.bar(2.0, 4) == "████"             # clipped at the width
    assert core.bar(0.5, 4, "▓") == "▓▓"
    r = SimpleNamespace(capacity=100.0, memory={"weights": 50.0, "kv_cache": 25.0, "activations": 0.0,
                                                "workspace": 5.0})
    segs = core.stacked_bar(r, 20)
    assert "".join(s for s, _ in segs) == "█" * 10 + "▓" * 5 + "░" + "·" * 4
    assert [k for _, k in segs] == ["weights", "kv_cache", "workspace", "free"]
    over = SimpleNamespace(capacity=100.0, memory={"weights": 150.0, "kv_cache": 50.0, "activations": 0.0,
                                                   "workspace": 0.0})
    text = "".join(s for s, _ in core.stacked_bar(over, 20))
    assert len(text) == 20 and text[10] == "|"    # capacity at half the bar (scaled to the 200 total)
    rows = core.memory_rows(r, 10)
    assert [(x.label, x.share, x.bar) for x in rows][:2] == [("weights", 0.5, "█" * 5), ("KV cache", 0.25, "██▌")]


def test_layout_of_tp8_cp4_on_four_nodes():
    """Llama 3.1 70B, tp8 cp4 on h200_nvl8 (8 GPUs per node): 32 GPUs on 4 nodes.

    Ranks are ordered TP (inner), CP: GPU g has TP rank g % 8 and CP rank g // 8, so each
    node is one TP group (NVLink) and the CP group (span 32 > 8) crosses nodes on InfiniBand.
    TP rank i: 64/8 = 8 q heads (8i..8i+7), 8/8 = 1 KV head, 28672/8 = 3584 FFN columns,
    128256/8 = 16032 vocabulary rows; CP rank j: 8192/4 = 2048 context tokens.
    """
    from tfx.model import load_model, load_system
    k = core.make_knobs("llama3.1-70b", config="tp=8,cp=4")
    lines = core.layout_lines(load_model("llama3.1-70b"), k, load_system("h200_nvl8"), 32)
    text = "\n".join(lines)
    assert "32 gpus on 4 nodes of 8" in lines[1]
    node1 = lines.index(next(l for l in lines if l.startswith("node 1 ")))
    assert lines[node1].split()[2:] == [f"gpu{g}" for g in range(8, 16)]
    assert lines[node1 + 1].split() == ["TP", *map(str, range(8))]
    assert lines[node1 + 2].split() == ["CP", *["1"] * 8]
    # the collective rate: 450 GB/s line rate x NCCL's 0.822 = 369.9 GB/s
    assert "TP 8 over nvlink (369.90 GB/s, 1.00 us): rank i holds" in text
    assert "q heads 8i..8i+7 (8 of 64)" in text
    assert "kv head i (1 of 8)" in text
    # the index ranges as expressions, the counts with separators (session 12: '(3584 of 28672)')
    assert "FFN columns 3584i..3584i+3583 (3,584 of 28,672)" in text
    assert "vocabulary rows 16032i.. (16,032 of 128,256)" in text
    assert "CP 4 over ib (50.00 GB/s, 2.00 us): rank j holds context tokens 2048j..2048j+2047 (2,048 of 8,192)" in text
    assert lines[-1] == ("each device: 80 layers, 8 q heads, 1 kv head, 2,048 context tokens x 1 sequence")


def test_layout_of_experts_and_pipeline():
    """Mixtral 8x7B tp2 dp4 ep8, batch 8: EP spans 8 / 2 = 4 DP replicas; EP rank of GPU g is
    (DP rank % 4) * 2 + TP rank = g here, one routed expert each (8 / 8)."""
    from tfx.model import load_model, load_system
    from tfx.model.system import Parallelism
    sysm = load_system("h200_nvl8")
    par = Parallelism(tp=2, dp=4, ep=8)
    assert [core.rank_coords(par, g, sysm)["EP"] for g in range(8)] == list(range(8))
    k = core.make_knobs("mixtral-8x7b", batch=8, config="tp=2,dp=4,ep=8")
    text = "\n".join(core.layout_lines(load_model("mixtral-8x7b"), k, sysm, 8))
    assert "EP 8: rank e holds routed expert e (1 of 8); across 4 DP replicas" in text
    assert "DP 4: replica d serves sequences 2d..2d+1 (2 of 8)" in text
    k = core.make_knobs("llama3.1-8b", config="tp=2,pp=4")
    text = "\n".join(core.layout_lines(load_model("llama3.1-8b"), k, sysm, 8))
    assert "stage s holds layers 8s..8s+7 (8 of 32) (0: 0..7; 1: 8..15; 2: 16..23; 3: 24..31)" in text


def test_run_job_errors_become_text():
    bad = core.run_job(core.Job("latency", 3, core.make_knobs("llama3.1-8b", config="ep=2")))
    assert bad.generation == 3 and bad.result is None and "ep > 1 on a dense model" in bad.error
    missing = core.run_job(core.Job("latency", 1, core.Knobs(model="no-such-model")))
    assert missing.result is None and "no-such-model" in missing.error
    assert "unknown job kind" in core.run_job(core.Job("nope", 1, core.Knobs())).error


def test_suggest_and_sweep_rows():
    k = core.make_knobs("llama3.1-8b")
    s = core.run_job(core.Job("suggest", 1, k, scope="both", max_devices=8))
    assert s.error is None
    rows = core.suggest_rows(s.result)
    assert rows and len(rows[0]) == len(core.SUGGEST_COLUMNS)
    assert max(int(r[4].rstrip("%")) for r in rows) == 100     # eff: share of the frontier's best tok/s/dev
    h = core.run_job(core.Job("sweep", 1, k, max_devices=8))
    assert h.error is None
    assert {r[0] for r in core.sweep_ranking_rows(h.result)} == set(core.HW_NAMES.values())
    assert core.sweep_pareto_rows(h.result)


def test_compare_table_marks_the_best():
    k8, k4 = core.make_knobs("llama3.1-70b", config="tp=8"), core.make_knobs("llama3.1-70b", config="tp=4")
    r8 = core.run_job(core.Job("latency", 1, k8)).result
    r4 = core.run_job(core.Job("latency", 1, k4)).result
    cols, rows = core.compare_table([core.saved_from("a", k8, r8), core.saved_from("b", k4, r4)])
    assert cols == ["", "a", "b"]
    by = {name: (cells, best) for name, cells, best in rows}
    assert by["config"][0] == ["tp8", "tp4"]
    assert by["devices"] == (["8", "4"], [False, True])
    assert by["latency"][1] == [r8.latency_ns < r4.latency_ns, r4.latency_ns < r8.latency_ns]
    assert core.compare_table([]) == (["row"], [])


def test_group_link_is_the_latency_models_rule():
    """System.group_link (what the Layout tab names) picks the link whose bandwidth the latency
    model prices each group's collectives at (latency._links), on the GPU node and the sip,
    for every placement: one rule, stated once in the model layer."""
    import itertools

    from tfx.model.latency import Configs, _links
    from tfx.model.system import Parallelism, load_system
    for hw, places in (("h200_nvl8", ("auto", "node", "cross")), ("sip", ("auto", "device", "cube", "pe"))):
        system = load_system(hw)
        pars = [Parallelism(tp=tp, cp=cp, pp=pp, dp=dp, ep=ep, tp_place=tpp, cp_place=cpp)
                for tp, cp, pp, dp, ep, tpp, cpp in itertools.product(
                    (1, 2, 8, 16), (1, 2, 4), (1, 2), (1, 2), (1,), places, places)]
        cfg = Configs.of(pars)
        links = _links(system, cfg)
        for i, par in enumerate(pars):
            for axis in ("tp", "cp", "ep", "pp"):
                link, _where = system.group_link(par, axis)
                expected = float(links[axis][0][i])
                assert (link.bandwidth if link is not None else float("inf")) == expected, (hw, par, axis)
