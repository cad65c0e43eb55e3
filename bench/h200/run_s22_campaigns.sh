#!/usr/bin/env bash
# Session 22's one device call: alt32 again (run35; its first measurement, session 21's held-out campaign, was
# lost unread with that session's machine), then the next development (alt33, run36) and held-out (alt34, run37)
# campaigns. Each run is packed into one archive as soon as it ends: a call returns at most 8 files.
set -u
cd "$(dirname "$0")/../.."
run() {  # run <name> <shape set> <seed offset>
  mkdir -p "$OUT/$1"
  PYTHONUNBUFFERED=1 ACC_SHAPE_SET=$2 ACC_SEED_OFFSET=$3 python3 bench/h200/measure_accuracy.py "$OUT/$1" \
    > "$OUT/$1/stdout.txt" 2>&1
  tar -C "$OUT" -czf "$OUT/$1.tgz" "$1" && rm -rf "${OUT:?}/$1"
}
run run35 alt32 3400
run run36 alt33 3500
run run37 alt34 3600
ls -l "$OUT"
