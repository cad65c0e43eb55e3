#!/usr/bin/env bash
# Session 25's third device call: the campaigns' fp8 (B [N, K]) and bf16 GEMMs at 3-5 stages on 132-528 CTAs
# (bench/h200/measure_copy_issue_s24.py, ISSUE_SET=deep8 and deep).
set -u
cd "$(dirname "$0")/../.."
for s in ${DEEP_SETS:-deep8 deep}; do
  mkdir -p "$OUT/${s}_s25"
  PYTHONUNBUFFERED=1 ISSUE_SET=$s ISSUE_DEADLINE_S=120 timeout 150 python3 bench/h200/measure_copy_issue_s24.py \
    "$OUT/${s}_s25" > "$OUT/${s}_s25/stdout.txt" 2>&1
  tar -C "$OUT" -czf "$OUT/${s}_s25.tgz" "${s}_s25" && rm -rf "${OUT:?}/${s}_s25"
done
ls -l "$OUT"
