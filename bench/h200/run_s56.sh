#!/usr/bin/env bash
# Written in session 56: flash attention on the warp mma. Every issue-15 campaign draws attention tiles on the
# warpgroup path (BLOCK_M 64 / 128 on 4 or 8 warps: wgmma), and the SDPA reference's kernel, FlashAttention-2, runs
# mma.sync (docs/analysis.md, "What the SDPA reference's kernel is"), where tfx prices the warp-mma attention trip
# +27..+46% slow. This set times Triton's flash kernels on mma.sync (2 warps, or BLOCK_M 32 on 4) beside warpgroup
# twins at three shapes (causal and full D 128, full D 64), 12 tiles each.
# `bash bench/h200/run_s56.sh NAME` writes $OUT/NAME.tgz (file under calibration/<device>/measured/attn_warp_s56).
set -u
cfgs=""
for shape in "1,4,32,4096,128" "0,4,32,4096,128" "0,8,16,2048,64"; do
  for t in "32,32,2,2" "32,64,2,2" "64,32,2,2" "64,64,2,2" "32,64,4,2" "32,32,4,3" "64,64,2,3" \
           "64,64,4,2" "64,32,4,2" "128,64,8,2" "128,64,4,2" "128,128,8,2"; do
    cfgs="$cfgs$shape,$t;"
  done
done
ACC_EXPLICIT_ATTN="$cfgs" ACC_DEADLINE_S=${ACC_DEADLINE_S:-200} \
  exec bash "$(dirname "$0")/run_campaign.sh" "${1:-attn_warp_s56}" main 0
