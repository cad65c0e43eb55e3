#!/usr/bin/env bash
# Session 41: do continued 64-byte pieces cost DRAM time by how many CTAs stream them? (docs/analysis.md, "The
# short-run factor at the small-M held-out misses"). The campaigns' bf16 kernel (measure_accuracy.py's explicit jobs)
# at M = 16, K = 8192, N = 4096 / 8192 / 16384 / 28672, GROUP_M = 1: BN = 32 (B rows of 64 B, each continued by the
# neighbouring CTA: 128 / 256 / 512 / 896 CTAs) beside BN = 64 (128-B rows: 64 / 128 / 256 / 448 CTAs), at the
# same BK, warps and stages, five pairs. Writes $OUT/shortruns41.tgz (gemm.csv in tfx validate's format, log.txt).
set -u
cd "$(dirname "$0")/../.."
jobs=""
for n in 4096 8192 16384 28672; do
  for cfg in 128,4,4 128,2,5 128,8,5 64,4,4 128,4,3; do
    IFS=, read -r bk w st <<< "$cfg"
    for bn in 32 64; do
      jobs="$jobs;16,$n,8192,16,$bn,$bk,$w,$st,1"
    done
  done
done
mkdir -p "$OUT/shortruns41"
PYTHONUNBUFFERED=1 ACC_DEADLINE_S=${ACC_DEADLINE_S:-200} ACC_EXPLICIT_GEMM="${jobs#;}" \
  timeout 300 python3 bench/h200/measure_accuracy.py "$OUT/shortruns41" > "$OUT/shortruns41/stdout.txt" 2>&1
tar -C "$OUT" -czf "$OUT/shortruns41.tgz" shortruns41 && rm -rf "${OUT:?}/shortruns41"
