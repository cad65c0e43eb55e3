#!/usr/bin/env bash
# Session 25's second device call: the campaigns' fp8 GEMM at one, two and three stages on many SMs
# (bench/h200/measure_copy_issue_s24.py, ISSUE_SET=shallow8), beside shallow_s25's bf16.
set -u
cd "$(dirname "$0")/../.."
mkdir -p "$OUT/shallow8_s25"
PYTHONUNBUFFERED=1 ISSUE_SET=shallow8 ISSUE_DEADLINE_S=150 timeout 175 python3 bench/h200/measure_copy_issue_s24.py \
  "$OUT/shallow8_s25" > "$OUT/shallow8_s25/stdout.txt" 2>&1
tar -C "$OUT" -czf "$OUT/shallow8_s25.tgz" shallow8_s25 && rm -rf "${OUT:?}/shallow8_s25"
ls -l "$OUT"
