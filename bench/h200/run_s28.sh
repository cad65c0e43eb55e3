#!/usr/bin/env bash
# Written in session 28, which was lent no device: the next session lent an H200 runs this first.
# The next development (alt46, run49) and held-out (alt47, run50) campaigns, each packed into its
# own archive as soon as it ends (bench/h200/run_campaign.sh).
set -u
cd "$(dirname "$0")/../.."
run() { bash bench/h200/run_campaign.sh "$@"; }   # run <name> <shape set> <seed offset>
run run49 alt46 4800
run run50 alt47 4900
ls -l "$OUT"
