"""The explorer's headless pieces: braille canvas, Pareto front, Gantt rendering, diffs, traces."""

from __future__ import annotations

from tests.test_tui_support import run
from tfx.tui.canvas import BrailleCanvas
from tfx.present.diff import summary as diff_summary
from tfx.tui.core import Event


def test_braille_corners_and_layers():
    c = BrailleCanvas(2, 1)
    c.set_range(0, 1, 0, 1)
    assert c.point(0, 1) == (0, 0)          # top-left dot: bit 0x01
    assert c.point(1, 0, layer=2) == (1, 0)  # bottom-right dot: bit 0x80
    (text, layers), = c.rows()
    assert text == chr(0x2801) + chr(0x2880)
    assert layers == [0, 2]


def test_gantt_renders_only_the_viewport():
    """A synthetic trace (a test fixture, not simulator output): 2 engines, 10,000 events."""
    from textual.app import App
    from tfx.tui.widgets.timeline import LABEL_W, GanttView
    events = [Event("copy", i * 100.0, i * 100.0 + 60, "") for i in range(10_000)]
    events += [Event("tensor", 0.0, 1000.0, "mma")]

    class Host(App):
        def compose(self):
            yield GanttView(id="g")

    async def go():
        app = Host()
        async with app.run_test(size=(60, 6)) as pilot:
            g = app.query_one(GanttView)
            g.set_events(events)
            g.ns_per_cell = 50.0
            g._resize()
            await pilot.pause()
            tensor = "".join(s.text for s in g.render_line(2))
            assert tensor.startswith("tensor")
            assert "mma" in tensor[LABEL_W:LABEL_W + 20]
            copy = "".join(s.text for s in g.render_line(1))[LABEL_W:LABEL_W + 4]
            assert copy == "█▌█▌"
            assert len(g.busy_in("copy", 0, 1000)) == 10
            await pilot.press("minus")
            assert g.ns_per_cell == 100.0
            await pilot.press("right")
    run(go())


def test_diff_summary_words():
    from tfx.analysis.analyze import analyze
    from tfx.hw import load_profile
    from tfx.lang import parse_file
    from tfx.bundled import bundled_kernel
    m = parse_file(bundled_kernel("gemm.tile"))
    p = load_profile("h200_sxm")
    a, b = analyze(m, None, p), analyze(m, None, p, params={"STAGES": 4})
    assert "smem peak 98.30 KB -> 131.07 KB (+33.3%)" in diff_summary(a, b, limit=9)
    assert diff_summary(a, a) == "nothing moved"


def test_diff_summary_hides_moves_below_the_shown_precision():
    """215,480 ns and 215,483 ns both print as 215.48 us: that is not news."""
    from types import SimpleNamespace
    a = SimpleNamespace(metrics={"performance.predicted_ns": 215480, "occupancy.blocks_per_sm": 2})
    b = SimpleNamespace(metrics={"performance.predicted_ns": 215483, "occupancy.blocks_per_sm": 2})
    c = SimpleNamespace(metrics={"performance.predicted_ns": 215483, "occupancy.blocks_per_sm": 3})
    assert diff_summary(a, b) == "nothing moved at the shown precision"
    assert diff_summary(a, c) == "CTAs/SM 2 -> 3 (+50.0%)"


def test_shape_params_are_the_tensor_extents():
    """gemm: A[M, K], B[K, N], C[M, N]. gqa_decode: its scratch tensors' PARTIAL_ROWS
    (B * HKV * SPLITS * GROUP) do not make SPLITS a shape. moe_w4a16: W[E, H, N] with
    let N = 2 * I makes I a shape."""
    from tfx.lang import parse_file
    from tfx.bundled import bundled_kernel
    from tfx.tui.core import default_sweep, shape_params

    def kernel(name):
        return parse_file(bundled_kernel(f"{name}.tile")).kernel(None)

    assert shape_params(kernel("gemm")) == {"M", "N", "K"}
    assert default_sweep(kernel("gemm")) == ("BM", "BN", "BK", "WARPS", "STAGES", "GROUP_M")
    assert shape_params(kernel("gqa_decode")) == {"B", "HQ", "HKV", "SKV", "D"}
    assert default_sweep(kernel("gqa_decode")) == ("SPLITS", "BLOCK_N", "WARPS", "STAGES")
    assert "I" in shape_params(kernel("moe_w4a16"))
    # persistent_gemm's NUM_SMS = units(sm) follows the machine, unticked as tfx explore leaves it
    assert default_sweep(kernel("persistent_gemm")) == ("BM", "BN", "BK", "WARPS", "STAGES")


def test_explore_point_matches_the_sweep():
    """The "current" marker: (predicted ns, on-chip bytes of the executing unit) of one analysis
    equals the sweep's value for the same configuration, on a GPU (smem_per_cta) and on the
    tiled accelerator (tcm_per_pe)."""
    from tfx.analysis.analyze import analyze
    from tfx.explore import explore
    from tfx.hw import load_profile
    from tfx.lang import parse_file
    from tfx.bundled import bundled_kernel
    from tfx.tui.core import explore_point
    for name, prof, param, key in (("gemm", "h200_sxm", "BM", "smem_per_cta"),
                                   ("sip_gemm", "sip", "TM", "tcm_per_pe")):
        m = parse_file(bundled_kernel(f"{name}.tile"))
        p = load_profile(prof)
        a = analyze(m, None, p)
        r = explore(m, None, p, sweeps={param: [int(a.params[param])]})
        assert r.onchip_key == key
        assert explore_point(a) == (r.top[0]["predicted_ns"], r.top[0][key])


def test_app_import_leaves_secondary_panes_and_heavy_layers_for_later():
    """`import tfx.tui.app` loads what the first screen shows only, the IR pane and the key
    bar: the other panes, the analysis (numpy), the simulator and the explorer are
    imported when first needed."""
    import subprocess
    import sys
    code = ("import sys, tfx.tui.app; print(','.join(sorted(m for m in sys.modules if m in "
            "('numpy', 'tfx.analysis', 'tfx.sim', 'tfx.explore') or m.startswith('tfx.tui.widgets.'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "tfx.tui.widgets.footer,tfx.tui.widgets.ir"
