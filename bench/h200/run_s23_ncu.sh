#!/usr/bin/env bash
# Session 23's second device call: Nsight Compute on the launches whose tile requests pass the L2 rate
# the model prices (bench/h200/measure_l2_groupm.py, L2_SET=s23), packed into one archive.
exec bash "$(dirname "$0")/run_l2_set.sh" s23 240 420
