"""Argument helpers shared by commands: --hw, --set, --knob, --json output."""

from __future__ import annotations

import math
import re
import sys
from typing import Any

from tfx.arrays import loaded_numpy
from tfx.assignments import check_set_domains, int_arg, parse_assignments, parse_int_assignments  # noqa: F401 (re-exported)
from tfx.errors import read_text_file, shorten
from tfx.hw.units import format_significant


WIDE_OUTPUT = 200     # columns of the text written to a pipe or a file


def _columns_set() -> int | None:
    """``$COLUMNS`` where set to a positive whole number, else None."""
    import os
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() and int(columns) > 0 else None


def output_width() -> int:
    """Columns the text output fits, as ``tfx explore`` decides them: ``$COLUMNS`` where set, the
    terminal's width on a terminal, else ``WIDE_OUTPUT`` (a pipe or a file has no width to fit:
    a table keeps its wide form and a line stays whole)."""
    import shutil
    columns = _columns_set()
    if columns is not None:
        return columns
    if sys.stdout.isatty():
        return shutil.get_terminal_size().columns
    return WIDE_OUTPUT


def text_width() -> int | None:
    """Columns a line of prose wraps at (tfx.present.layout.wrap): ``output_width()`` where
    ``$COLUMNS`` is set or on a terminal; None for a pipe or a file, where each line stays whole
    (a script greps it) as tables keep their wide form there."""
    if _columns_set() is not None or sys.stdout.isatty():
        return output_width()
    return None


def say(text: str = "", hang: int | None = None, file=None) -> None:
    """Print ``text`` (one line or several) as ``print`` would, each line past ``text_width()``
    wrapped at words (tfx.present.layout.wrap: continuation ``hang`` in, default 4 past its
    indent); a pipe gets every line whole."""
    from tfx.present.layout import wrap
    width = text_width()
    for line in str(text).split("\n"):
        for part in wrap(line, width, hang):
            print(part, file=file)


def console_width(pipe: int) -> int | None:
    """The width a rich Console of a command takes: None (rich's own: ``$COLUMNS``, else the
    terminal's) where ``$COLUMNS`` is set or on a terminal, else ``pipe`` (a pipe or a file keeps
    full rows; rich would assume 80 columns). tfx hw show and tfx occupancy passed ``pipe``
    whenever stdout was not a terminal, so COLUMNS=80 got their 160-column tables."""
    return None if text_width() is not None else pipe


def float_arg(lo: float, hi: float, lo_open: bool = False):
    """An argparse ``type`` for a finite number in ``lo..hi`` (``(lo, hi]`` with ``lo_open``)."""
    import argparse

    from tfx.literals import parse_float

    def parse(text: str) -> float:
        try:
            value = parse_float(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"{exc}, found {shorten(text)!r}") from None
        low_ok = value > lo if lo_open else value >= lo
        if not (math.isfinite(value) and low_ok and value <= hi):
            bracket = "(" if lo_open else "["
            raise argparse.ArgumentTypeError(f"expected a finite number in {bracket}{format_significant(lo, 6)}, {format_significant(hi, 6)}], "
                                             f"found {shorten(text)!r}")
        return value
    parse.__name__ = "number"
    return parse


# argparse's refusals of one option's value: ``argument --mode: invalid choice: 'x' (choose
# from 'decode', 'prefill')`` and ``argument --batch: invalid int value: 'x'``.
_ARGUMENT = re.compile(r"^argument (?P<names>\S+): (?P<what>.*)$", re.S)
_CHOICE = re.compile(r"^invalid choice: (?P<found>.*) \(choose from (?P<choices>.*)\)$", re.S)
_TYPE = re.compile(r"^invalid (?P<type>\w+) value: (?P<found>.*)$", re.S)
_TYPE_NAMES = {"int": "an integer", "float": "a number"}


