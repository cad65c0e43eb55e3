#!/usr/bin/env bash
# Session 41, after run_s41_shortruns.sh showed continued 64-B pieces costing 0% at 128 CTAs and 25% at 896 on an H100:
# is it the CTAs or the row stride? The same pairs (BN = 32 against BN = 64) at M = 16, 64 and 128 with BM = 16, so
# that N = 8192 (rows of 16 KB) runs 256 / 1,024 / 2,048 CTAs of BN = 32 and N = 28672 (57 KB) 896 / 3,584.
# Writes $OUT/shortruns41b.tgz.
set -u
cd "$(dirname "$0")/../.."
jobs=""
for mn in 16,8192 64,8192 128,8192 16,28672 64,28672; do
  IFS=, read -r m n <<< "$mn"
  for cfg in 128,4,4 64,4,4; do
    IFS=, read -r bk w st <<< "$cfg"
    for bn in 32 64; do
      jobs="$jobs;$m,$n,8192,16,$bn,$bk,$w,$st,1"
    done
  done
done
mkdir -p "$OUT/shortruns41b"
PYTHONUNBUFFERED=1 ACC_DEADLINE_S=${ACC_DEADLINE_S:-200} ACC_EXPLICIT_GEMM="${jobs#;}" \
  timeout 300 python3 bench/h200/measure_accuracy.py "$OUT/shortruns41b" > "$OUT/shortruns41b/stdout.txt" 2>&1
tar -C "$OUT" -czf "$OUT/shortruns41b.tgz" shortruns41b && rm -rf "${OUT:?}/shortruns41b"
