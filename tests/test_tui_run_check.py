"""The explorer's run-check action (c): tfx run's quick check in the job runner."""

from __future__ import annotations

from tests.test_tui_support import make_app, run
from tfx.bundled import bundled_kernel


def _toasts(app):
    return [n.message for n in app._notifications]


def test_c_runs_the_kernel_small_and_toasts_the_check():
    """gemm has no twin in its file: the check is that C is written everywhere and finite."""
    async def go():
        app = make_app()
        async with app.run_test(size=(80, 24), notifications=True) as pilot:
            await pilot.press("c")
            await pilot.pause()
            notes = _toasts(app)
            assert any(m.startswith("run check gemm at ") and ": pass" in m for m in notes), notes
            assert any("C: 0 elements never written, 0 infinite  ok" in m for m in notes), notes
    run(go())


def test_run_check_compares_a_composite_with_its_single_op_twin_in_a_worker():
    """The real path: the job runs in the simulation lane's worker process."""
    async def go():
        app = make_app(kernel=str(bundled_kernel("sip_decode_attention.tile")), profile="sip",
                       kernel_name="decode_attention_composite", sync=False)
        async with app.run_test(size=(80, 24), notifications=True) as pilot:
            await app.wait_for_generation(1, timeout=60)
            await pilot.press("c")
            for _ in range(600):
                await pilot.pause(0.1)
                if any("vs decode_attention_single_op" in m for m in _toasts(app)):
                    break
            notes = _toasts(app)
            assert any("O vs decode_attention_single_op: max abs error 0, max rel 0  ok" in m
                       for m in notes), notes
    run(go())


def test_the_explorer_job_takes_and_returns_plain_data(tmp_path):
    """gemm with BM = BN = 64 chosen in the explorer: the job keeps them and shrinks the sizes."""
    import pickle
    from tfx.tui.core import run_check
    job = ("kernels/gemm.tile", None, None, {"BM": 64, "BN": 64})
    out = run_check(pickle.loads(pickle.dumps(job)))
    assert pickle.loads(pickle.dumps(out)) == out
    assert out["pass"] is True and out["params"]["BM"] == 64 and out["params"]["BN"] == 64
    missing = run_check((str(tmp_path / "none.tile"), None, None, {}))
    assert missing["pass"] is False and "none.tile" in missing["error"]
