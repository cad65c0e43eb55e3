#!/usr/bin/env bash
# Session 21's helper measurements in one device call, one tar each under $OUT (a call returns at most 8 files).
# persist21: Nsight on seven persistent walks; bigtile21: SM and L2 clocks inside grouped GEMM launches.
cd "$(dirname "$0")/../.."
mkdir -p /tmp/pn21 /tmp/l2c21
PYTHONUNBUFFERED=1 PN21_NCU_DEADLINE_S=80 timeout 110 python3 bench/h200/measure_persist_ncu_s21.py /tmp/pn21 > /tmp/pn21/stdout.txt 2>&1
tar czf "$OUT/persist_ncu_s21.tgz" -C /tmp pn21
PYTHONUNBUFFERED=1 L2C21_DEADLINE_S=75 timeout 110 python3 bench/h200/measure_l2_clock_s21.py /tmp/l2c21 > /tmp/l2c21/stdout.txt 2>&1
tar czf "$OUT/l2_clock_s21.tgz" -C /tmp l2c21
tail -3 /tmp/pn21/stdout.txt /tmp/l2c21/stdout.txt
