#!/usr/bin/env bash
# Written in session 34 (lent an H100 for run_s35.sh's alt60 and alt61, both opened) for the next session lent an H200
# or an H100: the development campaign alt62 (run65) and the held-out alt63 (run66), 220 s of timing each (~480 s in
# all); `bash bench/h200/run_s36.sh run67 run68` names them otherwise. File the rows under calibration/<device>/measured/issue15 (the profile column names the lent device) and seal
# run66 unread in that device's heldout/ folder; open it in a later session after that session's model changes.
# the campaigns' names: run65 / run66 as session 35 ran them on an H100; an H200 files its own (run67 / run68)
exec bash "$(dirname "$0")/run_pair.sh" "${1:-run65}" alt62 6400 "${2:-run66}" alt63 6500
