#!/usr/bin/env bash
# Do co-resident 2-warp CTAs of an unpipelined (1-stage) GEMM k-loop load together and then compute together
# (session 35; docs/analysis.md section 8, "Whole lines load faster": the 2-warp 1-stage issue-15 classes run
# 11-21% slower than the model; the bf16 BK 32 rows of 64x64, 128x64 and 64x128 on 2 warps at large M run 14-26%
# slower, those of 64x32 and 256x32 within 8%; their measured rounds sit near r x mma + the load floor, as if the
# CTAs of one SM took turns in lock step, while the 4- and 8-warp classes sit within 8%). bench/h200/measure_mlp.py's
# `resident` / `private` rows (the gemm.tile k-loop, each CTA its own A and B tiles from L2, .cg so that no
# CTA re-reads its own tiles from L1) at 1 stage: bf16 BK 32 tiles on 2 warps (64x32 the control, 64x64, 128x64,
# 64x128) beside 4-warp twins (64x64, 128x64), r = 1, 2, 3, 4, 6 CTAs a SM where the registers and shared
# memory allow (max_ctas_per_sm says what ran). K wraps at 64 (2 trips), so a CTA's private tiles are
# (BM + BN) x 64 x 2 B = 12-24.6 KB and a machine's at r = 6 at most 132 x 6 x 24.6 KB = 19.5 MB: inside L2 on
# an H200 and on an H100. The round
# a trip at r CTAs against one CTA's alone says which: lock step (r x (mma + loads)), overlapped
# (max(r x mma, r x loads)) or in between. About 1 minute; lands in $OUT/lockstep_s35/: file it under
# calibration/<device>/measured/lockstep_s35/.
set -u
cd "$(dirname "$0")/../.."
D="$OUT/lockstep_s35"; mkdir -p "$D"
nvidia-smi > "$D/gpu.txt" 2>&1
MLP_PARTS=resident MLP_RES_VARIANTS=private MLP_KRES=64 MLP_CACHE=.cg MLP_RES_STAGES=1 \
  MLP_RES_TILES="64x32x32x2;64x64x32x2;128x64x32x2;64x128x32x2;64x64x32x4;128x64x32x4" \
  MLP_RES_R=1,2,3,4,6 MLP_DEADLINE_S=150 PYTHONUNBUFFERED=1 timeout 200 python3 bench/h200/measure_mlp.py "$D" 2>&1 | tail -6
ls -l "$D"
