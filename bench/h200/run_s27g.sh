#!/usr/bin/env bash
# Session 27, helper g1big27: Nsight's DRAM, slice and fabric bytes (measure_l2_groupm.py L2_SET=s27g) and the per-CTA
# timelines (measure_cta_timeline.py CTA_SET=s27g) of the large-M bf16 GROUP_M 1 first picks priced 7-24% fast.
set -u
cd "$(dirname "$0")/../.."
bash bench/h200/run_l2_set.sh s27g 280 330
mkdir -p "$OUT/cta_timeline_s27g"
PYTHONUNBUFFERED=1 CTA_SET=s27g timeout 200 python3 bench/h200/measure_cta_timeline.py "$OUT/cta_timeline_s27g" \
  > "$OUT/cta_timeline_s27g/stdout.txt" 2>&1
gzip -f "$OUT"/cta_timeline_s27g/timeline_*.csv
tar -C "$OUT" -czf "$OUT/cta_timeline_s27g.tgz" cta_timeline_s27g && rm -rf "${OUT:?}/cta_timeline_s27g"
ls -l "$OUT"
