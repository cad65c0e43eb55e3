#!/usr/bin/env bash
# Session 45: the small-M k-loop's mean trip apart from the launch's start and end, over a grid of tiles (BN 32 / 64 /
# 128, BK 64 / 128, 3 and 4 stages, 4 warps, N = 8192 and 28672: measure_trip_phase.py TRIP_SET=grid),
# $OUT/trip_grid.tgz.
set -u
cd "$(dirname "$0")/../.."
source bench/h200/steps.sh
record_call
step trip_grid 300 env TRIP_SET=grid python3 bench/h200/measure_trip_phase.py
ls -la "$OUT"
