#!/usr/bin/env bash
# RAN in session 31 on an H100 (its data: calibration/h100/measured/issue15/run61, run62; use run_s35.sh next).
# Written at session 30's end for the next session lent an H200 (run_s30-run_s33 have run): the next development (alt58, run61) and held-out
# (alt59, run62) campaigns, each packed into its own archive as soon as it ends (bench/h200/run_campaign.sh).
# Open the oldest archive sealed in calibration/h200/heldout after that session's model changes; seal run62
# unread for a later session.
set -u
cd "$(dirname "$0")/../.."
run() { bash bench/h200/run_campaign.sh "$@"; }   # run <name> <shape set> <seed offset>
run run61 alt58 6000
run run62 alt59 6100
ls -l "$OUT"
