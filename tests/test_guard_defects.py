"""Issue 13: one regression test per defect that reached a traceback, a hang or a silent
absurdity. Each runs the CLI in-process and asserts the exit status and the one error line
(the refusals name the file:line:col or file:key, or the flag, and the rule)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tfx.cli.main import main
from tfx.errors import TfxError, echo_window

ROOT = Path(__file__).resolve().parent.parent
GEMM = str(ROOT / "kernels" / "gemm.tile")
SIP = ROOT / "hw_profiles" / "sip.toml"


def run(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def refused(capsys, *argv) -> list[str]:
    """The stderr lines of a refusal: exit 2, no traceback, a first line with 'error:'."""
    rc, _, err = run(capsys, *argv)
    assert rc == 2, err
    assert "Traceback" not in err
    lines = err.rstrip("\n").split("\n")
    assert "error:" in lines[0]
    return lines


def one_line(capsys, *argv) -> str:
    lines = refused(capsys, *argv)
    assert len(lines) == 1, lines
    return lines[0]


def kernel(tmp_path, body: str, name: str = "k.tile") -> str:
    path = tmp_path / name
    path.write_text(body)
    return str(path)


MESH_KERNEL = """kernel k {{
  param N = 64
  tensor X : f32[N] @gmem in
  mesh cta[4] as (p) capture(X) {{
{body}
  }}
}}
"""


# ------------------------------------------------------------------ 1: a zero divisor

def test_1_window_divided_by_zero_is_refused_by_check_with_location(tmp_path, capsys):
    path = kernel(tmp_path, MESH_KERNEL.format(body="    %a = load X[p * 16 / 0 : 16] -> smem"))
    for argv in (["check", path], ["analyze", path, "--hw", "h200_sxm"],
                 ["simulate", path, "--hw", "h200_sxm"], ["explore", path, "--hw", "h200_sxm"]):
        lines = refused(capsys, *argv)
        # the '/' is column 24 of line 5: "    %a = load X[p * 16 / 0 : 16] -> smem"
        assert lines[0] == f"{path}:5:24: error: division by zero in the window on X"
        assert lines[2].index("^") - 2 == 23


def test_1_divisor_zero_only_with_parameters_is_refused_under_them(tmp_path, capsys):
    body = MESH_KERNEL.replace("param N = 64", "param N = 64\n  param D = 4").format(
        body="    %a = load X[p * 16 / D : 16] -> smem")
    path = kernel(tmp_path, body)
    assert run(capsys, "check", path)[0] == 0
    lines = refused(capsys, "check", path, "--set", "D=0")
    assert lines[0].startswith(f"{path}:6:24: error: division by zero in the window on X")


# ------------------------------------------------------------------ 2: zero-trip loops

@pytest.mark.parametrize("bounds", ["0 to 0", "1 to 0"])
def test_2_zero_trip_loop_is_refused_by_check(tmp_path, capsys, bounds):
    body = MESH_KERNEL.format(body=f"    loop i = {bounds} capture(X) {{\n"
                                   "      %a = load X[0 : N] -> smem\n    }")
    path = kernel(tmp_path, body)
    for argv in (["check", path], ["analyze", path, "--hw", "h200_sxm"]):
        lines = refused(capsys, *argv)
        assert lines[0].startswith(f"{path}:5:5: error: loop i = {bounds} runs 0 times")


def test_2_loop_with_no_trip_at_any_position_is_well_defined(tmp_path, capsys):
    """Bounds that vary per position but meet everywhere (p to p): check cannot refuse it
    without the positions, and the analysis gives it no time instead of dividing by its 0
    trips. Only the mesh's launch remains: analyze and simulate exit 0."""
    body = MESH_KERNEL.format(body="    loop i = p to p bound 1 capture(X) {\n"
                                   "      %a = load X[0 : 16] -> smem\n    }")
    path = kernel(tmp_path, body)
    for argv in (["analyze", path, "--hw", "h200_sxm"], ["simulate", path, "--hw", "h200_sxm"]):
        rc, _, err = run(capsys, *argv)
        assert rc == 0, err


# ------------------------------------------------------------------ 3: zero threads

