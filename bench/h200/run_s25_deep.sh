#!/usr/bin/env bash
# Session 25's third and fourth device calls: the campaigns' fp8 (B [N, K]) and bf16 GEMMs at 3-5 stages on
# 132-528 CTAs (ISSUE_SET=deep8 and deep; the fourth call ran DEEP_SETS=deep8 alone).
SETS="${DEEP_SETS:-deep8 deep}" exec "$(dirname "$0")/run_issue_sets.sh"
