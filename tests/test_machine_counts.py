"""``units(LEVEL)``: a kernel that counts the chip it runs on (docs/language.md, "The machine's
counts"). The counts are the profiles' own ``hierarchy.*.count`` facts:

- h200_sxm: ``hierarchy.sm.count`` 132, parent device, so units(sm) = 132;
- a100_sxm: 108 SMs, units(sm) = 108;
- sip: ``hierarchy.cube.count`` 8 (parent device), ``hierarchy.pe.count`` 8 (parent cube), so
  units(cube) = 8 and units(pe) = 8 x 8 = 64; units(device) = 1 on every profile.
"""

from __future__ import annotations

import json

import pytest

from tfx.analysis.analyze import analyze
from tfx.cli.main import main
from tfx.errors import TfxError
from tfx.explore.explore import explore
from tfx.explore.sensitivity import sensitivity
from tfx.hw import load_profile
from tfx.ir.bind import bind, needs_machine, profile_dependent, profile_units
from tfx.ir.expr import Name
from tfx.lang import parse_file, parse_text, print_kernel

from tests.test_lang_call_value import GEMM as _CALL_GEMM, STEP as _CALL_STEP

H200 = load_profile("h200_sxm")
A100 = load_profile("a100_sxm")
SIP = load_profile("sip")

TINY = """kernel tiny {
  param N = 1024 in 1..1048576
  param SMS = units(sm) in 1..4096
  let PER_SM = cdiv(N, SMS)
  tensor X : f32[N] @gmem in
  tensor Y : f32[N] @gmem out
  mesh cta[SMS] as (i) capture(X, Y) {
    %x = load X[i * PER_SM : PER_SM] -> rmem
    store %x -> Y[i * PER_SM : PER_SM]
  }
}
"""


# ------------------------------------------------------------------ the language

def test_units_parses_to_a_constant_name_and_prints_back():
    module = parse_text(TINY, "tiny.tile")
    k = module.kernel()
    assert k.param("SMS").default == Name("units(sm)")
    assert "  param SMS = units(sm) in 1..4096\n" in print_kernel(k)
    assert parse_text(print_kernel(k), "again.tile") == module
    assert module.info["tiny"].units.keys() == {"sm"}


@pytest.mark.parametrize("text, where, message", [
    ("param S = units(3)", (2, 19),
     "expected a hierarchy level of the hardware profile in units(...) (sm, cube, pe), found '3'"),
    ("param S = units(sm, pe)", (2, 21), "expected ')' to close units(...): it takes one hierarchy level, found ','"),
    ("param S = unit(sm)", (2, 13), "unknown function 'unit', expected one of: cdiv, min, max, log2, pow2, units"),
])
def test_malformed_units_is_one_error_at_its_place(text, where, message):
    src = f"kernel k {{\n  {text}\n  tensor X : f32[16] @gmem in\n  mesh cta[1] as (i) capture(X) {{\n  }}\n}}\n"
    with pytest.raises(TfxError) as info:
        parse_text(src, "bad.tile")
    assert (info.value.where.line, info.value.where.col) == where
    assert info.value.message == message


def test_units_outside_a_default_or_let_is_refused_with_the_way_out():
    src = TINY.replace("mesh cta[SMS]", "mesh cta[units(sm)]")
    with pytest.raises(TfxError) as info:
        parse_text(src, "tiny.tile")
    assert info.value.message == (
        "units(sm) is a count of the hardware profile, named only in a parameter's default, domain "
        "or sweep, or a let: bind it to a let (let N = units(sm)) and use that in the extent of mesh cta")
    assert (info.value.where.line, info.value.where.col) == (7, 12)


# A sweep of the machine's shares: SHARE's sweep names units(sm) and its default does not.
SHARED = TINY.replace("  param SMS = units(sm) in 1..4096\n",
                      "  param SMS = units(sm) in 1..4096\n"
                      "  param SHARE = 8 in 1..units(sm) sweep {units(sm) / 4, units(sm) / 2, units(sm)}\n")


