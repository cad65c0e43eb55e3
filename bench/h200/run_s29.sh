#!/usr/bin/env bash
# Session 29's device call (session 28 was lent none and wrote run_s28.sh): the development (alt46, run49)
# and held-out (alt47, run50) campaigns first, each packed as soon as it ends; then two requests of the
# notes: the 2-stage 128x256 k-loop trips from L2 (measure_tensor_clock.py, TCLOCK_TRIP_SET=s29) and
# Nsight Compute's view of the 16-warp rmsnorm CTAs at N = 1024 against 2048 (the 16 KB CTAs' excess over
# r D at 3-4 CTAs an SM). Each extra part is packed into one archive (a call returns at most 8 files).
set -u
cd "$(dirname "$0")/../.."
bash bench/h200/run_s28.sh
mkdir -p "$OUT/tclock29"
PYTHONUNBUFFERED=1 TCLOCK_DEADLINE_S=70 TCLOCK_PARTS=trip TCLOCK_TRIP_SET=s29 timeout 100 \
  python3 bench/h200/measure_tensor_clock.py "$OUT/tclock29" > "$OUT/tclock29/stdout.txt" 2>&1
tar -C "$OUT" -czf "$OUT/tclock29.tgz" tclock29 && rm -rf "${OUT:?}/tclock29"
mkdir -p "$OUT/ncu29"
PYTHONUNBUFFERED=1 ROWS_NCU_FABRIC=0 \
  ROWS_NCU_CFGS="rmsnorm,65536,1024,4,16;rmsnorm,65536,2048,4,16;rmsnorm,65536,2048,2,16;rmsnorm,65536,2048,4,8" \
  timeout 110 python3 bench/h200/measure_ncu_rows.py "$OUT/ncu29" > "$OUT/ncu29/stdout.txt" 2>&1
tar -C "$OUT" -czf "$OUT/ncu29.tgz" ncu29 && rm -rf "${OUT:?}/ncu29"
ls -l "$OUT"
