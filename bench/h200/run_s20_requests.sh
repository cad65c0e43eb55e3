#!/bin/bash
# Session 20's helper measurements in one device call (repo root, $OUT set by the device machine).
# Each request writes one tar into $OUT; none starts after 470 s so the call ends inside its 600 s.
T0=$(date +%s)
late() { [ $(( $(date +%s) - T0 )) -gt 470 ]; }
mkdir -p /tmp/pw20 && PYTHONUNBUFFERED=1 PW20_NCU_DEADLINE_S=90 timeout 120 python3 bench/h200/measure_persist_walk_s20.py /tmp/pw20 > /tmp/pw20/stdout.txt 2>&1; tar czf $OUT/persist_walk_s20.tgz -C /tmp pw20
late || { mkdir -p /tmp/l2c20 && PYTHONUNBUFFERED=1 L2C20_DEADLINE_S=90 timeout 120 python3 bench/h200/measure_l2_clock_s20.py /tmp/l2c20 > /tmp/l2c20/stdout.txt 2>&1; tar czf $OUT/l2_clock_s20.tgz -C /tmp l2c20; }
late || bash bench/h200/run_s20_attn.sh
late || { mkdir -p /tmp/ld20 && PYTHONUNBUFFERED=1 L2D20_DEADLINE_S=80 timeout 110 python3 bench/h200/measure_l2_dirty_s20.py /tmp/ld20 > /tmp/ld20/stdout.txt 2>&1; tar czf $OUT/l2_dirty_s20.tgz -C /tmp ld20; }
late || { mkdir -p /tmp/dtl20/decode_timeline_s20 && PYTHONUNBUFFERED=1 DECODE_TL_SET=s20 DECODE_TL_REPS=3 timeout 110 python3 bench/h200/measure_decode_timeline.py /tmp/dtl20/decode_timeline_s20 > /tmp/dtl20/decode_timeline_s20/stdout.txt 2>&1; tar czf $OUT/decode_timeline_s20.tgz -C /tmp/dtl20 decode_timeline_s20; }
late || { mkdir -p /tmp/nr20/ncu_rows_s20 && PYTHONUNBUFFERED=1 ROWS_NCU_FABRIC=0 ROWS_NCU_CFGS="softmax,1024,2048,8,16;rmsnorm,512,8192,4,16;rmsnorm,512,8192,2,16;rmsnorm,512,8192,1,2;softmax,1024,2048,16,16;softmax,2048,1024,16,8;softmax,1024,4096,2,16;rmsnorm,1024,4096,2,16;softmax,1024,2048,4,8" timeout 110 python3 bench/h200/measure_ncu_rows.py /tmp/nr20/ncu_rows_s20 > /tmp/nr20/ncu_rows_s20/stdout.txt 2>&1; tar czf $OUT/ncu_rows_s20.tgz -C /tmp/nr20 ncu_rows_s20; }
echo "total $(( $(date +%s) - T0 )) s"; ls -la $OUT