def test_a_domain_or_sweep_names_the_count_and_is_bound_on_the_profile():
    """SHARE = 8 in 1..units(sm) sweep {units(sm) / 4, units(sm) / 2, units(sm)}: h200_sxm's 132 SMs
    give the sweep {132 / 4, 132 / 2, 132} = {33, 66, 132}; a100_sxm's 108 give {27, 54, 108}
    (floor division); hierarchy.sm.count 66 gives {16, 33, 66}."""
    from tfx.explore.space import declared_sweeps
    module = parse_text(SHARED, "shared.tile")
    k = module.kernel()
    assert "  param SHARE = 8 in 1..units(sm) sweep {units(sm) / 4, units(sm) / 2, units(sm)}\n" in print_kernel(k)
    assert parse_text(print_kernel(k), "again.tile") == module
    for profile, want in ((H200, [33, 66, 132]), (A100, [27, 54, 108]),
                          (H200.with_knobs({"hierarchy.sm.count": "66"}), [16, 33, 66])):
        assert declared_sweeps(k, {}, profile, names=["SHARE"]) == {"SHARE": want}


def test_a_domain_that_names_the_count_refuses_a_value_past_that_machine(tmp_path, capsys):
    """SHARE's domain 1..units(sm): --set SHARE=120 is inside 1..132 on h200_sxm and outside 1..108
    on a100_sxm; tfx check without --hw leaves the shapes to a profile (the domain needs units(sm))."""
    path = tmp_path / "shared.tile"
    path.write_text(SHARED)
    assert main(["check", str(path), "--hw", "h200_sxm", "--set", "SHARE=120"]) == 0
    assert main(["check", str(path), "--hw", "a100_sxm", "--set", "SHARE=120"]) == 2
    assert "SHARE=120 is outside its declared domain 1..108" in capsys.readouterr().err
    # without a profile, SMS given: the shapes are checked, SHARE's domain and sweep wait for the machine
    capsys.readouterr()
    assert main(["check", str(path), "--set", "SMS=5"]) == 0
    assert capsys.readouterr().out == f"{path}: ok (1 kernel: tiny)\n"
    assert main(["check", str(path), "--set", "SMS=5", "--set", "SHARE=120"]) == 0


# ------------------------------------------------------------------ binding

def test_the_count_is_the_profiles_and_follows_its_knobs():
    module = parse_text(TINY, "tiny.tile")
    k = module.kernel()
    # PER_SM = cdiv(1024, SMS): cdiv(1024, 132) = 8, cdiv(1024, 108) = 10, cdiv(1024, 66) = 16
    assert bind(module, k, profile=H200) == {"units(sm)": 132, "N": 1024, "SMS": 132, "PER_SM": 8}
    assert bind(module, k, profile=A100)["SMS"] == 108 and bind(module, k, profile=A100)["PER_SM"] == 10
    half = H200.with_knobs({"hierarchy.sm.count": "66"})
    assert bind(module, k, profile=half)["SMS"] == 66 and bind(module, k, profile=half)["PER_SM"] == 16
    # a given value replaces the default on any machine, and then needs none
    assert bind(module, k, {"SMS": 5})["PER_SM"] == 205        # cdiv(1024, 5) = 205
    assert profile_dependent(k) == {"SMS"} and profile_dependent(k, {"SMS": 5}) == set()
    assert needs_machine(k) and not needs_machine(k, {"SMS": 5})


def test_sip_counts_cubes_and_pes_up_the_hierarchy():
    module = parse_file("kernels/sip_gemm.tile")
    k = module.kernel()
    assert profile_units(module, k, SIP) == {"units(cube)": 8, "units(pe)": 64}
    env = bind(module, k, profile=SIP)
    # PES_PER_CUBE = units(pe) / units(cube) = 64 / 8 = 8; PES = 8 x 8 = 64
    assert (env["CUBES"], env["PES_PER_CUBE"], env["PES"]) == (8, 8, 64)
    # 16 PEs a cube: units(pe) = 8 x 16 = 128, PES_PER_CUBE = 128 / 8 = 16, PES = 128
    env = bind(module, k, profile=SIP.with_knobs({"hierarchy.pe.count": "16"}))
    assert (env["CUBES"], env["PES_PER_CUBE"], env["PES"]) == (8, 16, 128)
    # 16 cubes of 8: units(cube) = 16, units(pe) = 16 x 8 = 128, PES_PER_CUBE = 8
    env = bind(module, k, profile=SIP.with_knobs({"hierarchy.cube.count": "16"}))
    assert (env["CUBES"], env["PES_PER_CUBE"], env["PES"]) == (16, 8, 128)


