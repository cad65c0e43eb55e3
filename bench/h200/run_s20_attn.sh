#!/bin/bash
# attn20's request (session 20): the flash-attention tiles' power-limited clock by tile, operand
# data and time from an idle start (bench/h200/measure_attn_power_s20.py's docstring). One tar:
# $OUT/attn_power_s20.tgz. ~70-100 s.
set -u
export PYTHONUNBUFFERED=1
mkdir -p /tmp/attn_power_s20
APOW_DEADLINE_S=95 timeout 115 python3 bench/h200/measure_attn_power_s20.py /tmp/attn_power_s20 \
  > /tmp/attn_power_s20/stdout.txt 2>&1; echo "attn power rc=$?"
tar czf $OUT/attn_power_s20.tgz -C /tmp attn_power_s20
