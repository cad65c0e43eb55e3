#!/usr/bin/env bash
# Session 46: kgrid's two N = 8192 tiles at M = 64 over K (measure_trip_phase.py TRIP_SET=mkgrid: a B tile
# co-read by four CTAs), $OUT/trip_mkgrid.tgz.
set -u
cd "$(dirname "$0")/../.."
source bench/h200/steps.sh
record_call
step trip_mkgrid 300 env TRIP_SET=mkgrid python3 bench/h200/measure_trip_phase.py
ls -la "$OUT"