def test_without_a_profile_or_on_one_without_the_level_it_is_refused_by_name():
    module = parse_file("kernels/sip_gemm.tile")
    with pytest.raises(TfxError) as info:
        bind(module, module.kernel())
    assert info.value.message == "units(cube) is a count of the hardware profile: it needs a profile (--hw PROFILE)"
    with pytest.raises(TfxError) as info:
        bind(module, module.kernel(), profile=H200)
    assert info.value.headline() == (
        "kernels/sip_gemm.tile:20:15: error: units(cube): 'cube' is not a hierarchy level of "
        "hardware profile h200_sxm (it has: device, sm, warp, thread)")
    # the way out: of the shipped profiles only sip has cubes (hw_profiles/sip.toml)
    assert info.value.notes == ("sip has hierarchy level 'cube': --hw sip",)


def test_a_gpu_kernel_on_sip_is_told_which_profiles_have_its_mesh():
    """gemm.tile's `mesh cta` on sip (cube > pe): every shipped GPU profile has cta, the
    default h200_sxm first, then by name; four are shown."""
    from tfx.ir.levels import check_levels
    module = parse_file("kernels/gemm.tile")
    with pytest.raises(TfxError) as info:
        check_levels(module, module.kernel(), SIP)
    assert info.value.message == "mesh level 'cta' is not in hardware profile sip (it has: cube, pe)"
    assert info.value.notes == ("h200_sxm, a100_40gb_hgx8, a100_hgx8, a100_sxm, ... have mesh level 'cta': "
                                "--hw h200_sxm",)


# ------------------------------------------------------------------ analysis, explore, sensitivity

def test_persistent_gemm_launches_one_cta_an_sm_of_the_profile():
    module = parse_file("kernels/persistent_gemm.tile")
    # TILES = (8192 / 128) x (8192 / 256) = 2,048; CTAS = min(NUM_SMS, TILES)
    a = analyze(module, None, A100)
    assert (a.params["NUM_SMS"], a.params["CTAS"]) == (108, 108)
    assert a.units == {"units(sm)": 108} and "units(sm)" not in a.params
    assert a.to_json()["units"] == {"units(sm)": 108}
    from tfx.present.analysis_report import parameters_line
    assert parameters_line(a).endswith("NUM_SMS=108, TILES_M=64, TILES_N=32, TILES=2048, CTAS=108; "
                                       "a100_sxm's units(sm)=108")
    b = analyze(module, None, H200)
    assert (b.params["NUM_SMS"], b.params["CTAS"]) == (132, 132)
    # the same launch pinned to 132 CTAs on the A100's 108 SMs runs a second wave of 24
    pinned = analyze(module, None, A100, params={"NUM_SMS": 132})
    assert pinned.params["CTAS"] == 132 and pinned.units == {"units(sm)": 108}
    assert a.metrics["performance.predicted_ns"] < pinned.metrics["performance.predicted_ns"]
    # a kernel that counts nothing says nothing of it
    gemm = analyze(parse_file("kernels/gemm.tile"), None, H200)
    assert gemm.units == {} and "units" not in gemm.to_json()


def test_explore_leaves_the_machine_sized_parameter_to_the_knob_sweep():
    module = parse_file("kernels/persistent_gemm.tile")
    res = explore(module, None, H200, sweeps={"BM": [128]},
                  knob_sweeps={"hierarchy.sm.count": ["66", "132"]})
    by_knob = {r["knobs"]["hierarchy.sm.count"]: r["predicted_ns"] for r in res.top}
    for sms in (66, 132):
        alone = analyze(module, None, H200.with_knobs({"hierarchy.sm.count": str(sms)}), params={"BM": 128})
        assert alone.params["CTAS"] == sms
        assert by_knob[str(sms)] == pytest.approx(float(alone.metrics["performance.predicted_ns"]), rel=1e-12)
    # its declared sweep {78, 114, 132} is not drawn by default: the machine answers it
    res = explore(module, None, H200, sweeps=None, fixed={"M": 8192, "N": 8192, "K": 8192, "BM": 128,
                                                          "BN": 256, "BK": 64, "WARPS": 8})
    assert "NUM_SMS" not in res.top[0]["params"]
    # the current configuration says what analyze says: NUM_SMS 132, from h200_sxm's count
    assert res.current["parameters"]["NUM_SMS"] == 132 and res.current["units"] == {"units(sm)": 132}


