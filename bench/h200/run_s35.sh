#!/usr/bin/env bash
# Written in session 31 (lent an H100, which ran run_s34.sh: alt58 and alt59 are spent on it, opened) for the next
# session lent an H200 or an H100: the development campaign alt60 (run63) and the held-out alt61 (run64), 220 s of
# timing each so that an H100's slower precompile still reaches the softmax shapes (~480 s in all). The rows' profile
# column names the lent device's profile (measure_accuracy.py DEVICE_PROFILES): file an H200's under
# calibration/h200/measured/issue15, an H100's under calibration/h100/measured/issue15. Seal run64 unread in that
# device's heldout/ folder; open it in a later session after that session's model changes. On an H100, also run
# `bench/h100/run_calibration.sh memory` and `... streams` (two more calls, ~5 min each): the H100's copy curve, loaded latencies, spill path,
# cuBLAS rates and clock under power, which h100_sxm.toml now derives from the H200's. On either part, session 32
# adds `bash bench/h200/run_spill_grid.sh` (one call, about a minute): the spilled traffic of grids under one wave.
set -u
cd "$(dirname "$0")/../.."
nvidia-smi --query-gpu=name --format=csv,noheader
run() { ACC_DEADLINE_S=220 bash bench/h200/run_campaign.sh "$@"; }   # run <name> <shape set> <seed offset>
run run63 alt60 6200
run run64 alt61 6300
ls -l "$OUT"
