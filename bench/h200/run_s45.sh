#!/usr/bin/env bash
# Session 45: the partner lag at 256 and 896 CTAs, 3 against 4 stages on 8 and 4 warps (measure_partner_lag.py
# PARTNER_LAG_SET=s45), $OUT/partner_lag_s45.tgz.
set -u
cd "$(dirname "$0")/../.."
source bench/h200/steps.sh
record_call
step partner_lag_s45 300 env PARTNER_LAG_SET=s45 python3 bench/h200/measure_partner_lag.py
ls -la "$OUT"
