#!/usr/bin/env bash
# Session 23's third device call: the L2 Request Coalescer's counters (bench/h200/measure_lrc_s23.py).
set -u
cd "$(dirname "$0")/../.."
mkdir -p "$OUT/lrc_s23"
PYTHONUNBUFFERED=1 LRC_DEADLINE_S=220 timeout 400 python3 bench/h200/measure_lrc_s23.py "$OUT/lrc_s23" \
  > "$OUT/lrc_s23/stdout.txt" 2>&1
gzip -f "$OUT/lrc_s23/ncu_raw.txt" "$OUT/lrc_s23/lrc_metrics.txt"
tar -C "$OUT" -czf "$OUT/lrc_s23.tgz" lrc_s23 && rm -rf "${OUT:?}/lrc_s23"
ls -l "$OUT"
