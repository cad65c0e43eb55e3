"""Property: whatever a mutated kernel, profile, preset, knob or option holds, the CLI ends
with exit 0, or exit 2 and one error line (plus the echoed source line and its caret where
there is a file:line:col, and notes) -- never a traceback (issue 13).

The mutations are bench/fuzz.py's; hypothesis picks the seed of each mutant, a bounded
number of examples per input kind keeps CI fast (bench/fuzz.py runs thousands, in forked
children with time and memory limits, for the hang class this in-process test cannot see).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tfx.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import fuzz  # noqa: E402  (bench/fuzz.py: the mutation operators)

FAST = settings(max_examples=25, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def assert_clean(argv: list[str], capsys) -> None:
    try:
        rc = main(argv)
    except BaseException as exc:  # anything escaping main is the defect this test looks for
        pytest.fail(f"tfx {' '.join(argv)} raised {type(exc).__name__}: {exc}")
    err = capsys.readouterr().err
    outcome = fuzz.classify(rc, err)
    assert outcome in ("ok", "refused"), f"tfx {' '.join(argv)} -> {outcome}:\n{err[-2000:]}"


def test_classify_accepts_only_the_documented_refusal_form():
    assert fuzz.classify(2, "k.tile:3:5: error: x\n  line\n      ^\n") == "refused"
    assert fuzz.classify(2, "error: x\n  note: y\n") == "refused"
    assert fuzz.classify(2, "usage: tfx ...\ntfx: error: x\n") == "refused-multiline"
    assert fuzz.classify(1, "Traceback (most recent call last):\n") == "traceback"
    assert fuzz.classify(None, "") == "hang"


@FAST
@given(rng=st.randoms(use_true_random=False),
       source=st.sampled_from(["gemm.tile", "copy.tile", "softmax.tile", "rmsnorm.tile", "sip_gemm.tile"]),
       command=st.sampled_from(["check", "analyze"]))
def test_mutated_kernels(tmp_path, capsys, rng, source, command):
    path = tmp_path / "k.tile"
    path.write_text(fuzz.mutate_kernel(rng, (ROOT / "kernels" / source).read_text()))
    hw = "sip" if source.startswith("sip") else "h200_sxm"
    assert_clean([command, str(path)] + ([] if command == "check" else ["--hw", hw]), capsys)


@FAST
@given(rng=st.randoms(use_true_random=False), source=st.sampled_from(["h200_sxm", "sip", "a100_sxm"]))
def test_mutated_profiles(tmp_path, capsys, rng, source):
    text = (ROOT / "hw_profiles" / f"{source}.toml").read_text()
    path = tmp_path / "p.toml"
    path.write_text(fuzz.mutate_toml(rng, text, {"[links.d2d]": "[links.zz]", "[memory.tcm": "[memory.hbm",
                                                  "bandwidth": "bandwith"}))
    assert_clean(["hw", "show", str(path)], capsys)
    assert_clean(["model", "memory", "--model", "llama3.2-1b", "--hw", str(path)], capsys)


@FAST
@given(rng=st.randoms(use_true_random=False),
       source=st.sampled_from(["llama3.2-1b", "mixtral-8x7b", "deepseek-v2-lite", "gemma2-2b"]))
def test_mutated_presets(tmp_path, capsys, rng, source):
    path = tmp_path / "m.toml"
    path.write_text(fuzz.mutate_toml(rng, (ROOT / "models" / f"{source}.toml").read_text(),
                                     {"[moe]": "[mo]", "head_dim": "head_dims"}))
    assert_clean(["model", "show", str(path)], capsys)
    assert_clean(["model", "memory", "--model", str(path), "--hw", "h200_sxm"], capsys)


@FAST
@given(path=st.sampled_from(["hbm.bandwidth", "clock.core", "sm.count", "compute.tensor.bf16",
                             "gmem.efficiency", "occupancy.max_threads_per_sm", "occupancy.regs_per_sm",
                             "l2.capacity", "launch.overhead"]),
       value=st.sampled_from(fuzz.KNOB_VALUES))
def test_knobs(capsys, path, value):
    assert_clean(["analyze", str(ROOT / "kernels" / "gemm.tile"), "--hw", "h200_sxm", "--knob",
                  f"{path}={value}"], capsys)


@FAST
@given(name=st.sampled_from(["BM", "BN", "BK", "WARPS", "STAGES", "GROUP_M", "M", "K"]),
       value=st.sampled_from(fuzz.OPTION_VALUES + fuzz.INTERESTING_INTS))
def test_set_values(capsys, name, value):
    assert_clean(["analyze", str(ROOT / "kernels" / "gemm.tile"), "--hw", "h200_sxm", "--set",
                  f"{name}={value}"], capsys)


@FAST
@given(flag=st.sampled_from(["--batch", "--ctx", "--capacity", "--launch-us", "--tp", "--pp", "--dp"]),
       value=st.sampled_from(fuzz.OPTION_VALUES))
def test_model_options(capsys, flag, value):
    assert_clean(["model", "memory", "--model", "llama3.1-8b", "--hw", "h200_nvl8", flag, value], capsys)
