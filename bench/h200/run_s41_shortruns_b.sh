#!/usr/bin/env bash
# Session 41's second set of short-run pairs (run_s41_shortruns.sh, set b): is it the CTAs or the row stride?
exec env SR_SET=b bash "$(dirname "$0")/run_s41_shortruns.sh"
