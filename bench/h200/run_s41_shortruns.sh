#!/usr/bin/env bash
# Session 41: do continued 64-byte pieces cost DRAM time by how many CTAs stream them? (docs/analysis.md, "The
# short-run factor at the small-M held-out misses"). The campaigns' bf16 kernel (measure_accuracy.py's explicit jobs)
# with GROUP_M = 1, each BN = 32 row (B rows of 64 B, each continued by the neighbouring CTA) beside its BN = 64 twin
# (128-B rows) at the same BK, warps and stages:
#   set a (default): M = 16, K = 8192, N = 4096 / 8192 / 16384 / 28672 (128 / 256 / 512 / 896 CTAs of BN = 32), five
#                    (BK, warps, stages); writes $OUT/shortruns41.tgz;
#   set b (`SR_SET=b`, or run_s41_shortruns_b.sh): M = 16, 64, 128 (BM = 16) at N = 8192 and 16, 64 at N = 28672 (256
#                    to 3,584 CTAs at two row strides), two (BK, warps, stages); writes $OUT/shortruns41b.tgz;
#   set c (`SR_SET=c`, session 42): M = 16 at N = 8192 and 28672 with K = 2048 to 16384 at two (BK, warps, stages):
#                    at one CTA count, does the cost grow with the loop (the partner's half evicted from L2 before
#                    it is read: a lag that grows with the trips) or stay flat (a DRAM page closed between the two
#                    halves)? writes $OUT/shortruns42c.tgz.
#   set d (`SR_SET=d`, session 44): M = 16, K = 8192, N = 14336 / 28672 / 57344 at BK 128, 4 warps, 2 / 3 / 6 / 8
#                    stages: BN = 32 at N against BN = 64 at 2N is the same CTA count (448, 896), and the stages move
#                    the CTAs an SM (12 KB a stage at BN = 32: 9 / 6 / 3 / 2 an SM) at about the same bytes in flight
#                    an SM (72-120 KB): do the continued pieces cost by the CTAs, the CTAs an SM, or the bytes in
#                    flight? writes $OUT/shortruns44d.tgz.
# gemm.csv is in tfx validate's format.
set -u
cd "$(dirname "$0")/../.."
if [ "${SR_SET:-a}" = b ]; then
  name=shortruns41b; shapes="16,8192 64,8192 128,8192 16,28672 64,28672"; cfgs="128,4,4 64,4,4"
elif [ "${SR_SET:-a}" = d ]; then
  name=shortruns44d; shapes="16,28672,8192 16,57344,8192 16,14336,8192"; cfgs="128,4,2 128,4,3 128,4,6 128,4,8"
elif [ "${SR_SET:-a}" = c ]; then
  name=shortruns42c; shapes="16,8192,2048 16,8192,4096 16,8192,16384 16,28672,2048 16,28672,4096 16,28672,16384"
  cfgs="128,4,4 64,4,4"
else
  name=shortruns41; shapes="16,4096 16,8192 16,16384 16,28672"; cfgs="128,4,4 128,2,5 128,8,5 64,4,4 128,4,3"
fi
jobs=""
for mn in $shapes; do
  IFS=, read -r m n k <<< "$mn"
  for cfg in $cfgs; do
    IFS=, read -r bk w st <<< "$cfg"
    for bn in 32 64; do
      jobs="$jobs;$m,$n,${k:-8192},16,$bn,$bk,$w,$st,1"
    done
  done
done
if [ "${SR_PRINT:-}" ]; then echo "${jobs#;}"; exit 0; fi
mkdir -p "$OUT/$name"
PYTHONUNBUFFERED=1 ACC_DEADLINE_S=${ACC_DEADLINE_S:-200} ACC_EXPLICIT_GEMM="${jobs#;}" \
  timeout 300 python3 bench/h200/measure_accuracy.py "$OUT/$name" > "$OUT/$name/stdout.txt" 2>&1
tar -C "$OUT" -czf "$OUT/$name.tgz" "$name" && rm -rf "${OUT:?}/$name"
