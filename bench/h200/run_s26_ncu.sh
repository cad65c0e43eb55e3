#!/usr/bin/env bash
# Session 26's second device call: Nsight Compute's warp states, issue counts and pipe loads on fp8 warp-mma
# tiles on 2/4/8 warps at 4 CTAs an SM and run40's tall tile (bench/h200/measure_l2_groupm.py, L2_SET=s26).
set -u
cd "$(dirname "$0")/../.."
mkdir -p "$OUT/l2_groupm_s26"
PYTHONUNBUFFERED=1 L2_SET=s26 L2G_DEADLINE_S=360 timeout 520 python3 bench/h200/measure_l2_groupm.py \
  "$OUT/l2_groupm_s26" > "$OUT/l2_groupm_s26/stdout.txt" 2>&1
gzip -f "$OUT/l2_groupm_s26/ncu_raw.txt"
tar -C "$OUT" -czf "$OUT/l2_groupm_s26.tgz" l2_groupm_s26 && rm -rf "${OUT:?}/l2_groupm_s26"
ls -l "$OUT"
