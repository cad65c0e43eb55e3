#!/usr/bin/env bash
# Session 46: which launches' SMs pull ahead at two CTAs an SM (measure_trip_phase.py TRIP_SET=sgrid:
# BN 32 and BN 64 at N = 8192, K = 16384, 2 .. 6 stages on 4 and 8 warps), $OUT/trip_sgrid.tgz.
set -u
cd "$(dirname "$0")/../.."
source bench/h200/steps.sh
record_call
step trip_sgrid 300 env TRIP_SET=sgrid python3 bench/h200/measure_trip_phase.py
ls -la "$OUT"
