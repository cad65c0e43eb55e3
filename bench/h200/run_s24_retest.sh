#!/usr/bin/env bash
# Session 24's fourth device call: the same configurations timed again (test-retest), run39's shapes and seeds
# (alt36 + 3800) and run40's (alt37 + 3900), to measure how far two timings of one campaign agree on its
# rankings (bench/retest_ranks.py). Stored under calibration/h200/measured/retest_s24, not issue15/ (the
# rows are repeats, not new configurations).
set -u
cd "$(dirname "$0")/../.."
run() { bash bench/h200/run_campaign.sh "$@"; }   # run <name> <shape set> <seed offset>
run run39r alt36 3800
run run40r alt37 3900
ls -l "$OUT"