def test_3_warps_zero_is_outside_the_domain(capsys):
    for cmd in ("analyze", "simulate"):
        line = one_line(capsys, cmd, GEMM, "--hw", "h200_sxm", "--set", "WARPS=0")
        assert line == "--set WARPS: error: WARPS=0 is outside its declared domain 1..32 step x2"
    line = one_line(capsys, "analyze", GEMM, "--hw", "h200_sxm", "--set", "WARPS=-4")
    assert line == "--set WARPS: error: WARPS=-4 is outside its declared domain 1..32 step x2"


def test_3_attr_threads_zero_is_refused_by_check(tmp_path, capsys):
    path = kernel(tmp_path, Path(GEMM).read_text().replace("attr threads = 32 * WARPS", "attr threads = 0"))
    lines = refused(capsys, "check", path)
    assert lines[0].startswith(f"{path}:17:8: error: attr threads = 0: expected 1..")


def test_3_sweep_to_zero_threads_names_the_attribute_without_warnings(capsys):
    line = one_line(capsys, "explore", GEMM, "--hw", "h200_sxm", "--sweep", "WARPS=0,4")
    assert line == (f"{GEMM}:17:8: error: attr threads is 0 for some swept values; every "
                    "configuration needs at least 1 thread per CTA")


# ------------------------------------------------------------------ 4, 5, 6: facts out of range

@pytest.mark.parametrize("knob, message", [
    ("hbm.bandwidth=1e-320", "bandwidth must be at least 1,000 B/s"),
    ("hbm.bandwidth=x1e-320", "bandwidth must be at least 1,000 B/s"),   # 4.8e12 x 1e-320
    ("hbm.bandwidth=/1e308", "bandwidth must be at least 1,000 B/s"),    # 4.8e12 / 1e308
    ("clock.core=1e-300", "core must be at least 1,000,000 Hz"),
    ("compute.tensor.bf16=1e-320", "bf16 must be at least 0.001 flop/cycle"),
    ("gmem.efficiency=1e-320", "efficiency must be at least 0.001"),
    ("hierarchy.sm.count=1180591620717411303424", "does not fit a 64-bit integer"),  # 2**70
    ("occupancy.max_blocks_per_sm=1180591620717411303424", "does not fit a 64-bit integer"),
    ("hierarchy.sm.count=16777217", "count must be at most 16,777,216"),  # 2**24 + 1
    ("occupancy.max_blocks_per_sm=x1e9", "max_blocks_per_sm must be at most 16,777,216"),
])
def test_4_6_facts_outside_the_sane_envelope_are_refused(capsys, knob, message):
    path = knob.split("=")[0]
    for cmd in (["analyze", GEMM], ["explore", GEMM]):
        line = one_line(capsys, *cmd, "--hw", "h200_sxm", "--knob", knob)
        assert line.startswith(f"--knob {path}: error: {message}"), line
    # model latency prices at the measured bandwidth: a factor knob on it is applied to that
    line = one_line(capsys, "model", "latency", "--model", "llama3.2-1b", "--hw", "h200_sxm", "--knob", knob)
    assert line.startswith(f"--knob {path}: error: ") and message.split(" must")[-1] in line, line


def test_4_tiny_fact_in_a_profile_file_is_refused_by_key(tmp_path, capsys):
    text = (ROOT / "hw_profiles" / "h200_sxm.toml").read_text()
    assert "value = 4.8, unit = \"TB/s\"" in text
    path = tmp_path / "tiny.toml"
    path.write_text(text.replace("value = 4.8, unit = \"TB/s\"", "value = 1e-320, unit = \"TB/s\"", 1))
    line = one_line(capsys, "hw", "show", path)
    # 1e-320 TB/s is about 1e-308 B/s (subnormal: 9.99989e-309)
    assert line.endswith("tiny.toml:memory.gmem.bandwidth.value: error: bandwidth must be at least 1,000 B/s, "
                         "got 9.99989e-309 B/s")     # the canonical value in its canonical unit


def test_5_fewer_threads_per_sm_than_a_warp_is_refused(capsys):
    line = one_line(capsys, "analyze", GEMM, "--hw", "h200_sxm", "--knob", "occupancy.max_threads_per_sm=1")
    assert line.endswith("error: occupancy limit max_threads_per_sm (1) is below threads_per_warp (32): "
                         "an SM would hold no warp")


