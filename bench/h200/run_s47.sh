#!/usr/bin/env bash
# Written in session 47 (which opened the sealed run80, run81 and run78 after its model changes): the next held-out
# set, alt70, 220 s of timing (~240 s in all). `bash bench/h200/run_s47.sh NAME` writes $OUT/NAME.tgz: run82 on an
# H200, run83 on an H100 (the same shapes and configurations, seeds + 7200). Seal the archive unread in
# calibration/<device>/heldout/ with its sha256 (the README there) for the next model change.
exec bash "$(dirname "$0")/run_pair.sh" "${1:-run82}" alt70 7200
