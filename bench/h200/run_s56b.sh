#!/usr/bin/env bash
# Written in session 56: Nsight Compute's warp states and pipe utilisation of Triton's flash attention on the warp
# mma (64 x 64 on 2 warps, 32 x 64 on 4, 64 x 32 on 2, D 128; 64 x 64 on 2 at D 64) and their warpgroup twins (64 x 64
# on 4), full attention B4 H32 S4096. `bash bench/h200/run_s56b.sh` writes $OUT/attn_warp_ncu.csv.
set -u
cd "$(dirname "$0")"
M=smsp__average_warp_latency_issue_stalled_barrier.ratio
for s in long_scoreboard short_scoreboard math_pipe_throttle mio_throttle wait dispatch_stall not_selected selected \
         no_instruction tex_throttle lg_throttle math_pipe_throttle sleeping branch_resolving drain membar misc; do
  M="$M,smsp__average_warp_latency_issue_stalled_$s.ratio"
done
M="$M,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,sm__cycles_elapsed.avg"
M="$M,smsp__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed_pipe_xu.sum"
M="$M,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__cycles_active.avg"
M="$M,sm__cycles_elapsed.avg.per_second,gpu__time_duration.sum,launch__registers_per_thread,launch__occupancy_limit_registers"
PYTHONUNBUFFERED=1 timeout 300 ncu --csv --page raw --metrics "$M" python3 measure_attn_warp_ncu.py \
  128,64,64,2,2 128,64,64,4,2 128,32,64,4,2 128,64,32,2,2 64,64,64,2,3 64,64,64,4,2 > "$OUT/attn_warp_ncu.csv" 2> "$OUT/attn_warp_ncu.err"
tail -c 2000 "$OUT/attn_warp_ncu.err"