# ------------------------------------------------------------------ 7, 8: domains

def test_7_domain_value_above_64_bits_is_refused_by_check(tmp_path, capsys):
    text = Path(GEMM).read_text().replace("param GROUP_M = 8 in 1..64 sweep {1, 4, 8, 16}",
                                          "param GROUP_M = 8 in {1, pow2(62) * pow2(62)}")
    path = kernel(tmp_path, text)
    for argv in (["check", path], ["explore", path, "--hw", "h200_sxm"]):
        lines = refused(capsys, *argv)
        assert lines[0] == (f"{path}:15:9: error: the domain of GROUP_M holds a value that does not "
                            "fit a 64-bit integer")


def test_8_huge_declared_domain_is_refused_like_a_sweep(tmp_path, capsys):
    text = Path(GEMM).read_text().replace("param STAGES = 3 in 1..8 sweep 1..6", "param STAGES = 3 in 1..1000000000")
    path = kernel(tmp_path, text)
    lines = refused(capsys, "explore", path, "--hw", "h200_sxm")
    # 1..1000000000 holds 1,000,000,000 values; the ceiling is 10,000,000 (MAX_DOMAIN_VALUES)
    assert lines[0] == (f"{path}:14:9: error: the domain of STAGES has 1,000,000,000 values (at most "
                        "10,000,000): too many values to sweep")


def test_8_empty_declared_domain_is_refused(tmp_path, capsys):
    # found by bench/fuzz.py seed 23: 1..0 holds no value and explore reduced an empty array
    text = Path(GEMM).read_text().replace("param WARPS = 4 in 1..32 step x2 sweep {2, 4, 8}", "param WARPS = 4 in 1..0")
    path = kernel(tmp_path, text)
    for argv in (["check", path], ["explore", path, "--hw", "h200_sxm"]):
        lines = refused(capsys, *argv)
        assert lines[0] == f"{path}:13:9: error: the domain of WARPS is empty (1..0): nothing to sweep"


def test_8_space_above_the_configuration_ceiling_is_refused(capsys):
    # 5,000 x 5,000 = 25,000,000 configurations > MAX_CONFIGS = 20,000,000
    line = one_line(capsys, "explore", GEMM, "--hw", "h200_sxm", "--sweep", "M=1..5000",
                    "--sweep", "N=1..5000")
    assert "the space has 25,000,000 configurations (at most 20,000,000" in line


# ------------------------------------------------------------------ 9: bounded simulation

def test_9_simulate_refuses_past_its_budget_with_the_ways_out(tmp_path, capsys):
    # K without a domain: K = 2^40 gives 2^40 / 64 = 2^34 trips x 3 commands per position
    path = kernel(tmp_path, Path(GEMM).read_text().replace(
        "param K = 4096 in 1..1048576 sweep {512, 1024, 2048, 4096, 8192, 16384}", "param K = 4096"))
    line = one_line(capsys, "simulate", path, "--hw", "h200_sxm", "--set", f"K={2 ** 40}")
    assert "above the budget of 500,000; --tiles 8" in line and "--max-events" in line
    rc, out, _ = run(capsys, "simulate", path, "--hw", "h200_sxm", "--set", f"K={2 ** 40}", "--tiles", "8",
                     "--json", "--no-events")
    assert rc == 0 and json.loads(out)["makespan_ns"] > 0


def test_9_estimate_is_exact_for_gemm(tmp_path):
    """gemm (defaults) on h200_sxm, representative mode. One position: K / BK = 4096 / 64 =
    64 trips of two loads and an mma = 192 commands, plus zeros, cast and store = 195.
    Shared memory per CTA: STAGES x (BM x BK + BK x BN) x 2 B = 3 x (8192 + 8192) x 2 =
    98,304 B, so 2 CTAs per SM; 32 x 32 = 1,024 positions over 132 SMs x 2 = 264 slots:
    3 full waves and a tail of 1,024 - 792 = 232 = cdiv(232, 132) = 2 per SM. simulate runs
    a full-wave batch of 2 positions and a tail batch of 2: 195 x (2 + 2) = 780."""
    from tfx.analysis.analyze import analyze
    from tfx.hw import load_profile
    from tfx.lang import parse_file
    from tfx.sim import simulate
    from tfx.sim.run import estimated_events
    a = analyze(parse_file(GEMM), None, load_profile("h200_sxm"))
    assert estimated_events(a) == 780
    assert simulate(a, events=False).n_events == 780