def usage_error_line(prog: str, message: str) -> str:
    """argparse's refusal as the one line every refused input gets, ``where: error: what was
    expected`` (tfx.errors.argument_error builds tfx's own): where is the option when the
    refusal is about one (``--mode: error: expected one of decode, prefill, found 'x'``),
    else the command (``tfx analyze: error: the following arguments are required: file``);
    then where its help is."""
    where, what = prog, message
    m = _ARGUMENT.match(message)
    if m:
        what = m["what"]
        if (c := _CHOICE.match(what)):
            # the choices without quotes, as every other "expected one of" line lists them
            # (Python 3.12.8 and later print them so already)
            choices = ", ".join(ch.strip("'") for ch in c["choices"].split(", "))
            what = f"expected one of {choices}, found {c['found']}"
        elif (t := _TYPE.match(what)):
            what = f"expected {_TYPE_NAMES.get(t['type'], 'a ' + t['type'])}, found {t['found']}"
        if m["names"].startswith("-"):
            where = m["names"].split("/")[-1]      # -o/--out: the long spelling
        else:                                      # a positional (COMMAND, FILE): after the command
            what = f"{m['names']}: {what}"
    return f"{shorten(where, 100)}: error: {shorten(what, 300)} (see {prog} --help)"


def read_text(path: str) -> str:
    return read_text_file(path)


def emit_json(obj: Any, last_array: tuple[str, list[str]] | None = None, small: bool = False) -> None:
    """``obj`` on stdout as indented JSON, written by orjson: the standard library's encoder
    is pure Python once ``indent`` is set (``tfx simulate --full --json`` on gemm 4096^3 spent
    82% of its time in it; orjson writes the same text about 15x faster). Non-finite floats,
    which JSON cannot carry, are written as ``null``.

    ``last_array``: (key, chunks: lists of items already encoded as JSON text), written
    after ``obj``'s keys as one more key whose array holds one item per line (a
    simulation's events: see ``SimResult.events_json_chunks``); each chunk is written as
    it comes, so a generator's chunks never live all at once. Then ``obj`` is a small summary and the bulk is
    already text, so the standard library's encoder writes the summary: importing orjson
    (~30 ms) would cost more than it saves. ``small``: the same for an ``obj`` known to be
    small (a simulation's summary without its events)."""
    if last_array is None and not small:
        import orjson
        data = orjson.dumps(obj, default=_json_default,
                            option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY)
        _write_stdout([data, b"\n"])
        return
    import json
    text = json.dumps(_finite(obj), indent=2, ensure_ascii=False, default=_json_default)
    if last_array is None:
        _write_stdout([text.encode(), b"\n"])
        return
    key, chunks = last_array
    # obj's text ends with "\n}" (or is "{}"): the array goes in as its last key
    head = (text[:-2] + ",\n  " if text != "{}" else "{\n  ") + json.dumps(key, ensure_ascii=False) + ": ["
    out = _stdout_bytes()
    sep = "\n    "
    for chunk in chunks:
        if chunk:
            out((head + sep + ",\n    ".join(chunk)).encode())
            head, sep = "", ",\n    "
    out((head + "]\n}\n").encode() if head else b"\n  ]\n}\n")
    out(None)


def _stdout_bytes():
    """A writer of bytes to stdout (flushed by ``None``): its binary buffer where there is
    one, else text (a test's capture)."""
    buf = getattr(sys.stdout, "buffer", None)
    if buf is not None:
        sys.stdout.flush()
        return lambda b: buf.write(b) if b is not None else buf.flush()
    return lambda b: sys.stdout.write(b.decode()) if b is not None else sys.stdout.flush()


def _write_stdout(chunks: list[bytes]) -> None:
    out = getattr(sys.stdout, "buffer", None)
    if out is not None:
        sys.stdout.flush()
        for chunk in chunks:
            out.write(chunk)
        out.flush()
    else:                        # a text-only stream (a test's capture)
        sys.stdout.write(b"".join(chunks).decode())


def _finite(value: Any) -> Any:
    """``value`` with every non-finite float (which JSON cannot carry) as None, as orjson
    writes them (the standard library would write NaN)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _json_default(value: Any) -> Any:
    np = loaded_numpy()          # (a numpy value exists only once numpy is imported)
    if np is not None:
        if isinstance(value, np.integer):
            return int(value)
        if isinstance(value, np.floating):
            v = float(value)
            return v if math.isfinite(v) else None
        if isinstance(value, np.ndarray):
            return _finite(value.tolist())
    if hasattr(value, "to_json"):
        return value.to_json()
    from fractions import Fraction
    if isinstance(value, Fraction):
        return value.numerator if value.denominator == 1 else float(value)
    raise TypeError(f"not JSON serializable: {type(value).__name__}")
