#!/usr/bin/env bash
# Session 26's last device call: run43's configurations timed again (run43r, alt40 + 4200: whether its near-tie
# Spearman misses repeat, bench/retest_ranks.py; stored under calibration/h200/measured/retest_s26, not issue15/) and
# a second held-out campaign for the session after 26 (run46, alt43 + 4500, sealed unread with run45).
set -u
cd "$(dirname "$0")/../.."
run() { bash bench/h200/run_campaign.sh "$@"; }   # run <name> <shape set> <seed offset>
run run43r alt40 4200
run run46 alt43 4500
ls -l "$OUT"
