#!/usr/bin/env bash
# Issue-15 campaigns in one device call, one after the other, 220 s of timing each:
#     bash bench/h200/run_pair.sh NAME SHAPE_SET SEED_OFFSET [NAME SHAPE_SET SEED_OFFSET ...]
# each through run_campaign.sh into $OUT/NAME.tgz; the device's name first, the archives' listing last. A session's
# run_sNN.sh names its pair (a development campaign, then a held-out one) and calls this.
set -u
cd "$(dirname "$0")/../.."
nvidia-smi --query-gpu=name --format=csv,noheader
while [ "$#" -ge 3 ]; do
  ACC_DEADLINE_S=220 bash bench/h200/run_campaign.sh "$1" "$2" "$3"
  shift 3
done
ls -l "$OUT"
