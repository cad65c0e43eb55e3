#!/usr/bin/env bash
# Session 61: the first campaign of the weight-only GEMMs (kernels/gemm_w4a16.tile and gemm_w8a16.tile;
# bench/h200/triton_kernels.py w4a16_kernel / w8a16_kernel, each result checked against torch's dequantized product):
# 6 shapes x 10 configurations each, every one held out, the 4-bit ones first. `bash bench/h200/run_s61b.sh [NAME]` writes $OUT/NAME.tgz (default wq_s61; file under
# calibration/<device>/measured/issue15/<next run> if every row is ok, else under measured/wq_s61 with a note).
set -u
ACC_DEADLINE_S=${ACC_DEADLINE_S:-200} exec bash "$(dirname "$0")/run_campaign.sh" "${1:-wq_s61}" wq 0
