#!/usr/bin/env bash
# The spilled traffic of grids under one wave and of frames at L2's capacity (session 32; bench/h200/
# measure_spill_local.cu's grid mode): whether the machine's local rate follows its warps
# (tfx.analysis.local_parallelism.spread, machine_ceiling) or a fixed share a SM, and how much of the frames L2 keeps
# at 0.5-2.2 of its capacity with and without a read-once stream beside them (docs/analysis.md section 8, "Spilled
# frames at L2's capacity: no cliff"). One device call, about a minute (the build is most of it); on an H200 or an
# H100. Lands in $OUT/spill_local_grid/ (spill_local_grid.csv, spill_local_l2.csv, log.txt, gpu.txt): file it under
# calibration/<device>/measured/.
set -u
cd "$(dirname "$0")/../.."
D="$OUT/spill_local_grid"; mkdir -p "$D"
nvidia-smi > "$D/gpu.txt" 2>&1
nvcc -O3 -arch=sm_90a -o /tmp/spill_local bench/h200/measure_spill_local.cu > "$D/build.txt" 2>&1 || { cat "$D/build.txt"; exit 1; }
timeout 120 /tmp/spill_local "$D" grid | tee "$D/log.txt"
rm -f "$D/spill_local.csv"      # the full sweep's file, opened empty before the grid experiment returns
ls -l "$D"
