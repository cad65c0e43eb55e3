"""Knobs: what-if changes to a profile's facts (``--knob PATH=VALUE``).

A value is absolute or a factor:

* ``1.2e12``   the fact's canonical unit (B/s for a bandwidth)
* ``3.2TB/s``  any unit of the fact's family (``3.2 TB/s`` too)
* ``x2``, ``*2``, ``x0.5``, ``/2``  scale the current value

A path is a full fact path (``memory.gmem.bandwidth``), a spelling through a
memory alias (``memory.hbm.bandwidth``), or a unique dotted suffix of either
(``gmem.bandwidth``, ``hbm.bandwidth``, ``sm.count``).

Refused by name, one line each: unknown or ambiguous paths (with close
names), settings (``memory.smem.scope``), non-numbers, units of another
family, and values the schema would refuse in a file (zero or negative
bandwidths, clocks and counts, fractional counts, a flag other than 0/1).
"""

from __future__ import annotations

import difflib
import math
import re
from typing import TYPE_CHECKING, Mapping

from tfx.errors import TfxError, argument_error
from tfx.literals import INT64_MAX, parse_float
from tfx.hw.schema import Fact, FactSpec, constraint_problem, make_fact, spec_at
from tfx.hw.units import accepted_units, canonical_unit, family_of, split_quantity

if TYPE_CHECKING:  # pragma: no cover
    from tfx.hw.profile import Profile

_FACTOR = re.compile(r"^\s*([x*/])\s*(.+?)\s*$")


def _refuse(path: str, why: str, found: str | None = None, flag: str = "--knob") -> TfxError:
    """``FLAG PATH: error: WHY[, found 'TEXT']`` (tfx.errors.argument_error); the
    explorer's knob edits show the same line."""
    return argument_error(flag, why, name=path, found=found)


def resolve_knob_path(profile: "Profile", path: str, flag: str = "--knob") -> str:
    """The canonical fact path a knob names; TfxError (naming ``flag`` and the knob) if none or several."""
    numeric = [p for p, _ in profile.facts()]
    # Every spelling a fact answers to: its path, and its paths through memory aliases.
    spellings: dict[str, str] = {p: p for p in numeric}
    for mem_name, level in profile.memory_levels().items():
        for alias in level.aliases:
            prefix = f"memory.{mem_name}."
            for p in numeric:
                if p.startswith(prefix):
                    spellings[f"memory.{alias}.{p[len(prefix):]}"] = p
    if path in spellings:
        return spellings[path]
    matches = sorted({target for spelled, target in spellings.items()
                      if spelled.endswith("." + path)})
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        raise argument_error(flag, f"ambiguous, matches {', '.join(matches)}", name=path)
    if profile.has(path):
        raise argument_error(flag, f"{profile.canonical_path(path)} is a setting, not a number", name=path)
    raise argument_error(flag, f"unknown fact in profile {profile.name}{_suggest(path, spellings)}", name=path)


def _suggest(path: str, spellings: Mapping[str, str]) -> str:
    """Close names for an unknown knob path: compared against full paths and their suffixes."""
    by_suffix: dict[str, set[str]] = {}
    for spelled, target in spellings.items():
        parts = spelled.split(".")
        for i in range(len(parts)):
            by_suffix.setdefault(".".join(parts[i:]), set()).add(target)
    close = difflib.get_close_matches(path, list(by_suffix), n=3, cutoff=0.6)
    targets: list[str] = []
    for suffix in close:
        for target in sorted(by_suffix[suffix]):
            if target not in targets:
                targets.append(target)
    return f"; did you mean {', '.join(targets[:4])}?" if targets else ""


def knob_fact(path: str, old: Fact, spec: FactSpec, text: str, shown_path: str, flag: str = "--knob") -> Fact:
    """The Fact a knob ``text`` makes from ``old``; TfxError naming ``flag`` and the knob if impossible."""
    def refuse(path, why, found=None):
        return _refuse(path, why, found, flag)
    factor_match = _FACTOR.match(text)
    if factor_match:
        op, number_text = factor_match.groups()
        try:
            factor = parse_float(number_text)
        except ValueError:
            raise refuse(shown_path, f"expected a number after {op!r}", text) from None
        if not math.isfinite(factor) or factor <= 0:
            raise refuse(shown_path, "a factor must be a finite number > 0", text)
        if not old.available:
            raise refuse(shown_path, f"cannot scale an unavailable fact ({old.unavailable}) by {text!r}; "
                                      "give an absolute value")
        if op == "/":
            factor = 1 / factor
        raw_value = old.raw_value * factor
        raw_unit = old.raw_unit
    else:
        quantity = split_quantity(text)
        if quantity is None:
            raise refuse(shown_path, "expected a number (1.2e12, 3.2TB/s) or a factor (x2, /2)", text)
        raw_value, raw_unit = quantity
        if isinstance(raw_value, int) and abs(raw_value) > INT64_MAX:
            raise refuse(shown_path, "does not fit a 64-bit integer", text)
        if spec.family == "any":
            family = family_of(raw_unit) if raw_unit else None
            if raw_unit is None:
                raw_unit = old.raw_unit or old.unit
            elif family is None:
                raise refuse(shown_path, f"unknown unit {raw_unit!r} in {text!r}")
        elif raw_unit is None:
            raw_unit = canonical_unit(spec.family)
        elif family_of(raw_unit) != spec.family:
            raise refuse(shown_path, f"unit {raw_unit!r} does not fit; expected "
                                      f"{', '.join(accepted_units(spec.family))}", text)
    if isinstance(raw_value, float) and raw_value.is_integer() and spec.family in (
            "count", "flag", "cycles"):
        raw_value = int(raw_value)  # x2 of 132 SMs is 264 SMs, not 264.0
    if not math.isfinite(raw_value):
        raise refuse(shown_path, "expected a finite number", text)
    leaf = path.rsplit(".", 1)[-1]
    if old.available:
        was = f"was {old.raw}, {old.origin}: {old.source}"
    else:
        was = f"was unavailable: {old.unavailable}"
    fact = make_fact(raw_value, raw_unit, "estimated", f"knob {shown_path}={text} ({was})",
                     knob=text)
    problem = constraint_problem(fact.value, spec.constraint, family_of(raw_unit), spec.ceiling)
    if problem:
        # the problem names the value it got; a factor's text says where that value came from
        raise refuse(shown_path, f"{leaf} {problem}" + (f" ({text} of {old.raw})" if factor_match else ""))
    return fact


def apply_knobs(profile: "Profile", knobs: Mapping[str, str | float | int], flag: str = "--knob") -> "Profile":
    """A new profile with every knob applied; all-or-nothing (the first bad knob raises,
    naming ``flag``: ``--knob``, or ``--knob-sweep`` for the explorer's swept values)."""
    changes: dict[str, Fact] = {}
    texts: dict[str, str] = {}
    for shown_path, value in knobs.items():
        text = value if isinstance(value, str) else repr(value)
        if isinstance(value, bool):
            raise _refuse(shown_path, "expected a number, not a boolean", str(value), flag)
        path = resolve_knob_path(profile, shown_path.strip(), flag)
        spec = spec_at(path)
        assert isinstance(spec, FactSpec), path
        old = changes.get(path) or profile.fact(path)
        changes[path] = knob_fact(path, old, spec, text.strip(), shown_path, flag)
        texts[path] = text.strip()
    if not changes:
        return profile
    return profile._replaced(changes, texts)
