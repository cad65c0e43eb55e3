#!/usr/bin/env bash
# Session 23's second device call: Nsight Compute on the launches whose tile requests pass the L2 rate
# the model prices (bench/h200/measure_l2_groupm.py, L2_SET=s23), packed into one archive.
set -u
cd "$(dirname "$0")/../.."
mkdir -p "$OUT/l2_groupm_s23"
PYTHONUNBUFFERED=1 L2_SET=s23 L2G_DEADLINE_S=240 timeout 420 python3 bench/h200/measure_l2_groupm.py \
  "$OUT/l2_groupm_s23" > "$OUT/l2_groupm_s23/stdout.txt" 2>&1
gzip -f "$OUT/l2_groupm_s23/ncu_raw.txt"
tar -C "$OUT" -czf "$OUT/l2_groupm_s23.tgz" l2_groupm_s23 && rm -rf "${OUT:?}/l2_groupm_s23"
ls -l "$OUT"
