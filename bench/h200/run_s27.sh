#!/usr/bin/env bash
# Session 27's first device call: the next development (alt44, run47) and held-out (alt45, run48) campaigns,
# each packed into its own archive as soon as it ends (bench/h200/run_campaign.sh).
set -u
cd "$(dirname "$0")/../.."
run() { bash bench/h200/run_campaign.sh "$@"; }   # run <name> <shape set> <seed offset>
run run47 alt44 4600
run run48 alt45 4700
ls -l "$OUT"
