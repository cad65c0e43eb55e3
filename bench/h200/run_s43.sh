#!/usr/bin/env bash
# Session 43, one device call. First the SM-rate probe (measure_sm_rates.py, under a minute: $OUT/sm_rates.tgz); then,
# on an H200, run_s42.sh's steps with the decode timelines first (each step tars its own output, so a call cut short
# keeps what ended): measure_decode_timeline.py DECODE_TL_SET=s42, measure_partner_lag.py, the short-run pairs (sets
# a, c, b of run_s41_shortruns.sh). On an H100, whose run_s42.sh part is filed (calibration/h100/measured/partner_lag,
# decode_timeline_s42, shortruns41/c), the probe only.
set -u
cd "$(dirname "$0")/../.."
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$OUT/gpu.txt"
git log --oneline -1 > "$OUT/commit.txt" 2>/dev/null
mkdir -p "$OUT/sm_rates"
PYTHONUNBUFFERED=1 timeout 240 python3 bench/h200/measure_sm_rates.py "$OUT/sm_rates" > "$OUT/sm_rates/stdout.txt" 2>&1
tar -C "$OUT" -czf "$OUT/sm_rates.tgz" sm_rates && rm -rf "${OUT:?}/sm_rates"
if ! grep -q H100 "$OUT/gpu.txt"; then
  mkdir -p "$OUT/decode_timeline_s42"
  PYTHONUNBUFFERED=1 DECODE_TL_SET=s42 DECODE_TL_REPS=2 timeout 150 python3 bench/h200/measure_decode_timeline.py \
    "$OUT/decode_timeline_s42" > "$OUT/decode_timeline_s42/stdout.txt" 2>&1
  tar -C "$OUT" -czf "$OUT/decode_timeline_s42.tgz" decode_timeline_s42 && rm -rf "${OUT:?}/decode_timeline_s42"
  mkdir -p "$OUT/partner_lag"
  PYTHONUNBUFFERED=1 timeout 180 python3 bench/h200/measure_partner_lag.py "$OUT/partner_lag" \
    > "$OUT/partner_lag/stdout.txt" 2>&1
  tar -C "$OUT" -czf "$OUT/partner_lag.tgz" partner_lag && rm -rf "${OUT:?}/partner_lag"
  for set in a c b; do SR_SET=$set bash bench/h200/run_s41_shortruns.sh; done
fi
ls -la "$OUT"
