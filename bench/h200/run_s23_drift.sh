#!/usr/bin/env bash
# Session 23's fourth device call (drift23's request): CTA timelines of run38's and run34's GROUP_M 1 rows at
# 2560x14336x14336 beside their G8 twins, and Nsight's DRAM bytes of run34's row.
set -u
cd "$(dirname "$0")/../.."
mkdir -p "$OUT/cta_timeline_s23" "$OUT/l2_groupm_s23b"
PYTHONUNBUFFERED=1 CTA_SET=s23 timeout 240 python3 bench/h200/measure_cta_timeline.py "$OUT/cta_timeline_s23" \
  > "$OUT/cta_timeline_s23/stdout.txt" 2>&1
(cd bench/h200 && PYTHONUNBUFFERED=1 L2_SET=s23 L2G_DEADLINE_S=100 timeout 150 python3 -c "
import sys; sys.argv = ['measure_l2_groupm.py', '$OUT/l2_groupm_s23b']
import measure_l2_groupm as g
g.CONFIGS = [('gemm', 2560, 14336, 14336, 128, 64, 32, 4, 2, 1), ('gemm', 2560, 14336, 14336, 128, 64, 32, 4, 2, 8)]
g.main()" > "$OUT/l2_groupm_s23b/stdout.txt" 2>&1)
gzip -f "$OUT/l2_groupm_s23b/ncu_raw.txt" 2>/dev/null
tar -C "$OUT" -czf "$OUT/drift_s23.tgz" cta_timeline_s23 l2_groupm_s23b && rm -rf "${OUT:?}/cta_timeline_s23" "${OUT:?}/l2_groupm_s23b"
ls -l "$OUT"
