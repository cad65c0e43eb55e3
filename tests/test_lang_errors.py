"""The refusal table: one bad input per kind of error, with its exact message and place.

Each case is a small .tile text; the test asserts the message fragment AND the
``line:col`` the error points at (a caret under the wrong token is a bug too).
The same refusals through ``tfx check`` exit 2 with one ``file:line:col: error:`` line.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from tfx.cli.main import main
from tfx.errors import SourceLocation, TfxError
from tfx.ir.bind import bind, check_shapes
from tfx.ir.levels import check_levels
from tfx.lang import parse_file, parse_text

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "lang"
KERNELS = Path(__file__).resolve().parent.parent / "kernels"

# Line 7, column 5 is where BODY's first statement starts.
TEMPLATE = """kernel k {
  param N = 64
  tensor X : f32[N, N] @gmem in
  tensor H : bf16[N, N] @gmem in
  tensor Y : f32[N, N] @gmem out
  mesh cta[1] as (p) capture(X, H, Y) {
BODY
  }
}
"""


def body(*lines: str) -> str:
    return TEMPLATE.replace("BODY", "\n".join("    " + l for l in lines))


CASES = [
    # ---- syntax
    ("unexpected token", "kernel k {\n  param = 3\n}\n",
     (2, 9), "expected a parameter name, found '='"),
    ("unclosed kernel brace", "kernel k {\n  param N = 4\n",
     (3, 1), "expected '}' to close kernel 'k'"),
    ("unclosed region brace", body("loop i = 0 to 4 capture() {").rsplit("  }\n}\n", 1)[0],
     (8, 1), "expected '}' to close the region"),
    ("unexpected character", "kernel k {\n  param N = 4 $\n}\n",
     (2, 15), "unexpected character '$'"),
    ("invalid integer literal", "kernel k {\n  param N = 007\n}\n",
     (2, 13), "invalid integer literal '007'"),
    ("expression nested too deep", "kernel k {\n  param N = " + "(" * 120 + "1" + ")" * 120 + "\n}\n",
     (2, 113), "expression nests more than 100 deep"),
    ("no kernel", "// nothing here\n",
     (1, 1), "expected at least one kernel, found none"),
    # ---- unknown things
    ("unknown op", body("%a = frobnicate %b"),
     (7, 10), "unknown op 'frobnicate'"),
    ("unknown dtype", "kernel k {\n  param N = 4\n  tensor Z : f17[N] @gmem in\n}\n",
     (3, 14), "unknown dtype 'f17', expected one of: f64, f32, tf32, bf16, f16, fp8e4m3"),
    ("unknown storage level", body("%a = load X[:, :] -> vram"),
     (7, 5), "unknown storage level 'vram', expected one of: gmem, hbm, l2, rmem, smem, tcm"),
    ("unknown mesh level", body("mesh block[4] as (b) capture() {", "}"),
     (7, 5), "unknown mesh level 'block', expected one of: cluster, cta, cube, pe, sip, thread, warp, warpgroup"),
    ("unknown name in an expression", body("%a = load X[0 : M, :] -> smem"),
     (7, 21), "unknown name 'M' in the window on X: expected a parameter, let, mesh coordinate or loop variable"),
    ("unknown function", body("%a = load X[0 : ceil(N, 2), :] -> smem"),
     (7, 21), "unknown function 'ceil', expected one of: cdiv, min, max, log2, pow2"),
    ("unknown value", body("%a = exp %nothing"),
     (7, 14), "unknown value %nothing"),
    # ---- types (symbolic, at parse time)
    ("mma dtype mismatch", body("%a = load H[:, :] -> smem", "%b = load X[:, :] -> smem",
                                "%c = zeros f32[N, N] @rmem", "%d = mma %a, %b, %c"),
     (10, 5), "mma operand dtypes differ: bf16 and f32"),
    ("wrong accumulator dtype", body("%a = load H[:, :] -> smem", "%c = zeros bf16[N, N] @rmem",
                                     "%d = mma %a, %a, %c"),
     (9, 5), "mma on bf16 accumulates in f32, found bf16"),
    ("elementwise dtype mismatch", body("%a = load X[:, :] -> rmem", "%b = load H[:, :] -> rmem",
                                        "%c = mul %a, %b"),
     (9, 5), "mul operand dtypes differ: f32 and bf16"),
    ("store dtype mismatch", body("%a = load H[:, :] -> rmem", "store %a -> Y[:, :]"),
     (8, 5), "store of bf16 into Y of f32: cast first"),
    ("number where a tile is needed", body("%a = cast 1.5 to bf16"),
     (7, 15), "cast takes a tile (%value or tensor window), found the number 1.5"),
    # ---- shapes (need parameter values: check_shapes)
    ("mma shape mismatch", body("%a = load H[:, :] -> smem", "%b = load H[0 : 32, :] -> smem",
                                "%c = zeros f32[N, N] @rmem", "%d = mma %a, %b, %c"),
     (10, 5), "mma shapes do not agree: a[64, 64] x b[32, 64] -> acc[64, 64] (expected a[M,K], b[K,N], acc[M,N])"),
    ("elementwise shape mismatch", body("%a = load X[:, :] -> rmem", "%b = load X[0 : 32, :] -> rmem",
                                        "%c = add %a, %b"),
     (9, 5), "add shapes differ: [64, 64] and [32, 64]; broadcast first"),
    ("store shape mismatch", body("%a = load X[0 : 32, :] -> rmem", "store %a -> Y[:, :]"),
     (8, 5), "store of a [32, 64] tile into a [64, 64] window of Y"),
    ("static window out of bounds", body("%a = load X[N - 16 : 32, :] -> rmem"),
     (7, 15), "window on X axis 0 reads [48, 79] but the axis has 64 elements"),
    # ---- regions
    ("region not isolated: value", body("%a = load X[:, :] -> smem", "loop i = 0 to 4 capture(Y) {",
                                        "  store %a -> Y[:, :]", "}"),
     (9, 13), "region is not isolated: %a is used here but the loop i at line 8 does not capture it (defined at line 7)"),
    ("region not isolated: tensor", body("loop i = 0 to 4 capture() {", "  %a = load X[i * 16 : 16, :] -> smem", "}"),
     (8, 17), "region is not isolated: X is used here but the loop i at line 7 does not capture it (defined at line 3)"),
    ("region not isolated: coordinate", body("loop i = 0 to 4 capture(X) {", "  %a = load X[p * 16 : 16, :] -> smem", "}"),
     (8, 19), "region is not isolated: p is used here but the loop i at line 7 does not capture it (defined at line 6)"),
    ("missing capture clause", body("loop i = 0 to 4 {", "}"),
     (7, 21), "expected 'capture(...)': every region lists what it takes from outside, found '{'"),
    ("trip count depends on a coordinate without bound", body("loop i = 0 to p + 1 capture() {", "}"),
     (7, 5), "loop i's trip count depends on p: state an upper bound with 'bound EXPR'"),
    ("capturing a parameter", body("loop i = 0 to 4 capture(N) {", "}"),
     (7, 29), "N is a parameter: parameters are visible everywhere and are not captured"),
    # ---- duplicates
    ("duplicate parameter", "kernel k {\n  param N = 4\n  param M = 8\n  param N = 16\n}\n",
     (4, 9), "duplicate name 'N' (first defined at line 2)"),
    ("duplicate value", body("%a = load X[:, :] -> rmem", "%a = load X[:, :] -> rmem"),
     (8, 5), "duplicate name %a (first defined at line 7)"),
    ("duplicate tensor", "kernel k {\n  param N = 4\n  tensor X : f32[N] @gmem in\n  tensor X : f32[N] @gmem out\n}\n",
     (4, 10), "duplicate name 'X' (first defined at line 3)"),
    ("parameter used before its definition", "kernel k {\n  param A = 2 * B\n  param B = 4\n}\n",
     (2, 17), "B is used in the default of A before it is defined: parameter defaults may use only earlier parameters"),
    ("duplicate kernel", "kernel k {\n  param N = 4\n}\n\nkernel k {\n  param N = 8\n}\n",
     (5, 1), "duplicate kernel name 'k' (first defined at line 1)"),
]


def refuse(text: str, filename: str = "bad.tile") -> TfxError:
    with pytest.raises(TfxError) as info:
        module = parse_text(text, filename)
        for kernel in module.kernels:
            check_shapes(module, kernel, bind(module, kernel))
    return info.value


@pytest.mark.parametrize("text, where, message", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_refusal(text, where, message):
    err = refuse(text)
    assert message in err.message
    assert isinstance(err.where, SourceLocation)
    assert (err.where.file, err.where.line, err.where.col) == ("bad.tile", *where)
    # The rendered error quotes the offending line with a caret under the column.
    rendered = err.render().split("\n")
    assert rendered[0] == f"bad.tile:{where[0]}:{where[1]}: error: {err.message}"
    if len(rendered) > 2 and rendered[2].strip() == "^":
        line = text.split("\n")[where[0] - 1]
        echoed, caret = rendered[1][2:], rendered[2].index("^") - 2
        if len(line) <= 120:  # ECHO_MAX_CHARS: shorter lines are echoed whole
            assert echoed == line and caret == where[1] - 1
        else:  # a longer line is cut around the caret, which still points at the same character
            assert len(echoed) <= 120 + 6 and echoed[caret] == line[where[1] - 1]


def test_every_kind_in_the_brief_is_in_the_table():
    names = {c[0] for c in CASES}
    for kind in ("unexpected token", "unclosed kernel brace", "unexpected character", "unknown op",
                 "unknown dtype", "unknown storage level", "unknown mesh level",
                 "unknown name in an expression", "unknown function", "mma shape mismatch",
                 "mma dtype mismatch", "wrong accumulator dtype", "elementwise shape mismatch",
                 "elementwise dtype mismatch", "store shape mismatch", "store dtype mismatch",
                 "static window out of bounds", "region not isolated: value",
                 "region not isolated: tensor", "region not isolated: coordinate",
                 "duplicate parameter", "duplicate value", "duplicate tensor", "duplicate kernel",
                 "missing capture clause", "trip count depends on a coordinate without bound"):
        assert kind in names


def test_isolation_error_notes_the_fix():
    err = refuse(body("%a = load X[:, :] -> smem", "loop i = 0 to 4 capture(Y) {",
                      "  store %a -> Y[:, :]", "}"))
    assert err.notes == ("add %a to the capture(...) list of the loop i at line 8",)


# ------------------------------------------------------------------ --set and bind

def test_set_of_an_unknown_name_suggests_a_close_one():
    module = parse_file(KERNELS / "gemm.tile")
    with pytest.raises(TfxError) as info:
        bind(module, module.kernel(), {"BKK": 32})
    assert info.value.where == "--set BKK"
    assert info.value.message == ("kernel gemm has no parameter 'BKK' (parameters: M, N, K, BM, BN, BK, "
                                  "WARPS, STAGES, GROUP_M); did you mean BK?")


def test_set_of_a_let_is_refused():
    module = parse_file(KERNELS / "persistent_gemm.tile")
    with pytest.raises(TfxError) as info:
        bind(module, module.kernel(), {"TILES": 4})
    assert info.value.message == "TILES is derived (let TILES = ...) and cannot be set"


def test_a_set_value_can_make_shapes_disagree():
    module = parse_file(FIXTURES / "mma_shape_mismatch.tile")
    k = module.kernel()
    with pytest.raises(TfxError) as info:
        check_shapes(module, k, bind(module, k))
    assert (info.value.where.line, info.value.where.col) == (16, 5)
    check_shapes(module, k, bind(module, k, {"BK2": 64}))


# ------------------------------------------------------------------ levels against a profile

def fake_profile(name, memory, meshes):
    levels = {m: SimpleNamespace(aliases=tuple(aliases)) for m, aliases in memory.items()}
    return SimpleNamespace(name=name, memory_levels=lambda: levels, mesh_levels=lambda: dict(meshes))


GPU = fake_profile("fake_gpu", {"gmem": ["hbm"], "l2": [], "smem": ["shared"], "rmem": []},
                   {"cta": "sm", "warp": "warp", "thread": "thread"})
SIP = fake_profile("fake_sip", {"hbm": [], "tcm": []}, {"cube": "cube", "pe": "pe"})


def test_levels_the_profile_has_pass():
    for name, profile in (("gemm.tile", GPU), ("flash_prefill.tile", GPU), ("sip_gemm.tile", SIP)):
        module = parse_file(KERNELS / name)
        for k in module.kernels:
            check_levels(module, k, profile)


def test_an_alias_counts_as_the_level():
    # hbm is an alias of gmem in GPU profiles.
    module = parse_text(body("%a = load X[:, :] -> smem").replace("@gmem", "@hbm"), "alias.tile")
    check_levels(module, module.kernel(), GPU)
    with pytest.raises(TfxError) as info:
        check_levels(module, module.kernel(), fake_profile("no_alias", {"gmem": [], "smem": []}, {"cta": "sm"}))
    assert info.value.message.startswith("storage level 'hbm' (tensor X) is not in hardware profile no_alias")
    assert (info.value.where.line, info.value.where.col) == (3, 10)


def test_storage_level_not_in_profile():
    module = parse_file(KERNELS / "sip_gemm.tile")
    with pytest.raises(TfxError) as info:
        check_levels(module, module.kernel(), fake_profile("fake", {"hbm": []}, {"cube": "c", "pe": "p"}))
    err = info.value
    assert err.message == "storage level 'tcm' (zeros) is not in hardware profile fake (it has: hbm)"
    assert (err.where.line, err.where.col) == (33, 9)


def test_mesh_level_not_in_profile_comes_first_in_source_order():
    module = parse_file(KERNELS / "sip_gemm.tile")
    with pytest.raises(TfxError) as info:
        check_levels(module, module.kernel(), GPU)
    err = info.value
    assert err.message == "mesh level 'cube' is not in hardware profile fake_gpu (it has: cta, thread, warp)"
    assert (err.where.line, err.where.col) == (30, 3)


def test_a_moved_capture_names_its_level():
    module = parse_file(KERNELS / "gqa_decode.tile")
    no_rmem = fake_profile("no_rmem", {"gmem": [], "smem": []}, {"cta": "sm"})
    with pytest.raises(TfxError) as info:
        check_levels(module, module.kernel(), no_rmem)
    assert info.value.message.startswith("storage level 'rmem' (fill) is not in hardware profile no_rmem")


# ------------------------------------------------------------------ through the CLI

def first_error_line(capsys):
    err = capsys.readouterr().err
    return err.split("\n")[0]


def test_cli_exit_2_with_one_located_first_line(capsys):
    path = str(FIXTURES / "not_isolated.tile")
    assert main(["check", path]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.split("\n")
    assert lines[0] == (f"{path}:13:17: error: region is not isolated: A is used here but the loop k "
                        "at line 12 does not capture it (defined at line 7)")
    assert re.match(r"^\S+:\d+:\d+: error: ", lines[0])
    assert sum(": error: " in l for l in lines) == 1


@pytest.mark.parametrize("name, text, where, message", [CASES[i] for i in (0, 3, 9, 19, 23)],
                         ids=[CASES[i][0] for i in (0, 3, 9, 19, 23)])
def test_cli_refusals_point_at_the_same_place(tmp_path, capsys, name, text, where, message):
    path = tmp_path / "bad.tile"
    path.write_text(text)
    assert main(["check", str(path)]) == 2
    line = first_error_line(capsys)
    assert line.startswith(f"{path}:{where[0]}:{where[1]}: error: ")
    assert message in line


def test_cli_shape_error_after_set(capsys):
    path = str(FIXTURES / "mma_shape_mismatch.tile")
    assert main(["check", path, "--set", "BK2=64"]) == 0
    assert capsys.readouterr().out == f"{path}: ok (1 kernel: mismatched_k)\n"
    assert main(["check", path]) == 2
    assert first_error_line(capsys).startswith(f"{path}:16:5: error: mma shapes do not agree")


def test_cli_set_unknown_name(capsys):
    path = str(KERNELS / "gemm.tile")
    assert main(["check", path, "--set", "BKK=32"]) == 2
    assert first_error_line(capsys) == (
        "--set BKK: error: kernel gemm has no parameter 'BKK' (parameters: M, N, K, BM, BN, BK, "
        "WARPS, STAGES, GROUP_M); did you mean BK?")


def test_cli_set_malformed_and_non_integer(capsys):
    path = str(KERNELS / "gemm.tile")
    assert main(["check", path, "--set", "BK"]) == 2
    assert first_error_line(capsys) == "--set: error: expected NAME=VALUE, found 'BK'"
    assert main(["check", path, "--set", "BK=sixty"]) == 2
    assert first_error_line(capsys) == "--set BK: error: expected an integer, found 'sixty'"


def test_cli_set_applies_to_the_kernels_that_have_the_parameter(capsys):
    path = str(FIXTURES / "two_kernels.tile")
    assert main(["check", path, "--set", "W=32", "--set", "R=256"]) == 0
    assert capsys.readouterr().out == f"{path}: ok (2 kernels: scale_rows, halves)\n"
    # With --kernel only that kernel's parameters may be set.
    assert main(["check", path, "--kernel", "halves", "--set", "W=32"]) == 2
    assert first_error_line(capsys) == "--set W: error: kernel halves has no parameter 'W' (parameters: R)"


def test_cli_unknown_kernel_and_missing_file(capsys, tmp_path):
    path = str(FIXTURES / "two_kernels.tile")
    assert main(["check", path, "--kernel", "nope"]) == 2
    assert first_error_line(capsys) == f"{path}: error: no kernel named 'nope' (this file has: scale_rows, halves)"
    missing = str(tmp_path / "missing.tile")
    assert main(["check", missing]) == 2
    assert first_error_line(capsys) == f"{missing}: error: no such file"


def test_cli_ok_lines_and_print(capsys):
    paths = [str(KERNELS / "gemm.tile"), str(KERNELS / "sip_decode_attention.tile")]
    assert main(["check", *paths]) == 0
    assert capsys.readouterr().out == (
        f"{paths[0]}: ok (1 kernel: gemm)\n"
        f"{paths[1]}: ok (3 kernels: decode_attention_single_op, decode_attention_block_composites, "
        "decode_attention_composite); shapes of decode_attention_single_op, "
        "decode_attention_block_composites, decode_attention_composite not checked: units(cube), "
        "units(pe) are counts of the hardware profile (add --hw PROFILE)\n")
    assert main(["check", paths[0], "--print"]) == 0
    captured = capsys.readouterr()
    assert captured.err == f"{paths[0]}: ok (1 kernel: gemm)\n"
    assert parse_text(captured.out) == parse_file(paths[0])
    assert captured.out.startswith("// Triton-style tiled GEMM")


def test_cli_print_one_kernel(capsys):
    path = str(KERNELS / "sip_decode_attention.tile")
    assert main(["check", path, "--print", "--kernel", "decode_attention_composite"]) == 0
    out = capsys.readouterr().out
    module = parse_text(out)
    assert [k.name for k in module.kernels] == ["decode_attention_composite"]
    assert "composite attn_block {" in out


def test_cli_hw_refuses_levels_the_profile_lacks(capsys):
    pytest.importorskip("tfx.hw")
    path = str(KERNELS / "sip_gemm.tile")
    assert main(["check", path, "--hw", "h200_sxm"]) == 2
    # the first use of a level h200_sxm lacks, in source order: line 20's `let CUBES =
    # units(cube)` (column 15, the call), before line 30's `mesh cube[CUBES]`
    assert first_error_line(capsys) == (
        f"{path}:20:15: error: units(cube): 'cube' is not a hierarchy level of hardware profile "
        "h200_sxm (it has: device, sm, warp, thread)")
    assert main(["check", str(KERNELS / "gemm.tile"), "--hw", "h200_sxm"]) == 0
