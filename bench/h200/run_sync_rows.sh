#!/usr/bin/env bash
# Unpipelined (1-stage) loads by the tile's row length, from L2, with Triton's default caching and with .cg (session 33;
# docs/analysis.md section 8, "Unpipelined loads" and "fp8's 1-stage rows by row length"). `pipeline.sync_load_cycles`
# (11.01 ns a warp-wide 16-byte load) was measured on 64-byte rows with .cg; where that floor binds the issue-15 1-stage
# rows by 1.3x or more, A's rows of 64 B price +2..+6% and of 128-256 B +19..+24% (bf16 BK 32 / 64 / 128, fp8 BK 64 /
# 128). This states the rate for whole lines: tiles of 64-, 128- and 256-byte rows (bf16 64x64xBK on 4 warps, BK = 32,
# 64, 128), r = 2 and 4 CTAs a SM, each SM's private tiles 262 KB (K wrapping at 1024 / r: past the 128-240 KB of L1
# their shared memory leaves, 34.6 MB a machine, 52 MB where the far partition keeps a copy of each: inside L2), both
# caches. Sized for the H200's 60 MB L2 (an H100's 50 MB would not hold the far copies): run it on an H200. One call
# of about 3 minutes; lands in $OUT/sync_rows/: file it under
# calibration/h200/measured/sync_rows/ and read ns a load at each r as mlp_l2_stage1's README does.
set -u
cd "$(dirname "$0")/../.."
D="$OUT/sync_rows"; mkdir -p "$D"
nvidia-smi > "$D/gpu.txt" 2>&1
for cache in default .cg; do
  for r in 2 4; do
    mod=""; [ "$cache" = .cg ] && mod=".cg"
    MLP_PARTS=resident MLP_RES_VARIANTS=private MLP_KRES=$((1024 / r)) MLP_CACHE="$mod" MLP_RES_STAGES=1 \
      MLP_RES_TILES="64x64x32x4;64x64x64x4;64x64x128x4" MLP_RES_R=$r MLP_DEADLINE_S=60 PYTHONUNBUFFERED=1 \
      timeout 90 python3 bench/h200/measure_mlp.py "$D/${cache#.}_r$r" 2>&1 | tail -4
  done
done
ls -lR "$D" | head -40
