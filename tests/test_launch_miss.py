"""A launch's memos travel as named fields of performance.LaunchMiss, not under magic keys
("__demands__", "__fragment_chains__", ...) mixed into its op id -> L2 miss ratio mapping."""

import re
from pathlib import Path

from tfx.analysis.performance import LaunchMiss

ANALYSIS = Path(__file__).resolve().parent.parent / "tfx" / "analysis"


def test_no_magic_keys_in_a_launchs_miss_mapping():
    # miss["__x__"], miss['__x__'], miss.get("__x__"...), miss.setdefault("__x__"...), miss.pop("__x__"...)
    magic = re.compile(r"""\bmiss(\[|\.(get|setdefault|pop)\()\s*["']__""")
    hits = [f"{p.name}:{i}" for p in sorted(ANALYSIS.glob("*.py"))
            for i, line in enumerate(p.read_text().splitlines(), 1) if magic.search(line)]
    assert hits == []


def test_the_mapping_holds_only_ratios_and_the_fields_their_defaults():
    miss = LaunchMiss.of({"op7": 0.25}, drifted=0.5)
    assert dict(miss) == {"op7": 0.25}           # only the ratios iterate
    assert miss.get("op7", 1) == 0.25 and miss.get("op8", 1) == 1
    assert miss.drifted == 0.5
    # outside a launch: no Demand memo, no spill, nothing drawn
    plain = LaunchMiss.of({})
    assert plain.demands is None and plain.spill == (None, None, 0, None) and plain.spill_regs == (0, None)
    assert plain.fragment_chains == {} and plain.fragment_chains is not LaunchMiss.of({}).fragment_chains
