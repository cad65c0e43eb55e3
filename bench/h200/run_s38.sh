#!/usr/bin/env bash
# Written in session 37 (which measured alt64 and alt65 on an H200: run69, run70) for the next session lent either
# part: the development campaign alt66 and the held-out alt67, 220 s of timing each (~450 s in all). On an H200
# `bash bench/h200/run_s38.sh` writes run74 / run75. The H100 has measured both sets (alt67 as run77 in session 37,
# alt66 as run76 in session 38): on an H100 run nothing of it. File the development rows under
# calibration/h200/measured/issue15 and seal the held-out archive unread in calibration/h200/heldout/.
exec bash "$(dirname "$0")/run_pair.sh" "${1:-run74}" alt66 6800 "${2:-run75}" alt67 6900
