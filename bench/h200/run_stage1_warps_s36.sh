#!/usr/bin/env bash
# Written in session 36 (no H200 lent): the unpipelined (1-stage) k-loop of one CTA an SM at 2, 4 and 8 warps
# for the small tiles of the campaigns' M <= 128 GEMMs, from L2 (`private`) and from DRAM (`dram`), one device
# call of about a minute. It decides what the bf16 1-stage classes BM < 64 on 4 and 8 warps (+5.9% and +8.5%
# signed medians, BK 32 on 8 warps +8..+20%; docs/analysis.md section 8, "The unpipelined warp-mma trip") over-
# count: the model's one-CTA trip is 122.22 ns of chain + compute + the one-tile idle round trip (527 ns) + the
# tile at the SM's DRAM ceiling, the same at every warp count but for the compute, where the measured
# 16x8192x8192 16x64x32 trip is about 721 ns on 4 warps and 730 on 8 against 765 and 782 priced (run27).
# Each tile at three warp counts side by side says whether the chain, the loads' rounds or the idle floor moves
# with the warps. File $OUT/stage1_warps_s36 under calibration/h200/measured/ (an H100 too: calibration/h100).
set -u
cd "$(dirname "$0")/../.."
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
MLP_PARTS=resident MLP_RES_STAGES=1 MLP_RES_R=1 MLP_DEADLINE_S=150 \
MLP_RES_TILES="16x64x32x2;16x64x32x4;16x64x32x8;32x64x32x2;32x64x32x4;32x64x32x8;16x128x32x2;16x128x32x4;16x128x32x8;16x64x64x2;16x64x64x4;16x64x64x8" \
PYTHONUNBUFFERED=1 timeout 200 python3 bench/h200/measure_mlp.py "$OUT/stage1_warps_s36"
ls -l "$OUT/stage1_warps_s36"
