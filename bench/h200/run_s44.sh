#!/usr/bin/env bash
# Session 44, one device call: measure_decode_timeline.py DECODE_TL_SET=s44 (one wave of equal decode CTAs at 1-3 an
# SM on 8, 4 and 2 warps: are the six slow TPCs of the s42 launches slow alone or only beside co-resident CTAs?),
# tarred as $OUT/decode_timeline_s44.tgz.
set -u
cd "$(dirname "$0")/../.."
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$OUT/gpu.txt"
git log --oneline -1 > "$OUT/commit.txt" 2>/dev/null
name=decode_timeline_s44
mkdir -p "$OUT/$name"
PYTHONUNBUFFERED=1 DECODE_TL_SET=s44 DECODE_TL_REPS=2 timeout 300 python3 bench/h200/measure_decode_timeline.py \
  "$OUT/$name" > "$OUT/$name/stdout.txt" 2>&1
tar -C "$OUT" -czf "$OUT/$name.tgz" "$name" && rm -rf "${OUT:?}/$name"
ls -la "$OUT"
