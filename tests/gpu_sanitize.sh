#!/usr/bin/env bash
# The GPU differential suite (or any command) under compute-sanitizer: memcheck, racecheck,
# synccheck and initcheck, one process per tool, run side by side. Each tool's log goes to
# OUT/sanitize-TOOL.log; the summary line per tool is compute-sanitizer's own
# "ERROR SUMMARY: N errors". Exit 0 only when every tool reports 0 errors and the command
# itself passed under every tool.
#
#   bash tests/gpu_sanitize.sh                         # python3 -m pytest -m "gpu and not tilelang" -q
#   bash tests/gpu_sanitize.sh --tools memcheck -- python3 -m verify_reducer fuzz --backend cuda --count 300
#   bash tests/gpu_sanitize.sh --out /tmp/logs --shards 2   # the suite split in 2 per tool
#
# Needs CUDA's compute-sanitizer (found on PATH, else under $CUDA_HOME or /usr/local/cuda) and
# what the GPU suite needs (pycuda and a device).
set -uo pipefail
tools="memcheck,racecheck,synccheck,initcheck"
out="${OUT:-.}"
shards=1
while [ $# -gt 0 ]; do
  case "$1" in
    --tools) tools="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --shards) shards="$2"; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "gpu_sanitize.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
suite=0
if [ $# -eq 0 ]; then
  suite=1
  # TileLang's own kernels (marker tilelang) are not ours to judge
  set -- python3 -m pytest -m "gpu and not tilelang" -q -p no:cacheprovider
fi
sanitizer=$(command -v compute-sanitizer || true)
for dir in "${CUDA_HOME:-}" /usr/local/cuda; do
  [ -z "$sanitizer" ] && [ -n "$dir" ] && [ -x "$dir/bin/compute-sanitizer" ] && sanitizer="$dir/bin/compute-sanitizer"
done
if [ -z "$sanitizer" ]; then
  echo "gpu_sanitize.sh: compute-sanitizer not found (PATH, \$CUDA_HOME/bin, /usr/local/cuda/bin)" >&2
  exit 2
fi
mkdir -p "$out"
start=$(date +%s)
# The suite's test ids, dealt round-robin into shards (each shard is one process per tool).
declare -a shard_args
if [ "$suite" -eq 1 ] && [ "$shards" -gt 1 ]; then
  mapfile -t ids < <("$@" --collect-only 2>/dev/null | grep "::")
  for ((k = 0; k < shards; k++)); do shard_args[k]=""; done
  for i in "${!ids[@]}"; do shard_args[i % shards]+=" ${ids[i]}"; done
else
  shards=1; shard_args[0]=""
fi
pids=()
for tool in ${tools//,/ }; do
  for ((k = 0; k < shards; k++)); do
    log="$out/sanitize-$tool$([ "$shards" -gt 1 ] && echo "-$k").log"
    # --error-exitcode makes a finding fail the process even where the command itself passed.
    # shellcheck disable=SC2086
    "$sanitizer" --tool "$tool" --error-exitcode 99 --print-limit 100 "$@" ${shard_args[k]} \
      > "$log" 2>&1 &
    pids+=("$log:$!")
  done
done
status=0
for entry in "${pids[@]}"; do
  log=${entry%%:*}; pid=${entry#*:}
  wait "$pid"; rc=$?
  summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -1)
  result=$(grep -E "[0-9]+ (passed|failed|skipped|errors?)( |,|$)" "$log" | grep -v "=====" | tail -1)
  printf '%-28s exit %-3s %s | %s\n' "$(basename "$log" .log)" "$rc" \
    "${summary:-no summary (see log)}" "$result"
  [ "$rc" -eq 0 ] || status=1
done
echo "wall time: $(( $(date +%s) - start )) s; logs in $out/sanitize-*.log"
exit $status
