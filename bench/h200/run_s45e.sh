#!/usr/bin/env bash
# Session 45: the continued pieces' cost per trip against the B bytes in flight (measure_trip_phase.py TRIP_SET=fgrid:
# BN 32 against BN 64 at N = 8192 .. 24576, 3 and 4 stages), $OUT/trip_fgrid.tgz.
set -u
cd "$(dirname "$0")/../.."
source bench/h200/steps.sh
record_call
step trip_fgrid 300 env TRIP_SET=fgrid python3 bench/h200/measure_trip_phase.py
ls -la "$OUT"
