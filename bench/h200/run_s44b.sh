#!/usr/bin/env bash
# Session 44, second device call: the short-run set d (run_s41_shortruns.sh: BN = 32 against BN = 64 at equal CTA
# counts, and the CTAs an SM moved by the stages), $OUT/shortruns44d.tgz; then the partner lag at 896 CTAs at those
# stages (measure_partner_lag.py PARTNER_LAG_SET=s44), $OUT/partner_lag_s44.tgz.
set -u
cd "$(dirname "$0")/../.."
source bench/h200/steps.sh
record_call
SR_SET=d bash bench/h200/run_s41_shortruns.sh
step partner_lag_s44 200 env PARTNER_LAG_SET=s44 python3 bench/h200/measure_partner_lag.py
ls -la "$OUT"
