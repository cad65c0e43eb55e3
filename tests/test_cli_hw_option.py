"""An unknown --hw name is refused as the option's (session 11, audit11): the line named no place
('error: unknown hardware profile 'nope' ...'); every command that takes --hw (and diff's --hw-b)
now says `--hw: error: ...`, as --knob and --set name themselves. A path keeps its file; a
profile named in a CSV row (tfx validate) keeps the row."""

from __future__ import annotations

import pytest

from tfx.bundled import bundled_kernel
from tfx.hw import list_profiles
from tfx.hw.user_profiles import list_user_profiles
from test_cli_bad_input import refusal   # exit 2, no traceback, the lines of stderr

GEMM = str(bundled_kernel("gemm.tile"))


def unknown(flag: str, name: str) -> str:
    # 'nope' is close to no profile name: no 'did you mean' hint
    known = ", ".join(list_profiles() + list_user_profiles())
    return f"{flag}: error: unknown hardware profile {name!r} (known: {known})"


@pytest.mark.parametrize("argv", [
    ["analyze", GEMM, "--hw", "nope"],
    ["simulate", GEMM, "--hw", "nope"],
    ["check", GEMM, "--hw", "nope"],
    ["explore", GEMM, "--hw", "nope"],
    ["occupancy", "--hw", "nope", "--threads", "128", "--regs", "32"],
    ["diff", GEMM, GEMM, "--hw", "nope"],
    ["model", "latency", "--model", "llama3.2-1b", "--hw", "nope"],
])
def test_an_unknown_hw_name_is_refused_as_the_option(argv, capsys):
    assert refusal(argv, capsys) == [unknown("--hw", "nope")]


def test_diff_names_side_bs_option(capsys):
    assert refusal(["diff", GEMM, GEMM, "--hw-b", "nope"], capsys) == [unknown("--hw-b", "nope")]


def test_a_close_name_keeps_its_hint(capsys):
    (line,) = refusal(["analyze", GEMM, "--hw", "h200sxm"], capsys)
    assert line.startswith("--hw: error: unknown hardware profile 'h200sxm' (known: ")
    # difflib's ratio 2 x matched / (7 + 8): h200_sxm 'h200' 'sxm' 2 x 7 / 15 = 0.93, h100_sxm 'h' '00' 'sxm'
    # 2 x 6 / 15 = 0.80, a100_sxm '00' 'sxm' 2 x 5 / 15 = 0.67 (>= 0.6); h200_nvl8 2 x 4 / 16 = 0.5 is not
    assert line.endswith("; did you mean h200_sxm, h100_sxm, a100_sxm?")


def test_a_missing_path_names_the_file(tmp_path, capsys):
    missing = tmp_path / "nope.toml"
    assert refusal(["analyze", GEMM, "--hw", str(missing)], capsys) == [
        f"{missing}: error: no such hardware profile file"]


def test_validate_names_hw_for_rows_without_a_profile_and_the_row_for_rows_with_one(tmp_path, capsys):
    rows = tmp_path / "rows.csv"
    rows.write_text(f"kernel,measured_ms,M,N,K\n{GEMM},0.1,64,64,64\n")
    assert refusal(["validate", str(rows), "--hw", "nope"], capsys) == [
        unknown("--hw", "nope"), f"  note: the profile of row {rows}:2:1"]
    named = tmp_path / "named.csv"
    named.write_text(f"kernel,profile,measured_ms,M,N,K\n{GEMM},nope,0.1,64,64,64\n")
    assert refusal(["validate", str(named)], capsys) == [
        unknown(f"{named}:2:1", "nope")]


def test_hw_show_names_itself_for_an_unknown_name(capsys):
    """`tfx hw show nope` (session 12, audit12): the line was 'error: unknown hardware profile ...'
    with no place; the name is the command's positional, so the command is the place, as
    usage_error_line names the command for a positional."""
    assert refusal(["hw", "show", "nope"], capsys) == [unknown("tfx hw show", "nope")]


def test_hw_show_names_a_missing_path_by_the_file(tmp_path, capsys):
    missing = tmp_path / "nope.toml"
    assert refusal(["hw", "show", str(missing)], capsys) == [
        f"{missing}: error: no such hardware profile file"]
