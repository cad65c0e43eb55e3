#!/usr/bin/env bash
# One issue-15 campaign inside a device call: run_campaign.sh <name> <shape set> <seed offset> runs
# bench/h200/measure_accuracy.py with ACC_SHAPE_SET / ACC_SEED_OFFSET into $OUT/<name> (ACC_DEADLINE_S of timing,
# 170 s unless set, killed 15 s after) and packs it into $OUT/<name>.tgz as soon as it ends (a call returns at most
# 8 files). On an H100 the precompile takes ~49 s and 170 s ends at the first softmax shape (session 31's run61).
set -u
cd "$(dirname "$0")/../.."
mkdir -p "$OUT/$1"
DEADLINE=${ACC_DEADLINE_S:-170}
PYTHONUNBUFFERED=1 ACC_DEADLINE_S=$DEADLINE ACC_SHAPE_SET=$2 ACC_SEED_OFFSET=$3 timeout $((DEADLINE + 15)) \
  python3 bench/h200/measure_accuracy.py "$OUT/$1" > "$OUT/$1/stdout.txt" 2>&1
# measure_accuracy.py prints into log.txt as well: keep stdout.txt only where it says more (a traceback before the
# log opened, timeout's kill), and store the log gzipped, as the filed campaigns do (6164166)
if [ -f "$OUT/$1/log.txt" ] && cmp -s "$OUT/$1/stdout.txt" "$OUT/$1/log.txt"; then rm -f "$OUT/$1/stdout.txt"; fi
[ -f "$OUT/$1/log.txt" ] && gzip -9 "$OUT/$1/log.txt"
tar -C "$OUT" -czf "$OUT/$1.tgz" "$1" && rm -rf "${OUT:?}/$1"