def test_sensitivity_prices_a_doubled_chip_as_a_kernel_built_for_it():
    """sip_gemm at its defaults (M = N = K = 4096, 128 x 128 tiles: 32 x 32 = 1,024 tiles): on
    8 x 8 PEs each runs 1,024 / 64 = 16 tiles; with hierarchy.cube.count doubled, 16 cubes of
    8 PEs, 1,024 / 128 = 8. The table's doubled entry is that kernel's own analysis on the
    doubled profile (when the kernel wrote `let CUBES = 8` it was the base time, +0.0%)."""
    module = parse_file("kernels/sip_gemm.tile")
    sens = sensitivity(module, module.kernel(), SIP, {})
    entry = next(e for e in sens["ranking"] if e["knob"] == "hierarchy.cube.count")
    doubled = analyze(module, None, SIP.with_knobs({"hierarchy.cube.count": "16"}))
    assert doubled.params["PES"] == 128 and doubled.params["TILES"] == 1024
    assert entry["doubled"]["predicted_ns"] == pytest.approx(float(doubled.metrics["performance.predicted_ns"]), rel=1e-12)
    assert entry["doubled"]["predicted_ns"] < sens["baseline"]["predicted_ns"]


# ------------------------------------------------------------------ the command line

def test_check_without_hw_says_the_shapes_wait_for_a_profile(capsys):
    path = "kernels/persistent_gemm.tile"
    assert main(["check", path]) == 0
    assert capsys.readouterr().out == (
        f"{path}: ok (1 kernel: persistent_gemm); shapes of persistent_gemm not checked: units(sm) "
        "is a count of the hardware profile (add --hw PROFILE)\n")
    assert main(["check", path, "--hw", "a100_sxm"]) == 0
    assert capsys.readouterr().out == f"{path}: ok (1 kernel: persistent_gemm)\n"
    # a given NUM_SMS needs no machine: the shapes are checked
    assert main(["check", path, "--set", "NUM_SMS=8"]) == 0
    assert capsys.readouterr().out == f"{path}: ok (1 kernel: persistent_gemm)\n"


