#!/usr/bin/env bash
# Session 24's one device call: the few-SM weight streams by warps and trip bytes
# (bench/h200/measure_stream_depth.py, DEPTH_SET=s24), then the next development (alt37, run40) and
# held-out (alt38, run41) campaigns. Each part is packed into one archive as soon as it ends: a call
# returns at most 8 files.
set -u
cd "$(dirname "$0")/../.."
mkdir -p "$OUT/stream_depth_s24"
PYTHONUNBUFFERED=1 DEPTH_SET=s24 DEPTH_DEADLINE_S=170 timeout 200 python3 bench/h200/measure_stream_depth.py \
  "$OUT/stream_depth_s24" > "$OUT/stream_depth_s24/stdout.txt" 2>&1
tar -C "$OUT" -czf "$OUT/stream_depth_s24.tgz" stream_depth_s24 && rm -rf "${OUT:?}/stream_depth_s24"
run() { bash bench/h200/run_campaign.sh "$@"; }   # run <name> <shape set> <seed offset>
run run40 alt37 3900
run run41 alt38 4000
ls -l "$OUT"
