#!/usr/bin/env bash
# Session 24's second device call: the Triton GEMM's K masks and stepped pointers against the stream
# kernel's loop (bench/h200/measure_copy_issue_s24.py).
set -u
cd "$(dirname "$0")/../.."
mkdir -p "$OUT/copy_issue_s24"
PYTHONUNBUFFERED=1 ISSUE_DEADLINE_S=300 timeout 340 python3 bench/h200/measure_copy_issue_s24.py \
  "$OUT/copy_issue_s24" > "$OUT/copy_issue_s24/stdout.txt" 2>&1
tar -C "$OUT" -czf "$OUT/copy_issue_s24.tgz" copy_issue_s24 && rm -rf "${OUT:?}/copy_issue_s24"
ls -l "$OUT"
