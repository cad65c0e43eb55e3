#!/usr/bin/env bash
# Session 27 (lonewarp27): Nsight Compute's per-instruction warp-state samples (SourceCounters) of four bf16 2-warp
# small-M loops, one CTA an SM (32 CTAs: M = BM, N = 32 x BN, K = 57344, GROUP_M 1), to see which SASS instructions
# carry the scoreboard waits the stall-count walk (bench/h200/lone_warp_walk.py) leaves out. Writes $OUT/lone_warp_ncu/:
# per configuration the report, its SASS source page (CSV) and its details page (CSV). The session ran these lines as
# two device calls (a call returns at most 8 files); calibration/h200/measured/lone_warp_s27/ncu keeps the CSVs.
set -u
cd "$(dirname "$0")"
d=$OUT/lone_warp_ncu
mkdir -p "$d"
for cfg in "16 4096 128 128 2 4" "16 8192 256 64 2 4" "32 2048 64 128 2 4" "16 2048 64 128 2 3"; do
  set -- $cfg
  t=bf16_${1}x${3}x${4}_w${5}_s${6}
  timeout 140 ncu --section SourceCounters --section WarpStateStats -k regex:matmul_kernel --launch-skip 1 \
    --launch-count 1 -f -o "$d/$t" python3 measure_l2_groupm.py --one gemm "$1" "$2" 57344 "$1" "$3" "$4" "$5" "$6" 1 \
    >> "$d/log.txt" 2>&1
  timeout 60 ncu -i "$d/$t.ncu-rep" --page source --print-source sass --csv > "$d/$t.source.csv" 2>> "$d/log.txt"
  timeout 60 ncu -i "$d/$t.ncu-rep" --page details --csv > "$d/$t.details.csv" 2>> "$d/log.txt"
done
ls -la "$d"
