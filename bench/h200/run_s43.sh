#!/usr/bin/env bash
# Session 43, one device call: on an H200 the whole of run_s42.sh (about 4 minutes), then the SM-rate probe
# (measure_sm_rates.py, under a minute: $OUT/sm_rates.tgz); on an H100, whose run_s42.sh part is filed
# (calibration/h100/measured/partner_lag, decode_timeline_s42, shortruns41/c), the probe only.
set -u
cd "$(dirname "$0")/../.."
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$OUT/gpu.txt"
if ! grep -q H100 "$OUT/gpu.txt"; then bash bench/h200/run_s42.sh; fi
mkdir -p "$OUT/sm_rates"
PYTHONUNBUFFERED=1 timeout 240 python3 bench/h200/measure_sm_rates.py "$OUT/sm_rates" > "$OUT/sm_rates/stdout.txt" 2>&1
tar -C "$OUT" -czf "$OUT/sm_rates.tgz" sm_rates && rm -rf "${OUT:?}/sm_rates"
ls -la "$OUT"
