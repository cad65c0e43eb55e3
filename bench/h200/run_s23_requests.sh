#!/usr/bin/env bash
# Session 23's one device call: the dirty-L2 questions and run34's causal re-time
# (bench/h200/measure_l2_dirty_s23.py), then the next development (alt35, run38) and held-out (alt36,
# run39) campaigns. Each part is packed into one archive as soon as it ends: a call returns at most 8 files.
set -u
cd "$(dirname "$0")/../.."
mkdir -p "$OUT/l2_dirty_s23"
PYTHONUNBUFFERED=1 L2D23_DEADLINE_S=140 timeout 190 python3 bench/h200/measure_l2_dirty_s23.py "$OUT/l2_dirty_s23" \
  > "$OUT/l2_dirty_s23/stdout.txt" 2>&1
tar -C "$OUT" -czf "$OUT/l2_dirty_s23.tgz" l2_dirty_s23 && rm -rf "${OUT:?}/l2_dirty_s23"
run() { bash bench/h200/run_campaign.sh "$@"; }   # run <name> <shape set> <seed offset>
run run38 alt35 3700
run run39 alt36 3800
ls -l "$OUT"
