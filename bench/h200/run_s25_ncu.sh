#!/usr/bin/env bash
# Session 25's eighth device call: Nsight Compute on the launches whose tile requests pass the L2 rate
# the model prices (bench/h200/measure_l2_groupm.py, L2_SET=s25), packed into one archive.
exec bash "$(dirname "$0")/run_l2_set.sh" s25 150 280
