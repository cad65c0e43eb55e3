#!/usr/bin/env bash
# The H100's own memory system and clocks in one device call (session 31, an H100 lent where the H200 was not):
# the measurements hw_profiles/h100_sxm.toml cites for what differs from the H200's GH100 (HBM3 at 3.35 TB/s,
# a 50 MB L2), by the scripts that measured the same facts on the H200. Everything lands in $OUT/h100_cal.tgz.
set -u
cd "$(dirname "$0")/../.."
D="$OUT/h100_cal"; mkdir -p "$D"
step() { local name=$1 limit=$2; shift 2; echo "== $name"; timeout "$limit" "$@" > "$D/$name.stdout.txt" 2>&1; echo "rc $?"; }
nvidia-smi > "$D/nvidia-smi.txt" 2>&1
export PYTHONUNBUFFERED=1
step memory 90 python3 bench/h100/measure_memory.py "$D/memory"
step latency 120 python3 bench/h200/measure_latency.py "$D/latency"
LAT_SET=read step latency_read 120 python3 bench/h200/measure_latency.py "$D/latency_read"
mkdir -p "$D/spill_local"
step spill_local_build 120 nvcc -O3 -arch=sm_90a -o /tmp/spill_local bench/h200/measure_spill_local.cu
step spill_local 60 /tmp/spill_local "$D/spill_local"
step fp8_rate 90 python3 bench/h200/measure_fp8_rate.py
GCLOCK_DEADLINE_S=60 step gemm_clock 90 python3 bench/h200/measure_gemm_clock.py "$D/gemm_clock"
tar -C "$OUT" -czf "$OUT/h100_cal.tgz" h100_cal && rm -rf "$D"
ls -l "$OUT"
