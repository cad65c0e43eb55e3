#!/bin/bash
# Session 19's helper measurements in one device call (each writes one tar into $OUT; the lead's
# call: `bash bench/h200/run_s19_requests.sh`). Requests and their purpose: the helpers' notes in
# docs/analysis.md (persist19, bigtile19, smallm19, attn19).
set -u
export PYTHONUNBUFFERED=1
mkdir -p /tmp/ps19 /tmp/l2_groupm_s19 /tmp/cta_timeline_s19 /tmp/attn19
timeout 150 python3 bench/h200/measure_persist_s19.py /tmp/ps19 > /tmp/ps19/stdout.txt 2>&1; echo "persist rc=$?"
tar czf $OUT/persist_s19.tgz -C /tmp ps19
L2_SET=s19 L2G_DEADLINE_S=105 timeout 150 python3 bench/h200/measure_l2_groupm.py /tmp/l2_groupm_s19 > /tmp/l2_groupm_s19/stdout.txt 2>&1; echo "l2 rc=$?"
gzip -f /tmp/l2_groupm_s19/ncu_raw.txt 2>/dev/null; tar czf $OUT/l2_groupm_s19.tgz -C /tmp l2_groupm_s19
CTA_SET=s19 timeout 100 python3 bench/h200/measure_cta_timeline.py /tmp/cta_timeline_s19 > /tmp/cta_timeline_s19/stdout.txt 2>&1; echo "cta rc=$?"
tar czf $OUT/cta_timeline_s19.tgz -C /tmp cta_timeline_s19
for D in 128 64; do
  if [ $D = 128 ]; then C="64,32,4,2;64,32,4,3;128,32,8,2;128,32,8,3;128,32,4,2;128,32,4,3;64,64,8,2;64,64,8,3;64,128,8,2;64,128,8,3"
  else C="128,128,4,2;128,128,4,3;128,64,4,2;128,64,4,3;64,64,4,2;64,64,4,3;64,32,4,2;64,32,4,3"; fi
  TRIP_PARTS=A TRIP_CONDS=alone1,drift TRIP_DRIFT_R=occ TRIP_D=$D TRIP_DEADLINE_S=20 TRIP_CFGS="$C" timeout 60 \
    python3 bench/h200/measure_attn_trip_s13.py /tmp/attn19/trip_d$D > /tmp/attn19/trip_d$D.log 2>&1; echo "attn d$D rc=$?"
done
APOWER_DEADLINE_S=45 timeout 90 python3 bench/h200/measure_attn_power_s19.py /tmp/attn19/power > /tmp/attn19/power.log 2>&1; echo "power rc=$?"
tar czf $OUT/attn19.tgz -C /tmp attn19
