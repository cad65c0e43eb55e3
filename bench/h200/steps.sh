# Sourced by the session run scripts (run_s43.sh, run_s44.sh): one device call's steps, each tarred as it ends so that
# a call cut short keeps what ended.
#
# step NAME SECONDS COMMAND...: COMMAND OUTDIR under a time limit, its log in OUTDIR/stdout.txt, OUTDIR ($OUT/NAME)
# tarred as $OUT/NAME.tgz.
step() {
  local name=$1 limit=$2
  shift 2
  mkdir -p "$OUT/$name"
  PYTHONUNBUFFERED=1 timeout "$limit" "$@" "$OUT/$name" > "$OUT/$name/stdout.txt" 2>&1
  tar -C "$OUT" -czf "$OUT/$name.tgz" "$name" && rm -rf "${OUT:?}/$name"
}

# The call's GPU and tree, first.
record_call() {
  nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$OUT/gpu.txt"
  git log --oneline -1 > "$OUT/commit.txt" 2>/dev/null
}
