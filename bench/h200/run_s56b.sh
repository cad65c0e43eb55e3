#!/usr/bin/env bash
# Written in session 56: Nsight Compute's warp states and pipe utilisation of Triton's flash attention on the warp
# mma (64 x 64 on 2 warps, 32 x 64 on 4, 64 x 32 on 2, D 128; 64 x 64 on 2 at D 64) and their warpgroup twins (64 x 64
# on 4), full attention B4 H32 S4096 (the sections WarpStateStats, SchedulerStats, ComputeWorkloadAnalysis,
# SpeedOfLight, LaunchStats, Occupancy; raw page). `bash bench/h200/run_s56b.sh` writes $OUT/attn_warp_ncu.csv.
set -u
cd "$(dirname "$0")"
PYTHONUNBUFFERED=1 timeout 300 ncu --csv --page raw --section WarpStateStats --section SchedulerStats \
  --section ComputeWorkloadAnalysis --section SpeedOfLight --section LaunchStats --section Occupancy \
  python3 measure_attn_warp_ncu.py 128,64,64,2,2 128,64,64,4,2 128,32,64,4,2 128,64,32,2,2 64,64,64,2,3 64,64,64,4,2 \
  > "$OUT/attn_warp_ncu.csv" 2> "$OUT/attn_warp_ncu.err"
tail -c 1500 "$OUT/attn_warp_ncu.err"; wc -c "$OUT/attn_warp_ncu.csv"
