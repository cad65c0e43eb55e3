#!/usr/bin/env bash
# Written at session 29's end for the next session lent an H200: the next development (alt50, run53) and
# held-out (alt51, run54) campaigns, each packed into its own archive as soon as it ends
# (bench/h200/run_campaign.sh). run52 (session 29's held-out) is already sealed in calibration/h200/heldout:
# open it after that session's model changes; seal run54 unread for the session after.
set -u
cd "$(dirname "$0")/../.."
run() { bash bench/h200/run_campaign.sh "$@"; }   # run <name> <shape set> <seed offset>
run run53 alt50 5200
run run54 alt51 5300
ls -l "$OUT"
