#!/usr/bin/env bash
# Session 44, one device call: measure_decode_timeline.py DECODE_TL_SET=s44 (one wave of equal decode CTAs at 1-3 an
# SM on 8, 4 and 2 warps: are the six slow TPCs of the s42 launches slow alone or only beside co-resident CTAs?),
# tarred as $OUT/decode_timeline_s44.tgz.
exec bash "$(dirname "$0")/run_decode_timeline.sh" s44 300
