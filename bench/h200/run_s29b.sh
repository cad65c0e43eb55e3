#!/usr/bin/env bash
# Session 29's second device call: the next development (alt48, run51) and held-out (alt47's successor alt49,
# run52) campaigns, each packed into its own archive as soon as it ends (bench/h200/run_campaign.sh). run52 is
# sealed unread in calibration/h200/heldout for the session after this one's model changes.
set -u
cd "$(dirname "$0")/../.."
run() { bash bench/h200/run_campaign.sh "$@"; }   # run <name> <shape set> <seed offset>
run run51 alt48 5000
run run52 alt49 5100
ls -l "$OUT"
