#!/usr/bin/env bash
# Written at session 30's end for the next session lent an H200: the next development (alt54, run57) and held-out
# (alt55, run58) campaigns, each packed into its own archive as soon as it ends (bench/h200/run_campaign.sh).
# run54 and run56 (session 30's held-out) are already sealed in calibration/h200/heldout: open run54 after that
# session's model changes; seal run58 unread for a later session.
set -u
cd "$(dirname "$0")/../.."
run() { bash bench/h200/run_campaign.sh "$@"; }   # run <name> <shape set> <seed offset>
run run57 alt54 5600
run run58 alt55 5700
ls -l "$OUT"
