#!/usr/bin/env bash
# Session 26's third device call: the same counts (L2_SET=s26b) on bf16 2-warp small-M tiles whose compiled
# loop costs 1.3-1.45x the stream loop's, beside twins that cost nothing (bench/h200/measure_l2_groupm.py).
exec bash "$(dirname "$0")/run_l2_set.sh" s26b 360 520
