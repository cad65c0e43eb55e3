#!/usr/bin/env bash
# Session 58, one device call: measure_decode_timeline.py DECODE_TL_SET=s58 (512-CTA decode launches at 3 CTAs a SM,
# short and long splits: does the 1.29-wave tail start as one group after the first wave, as tfx prices it?),
# tarred as $OUT/decode_timeline_s58.tgz (file under calibration/<device>/measured/decode_timeline_s58).
exec bash "$(dirname "$0")/run_decode_timeline.sh" s58 200
