"""An unknown model preset is refused in one line naming where the name came from (session 12,
audit12): it was two lines with no place ('error: unknown model 'nope'' and a note), where an
unknown --hw already said `--hw: error: unknown hardware profile 'nope' (known: ...)`."""

from __future__ import annotations

import pytest

from test_cli_bad_input import refusal   # exit 2, no traceback, the lines of stderr

EXPECTED = "expected a preset name (tfx model list) or a path to a preset TOML"


@pytest.mark.parametrize("argv", [
    ["model", "latency", "--model", "nope"],
    ["model", "memory", "--model", "nope"],
    ["model", "suggest", "--model", "nope"],
    ["model", "hw-sweep", "--model", "nope"],
    ["model", "serve", "--model", "nope"],
])
def test_an_unknown_model_is_refused_as_the_option(argv, capsys):
    # 'nope' shares too little with any preset name for a hint (difflib cutoff 0.5)
    assert refusal(argv, capsys) == [f"--model: error: unknown model 'nope', {EXPECTED}"]


def test_model_show_names_itself(capsys):
    assert refusal(["model", "show", "nope"], capsys) == [
        f"tfx model show: error: unknown model 'nope', {EXPECTED}"]


def test_a_close_name_gets_the_hint_on_the_same_line(capsys):
    # difflib ratio 2 x matches / (len a + len b): 'lama3-8b' (8) vs 'llama3-8b' (9): 8 matched,
    # 16/17 = 0.94; vs 'llama3.1-8b' (11): 'lama3' + '-8b' = 8, 16/19 = 0.84; vs 'llama3-70b' (10):
    # 'lama3-' + 'b' = 7, 14/18 = 0.78; every other preset scores lower (three are kept)
    assert refusal(["model", "latency", "--model", "lama3-8b"], capsys) == [
        f"--model: error: unknown model 'lama3-8b', {EXPECTED}; did you mean llama3-8b, llama3.1-8b, llama3-70b?"]
