#!/usr/bin/env bash
# Session 26's device call: the next development (alt41, run44) and held-out (alt42, run45) campaigns,
# each packed into its own archive as soon as it ends (bench/h200/run_campaign.sh).
set -u
cd "$(dirname "$0")/../.."
run() { bash bench/h200/run_campaign.sh "$@"; }   # run <name> <shape set> <seed offset>
run run44 alt41 4300
run run45 alt42 4400
ls -l "$OUT"
