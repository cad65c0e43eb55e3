"""LaunchMiss.runs_lockstep_round: decode trip loop id -> whether the loop runs decode_trip's
unpipelined lock-step round (a flag a loop, which decode_trip.packs reads for the packed tail);
the field was named lockstep_rounds, which read as a count of rounds."""

import dataclasses
from pathlib import Path

from tfx.analysis import decode_trip, performance
from tfx.analysis.analyze import analyze
from tfx.hw import load_profile
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent
GQA = parse_file(ROOT / "kernels" / "gqa_decode.tile")
# run13's split-KV row (tests/test_decode_packed_tail.py): 512 CTAs at 3 a SM, one full wave
RUN13 = dict(B=2, HQ=32, HKV=8, SKV=32768, D=128, SPLITS=32, BLOCK_N=128, WARPS=4, STAGES=1)


def _flags(monkeypatch, params):
    """What each launch hands decode_trip.packs: its loops' flags, in launch order."""
    seen, real = [], decode_trip.packs

    def spy(flags, full_waves):
        flags = list(flags)
        seen.append(flags)
        return real(flags, full_waves)
    monkeypatch.setattr(decode_trip, "packs", spy)
    analyze(GQA, None, load_profile("h200_sxm"), params, resources=dict(regs=141, smem=40960), check=False)
    return seen


def test_the_flags_say_which_loops_run_the_lockstep_round(monkeypatch):
    """The split launch has one decode trip (the KV loop): at STAGES = 1 it runs the lock-step
    round (applies = stages < 2 and its chain > 0: 1 < 2), so [True]; at STAGES = 2, 2 < 2 is
    false: [False]. The merge launch streams no decode trip: []."""
    names = {f.name for f in dataclasses.fields(performance.LaunchMiss)}
    assert "runs_lockstep_round" in names and "lockstep_rounds" not in names
    assert _flags(monkeypatch, RUN13) == [[True], []]
    assert _flags(monkeypatch, {**RUN13, "STAGES": 2})[0] == [False]
    assert performance.LaunchMiss().runs_lockstep_round == {}
