#!/usr/bin/env bash
# Session 26's third device call: the same counts (L2_SET=s26b) on bf16 2-warp small-M tiles whose compiled
# loop costs 1.3-1.45x the stream loop's, beside twins that cost nothing (bench/h200/measure_l2_groupm.py).
set -u
cd "$(dirname "$0")/../.."
mkdir -p "$OUT/l2_groupm_s26b"
PYTHONUNBUFFERED=1 L2_SET=s26b L2G_DEADLINE_S=360 timeout 520 python3 bench/h200/measure_l2_groupm.py \
  "$OUT/l2_groupm_s26b" > "$OUT/l2_groupm_s26b/stdout.txt" 2>&1
gzip -f "$OUT/l2_groupm_s26b/ncu_raw.txt"
tar -C "$OUT" -czf "$OUT/l2_groupm_s26b.tgz" l2_groupm_s26b && rm -rf "${OUT:?}/l2_groupm_s26b"
ls -l "$OUT"
