#!/usr/bin/env bash
# Session 25's device call: the campaigns' GEMM at one and two stages on many SMs
# (bench/h200/measure_copy_issue_s24.py, ISSUE_SET=shallow), then the next development (alt39, run42) and
# held-out (alt40, run43) campaigns. Each part is packed into one archive as soon as it ends: a call
# returns at most 8 files.
set -u
cd "$(dirname "$0")/../.."
mkdir -p "$OUT/shallow_s25"
PYTHONUNBUFFERED=1 ISSUE_SET=shallow ISSUE_DEADLINE_S=140 timeout 165 python3 bench/h200/measure_copy_issue_s24.py \
  "$OUT/shallow_s25" > "$OUT/shallow_s25/stdout.txt" 2>&1
tar -C "$OUT" -czf "$OUT/shallow_s25.tgz" shallow_s25 && rm -rf "${OUT:?}/shallow_s25"
run() { bash bench/h200/run_campaign.sh "$@"; }   # run <name> <shape set> <seed offset>
run run42 alt39 4100
run run43 alt40 4200
ls -l "$OUT"
