#!/usr/bin/env bash
# Written in session 30 for the session lent an H200 after it: the next development (alt52, run55) and held-out
# (alt53, run56) campaigns, each packed into its own archive as soon as it ends (bench/h200/run_campaign.sh).
# Seal run56 unread in calibration/h200/heldout; open the held-out archive sealed before it after that session's
# model changes.
set -u
cd "$(dirname "$0")/../.."
run() { bash bench/h200/run_campaign.sh "$@"; }   # run <name> <shape set> <seed offset>
run run55 alt52 5400
run run56 alt53 5500
ls -l "$OUT"
