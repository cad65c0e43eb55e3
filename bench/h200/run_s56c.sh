#!/usr/bin/env bash
# Written in session 56: GROUP_M 4 and 16 beside the campaigns' 1 and 8 at 4096^3, four of gemm.tile's default
# sweep's top tiles (its top pick sets GROUP_M 16, a value no campaign draws). The H100's part:
# calibration/h100/measured/groupm16_s56. `bash bench/h200/run_s56c.sh` writes $OUT/groupm16_s56.tgz.
set -u
cd "$(dirname "$0")/../.."
S=""
for g in 1 4 8 16; do
  for t in "128,256,32,8,4" "128,256,64,8,3" "128,128,64,4,3" "64,256,64,8,3"; do S="$S""4096,4096,4096,$t,$g;"; done
done
mkdir -p "$OUT/groupm16_s56"
PYTHONUNBUFFERED=1 ACC_EXPLICIT_GEMM="$S" ACC_DEADLINE_S=120 timeout 150 \
  python3 bench/h200/measure_accuracy.py "$OUT/groupm16_s56" > "$OUT/groupm16_s56/stdout.txt" 2>&1
[ -f "$OUT/groupm16_s56/log.txt" ] && gzip -9 "$OUT/groupm16_s56/log.txt"
tar -C "$OUT" -czf "$OUT/groupm16_s56.tgz" groupm16_s56 && rm -rf "${OUT:?}/groupm16_s56"
