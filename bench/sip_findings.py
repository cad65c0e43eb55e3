"""The two sip findings (docs/simulator.md): what tfx simulates for each, and how they move
with the two calibrated facts (HBM round trip, command completion latency).

    python bench/sip_findings.py            # the findings at the profile's facts
    python bench/sip_findings.py --sweep    # HBM latency x completion latency table
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path

from tfx.analysis.analyze import analyze
from tfx.hw import load_profile
from tfx.lang import parse_file
from tfx.sim import simulate

ROOT = Path(__file__).resolve().parent.parent
SMALL = {"TM": 32, "TN": 3072, "TK": 32}


def findings(profile, knobs: dict) -> dict:
    gemm = parse_file(str(ROOT / "kernels" / "sip_gemm.tile"))
    attn = parse_file(str(ROOT / "kernels" / "sip_decode_attention.tile"))

    def sim(module, kernel, params, extra):
        return simulate(analyze(module, kernel, profile.with_knobs({**knobs, **extra}), params=params),
                        events=False)

    held = sim(gemm, None, SMALL, {"dma.hold_channel_for_round_trip": "1"})
    released = sim(gemm, None, SMALL, {"dma.hold_channel_for_round_trip": "0"})
    single = sim(attn, "decode_attention_single_op", {}, {})
    comp = sim(attn, "decode_attention_composite", {}, {})
    blocks = sim(attn, "decode_attention_block_composites", {}, {})
    return {"held": held, "released": released, "single": single, "composite": comp, "per block": blocks}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sweep", action="store_true", help="sweep the two calibrated facts")
    args = ap.parse_args()
    profile = load_profile("sip")
    if not args.sweep:
        f = findings(profile, {})
        print("(a) 32x3072x32 sip_gemm, pipeline efficiency (reported 53% held, 88% released)")
        for k in ("held", "released"):
            r = f[k]
            print(f"    {k:<9} {r.pipeline_efficiency:6.1%}   makespan {r.makespan_ns / 1e3:9.1f} us"
                  f"   analysis {r.comparison()['performance.predicted_ns'] / 1e3:9.1f} us")
        print("(b) decode attention 128K (reported 5,235 vs 94 commands, 959.5 vs 460.7 us = 2.08x)")
        for k in ("single", "composite", "per block"):
            r = f[k]
            print(f"    {k:<9} {r.commands:6,} commands   dispatch {r.dispatch_ns / 1e3:6.2f} us"
                  f"   makespan {r.makespan_ns / 1e3:7.1f} us   analysis {r.comparison()['performance.predicted_ns'] / 1e3:7.1f} us")
        print(f"    speed-up {f['single'].makespan_ns / f['composite'].makespan_ns:.2f}x "
              f"(one composite per block: {f['single'].makespan_ns / f['per block'].makespan_ns:.2f}x)")
        return
    print("HBM round trip x completion latency: (a) held / released efficiency, (b) single / composite")
    for lat, cl in itertools.product((500, 700, 900), (0, 100, 250, 400)):
        f = findings(profile, {"memory.hbm.latency": f"{lat}ns", "dispatch.completion_latency": str(cl)})
        print(f"  {lat} ns, {cl:>3} cycles: {f['held'].pipeline_efficiency:6.1%} / "
              f"{f['released'].pipeline_efficiency:6.1%}   "
              f"{f['single'].makespan_ns / f['composite'].makespan_ns:.2f}x")


if __name__ == "__main__":
    main()
