#!/usr/bin/env bash
# The orders of bench/h200/PENDING.md that fit one device call (600 s), guarded by the card that came: order 5
# (run_s62.sh, which on an H200 runs order 1 first and order 4's twin after); orders 2 and 3 wait for a call of
# their own; on anything else nothing. Each step leaves its own $OUT/<name>.tgz, so a call cut
# short keeps the steps that ended.   One device call:  bash bench/h200/run_pending.sh
set -u
cd "$(dirname "$0")/../.."
G=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
echo "card: $G"
case "$G" in
  *H100*|*H200*)
    # order 5 (on an H200 with order 1 first and order 4's twin after; on an H100 its held-out twin)
    bash bench/h200/run_s62.sh ;;
  *)
    echo "not an H100 or H200: nothing run" ;;
esac