def test_9_dma_channels_have_a_ceiling(capsys):
    line = one_line(capsys, "simulate", ROOT / "kernels" / "sip_gemm.tile", "--hw", "sip",
                    "--knob", "dma.channels=1099511627776")
    assert line.startswith("--knob dma.channels: error: channels must be at most 4,096")


# ------------------------------------------------------------------ 10, 25: written files

def test_10_25_unwritable_outputs_and_atomic_replacement(tmp_path, capsys):
    line = one_line(capsys, "explore", GEMM, "--hw", "h200_sxm", "--csv", "/nonexistent/x.csv")
    assert line == "/nonexistent/x.csv: error: cannot write the CSV: no such directory '/nonexistent'"
    out = tmp_path / "r.json"
    out.write_text("old")
    assert run(capsys, "model", "latency", "--model", "llama3.2-1b", "--save", out)[0] == 0
    assert json.loads(out.read_text())["model"] == "llama3.2-1b"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no temp file left behind


# ------------------------------------------------------------------ 11: occupancy CSV

def test_11_occupancy_csv_cell_above_its_ceiling(tmp_path, capsys):
    src = tmp_path / "c.csv"
    src.write_text("threads,regs,smem\n128,32,0\n99999999999999999999999,32,0\n")
    line = one_line(capsys, "occupancy", "--csv", src)
    assert line == (f"{src}:3: error: column threads: '99999999999999999999999' is not a whole number "
                    "(does not fit a 64-bit integer)")
    src.write_text("threads,regs,smem\n4294967296,32,0\n")
    line = one_line(capsys, "occupancy", "--csv", src)
    assert line == f"{src}:2: error: column threads: 4.29e+09 is above 2,147,483,647"


# ------------------------------------------------------------------ 12: deep TOML

@pytest.mark.parametrize("depth", [40, 2000])
def test_12_deeply_nested_profile_is_refused(tmp_path, capsys, depth):
    path = tmp_path / "deep.toml"
    path.write_text(f"a = {'[' * depth}1{']' * depth}\n")
    line = one_line(capsys, "hw", "show", path)
    assert line.endswith("error: invalid TOML: nests more than 32 deep")


# ------------------------------------------------------------------ 13: profiles the model cannot use

def test_13_tiled_profile_without_d2d_link(tmp_path, capsys):
    text = SIP.read_text()
    assert "[links.d2d]" in text
    path = tmp_path / "sip_no_d2d.toml"
    path.write_text(text.replace("[links.d2d]", "[links.zz]"))
    line = one_line(capsys, "model", "latency", "--model", "llama3.2-1b", "--hw", path)
    assert line.startswith(f"{path}:links.d2d.bandwidth: error: the model of a tiled accelerator needs "
                           "links.d2d")


# ------------------------------------------------------------------ 14: preset bounds

@pytest.mark.parametrize("key, value, message", [
    ("num_layers", "9223372036854775808", "must be at most 16,384"),
    ("head_dim", str(2 ** 63 - 1), "must be at most 16,384"),
    ("intermediate_size", str(2 ** 63 - 1), "must be at most 4,194,304"),
])
def test_14_preset_sizes_have_ceilings(tmp_path, capsys, key, value, message):
    text = (ROOT / "models" / "llama3.2-1b.toml").read_text()
    lines = [f"{key} = {value}" if l.startswith(f"{key} =") else l for l in text.split("\n")]
    path = tmp_path / "m.toml"
    path.write_text("\n".join(lines))
    line = one_line(capsys, "model", "show", path)
    assert line.startswith(f"{path}:{key}: error: {message}")


