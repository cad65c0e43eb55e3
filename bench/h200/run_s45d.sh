#!/usr/bin/env bash
# Session 45: the small-M k-loop's mean trip and the launch's start and end over K (measure_trip_phase.py
# TRIP_SET=kgrid: four tiles at K = 2048 .. 28672), $OUT/trip_kgrid.tgz.
set -u
cd "$(dirname "$0")/../.."
source bench/h200/steps.sh
record_call
step trip_kgrid 300 env TRIP_SET=kgrid python3 bench/h200/measure_trip_phase.py
ls -la "$OUT"
