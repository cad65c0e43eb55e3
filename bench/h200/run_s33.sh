#!/usr/bin/env bash
# Written in session 30 for the session lent an H200 after the one that runs run_s32.sh: the next development (alt56, run59) and held-out
# (alt57, run60) campaigns, each packed into its own archive as soon as it ends (bench/h200/run_campaign.sh).
# Open the oldest archive sealed in calibration/h200/heldout after that session's model changes; seal run60
# unread for a later session.
set -u
cd "$(dirname "$0")/../.."
run() { bash bench/h200/run_campaign.sh "$@"; }   # run <name> <shape set> <seed offset>
run run59 alt56 5800
run run60 alt57 5900
ls -l "$OUT"
