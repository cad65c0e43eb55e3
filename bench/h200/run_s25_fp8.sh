#!/usr/bin/env bash
# Session 25's second device call: the campaigns' fp8 GEMM at one, two and three stages on many SMs
# (ISSUE_SET=shallow8), beside shallow_s25's bf16.
SETS=shallow8 ISSUE_DEADLINE_S=150 exec "$(dirname "$0")/run_issue_sets.sh"
