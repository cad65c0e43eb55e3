#!/usr/bin/env bash
# Session 62, one device call: the weight-only GEMMs' pipes (measure_dequant_s62.py: instruction rates of the
# dequantizing conversions, Nsight Compute on eight run86 configurations), then a weight-only campaign: on an
# H100 a held-out twin of run86 with other configurations (seed offset 100, sealed for the model change run86
# asks for); on an H200 order 1 (run_s58.sh) after it and run86's own configurations (seed offset 0). Each step
# leaves its own $OUT/<name>.tgz, so a call cut short keeps the steps that ended.
set -u
cd "$(dirname "$0")/../.."
G=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
echo "card: $G"
t0=$(date +%s)
dequant() {
  mkdir -p "$OUT/dequant_s62"
  PYTHONUNBUFFERED=1 DEQ_DEADLINE_S=${1} timeout $(( ${1} + 60 )) python3 bench/h200/measure_dequant_s62.py \
    "$OUT/dequant_s62" > "$OUT/dequant_s62/stdout.txt" 2>&1
  [ -f "$OUT/dequant_s62/ncu_raw.txt" ] && gzip -9 "$OUT/dequant_s62/ncu_raw.txt"
  tar -C "$OUT" -czf "$OUT/dequant_s62.tgz" dequant_s62 && rm -rf "${OUT:?}/dequant_s62"
}
case "$G" in
  *H200*)
    dequant 150
    bash bench/h200/run_s58.sh
    left=$(( 560 - ($(date +%s) - t0) ))
    if [ "$left" -gt 120 ]; then
      ACC_DEADLINE_S=$(( left - 40 )) bash bench/h200/run_campaign.sh wq_h200_s62 wq 0
    else
      echo "wq campaign skipped: ${left} s left"
    fi ;;
  *H100*)
    dequant 170
    left=$(( 560 - ($(date +%s) - t0) ))
    if [ "$left" -gt 120 ]; then
      ACC_DEADLINE_S=$(( left - 40 )) bash bench/h200/run_campaign.sh wq_h100_s62 wq 100
    fi ;;
  *)
    echo "not an H100 or H200: nothing run" ;;
esac
ls -la "${OUT:?}"