def test_14_moe_experts_ceiling(tmp_path, capsys):
    text = (ROOT / "models" / "mixtral-8x7b.toml").read_text()
    assert "num_experts = 8" in text
    path = tmp_path / "m.toml"
    path.write_text(text.replace("num_experts = 8", f"num_experts = {2 ** 63 - 1}"))
    line = one_line(capsys, "model", "show", path)
    assert line.startswith(f"{path}:moe.num_experts: error: must be at most 16,384")


# ------------------------------------------------------------------ 16: absurd values

@pytest.mark.parametrize("value, message", [
    ("BM=1267650600228229401496703205376",
     "--set BM: error: does not fit a 64-bit integer, found '1267650600228229401496703205376'"),
    ("BM=٣", "--set BM: error: expected an integer, found '٣'"),        # an Arabic-Indic three is not 3
    ("BM=100", "BM=100 is outside its declared domain 16..512 step x2"),
    ("STAGES=0", "STAGES=0 is outside its declared domain 1..8"),
    ("STAGES=-1", "STAGES=-1 is outside its declared domain 1..8"),
    ("GROUP_M=0", "GROUP_M=0 is outside its declared domain 1..64"),
])
def test_16_set_values_checked(capsys, value, message):
    assert message in one_line(capsys, "analyze", GEMM, "--hw", "h200_sxm", "--set", value)


def test_16_diff_checks_set_values_too(capsys):
    line = one_line(capsys, "diff", GEMM, GEMM, "--hw", "h200_sxm", "--set", "BM=100")
    assert line == "--set BM: error: BM=100 is outside its declared domain 16..512 step x2"


def test_16_default_outside_its_domain_may_still_be_set(tmp_path, capsys):
    # docs/language.md: a default need not lie in its domain; setting it back is not a typo
    path = kernel(tmp_path, Path(GEMM).read_text().replace("param BK = 64 in 16..512 step x2 sweep {16, 32, 64, 128}",
                                                           "param BK = 48 in {16, 32, 64, 128}"))
    assert run(capsys, "check", path, "--set", "BK=48")[0] == 0
    assert "BK=40 is outside" in one_line(capsys, "check", path, "--set", "BK=40")


@pytest.mark.parametrize("flag, value", [
    ("--capacity", "-1"), ("--capacity", "0"), ("--capacity", "nan"), ("--capacity", "inf"),
    ("--launch-us", "-1"), ("--launch-us", "nan"), ("--launch-us", "1e400"),
])
def test_16_model_options_have_finite_ranges(capsys, flag, value):
    line = one_line(capsys, "model", "latency", "--model", "llama3.2-1b", flag, value)
    assert line.startswith(f"{flag}: error: expected a finite number in ")
    assert line.endswith(f", found '{value}' (see tfx model latency --help)")


def test_16_domain_api_for_the_edit_dialog():
    from tfx.ir.bind import bind, domain_problem, domain_text
    from tfx.lang import parse_file
    module = parse_file(GEMM)
    k = module.kernel(None)
    env = bind(module, k)
    assert domain_text(k, "BM", env) == "16..512 step x2"
    assert domain_text(k, "STAGES", env) == "1..8"
    assert domain_problem(k, "BM", 64, env) is None
    assert domain_problem(k, "BM", 100, env) == "BM=100 is outside its declared domain 16..512 step x2"


def test_16_geometric_domain_contains_and_size_without_listing():
    from tfx.lang import parse_text
    module = parse_text("kernel k {\n  param S = 512 in 512..32768 step x2\n"
                        "  param R = 4 in 0..1000000000000 step 4\n}\n")
    k = module.kernel(None)
    s, r = k.param("S").domain, k.param("R").domain
    # 512, 1024, ..., 32768 = 2^9..2^15: 7 values
    assert s.size({}) == 7 and s.contains(4096, {}) and not s.contains(4095, {})
    assert s.describe({}) == "512..32768 step x2"
    # 0, 4, ..., 10^12: 10^12 / 4 + 1 = 250,000,000,001 values, counted, never listed
    assert r.size({}) == 250_000_000_001 and r.contains(10 ** 12, {}) and not r.contains(6, {})


# ------------------------------------------------------------------ 17: error text

