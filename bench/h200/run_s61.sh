#!/usr/bin/env bash
# Session 61, one device call: bench/h200/measure_lrc_s61.py (what the SMs asked for, what the L2 Request Coalescer
# merged and what the slices served, on row kernels, the two 8192^3 G8 references of memory.l2.bandwidth and the
# 64x256 G8 / G1 twins), tarred as $OUT/lrc_s61.tgz (file under calibration/<device>/measured/lrc_s61).
set -u
cd "$(dirname "$0")/../.."
source bench/h200/steps.sh
record_call
step lrc_s61 330 env LRC_DEADLINE_S=280 python3 bench/h200/measure_lrc_s61.py
ls -la "$OUT"
