#!/usr/bin/env bash
# Session 25's eighth device call: Nsight Compute on the launches whose tile requests pass the L2 rate
# the model prices (bench/h200/measure_l2_groupm.py, L2_SET=s25), packed into one archive.
set -u
cd "$(dirname "$0")/../.."
mkdir -p "$OUT/l2_groupm_s25"
PYTHONUNBUFFERED=1 L2_SET=s25 L2G_DEADLINE_S=150 timeout 280 python3 bench/h200/measure_l2_groupm.py \
  "$OUT/l2_groupm_s25" > "$OUT/l2_groupm_s25/stdout.txt" 2>&1
gzip -f "$OUT/l2_groupm_s25/ncu_raw.txt"
tar -C "$OUT" -czf "$OUT/l2_groupm_s25.tgz" l2_groupm_s25 && rm -rf "${OUT:?}/l2_groupm_s25"
ls -l "$OUT"
