#!/usr/bin/env python3
"""The 2-stage Triton warpgroup-mma k-loop read literally from its SASS, against calibration/h200/measured/
kloop_big_s29 (docs/analysis.md 8, "The 2-stage side, not explained"). CPU only; a finding, no model change.

    python3 bench/h200/two_stage_queue_sim.py count 1 2 3 4 6 8      # the pipe holds q HGMMA instructions
    python3 bench/h200/two_stage_queue_sim.py cycles 128 256 512 768  # ... or W tensor cycles of work

The loop (Triton 3.6.0, sm_90, 8 warps, 2 stages; the SASS of bench/h200/persistent_sass.py's compile): DEPBAR.LE
SB0 0x0 (this trip's copies landed), BAR.SYNC, n HGMMA a warpgroup, WARPGROUP.DEPBAR.LE gsb0 0x1 (the previous
trip's group done), BAR.SYNC, the next trip's LDGSTS. Modelled: two warpgroups issuing in turn into one tensor
pipe that runs in issue order, an HGMMA m64n256k16 128 tensor cycles and m64n128k16 64 at the clock under wgmma
(1.98 GHz x 0.876, pipeline.wgmma_clock_fraction), an HGMMA's issue blocking while the pipe holds q instructions
(or W cycles) not yet done, 20 cycles a barrier, 4 cycles between a warp's issues, and the copies landing a round
trip R = 122.22 ns of chain + 200 ns of L2 latency + bytes / 128.7 B/ns after they leave (the model's round trip).
Prints the steady ns a trip and its error against the 78-SM rows; no q or W fits all six.
"""
import sys

TCLK = 1.98 * 0.876
BAR = 20 / 1.98
ISSUE = 4 / 1.98
ROWS = [  # tile, HGMMA a warpgroup a trip, tensor cycles each, bytes a trip, measured ns a trip on 78 SMs
    ("128x256x64", 4, 128, 49152, 919.5), ("128x256x128", 8, 128, 98304, 1840.5), ("128x256x32", 2, 128, 24576, 658.06),
    ("256x128x64", 8, 64, 49152, 1025.5), ("256x128x128", 16, 64, 98304, 1966.75), ("128x128x64", 4, 64, 32768, 823.63)]


def steady_trip(n, cycles, round_trip, limit, by_cycles, trips=60, wgs=2):
    dur = cycles / TCLK
    landed = {0: 0.0}
    pending, tensor_free, group, t, starts = [], 0.0, {}, 0.0, []
    for k in range(trips):
        t = max(t, landed[k]) + BAR
        starts.append(t)
        issue = [t] * wgs
        for _ in range(n):
            for w in range(wgs):
                ti = issue[w]
                if by_cycles:
                    if tensor_free - ti > limit / TCLK:
                        ti = tensor_free - limit / TCLK
                else:
                    live = sorted(c for c in pending if c > ti)
                    if len(live) >= limit:
                        ti = live[len(live) - limit]
                c = max(ti, tensor_free) + dur
                tensor_free = c
                pending.append(c)
                issue[w] = ti + ISSUE
                group[(w, k)] = c
        t = max(max(issue[w], group.get((w, k - 1), 0.0)) for w in range(wgs)) + BAR
        landed[k + 1] = t + round_trip
        pending = [c for c in pending if c > t - 1e4]
    return (starts[-1] - starts[20]) / (trips - 21)


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("count", "cycles"):
        sys.exit("usage: two_stage_queue_sim.py count|cycles LIMIT...")
    by_cycles = sys.argv[1] == "cycles"
    for limit in (int(x) for x in sys.argv[2:]):
        out = []
        for tile, n, cycles, nbytes, measured in ROWS:
            ns = steady_trip(n, cycles, 122.22 + 200 + nbytes / 128.7, limit, by_cycles)
            out.append(f"{tile} {ns:.1f} ({100 * (ns / measured - 1):+.1f}%)")
        print(f"{sys.argv[1]} {limit}: " + "; ".join(out))


if __name__ == "__main__":
    main()
