#!/usr/bin/env bash
# Session 24's fourth device call: the same configurations timed again (test-retest), run39's shapes and seeds
# (alt36 + 3800) and run40's (alt37 + 3900), to measure how far two timings of one campaign agree on its
# rankings (bench/retest_ranks.py). Stored under calibration/h200/measured/retest_s24, not issue15/ (the
# rows are repeats, not new configurations).
set -u
cd "$(dirname "$0")/../.."
run() {  # run <name> <shape set> <seed offset>
  mkdir -p "$OUT/$1"
  PYTHONUNBUFFERED=1 ACC_DEADLINE_S=170 ACC_SHAPE_SET=$2 ACC_SEED_OFFSET=$3 timeout 185 \
    python3 bench/h200/measure_accuracy.py "$OUT/$1" > "$OUT/$1/stdout.txt" 2>&1
  tar -C "$OUT" -czf "$OUT/$1.tgz" "$1" && rm -rf "${OUT:?}/$1"
}
run run39r alt36 3800
run run40r alt37 3900
ls -l "$OUT"
