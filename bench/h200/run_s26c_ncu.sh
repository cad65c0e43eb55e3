#!/usr/bin/env bash
# Session 26's fourth device call: Nsight on run38's fp8 32x28672x8192 first pick (16x64x128 w2 s3 G1, B read by 2)
# beside its twins (bench/h200/measure_l2_groupm.py, L2_SET=s26c).
exec bash "$(dirname "$0")/run_l2_set.sh" s26c 300 480
