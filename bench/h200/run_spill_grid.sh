#!/usr/bin/env bash
# The spilled traffic of grids under one wave (session 32; bench/h200/measure_spill_local.cu's grid experiment):
# whether the machine's local rate follows its warps (tfx.analysis.local_parallelism.spread, machine_ceiling) or a
# fixed share a SM. One device call, about a minute (the build is most of it); on an H200 or an H100. Lands in
# $OUT/spill_local_grid/ (spill_local_grid.csv, log.txt, gpu.txt): file it under calibration/<device>/measured/.
set -u
cd "$(dirname "$0")/../.."
D="$OUT/spill_local_grid"; mkdir -p "$D"
nvidia-smi > "$D/gpu.txt" 2>&1
nvcc -O3 -arch=sm_90a -o /tmp/spill_local bench/h200/measure_spill_local.cu > "$D/build.txt" 2>&1 || { cat "$D/build.txt"; exit 1; }
timeout 120 /tmp/spill_local "$D" grid | tee "$D/log.txt"
rm -f "$D/spill_local.csv"      # the full sweep's file, opened empty before the grid experiment returns
ls -l "$D"
