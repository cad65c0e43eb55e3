#!/usr/bin/env bash
# The H100's own memory system and clocks (session 31, an H100 lent where the H200 was not; loans paused before this
# could run): the measurements hw_profiles/h100_sxm.toml would cite for what differs from the H200's GH100 (HBM3 at
# 3.35 TB/s with 5 stacks, 50 MB of L2 on 10 controllers), by the scripts that measured the same facts on the H200.
# Two device calls, each well under the 600 s a command may run:
#   bash bench/h100/run_calibration.sh memory    # device facts, copy/add/read curve, loaded latencies, spill path
#   bash bench/h100/run_calibration.sh streams   # cuBLAS bf16/fp8 rates, the clock under power, B-operand runs,
#                                                # the small-M k-loop's stream depth (run61/run62's small-M GEMMs
#                                                # drew 1.5-1.7 TB/s where the H200's drew 2.8)
#   bash bench/h100/run_calibration.sh kloop     # (session 36) the k-loop's DRAM round trip against the draw, the
#                                                # rows pipeline.dram_round_trip_unloaded / _at_copy_bandwidth are
#                                                # fitted on (h100_sxm still states the H200's 205 + 325 ns per TB/s)
# Each lands in $OUT/h100_<part>.tgz (file it under calibration/h100/measured/).
set -u
cd "$(dirname "$0")/../.."
PART=${1:?memory, streams or kloop}
D="$OUT/h100_$PART"; mkdir -p "$D"
step() { local name=$1 limit=$2; shift 2; echo "== $name $(date +%T)"; timeout "$limit" "$@" > "$D/$name.stdout.txt" 2>&1; echo "rc $?"; }
nvidia-smi > "$D/nvidia-smi.txt" 2>&1
export PYTHONUNBUFFERED=1
case "$PART" in
  memory)
    step memory 90 python3 bench/h100/measure_memory.py "$D/memory"
    step latency 150 python3 bench/h200/measure_latency.py "$D/latency"
    LAT_SET=read step latency_read 150 python3 bench/h200/measure_latency.py "$D/latency_read"
    mkdir -p "$D/spill_local"
    step spill_local_build 90 nvcc -O3 -arch=sm_90a -o /tmp/spill_local bench/h200/measure_spill_local.cu
    step spill_local 60 /tmp/spill_local "$D/spill_local"
    mkdir -p "$D/spill_local_grid"
    step spill_local_grid 60 /tmp/spill_local "$D/spill_local_grid" grid ;;
  streams)
    step fp8_rate 90 python3 bench/h200/measure_fp8_rate.py
    GCLOCK_DEADLINE_S=70 step gemm_clock 100 python3 bench/h200/measure_gemm_clock.py "$D/gemm_clock"
    BRUNS_DEADLINE_S=100 step b_runs 130 python3 bench/h200/measure_b_runs.py "$D/b_runs"
    DEPTH_DEADLINE_S=100 step stream_depth 130 python3 bench/h200/measure_stream_depth.py "$D/stream_depth" ;;
  kloop)
    KLOOP_DEADLINE_S=300 step kloop 360 python3 bench/h200/measure_kloop.py "$D/kloop" ;;
  *) echo "run_calibration.sh: part must be memory, streams or kloop, got '$PART'" >&2; exit 2 ;;
esac
tar -C "$OUT" -czf "$OUT/h100_$PART.tgz" "h100_$PART" && rm -rf "$D"
ls -l "$OUT"
