#!/usr/bin/env bash
# One Nsight Compute set inside a device call: run_l2_set.sh <L2_SET> <deadline s> <timeout s> runs
# bench/h200/measure_l2_groupm.py with that L2_SET into $OUT/l2_groupm_<set>, gzips ncu's raw CSV and packs the
# folder into $OUT/l2_groupm_<set>.tgz (a call returns at most 8 files).
set -u
cd "$(dirname "$0")/../.."
name="l2_groupm_$1"
mkdir -p "$OUT/$name"
PYTHONUNBUFFERED=1 L2_SET=$1 L2G_DEADLINE_S=$2 timeout "$3" python3 bench/h200/measure_l2_groupm.py \
  "$OUT/$name" > "$OUT/$name/stdout.txt" 2>&1
gzip -f "$OUT/$name/ncu_raw.txt"
tar -C "$OUT" -czf "$OUT/$name.tgz" "$name" && rm -rf "${OUT:?}/$name"
ls -l "$OUT"
