#!/usr/bin/env bash
# Session 26's second device call: Nsight Compute's warp states, issue counts and pipe loads on fp8 warp-mma
# tiles on 2/4/8 warps at 4 CTAs an SM and run40's tall tile (bench/h200/measure_l2_groupm.py, L2_SET=s26).
exec bash "$(dirname "$0")/run_l2_set.sh" s26 360 520
