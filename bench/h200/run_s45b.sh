#!/usr/bin/env bash
# Session 45, a later call: every k-loop trip's start of the campaigns' small-M bf16 GEMM on its SM's clock, at two
# and at six or seven CTAs an SM (measure_trip_phase.py), $OUT/trip_phase.tgz.
set -u
cd "$(dirname "$0")/../.."
source bench/h200/steps.sh
record_call
step trip_phase 300 python3 bench/h200/measure_trip_phase.py
ls -la "$OUT"
