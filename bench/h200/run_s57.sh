#!/usr/bin/env bash
# Written in session 57: a held-out check of the shared warp layout of chained warp-mma dots (docs/analysis.md
# section 3, "One warp layout for two chained warp-mma dots"), which session 57 derived from Triton's source and the
# TTGIR of attn_warp_s56's binaries, not from its timings. Other shapes and tiles than run_s56.sh's: causal D 128
# and D 64, full D 128 and D 64, 10 tiles each, 7 on the warp mma (2 warps, or BLOCK_M 32 on 4) and 3 warpgroup twins.
# `bash bench/h200/run_s57.sh NAME` writes $OUT/NAME.tgz (file under calibration/<device>/measured/attn_warp_s57).
set -u
cfgs=""
for shape in "1,2,16,8192,128" "0,16,32,1024,128" "0,4,16,4096,64" "1,8,32,2048,64"; do
  for t in "32,32,2,3" "32,64,2,3" "64,32,2,3" "64,64,2,2" "64,128,2,2" "32,128,4,2" "32,32,4,2" \
           "64,64,4,2" "128,64,8,2" "128,32,4,2"; do
    cfgs="$cfgs$shape,$t;"
  done
done
ACC_EXPLICIT_ATTN="$cfgs" ACC_DEADLINE_S=${ACC_DEADLINE_S:-200} \
  exec bash "$(dirname "$0")/run_campaign.sh" "${1:-attn_warp_s57}" main 0