def test_run_takes_the_counts_of_the_chip_the_kernel_names(capsys):
    sizes = ["--set", "M=64", "--set", "N=64", "--set", "K=64", "--set", "TM=32", "--set", "TN=64",
             "--set", "TK=32"]
    assert main(["run", "kernels/sip_gemm.tile", *sizes, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    # no --hw: h200_sxm has no cube, sip (the first shipped profile with cube and pe) is taken
    assert out["hw"] == "sip" and out["units"] == {"units(cube)": 8, "units(pe)": 64}
    assert "units(cube)" not in out["parameters"]
    assert main(["run", "kernels/sip_gemm.tile", *sizes, "--hw", "h200_sxm"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines()[0] == (
        "kernels/sip_gemm.tile:20:15: error: units(cube): 'cube' is not a hierarchy level of "
        "hardware profile h200_sxm (it has: device, sm, warp, thread)")
    assert "Traceback" not in err


# ------------------------------------------------------------------ the explorer

def test_a_knob_in_the_explorer_resizes_the_kernel_and_its_run_check():
    """The explorer's worker (tfx.tui.core): hierarchy.sm.count = 66 gives persistent_gemm
    NUM_SMS = 66 and CTAS = min(66, 2,048) = 66; the run check (key c) runs the kernel on the
    counts of the analysis the panes show, sip's 8 cubes of 8 PEs here."""
    from tfx.tui.core import Job, run_check, run_job
    out = run_job(Job(1, "kernels/persistent_gemm.tile", None, None, "h200_sxm", (("hierarchy.sm.count", "66"),)))
    assert out.error is None
    assert (out.analysis.params["NUM_SMS"], out.analysis.params["CTAS"]) == (66, 66)
    assert out.analysis.units == {"units(sm)": 66}
    sip = run_job(Job(2, "kernels/sip_gemm.tile", None, None, "sip"))
    checked = run_check(("kernels/sip_gemm.tile", None, None, (), tuple(sip.analysis.units.items())))
    assert checked["error"] is None and checked["pass"] is True
    # without the counts the run cannot size sip's meshes, and says so in its one line
    bare = run_check(("kernels/sip_gemm.tile", None, None, ()))
    assert bare["error"] == ("kernels/sip_gemm.tile:20:15: error: units(cube) is a count of the hardware "
                             "profile: it needs a profile (--hw PROFILE)")


# ------------------------------------------------------------------ a called kernel

# test_lang_call_value's GEMM, whose k-step kernel repeats its mma REPS = units(sm) / 66 times
CALLS = """kernel k_step {
  param BM = 64
  param BN = 64
  param BK = 32
  param REPS = units(sm) / 66
  tensor A : bf16[BM, BK] @smem in
  tensor B : bf16[BK, BN] @smem in
  tensor ACC : f32[BM, BN] @rmem in
  %acc = load ACC[:, :] -> rmem
  loop r = 0 to REPS carry(%acc) capture(A, B) {
    %acc = mma A[:, :], B[:, :], %acc
  }
  return %acc
}
""" + _CALL_GEMM[len(_CALL_STEP):]


def test_a_called_kernel_counts_the_callers_machine():
    """gemm names no count; the k_step kernel it calls repeats its mma REPS = units(sm) / 66
    times: 132 / 66 = 2 on h200_sxm, 108 / 66 = 1 on a100_sxm. A call's mma is 2 x 64 x 64 x 32
    = 262,144 flop; gemm (M = N = K = 256, TM = 64) calls it (256 / 64) x (256 / 64) = 16 CTAs
    x 256 / 32 = 8 trips:
    16 x 8 x 262,144 = 33,554,432 flop a repetition. Run on h200_sxm, Y = 2 x X @ W."""
    import numpy as np

    from tfx.execute import accumulation_terms, check_outputs, derived_rtol, execute, rounding_dtypes
    module = parse_text(CALLS, "calls.tile")
    flops = {hw.name: analyze(module, "gemm", hw).metrics["compute-cost.flops.bf16.total"] for hw in (H200, A100)}
    assert flops == {"h200_sxm": 2 * 33_554_432, "a100_sxm": 33_554_432}
    result = execute(module, module.kernel("gemm"), {}, profile=H200)
    x = result.inputs["X"].astype(np.float64)
    w = result.inputs["W"].astype(np.float64)
    rtol = derived_rtol(rounding_dtypes(module, module.kernel("gemm")) | rounding_dtypes(module, module.kernel("k_step")),
                        accumulation_terms(result.tensors))
    (check,) = check_outputs(result, {"Y": 2 * (x @ w)}, rtol)
    assert check.passed, check


def test_validate_prices_a_row_on_its_profiles_count(tmp_path):
    """A measurements row that leaves NUM_SMS empty is persistent_gemm as launched on that
    row's machine: 108 CTAs on a100_sxm, 132 on h200_sxm (the same shape and tiles)."""
    from tfx.analysis.measured import Predictor, read_measurements
    from tfx.bundled import bundled_kernel
    kernel = bundled_kernel("persistent_gemm.tile")
    csv = tmp_path / "m.csv"
    csv.write_text("kernel,profile,measured_ms,M,N,K,NUM_SMS\n"
                   f"{kernel},a100_sxm,1.0,4096,4096,4096,\n"
                   f"{kernel},h200_sxm,1.0,4096,4096,4096,\n")
    rows = read_measurements(csv)
    assert [r.params for r in rows] == [{"M": 4096, "N": 4096, "K": 4096}] * 2
    got = [c.predicted_ms for c in Predictor().compare(rows)]
    module = parse_file(kernel)
    for hw, ms in zip((A100, H200), got):
        a = analyze(module, None, hw, params={"M": 4096, "N": 4096, "K": 4096})
        assert a.params["CTAS"] == {"a100_sxm": 108, "h200_sxm": 132}[hw.name]
        assert ms == pytest.approx(float(a.metrics["performance.predicted_ns"]) / 1e6, rel=1e-12)


def test_diff_says_each_sides_counts(capsys):
    """persistent_gemm on h200_sxm against a100_sxm: the parameters differ only by the
    machine (NUM_SMS and CTAS 132 against 108), and each side says whose count it is."""
    path = "kernels/persistent_gemm.tile"
    assert main(["diff", path, path, "--hw", "h200_sxm", "--hw-b", "a100_sxm"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2].endswith("NUM_SMS=132, TILES_M=64, TILES_N=32, TILES=2048, CTAS=132; h200_sxm's units(sm)=132")
    assert lines[3].endswith("NUM_SMS=108, TILES_M=64, TILES_N=32, TILES=2048, CTAS=108; a100_sxm's units(sm)=108")


def test_open_refuses_a_level_the_profile_lacks_before_the_screen(capsys):
    """tfx open kernels/sip_gemm.tile on the default h200_sxm: the refusal analyze gives (its
    line, caret and way out), before any frame; it drew the screen and then printed the bare
    headline."""
    assert main(["open", "kernels/sip_gemm.tile"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [
        "kernels/sip_gemm.tile:20:15: error: units(cube): 'cube' is not a hierarchy level of hardware "
        "profile h200_sxm (it has: device, sm, warp, thread)",
        "    let CUBES = units(cube)",
        "                ^",
        "  note: sip has hierarchy level 'cube': --hw sip"]


def test_hw_show_lists_what_units_reads(capsys):
    """sip: cube 8 a device, pe 8 x 8 = 64 (16 PEs a cube under the knob: 8 x 16 = 128);
    h200_sxm: sm 132, warp 132 x 64 = 8,448 (hierarchy.warp.count 64 a SM), thread 8,448 x 32
    = 270,336."""
    assert main(["hw", "show", "sip"]) == 0
    assert "units a device (a kernel's units(LEVEL)): cube 8, pe 64\n" in capsys.readouterr().out
    assert main(["hw", "show", "sip", "--knob", "hierarchy.pe.count=16", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["units"] == {"units(cube)": 8, "units(pe)": 128}
    assert main(["hw", "show", "h200_sxm"]) == 0
    assert "units a device (a kernel's units(LEVEL)): sm 132, warp 8,448, thread 270,336\n" in capsys.readouterr().out


def test_the_model_prices_sips_kernels_on_the_knobbed_chip(capsys):
    """tfx model latency on sip prices its GEMMs with sip_gemm and its decode attention with
    sip_decode_attention, both sized by units(cube) and units(pe): with hierarchy.cube.count
    16 both stages get faster (they were priced on 8 cubes whatever the knob said: the same
    1.42 ms with and without it)."""
    def latency(*knob):
        assert main(["model", "latency", "--model", "llama3.2-1b", "--hw", "sip", *knob, "--json"]) == 0
        return json.loads(capsys.readouterr().out)
    base = latency()
    wide = latency("--knob", "hierarchy.cube.count=16")
    assert wide["ffn_ns"] < base["ffn_ns"] and wide["attention_ns"] < base["attention_ns"]


def test_a_bare_sweep_name_draws_the_declared_sweep_on_the_machine(capsys):
    """persistent_gemm's NUM_SMS sweep {units(sm) / 4, units(sm) / 2, units(sm) * 3 / 4, units(sm)}:
    --sweep NUM_SMS on a100_sxm (108 SMs) draws {27, 54, 81, 108}; on h200_sxm (132) {33, 66, 99,
    132}. A parameter that declares neither a sweep nor a domain has nothing to draw."""
    path = "kernels/persistent_gemm.tile"
    for hw, want in (("a100_sxm", [27, 54, 81, 108]), ("h200_sxm", [33, 66, 99, 132])):
        assert main(["explore", path, "--hw", hw, "--sweep", "NUM_SMS", "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["space"]["params"] == {"NUM_SMS": want}
    src = TINY.replace("param N = 1024 in 1..1048576", "param N = 1024")
    with pytest.raises(TfxError) as info:
        explore(parse_text(src, "tiny.tile"), None, H200, sweeps={"N": None})
    assert info.value.message == "N declares no sweep or domain: give its values (N=64,128 or 2..6)"
    assert str(info.value.where) == "--sweep N"


def test_a_bare_sweep_is_drawn_on_every_knob_points_machine(capsys):
    """--sweep NUM_SMS --knob-sweep hierarchy.sm.count=x0.5,x1 on h200_sxm: the declared sweep
    {units(sm) / 4, units(sm) / 2, units(sm) * 3 / 4, units(sm)} (integer division) is drawn on
    each point's machine, 66 SMs: 66 / 4 = 16, 66 / 2 = 33, 198 / 4 = 49, 66; 132 SMs: 33, 66,
    99, 132; the space holds their union, {16, 33, 49, 66, 99, 132}, each priced at both points
    (6 x 2 = 12 configurations). Before, the sweep was drawn once on the unknobbed 132 SMs, so
    the 66-SM point saw 99 and 132 and never 16 or 49. A knob sweep the sweep does not count
    (the DRAM bandwidth) leaves it as drawn on the profile."""
    path = "kernels/persistent_gemm.tile"
    assert main(["explore", path, "--hw", "h200_sxm", "--sweep", "NUM_SMS",
                 "--knob-sweep", "hierarchy.sm.count=x0.5,x1", "--top", "0", "--json"]) == 0
    space = json.loads(capsys.readouterr().out)["space"]
    assert space["params"] == {"NUM_SMS": [16, 33, 49, 66, 99, 132]}
    assert space["configs"] == 12
    assert main(["explore", path, "--hw", "h200_sxm", "--sweep", "NUM_SMS",
                 "--knob-sweep", "memory.gmem.bandwidth=x0.5,x1", "--top", "0", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["space"]["params"] == {"NUM_SMS": [33, 66, 99, 132]}


def test_the_explore_pane_sweeps_a_ticked_machine_sized_parameter():
    """Ticking NUM_SMS in the Explore pane sweeps its declared sweep on the pane's profile: h200_sxm's
    {132 / 4, 132 / 2, 132 x 3 / 4, 132} = {33, 66, 99, 132}, four configurations (before, the pane
    passed no values and build_space left the machine-sized parameter out: one configuration)."""
    from pathlib import Path

    from tfx.tui import core
    path = "kernels/persistent_gemm.tile"
    fixed = (("M", 8192), ("N", 8192), ("K", 8192), ("BM", 128), ("BN", 256), ("BK", 64), ("WARPS", 8),
             ("STAGES", 3))
    job = core.ExploreJob(path, Path(path).read_text(), "persistent_gemm", "h200_sxm", (), ("NUM_SMS",), fixed)
    out = core.run_explore(job)
    assert out.error is None and out.configs == 4
    assert sorted(e["params"]["NUM_SMS"] for e in out.top) == [33, 66, 99, 132]


@pytest.mark.parametrize("sweep, message", [
    # 132 - 200 = -68, outside 1..4096
    ("{units(sm) - 200}", "the sweep of NUM_SMS holds -68, outside its domain 1..4096"),
    # units(sm) - 132 is 0 on h200_sxm: named by where it is written, not the bare operator's message
    ("{units(sm) / (units(sm) - 132)}",
     "division by zero in the sweep of NUM_SMS (the divisor is 0 with these parameters)"),
    ("{units(cube)}", "units(cube): 'cube' is not a hierarchy level of hardware profile h200_sxm "
                      "(it has: device, sm, warp, thread)"),
])
def test_a_sweep_that_counts_the_machine_is_refused_at_its_place(tmp_path, sweep, message):
    text = open("kernels/persistent_gemm.tile").read()
    line = "  param NUM_SMS = units(sm) in 1..4096 sweep {units(sm) / 4, units(sm) / 2, units(sm) * 3 / 4, units(sm)}"
    assert line in text
    path = tmp_path / "pg.tile"
    path.write_text(text.replace(line, f"  param NUM_SMS = units(sm) in 1..4096 sweep {sweep}"))
    module = parse_file(path)
    k = module.kernel()
    from tfx.ir.bind import check_shapes
    with pytest.raises(TfxError) as info:
        check_shapes(module, k, bind(module, k, profile=H200))
    assert info.value.message == message
    assert info.value.where.line == 19
