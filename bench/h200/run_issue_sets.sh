#!/usr/bin/env bash
# Device call: each ISSUE_SET of bench/h200/measure_copy_issue_s24.py named in SETS, packed into its own
# archive <set>_s25.tgz as soon as it ends (a call returns at most 8 files). ISSUE_DEADLINE_S (default 120)
# bounds each set; the whole set is killed 30 s after it.
set -u
cd "$(dirname "$0")/../.."
deadline=${ISSUE_DEADLINE_S:-120}
for s in ${SETS:?SETS names the ISSUE_SETs to run}; do
  mkdir -p "$OUT/${s}_s25"
  PYTHONUNBUFFERED=1 ISSUE_SET=$s ISSUE_DEADLINE_S=$deadline timeout $((deadline + 30)) \
    python3 bench/h200/measure_copy_issue_s24.py "$OUT/${s}_s25" > "$OUT/${s}_s25/stdout.txt" 2>&1
  tar -C "$OUT" -czf "$OUT/${s}_s25.tgz" "${s}_s25" && rm -rf "${OUT:?}/${s}_s25"
done
ls -l "$OUT"
