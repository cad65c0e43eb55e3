#!/usr/bin/env bash
# Every order of bench/h200/PENDING.md that fits one device call (600 s), guarded by the card that came: on an H200
# orders 1, 3, 4 and 2 (run_s58.sh, run_s61.sh, then run_s61b.sh and run_s58b.sh with what is left); on an H100
# orders 3 and 4 (its own calibration/h100/measured/lrc_s61 and w4a16 campaign); on anything else nothing. Each step leaves its own $OUT/<name>.tgz, so a call cut
# short keeps the steps that ended.   One device call:  bash bench/h200/run_pending.sh
set -u
cd "$(dirname "$0")/../.."
G=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
echo "card: $G"
t0=$(date +%s)
case "$G" in
  *H200*)
    bash bench/h200/run_s58.sh
    bash bench/h200/run_s61.sh
    left=$(( 560 - ($(date +%s) - t0) ))
    if [ "$left" -gt 120 ]; then
      ACC_DEADLINE_S=$(( left - 40 )) bash bench/h200/run_s61b.sh wq_s61
    else
      echo "order 4 skipped: ${left} s left"
    fi
    left=$(( 560 - ($(date +%s) - t0) ))
    if [ "$left" -gt 90 ]; then
      ACC_DEADLINE_S=$(( left - 40 )) bash bench/h200/run_s58b.sh attn_warp_s58
    else
      echo "order 2 skipped: ${left} s left"
    fi ;;
  *H100*)
    bash bench/h200/run_s61.sh
    left=$(( 560 - ($(date +%s) - t0) ))
    if [ "$left" -gt 120 ]; then
      ACC_DEADLINE_S=$(( left - 40 )) bash bench/h200/run_s61b.sh wq_s61
    fi ;;
  *)
    echo "not an H100 or H200: nothing run" ;;
esac
ls -la "${OUT:?}"