def test_17_flat_sum_is_not_called_nesting(tmp_path, capsys):
    text = Path(ROOT / "kernels" / "copy.tile").read_text()
    path = kernel(tmp_path, text.replace("kernel copy {", "kernel copy {\n  let Z = " + " + ".join(["1"] * 101), 1))
    line = refused(capsys, "check", path)[0]
    # 101 terms: 100 '+' in one chain; at most 99 operators deep
    assert "expression is 100 operations deep (at most 99; a chain a + b + c counts one per operator)" in line


def test_17_long_source_line_is_echoed_in_a_window():
    line = "x" * 1_000_000 + "$" + "y" * 1_000_000
    err = TfxError("unexpected character '$'", where=None)
    text, caret = echo_window(line, 1_000_001)
    assert len(text) <= 126 and text[caret] == "$"
    assert len(err.render()) < 200


def test_17_bom_accepted_nbsp_and_line_separator_refused(tmp_path, capsys):
    text = (ROOT / "kernels" / "copy.tile").read_text()
    bom = tmp_path / "bom.tile"
    bom.write_bytes(b"\xef\xbb\xbf" + text.encode())
    assert run(capsys, "check", bom)[0] == 0
    for ch, shown in (("\u00a0", "'\\xa0'"), ("\u2028", "'\\u2028'")):
        path = kernel(tmp_path, text.replace("kernel copy", f"kernel{ch}copy"), name="odd.tile")
        lines = refused(capsys, "check", path)
        assert lines[0].endswith(f"error: unexpected character {shown}")
        assert ch not in lines[1]  # echoed as '?': never a second line break on a terminal


def test_17_input_above_the_size_limit_is_refused_at_once(tmp_path, capsys):
    path = tmp_path / "huge.tile"
    path.write_bytes(b"// " + b"x" * (4 * 2 ** 20) + b"\n")
    line = one_line(capsys, "check", path)
    # 4 x 2**20 + 4 = 4,194,308 B; the limit 4 x 2**20 = 4,194,304 B, by the one unit policy 4.19 MB
    assert line == (f"{path}: error: file is 4,194,308 B; tfx reads at most 4,194,304 B (4.19 MB) "
                    "for a .tile file")


# ------------------------------------------------------------------ 19: argparse

def test_19_option_type_errors_are_one_line(capsys):
    line = one_line(capsys, "occupancy", "--threads", "x")
    assert line == "--threads: error: expected an integer, found 'x' (see tfx occupancy --help)"
    assert one_line(capsys, "simulate", GEMM, "--tiles", "0").startswith(
        "--tiles: error: expected a whole number in 1..")


# ------------------------------------------------------------------ 24: --tp and KV heads

def test_24_tp_must_split_kv_heads(capsys):
    line = one_line(capsys, "model", "memory", "--model", "llama3.1-8b", "--hw", "h200_nvl8", "--tp", "3")
    # llama3.1-8b: 32 query heads, 8 KV heads; 3 divides neither
    # the line names the option that gave the parallelism (session 12: it named no place)
    assert line == ("--tp: error: parallelism tp3 cp1 pp1 dp1 ep1 is not meaningful here: tp 3 does not divide "
                    "32 query heads; tp 3 does not divide 8 KV heads (a rank holds whole heads)")
    assert run(capsys, "model", "memory", "--model", "llama3.1-8b", "--hw", "h200_nvl8", "--tp", "8")[0] == 0


# ------------------------------------------------------------------ model --config text

def test_model_config_text_refusals_name_the_option(capsys):
    """A bad `--config` of `tfx model compare` was a ValueError traceback (tp=x) or a line with no
    place (an unknown key): each is now the one-line refusal naming --config, exit 2."""
    base = ("model", "compare", "--model", "llama3.1-8b", "--hw", "h200_nvl8", "--config")
    assert one_line(capsys, *base, "tp=x") == "--config: error: tp: expected a whole number >= 1, found 'tp=x'"
    assert one_line(capsys, *base, "tp=0") == "--config: error: tp: expected a whole number >= 1, found 'tp=0'"
    assert one_line(capsys, *base, "tp=2,foo=3") == (
        "--config: error: expected KEY=VALUE with KEY one of tp, cp, pp, dp, ep, kv_shard, cp_ring, "
        "tp_place, cp_place, found 'foo=3'")
    # tp 3 divides neither llama3.1-8b's 32 query heads nor its 8 KV heads (as test_24 above)
    assert one_line(capsys, *base, "tp=3") == (
        "--config: error: parallelism tp3 cp1 pp1 dp1 ep1 is not meaningful here: tp 3 does not divide "
        "32 query heads; tp 3 does not divide 8 KV heads (a rank holds whole heads)")
    assert one_line(capsys, "model", "suggest", "--model", "llama3.1-8b", "--hw", "h200_nvl8",
                    "--sensitivity", "tp=y").startswith("--sensitivity: error: tp: expected a whole number")


