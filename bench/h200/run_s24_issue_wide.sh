#!/usr/bin/env bash
# Session 24's third device call: the stream loop against the campaigns' GEMM over the small-M tiles
# (bench/h200/measure_copy_issue_s24.py, ISSUE_SET=wide).
set -u
cd "$(dirname "$0")/../.."
mkdir -p "$OUT/copy_issue_wide_s24"
PYTHONUNBUFFERED=1 ISSUE_SET=wide ISSUE_DEADLINE_S=400 timeout 450 python3 bench/h200/measure_copy_issue_s24.py \
  "$OUT/copy_issue_wide_s24" > "$OUT/copy_issue_wide_s24/stdout.txt" 2>&1
tar -C "$OUT" -czf "$OUT/copy_issue_wide_s24.tgz" copy_issue_wide_s24 && rm -rf "${OUT:?}/copy_issue_wide_s24"
ls -l "$OUT"
