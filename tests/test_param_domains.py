"""A parameter's domain (the values it may take) apart from its sweep (the values
``tfx explore`` draws): ``param M = 4096 in 1..1048576 sweep {512, ..., 16384}``.

``--set``, the explorer's edit dialog and ``tfx validate`` rows judge a value by the
domain; explore enumerates the sweep; a bare ``in {...}`` is both, as it always was.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tfx.cli.main import main
from tfx.errors import TfxError
from tfx.hw.profile import shipped_profile_with
from tfx.ir.bind import units_used
from tfx.ir.bind import (bind, check_set_values, check_shapes, domain_hint, domain_problem,
                         unset_domain_problem)
from tfx.ir.nodes import Domain
from tfx.lang import parse_file, parse_text, print_module

ROOT = Path(__file__).resolve().parent.parent
GEMM = str(ROOT / "kernels" / "gemm.tile")
GQA = str(ROOT / "kernels" / "gqa_decode.tile")
KERNELS = sorted((ROOT / "kernels").glob("*.tile"))

CANONICAL = """kernel k {
  param M = 4096 in 1..1048576 sweep {512, 1024, 2048}
  param S = 512 in 2..65536 step 2 sweep 64..1024 step x2
  param X = 3 sweep 1..4
  param BM = 128 in {64, 128}

  tensor A : bf16[M, BM] @gmem in

  mesh cta[cdiv(M, BM)] as (pm) capture(A) {
    %a = load A[pm * BM : BM, 0 : BM] -> smem
  }
}
"""


def refusal(capsys, *argv) -> str:
    rc = main([str(a) for a in argv])
    _, err = capsys.readouterr()
    assert rc == 2, err
    assert "Traceback" not in err
    return err.splitlines()[0]


def kernel_file(tmp_path, text: str) -> str:
    path = tmp_path / "k.tile"
    path.write_text(text)
    return str(path)


# ------------------------------------------------------------------ syntax

def test_domain_and_sweep_print_back_as_written_and_round_trip():
    module = parse_text(CANONICAL)
    assert print_module(module) == CANONICAL
    assert parse_text(print_module(module)) == module
    k = module.kernel(None)
    m, x, bm = k.param("M"), k.param("X"), k.param("BM")
    assert m.domain.describe({}) == "1..1048576" and m.sweep.describe({}) == "{512, 1024, 2048}"
    assert m.sweep_domain is m.sweep
    assert x.domain is None and x.sweep_domain.enumerate({}) == [1, 2, 3, 4]
    # a bare `in {...}` is both the domain and the sweep, as before
    assert bm.sweep is None and bm.sweep_domain is bm.domain


def test_sweep_is_not_reserved():
    # `sweep` is significant only after a parameter's default or domain: still a usable name
    module = parse_text("kernel k {\n  param sweep = 2 in {1, 2}\n  tensor A : f32[sweep] @gmem in\n"
                        "  mesh cta[1] as (c) capture(A) {\n    %a = load A[0 : sweep] -> smem\n  }\n}\n")
    assert module.kernel(None).param("sweep").domain.describe({}) == "{1, 2}"


@pytest.mark.parametrize("header, col, word", [
    # "  param M = 4096 sweep {512} " is 29 characters: the stray `in` at column 30
    ("param M = 4096 sweep {512} in 1..1048576", 30, "in"),
    # "  param M = 4096 in 1..1048576 sweep {512} " is 43 characters: the second sweep at 44
    ("param M = 4096 in 1..1048576 sweep {512} sweep {1024}", 44, "sweep"),
    # "  param M = 4096 in 1..1048576 " is 31 characters: the second `in` at 32
    ("param M = 4096 in 1..1048576 in 1..2", 32, "in"),
])
def test_domain_and_sweep_once_each_in_order(header, col, word):
    with pytest.raises(TfxError) as err:
        parse_text(f"kernel k {{\n  {header}\n}}\n", "t.tile")
    assert err.value.headline() == (f"t.tile:2:{col}: error: parameter M: {word!r} again or out of "
                                    "order: write param M = DEFAULT in DOMAIN sweep VALUES (each at most once)")


# ------------------------------------------------------------------ declaration checks

def test_sweep_value_outside_the_domain_is_refused_at_the_value(tmp_path, capsys):
    path = kernel_file(tmp_path, CANONICAL.replace("sweep {512, 1024, 2048}", "sweep {512, 2000000, 2048}"))
    # line 2 is `  param M = 4096 in 1..1048576 sweep {512, 2000000, 2048}`: the value
    # 2000000 starts after "  param M = 4096 in 1..1048576 sweep {512, " (43 characters), column 44
    assert refusal(capsys, "check", path) == (
        f"{path}:2:44: error: the sweep of M holds 2000000, outside its domain 1..1048576")


def test_sweep_range_outside_the_domain_names_its_first_stray_value(tmp_path, capsys):
    path = kernel_file(tmp_path, CANONICAL.replace("sweep 64..1024 step x2", "sweep 64..4096 step x2")
                       .replace("in 2..65536 step 2", "in 2..1000 step 2"))
    # 64, 128, 256, 512 lie in 2..1000 step 2; 1024 is the first past 1000. The sweep
    # starts after "  param S = 512 in 2..1000 step 2 sweep " (40 characters): column 41
    assert refusal(capsys, "check", path) == (
        f"{path}:3:41: error: the sweep of S holds 1024, outside its domain 2..1000 step 2")


def test_an_empty_domain_is_refused(tmp_path, capsys):
    path = kernel_file(tmp_path, CANONICAL.replace("in 1..1048576", "in 5..4"))
    # the parameter's name M is at column 9 of line 2
    assert refusal(capsys, "check", path) == f"{path}:2:9: error: the domain of M is empty (5..4): no value is valid"


def test_a_huge_bare_domain_is_refused_with_the_way_out(tmp_path, capsys):
    text = CANONICAL.replace("param X = 3 sweep 1..4", "param X = 3 in 1..1000000000")
    rc = main(["check", kernel_file(tmp_path, text)])
    err = capsys.readouterr().err
    assert rc == 2
    # 1..10^9 holds 10^9 values; a bare domain is also the sweep, capped at 10,000,000
    assert err.splitlines()[0].endswith(
        "the domain of X has 1,000,000,000 values (at most 10,000,000): too many values to sweep")
    assert "param X = ... in 1..1000000000 sweep {...}" in err


def test_a_domain_past_64_bits_is_refused(tmp_path, capsys):
    text = CANONICAL.replace("in 1..1048576", "in 1..pow2(62) * 4")
    path = kernel_file(tmp_path, text)
    assert refusal(capsys, "check", path) == (
        f"{path}:2:9: error: the domain of M holds a value that does not fit a 64-bit integer")


# ------------------------------------------------------------------ membership by arithmetic

def test_membership_in_a_2_to_the_40_range_never_lists_it(monkeypatch):
    text = (CANONICAL.replace("in 1..1048576", "in 1..1099511627776")
            .replace("  param S = 512 in 2..65536 step 2 sweep 64..1024 step x2\n", "")
            .replace("  param X = 3 sweep 1..4\n", ""))
    module = parse_text(text)
    k = module.kernel(None)

    def refuse_to_list(self, env):
        raise AssertionError("a domain was listed")
    monkeypatch.setattr(Domain, "iterate", refuse_to_list)
    monkeypatch.setattr(Domain, "enumerate", refuse_to_list)
    d = k.param("M").domain
    # 1..2^40: 2^40 = 1,099,511,627,776 values, counted and tested, never listed
    assert d.size({}) == 2 ** 40
    assert d.contains(2 ** 40, {}) and d.contains(480, {})
    assert not d.contains(0, {}) and not d.contains(2 ** 40 + 1, {})
    check_set_values(module, k, {"M": 2 ** 40 - 1})
    with pytest.raises(TfxError, match=r"M=0 is outside its declared domain 1\.\.1099511627776"):
        check_set_values(module, k, {"M": 0})
    # the declaration check: the sweep {512, 1024, 2048} against the range, by contains()
    check_shapes(module, k, bind(module, k))


def test_an_arithmetic_sweep_inside_an_arithmetic_domain_by_arithmetic(monkeypatch):
    monkeypatch.setattr(Domain, "iterate", lambda self, env: pytest.fail("listed"))

    def dom(text: str) -> Domain:
        return parse_text(f"kernel k {{\n  param P = 0 in {text}\n}}\n").kernel(None).param("P").domain
    # 0, 6, ..., 96 are multiples of 3 up to 1000: inside
    assert dom("0..100 step 6").first_outside(dom("0..1000 step 3"), {}) is None
    # 0 is a multiple of 6, the next value 4 is not
    assert dom("0..100 step 4").first_outside(dom("0..1000 step 6"), {}) == (4, None)
    # 3, 6, ..., 18 lie in 0..20 step 3; the first past 20 is 21
    assert dom("3..30 step 3").first_outside(dom("0..20 step 3"), {}) == (21, None)
    # 1 is below the domain's start 2
    assert dom("1..9").first_outside(dom("2..1099511627776"), {}) == (1, None)
    # 2^40 values from 2 in a domain of 2^40 + 1 values: inside, answered at once
    assert dom("2..1099511627777").first_outside(dom("1..1099511627777"), {}) is None


# ------------------------------------------------------------------ --set and explore

def test_set_inside_the_domain_outside_the_sweep_is_accepted(capsys):
    # kernels/gemm.tile: M in 1..1048576 sweep {512, ..., 16384}; 480 (a decode/prefill batch)
    # and 128 are not swept but valid
    for m in (480, 128):
        rc = main(["analyze", GEMM, "--hw", "h200_sxm", "--set", f"M={m}", "--json"])
        out, err = capsys.readouterr()
        assert rc == 0, err
        assert json.loads(out)["parameters"]["M"] == m


def test_set_outside_the_domain_names_the_domain(capsys):
    assert refusal(capsys, "analyze", GEMM, "--hw", "h200_sxm", "--set", "M=0") == (
        "--set M: error: M=0 is outside its declared domain 1..1048576")
    # a tile parameter keeps its set
    assert refusal(capsys, "analyze", GEMM, "--hw", "h200_sxm", "--set", "BM=100") == (
        "--set BM: error: BM=100 is outside its declared domain 16..512 step x2")


def test_a_default_left_outside_a_domain_that_names_a_set_parameter(capsys):
    # gqa_decode: param HQ = 64 in HKV..8192 step HKV; HKV = 3 leaves HQ = 64 (64 = 21 * 3 + 1)
    # outside 3..8192 step 3; with HQ = 24 = 8 * 3 both are valid
    assert refusal(capsys, "analyze", GQA, "--hw", "h200_sxm", "--set", "HKV=3") == (
        "--set HKV: error: with HKV=3, HQ=64 (its default) is outside its declared domain "
        "3..8192 step 3: set HQ too")
    module = parse_file(GQA)
    k = module.kernel(None)
    given = {"HKV": 3, "HQ": 24}
    assert unset_domain_problem(module, k, given, bind(module, k, given)) is None


def test_explore_draws_the_sweep_not_the_domain():
    from tfx.explore.space import build_space
    k = parse_file(GEMM).kernel(None)
    space = build_space(k, None, {}, None, None)
    drawn = dict(zip(space.names, (v.tolist() for v in space.values)))
    assert drawn["M"] == [512, 1024, 2048, 4096, 8192, 16384]
    assert drawn["BM"] == [16, 32, 64, 128, 256]
    # fixed at a value outside the sweep, M is not drawn at all
    space = build_space(k, None, {"M": 480}, None, None)
    assert "M" not in space.names


def test_edit_dialog_hint_shows_domain_and_sweep():
    module = parse_file(GEMM)
    k = module.kernel(None)
    env = bind(module, k)
    assert domain_hint(k, "M", env) == "declared domain 1..1048576, sweep {512, 1024, 2048, 4096, 8192, 16384}"
    assert domain_hint(k, "BM", env) == "declared domain 16..512 step x2, sweep {16, 32, 64, 128, 256}"
    assert domain_problem(k, "M", 480, env) is None
    kx = parse_text(CANONICAL).kernel(None)
    assert domain_hint(kx, "X", {}) == "any value, sweep 1..4"


def test_validate_row_outside_the_domain_is_refused_at_its_cell(tmp_path, capsys):
    csv = tmp_path / "m.csv"
    csv.write_text(f"kernel,profile,measured_ms,M,BM\n{GEMM},h200_sxm,0.1,480,128\n{GEMM},h200_sxm,0.1,480,100\n")
    from tfx.analysis.measured import read_measurements
    with pytest.raises(TfxError) as err:
        read_measurements(csv)
    # the third line's BM cell, the fifth column
    assert err.value.headline() == (f"{csv}:3:5: error: BM=100 is outside its declared domain "
                                    "16..512 step x2")


# ------------------------------------------------------------------ shipped kernels

@pytest.mark.parametrize("path", KERNELS, ids=[p.stem for p in KERNELS])
def test_shipped_domains_are_honest(path):
    """Every value a shipped kernel's domain admits apart from its sweep (problem sizes, and
    tile parameters whose valid range is wider than what explore draws: a measured Triton
    config may use any power-of-two block or warp count) passes the checks an analysis
    makes: its smallest, an odd one (or lo * step^2 for a geometric range) and a large one."""
    module = parse_file(path)
    for k in module.kernels:
        # the chip a kernel that counts one is built for (units(sm): h200_sxm; cube, pe: sip)
        levels = units_used(module, k)
        hw = shipped_profile_with(levels) if levels else None
        defaults = bind(module, k, profile=hw)
        for p in k.params:
            if p.sweep is None:
                continue
            lo = p.domain.extremes(defaults)[0]
            step = int(p.domain.step.evaluate(defaults)) if p.domain.step is not None else 1
            hi = p.domain.extremes(defaults)[1]
            if p.domain.geometric:     # tile sizes, warps: lo, lo * step^2 and the largest
                values = (lo, lo * step * step, hi)
            else:
                values = (lo, lo + 3 * step, lo + (hi - lo) // step // 2 * step)
            for v in values:
                assert p.domain.contains(v, defaults)
                given = {p.name: v}
                # a parameter whose domain names this one (HQ in HKV..8192 step HKV) takes
                # its domain's smallest value
                found = unset_domain_problem(module, k, given, bind(module, k, given, profile=hw))
                if found is not None:
                    other = next(q for q in k.params if q.domain is not None and p.name in q.domain.free_names())
                    given[other.name] = other.domain.extremes(bind(module, k, given, profile=hw))[0]
                check_set_values(module, k, given, profile=hw)
                check_shapes(module, k, bind(module, k, given, profile=hw))
