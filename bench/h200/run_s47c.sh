#!/usr/bin/env bash
# Session 47: run_s47b.sh's g1grid at M = 32 and 64 (two and four co-readers of a B tile), together and apart:
# $OUT/trip_g1grid_m{32,64}_{together,apart}.tgz.
set -u
cd "$(dirname "$0")/../.."
source bench/h200/steps.sh
record_call
for m in 32 64; do
  step trip_g1grid_m${m}_together 200 env TRIP_SET=g1grid TRIP_M=$m python3 bench/h200/measure_trip_phase.py
  step trip_g1grid_m${m}_apart 200 env TRIP_SET=g1grid TRIP_M=$m TRIP_ORDER=g1 python3 bench/h200/measure_trip_phase.py
done
ls -la "$OUT"
