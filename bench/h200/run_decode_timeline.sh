#!/usr/bin/env bash
# One device call of measure_decode_timeline.py: `bash bench/h200/run_decode_timeline.sh SET SECONDS` runs
# DECODE_TL_SET=SET (two recorded launches each) under a SECONDS limit, tarred as $OUT/decode_timeline_SET.tgz.
set -u
cd "$(dirname "$0")/../.."
source bench/h200/steps.sh
record_call
step "decode_timeline_$1" "$2" env DECODE_TL_SET="$1" DECODE_TL_REPS=2 python3 bench/h200/measure_decode_timeline.py
ls -la "$OUT"
