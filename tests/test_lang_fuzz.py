"""Property tests: no input makes the parser, verifier, printer or shape check fail
with anything but TfxError.

Inputs are random text and bytes, and mutations of every shipped kernel at the
token level (delete, duplicate, swap tokens; change numbers), so that most
inputs get deep into the parser and the verifier instead of stopping at the
first character.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tfx.errors import TfxError
from tfx.ir.bind import bind, check_shapes
from tfx.lang import parse_text, print_module

KERNEL_DIR = Path(__file__).resolve().parent.parent / "kernels"
KERNEL_FILES = sorted(KERNEL_DIR.glob("*.tile"))
KERNEL_TEXTS = {p.name: p.read_text() for p in KERNEL_FILES}

# Tokens as the lexer sees them, plus whitespace runs, so that joining the pieces
# gives back the text exactly.
_PIECE_RE = re.compile(r"\s+|//[^\n]*|%?\w+|\.\.|->|\d+\.\d*|.", re.S)

FUZZ = settings(max_examples=200, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def pieces(text: str) -> list[str]:
    return _PIECE_RE.findall(text)


def exercise(text: str) -> None:
    """Parse, print, reparse and shape-check; only TfxError may escape."""
    try:
        module = parse_text(text, "fuzz.tile")
        again = parse_text(print_module(module), "fuzz.tile")
        assert again == module
        for kernel in module.kernels:
            check_shapes(module, kernel, bind(module, kernel))
    except TfxError as err:
        assert err.headline()  # renders
        err.render()


@FUZZ
@given(st.text(max_size=300))
def test_random_text(text):
    exercise(text)


@FUZZ
@given(st.binary(max_size=300))
def test_random_bytes(data):
    exercise(data.decode("utf-8", errors="replace"))


ALPHABET = sorted(set(p for text in KERNEL_TEXTS.values() for p in pieces(text) if not p.isspace()))


@FUZZ
@given(st.lists(st.sampled_from(ALPHABET + [" ", "\n"]), max_size=80))
def test_random_token_soup(tokens):
    exercise(" ".join(tokens))


def _mutate(data, toks: list[str]) -> list[str]:
    toks = list(toks)
    positions = [i for i, t in enumerate(toks) if not t.isspace()]
    for _ in range(data.draw(st.integers(1, 4), label="mutations")):
        if not positions:
            break
        i = data.draw(st.sampled_from(positions), label="position")
        kind = data.draw(st.sampled_from(["delete", "duplicate", "swap", "number", "replace"]), label="kind")
        if kind == "delete":
            toks[i] = ""
        elif kind == "duplicate":
            toks[i] = toks[i] + " " + toks[i]
        elif kind == "swap":
            j = data.draw(st.sampled_from(positions), label="other")
            toks[i], toks[j] = toks[j], toks[i]
        elif kind == "number":
            value = data.draw(st.sampled_from(["0", "1", "-1", "2", "3", "7", "64", "0x10",
                                               "1_000", "4294967296", "99999999999999999999"]))
            numbers = [k for k in positions if toks[k][:1].isdigit()]
            toks[data.draw(st.sampled_from(numbers)) if numbers else i] = value
        else:
            toks[i] = data.draw(st.sampled_from(ALPHABET))
    return toks


@pytest.mark.parametrize("name", sorted(KERNEL_TEXTS))
@FUZZ
@given(data=st.data())
def test_mutated_kernels(name, data):
    toks = pieces(KERNEL_TEXTS[name])
    assert "".join(toks) == KERNEL_TEXTS[name]
    text = "".join(_mutate(data, toks))
    assume(text != KERNEL_TEXTS[name])
    exercise(text)
