#!/usr/bin/env bash
# Session 25's fifth to seventh device calls: B tiles read by 1, 2 or 4 CTAs of the campaigns' fp8 and bf16
# GEMMs (ISSUE_SET=coread8 and coread), and with COREAD_SETS=warp8 the fp8 warp-mma tiles at 2-4 CTAs an SM.
SETS="${COREAD_SETS:-coread8 coread}" exec "$(dirname "$0")/run_issue_sets.sh"
