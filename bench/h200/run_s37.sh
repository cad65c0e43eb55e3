#!/usr/bin/env bash
# Written in session 35 (lent an H100 for run_s36.sh's alt62 and alt63, then 236 s of an H200 for alt63 alone) for
# the next session lent either part: the development campaign alt64 and the held-out alt65, 220 s of timing each
# (~450 s in all). Names keep every campaign's number unique across the devices: `bash bench/h200/run_s37.sh` on an
# H200 writes run69 / run70, `bash bench/h200/run_s37.sh run71 run72` on an H100. File the development rows under
# calibration/<device>/measured/issue15 and seal the held-out archive unread in that device's heldout/ folder.
exec bash "$(dirname "$0")/run_pair.sh" "${1:-run69}" alt64 6600 "${2:-run70}" alt65 6700
