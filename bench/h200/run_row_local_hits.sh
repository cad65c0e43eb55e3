#!/usr/bin/env bash
# Where the spilling row kernels' local traffic is served (session 33; docs/analysis.md section 8, "Spilled frames at
# L2's capacity"): Nsight Compute's local L1 sectors and hits, L2's hit rates and DRAM's bytes each way for spilling
# rmsnorm and softmax launches under, at and past L2's capacity, with the measured time (bench/h200/
# measure_ncu_rows.py, ROWS_NCU_LOCAL=1). The model prices them all or nothing in L1, then all or nothing in L2 (the
# rows at 0.6-1.0 of L2 25-57% fast, at 1.0-1.2 13-67% slow); these bytes say which share each level serves.
# Two calls of about 5 minutes each on an H200 (BATCH=1, then BATCH=2); lands in $OUT/row_local_hits_bBATCH/: file
# both under calibration/h200/measured/row_local_hits/.
set -u
cd "$(dirname "$0")/../.."
B="${BATCH:-1}"
D="$OUT/row_local_hits_b$B"; mkdir -p "$D"
nvidia-smi > "$D/gpu.txt" 2>&1
if [ "$B" = 1 ]; then
  # frames in L2 by the model, one or two warps a SM: priced 27-57% fast (family,M,N,BLOCK_M,WARPS)
  CFGS="rmsnorm,512,16384,1,1;rmsnorm,2048,4096,8,1;rmsnorm,4096,2048,16,1;softmax,2048,4096,8,1;softmax,512,16384,2,1;rmsnorm,512,8192,8,2;softmax,1024,4096,16,2;rmsnorm,1024,8192,4,1"
else
  # just past L2 (priced 13-67% slow), well past it (priced within 10%), and a row that does not spill
  CFGS="softmax,2048,4096,16,2;rmsnorm,1024,8192,8,2;softmax,16384,1024,16,1;softmax,4096,4096,8,1;rmsnorm,4096,4096,8,1;rmsnorm,8192,2048,8,1;softmax,65536,2048,8,1;rmsnorm,16384,4096,1,4"
fi
ROWS_NCU_CFGS="$CFGS" ROWS_NCU_LOCAL=1 ROWS_NCU_FABRIC=0 PYTHONUNBUFFERED=1 \
  timeout 560 python3 bench/h200/measure_ncu_rows.py "$D" 2>&1 | tee "$D/stdout.txt"
ls -l "$D"
