#!/usr/bin/env bash
# Session 25's fifth device call: B tiles read by 1, 2 or 4 CTAs of the campaigns' fp8 and bf16 GEMMs
# (bench/h200/measure_copy_issue_s24.py, ISSUE_SET=coread8 and coread).
set -u
cd "$(dirname "$0")/../.."
for s in ${COREAD_SETS:-coread8 coread}; do
  mkdir -p "$OUT/${s}_s25"
  PYTHONUNBUFFERED=1 ISSUE_SET=$s ISSUE_DEADLINE_S=120 timeout 150 python3 bench/h200/measure_copy_issue_s24.py \
    "$OUT/${s}_s25" > "$OUT/${s}_s25/stdout.txt" 2>&1
  tar -C "$OUT" -czf "$OUT/${s}_s25.tgz" "${s}_s25" && rm -rf "${OUT:?}/${s}_s25"
done
ls -l "$OUT"
