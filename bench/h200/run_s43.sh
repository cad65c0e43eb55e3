#!/usr/bin/env bash
# Session 43, one device call. First the SM-rate probe (measure_sm_rates.py, under a minute: $OUT/sm_rates.tgz); then,
# on an H200, run_s42.sh's steps with the decode timelines first (each step tars its own output, so a call cut short
# keeps what ended): measure_decode_timeline.py DECODE_TL_SET=s42, measure_partner_lag.py, the short-run pairs (sets
# a, c, b of run_s41_shortruns.sh). On an H100, whose run_s42.sh part is filed (calibration/h100/measured/partner_lag,
# decode_timeline_s42, shortruns41/c), the probe only.
set -u
cd "$(dirname "$0")/../.."
source bench/h200/steps.sh
record_call

step sm_rates 240 python3 bench/h200/measure_sm_rates.py
if ! grep -q H100 "$OUT/gpu.txt"; then
  step decode_timeline_s42 150 env DECODE_TL_SET=s42 DECODE_TL_REPS=2 python3 bench/h200/measure_decode_timeline.py
  step partner_lag 180 python3 bench/h200/measure_partner_lag.py
  for set in a c b; do SR_SET=$set bash bench/h200/run_s41_shortruns.sh; done
fi
ls -la "$OUT"
