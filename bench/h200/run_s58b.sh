#!/usr/bin/env bash
# Written in session 58: a held-out check of the sub-partition servers of a CTA of fewer than 4 warps
# (docs/analysis.md section 3, "A CTA of fewer warps than the SM's sub-partitions"; chain_overlap.subpartition_servers),
# which session 58 derived from the SM's four processing blocks, not from these rows. Flash attention at four shapes
# none of run_s56.sh / run_s57.sh timed (causal D 64 and D 128, full D 64 and D 128), 9 tiles each: 1- and 2-warp
# tiles (the warp mma) and 4- and 8-warp twins. `bash bench/h200/run_s58b.sh NAME` writes $OUT/NAME.tgz
# (file under calibration/<device>/measured/attn_warp_s58).
set -u
cfgs=""
for shape in "1,16,16,1024,64" "0,2,32,8192,64" "1,4,8,4096,128" "0,8,16,2048,128"; do
  for t in "16,32,1,2" "32,32,1,2" "32,32,2,2" "32,64,2,3" "64,32,2,2" "64,64,2,3" "64,64,4,2" "64,32,4,3" \
           "128,64,8,2"; do
    cfgs="$cfgs$shape,$t;"
  done
done
ACC_EXPLICIT_ATTN="$cfgs" ACC_DEADLINE_S=${ACC_DEADLINE_S:-150} \
  exec bash "$(dirname "$0")/run_campaign.sh" "${1:-attn_warp_s58}" main 0
