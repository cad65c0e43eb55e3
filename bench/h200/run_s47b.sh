#!/usr/bin/env bash
# Session 47: co-readers together or apart (measure_trip_phase.py TRIP_SET=g1grid, M = 128), the neighbouring-pid
# order and Triton's GROUP_M = 1 order, $OUT/trip_g1grid_together.tgz and $OUT/trip_g1grid_apart.tgz.
set -u
cd "$(dirname "$0")/../.."
source bench/h200/steps.sh
record_call
step trip_g1grid_together 200 env TRIP_SET=g1grid python3 bench/h200/measure_trip_phase.py
step trip_g1grid_apart 200 env TRIP_SET=g1grid TRIP_ORDER=g1 python3 bench/h200/measure_trip_phase.py
ls -la "$OUT"
