#!/usr/bin/env bash
# Session 42, one device call (about 4 minutes): the partner-lag probe (measure_partner_lag.py), the one-wave decode
# timelines (measure_decode_timeline.py DECODE_TL_SET=s42), then the short-run pairs on this part (sets a, b, c of
# run_s41_shortruns.sh). Each writes its own $OUT/*.tgz. On an H100, whose sets a and b are filed
# (calibration/h100/measured/shortruns41), the probe, the decode timelines and set c only.
set -u
cd "$(dirname "$0")/../.."
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$OUT/gpu.txt"
git log --oneline -1 > "$OUT/commit.txt" 2>/dev/null
mkdir -p "$OUT/partner_lag"
PYTHONUNBUFFERED=1 timeout 180 python3 bench/h200/measure_partner_lag.py "$OUT/partner_lag" > "$OUT/partner_lag/stdout.txt" 2>&1
tar -C "$OUT" -czf "$OUT/partner_lag.tgz" partner_lag && rm -rf "${OUT:?}/partner_lag"
mkdir -p "$OUT/decode_timeline_s42"
PYTHONUNBUFFERED=1 DECODE_TL_SET=s42 DECODE_TL_REPS=2 timeout 150 python3 bench/h200/measure_decode_timeline.py \
  "$OUT/decode_timeline_s42" > "$OUT/decode_timeline_s42/stdout.txt" 2>&1
tar -C "$OUT" -czf "$OUT/decode_timeline_s42.tgz" decode_timeline_s42 && rm -rf "${OUT:?}/decode_timeline_s42"
sets="a c b"; grep -q H100 "$OUT/gpu.txt" && sets=c
for set in $sets; do SR_SET=$set bash bench/h200/run_s41_shortruns.sh; done
ls -la "$OUT"
