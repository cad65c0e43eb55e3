#!/usr/bin/env bash
# Written in session 49 (no H200 lent; alt70's H200 twin run82 still unmeasured): the next held-out set, alt71,
# 220 s of timing (~240 s in all). `bash bench/h200/run_s49.sh NAME` writes $OUT/NAME.tgz: run84 on an H100, run85
# on an H200 (the same shapes and configurations, seeds + 7300). Seal the archive unread in
# calibration/<device>/heldout/ with its sha256 (the README there) for the next model change.
exec bash "$(dirname "$0")/run_pair.sh" "${1:-run84}" alt71 7300
