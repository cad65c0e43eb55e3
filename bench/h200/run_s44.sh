#!/usr/bin/env bash
# Session 44, one device call: measure_decode_timeline.py DECODE_TL_SET=s44 (one wave of equal decode CTAs at 1-3 an
# SM on 8, 4 and 2 warps: are the six slow TPCs of the s42 launches slow alone or only beside co-resident CTAs?),
# tarred as $OUT/decode_timeline_s44.tgz.
set -u
cd "$(dirname "$0")/../.."
source bench/h200/steps.sh
record_call
step decode_timeline_s44 300 env DECODE_TL_SET=s44 DECODE_TL_REPS=2 python3 bench/h200/measure_decode_timeline.py
ls -la "$OUT"
