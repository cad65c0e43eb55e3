#!/usr/bin/env bash
# Written in session 37 (which measured alt64 and alt65 on an H200: run69, run70) for the next session lent either
# part: the development campaign alt66 and the held-out alt67, 220 s of timing each (~450 s in all). On an H200
# `bash bench/h200/run_s38.sh` writes run74 / run75. The H100 measured alt67 in session 37 (sealed as
# calibration/h100/heldout/run77): on an H100 run only alt66 (run_campaign.sh run76 alt66 6800). File the
# development rows under calibration/<device>/measured/issue15 and seal the held-out archive unread in that device's
# heldout/ folder.
exec bash "$(dirname "$0")/run_pair.sh" "${1:-run74}" alt66 6800 "${2:-run75}" alt67 6900