def test_model_config_refusals_blame_the_option_only_for_its_own_faults(capsys):
    """`tfx model compare --config` relabelled every placeless refusal of the whole step as the
    option's, dropping its notes: a dtype the profile cannot run is not --config's fault. Only the
    option's own text (a value the parallelism refuses, a parallelism the model cannot split by)
    names it; the same holds for `tfx model suggest --sensitivity`."""
    # a100_hgx8 has no fp8e4m3 tensor cores (hw_profiles: compute.tensor.fp8e4m3): refused by the
    # step, not by tp=1, so the line is placeless and keeps its note
    lines = refused(capsys, "model", "compare", "--model", "llama3.1-8b", "--hw", "a100_hgx8",
                    "--config", "tp=1", "--weight-dtype", "fp8", "--act-dtype", "fp8")
    assert lines == [
        "error: fp8 activations need fp8e4m3 tensor cores, which profile a100_hgx8 does not have "
        "(compute.tensor.fp8e4m3: Ampere has no fp8 tensor cores)",
        "  note: price weight-only fp8 instead: --act-dtype bf16 (weights dequantized to bf16 in the GEMM, "
        "bf16 tensor-core time)"]
    base = ("model", "compare", "--model", "llama3.1-8b", "--hw", "h200_nvl8", "--config")
    assert one_line(capsys, *base, "tp=2,tp_place=zz") == (
        "--config: error: tp_place must be one of auto, node, cross, device, cube, pe, got 'zz'")
    assert one_line(capsys, "model", "suggest", "--model", "llama3.1-8b", "--hw", "h200_nvl8",
                    "--sensitivity", "kv=x") == "--sensitivity: error: kv_shard must be one of heads, seq, got 'x'"


def test_codegen_on_a_tiled_profile_is_refused(capsys):
    """`tfx analyze kernels/sip_gemm.tile --hw sip --codegen cutlass` said `compiled as cutlass` while
    nothing changed: the code generators differ only in GPU instructions (tfx.analysis.codegen), so
    a non-default one on the tiled sip is refused in the one-line form; the default still runs."""
    sip_gemm = ROOT / "kernels" / "sip_gemm.tile"
    assert one_line(capsys, "analyze", sip_gemm, "--hw", "sip", "--codegen", "cutlass") == (
        "--codegen: error: a code generator other than triton prices GPU instructions (TMA copies, wgmma) "
        "and sip is a tiled profile, found 'cutlass'")
    rc, out, _ = run(capsys, "analyze", sip_gemm, "--hw", "sip", "--codegen", "triton")
    assert rc == 0 and out.splitlines()[0] == f"kernel sip_gemm ({sip_gemm}) on sip"


def test_model_dtype_and_place_refusals_name_the_option(capsys):
    """An unknown dtype or placement printed `error: ...` with no option named; argparse's choices
    now refuse them in the one form (the known dtypes are tfx.model.schema.DTYPE_BYTES' keys)."""
    base = ("model", "latency", "--model", "llama3.1-8b", "--hw", "h200_nvl8")
    assert one_line(capsys, *base, "--weight-dtype", "int3") == (
        "--weight-dtype: error: expected one of fp32, bf16, fp16, fp8, int8, fp4, int4, nvfp4, mxfp4, "
        "found 'int3' (see tfx model latency --help)")
    assert one_line(capsys, *base, "--tp-place", "zz") == (
        "--tp-place: error: expected one of auto, node, cross, device, cube, pe, found 'zz' "
        "(see tfx model latency --help)")
