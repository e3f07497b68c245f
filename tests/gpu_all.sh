#!/usr/bin/env bash
# The whole GPU verification in one device call: the GPU suite dealt round-robin into
# SHARDS shards (4), and tests/gpu_sanitize.sh (four tools x 3 shards) beside it; a fresh machine
# takes minutes to start, so both share one call. Run from the project root on the GPU
# machine with .gpu carried (README, "On the GPU machine"):
#
#   LIMIT=280 bash tests/gpu_all.sh        # each part stopped after LIMIT seconds (default 330)
#   SHARDS=6 LIMIT=480 bash tests/gpu_all.sh   # the suite in 6 shards (default 4)
#
# Writes setup.log, summary.txt (each shard's result line, each sanitizer tool's error
# summary, every FAILED test) and logs.tgz (every log) into $OUT (default ./gpu-out).
set -u
out="${OUT:-./gpu-out}"
mkdir -p "$out"
logs=$(mktemp -d)
# shellcheck disable=SC1091
source .gpu/setup-device.sh > "$out/setup.log" 2>&1
export VERIFY_NIGHTLY=1          # every program and every upstream kernel (tests/cuda_env.py)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> "$out/setup.log" 2>&1
start=$(date +%s)
mapfile -t ids < <(python3 -m pytest -m gpu -q -p no:cacheprovider --collect-only 2>/dev/null | grep "::")
echo "gpu test ids: ${#ids[@]}" >> "$out/setup.log"
shards=${SHARDS:-4}
for k in $(seq 0 $((shards - 1))); do
  shard=()
  for i in "${!ids[@]}"; do [ $((i % shards)) -eq "$k" ] && shard+=("${ids[i]}"); done
  ( timeout "${LIMIT:-330}" python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short "${shard[@]}" \
      > "$logs/gpu-$k.log" 2>&1; echo "rc=$?" >> "$logs/gpu-$k.log" ) &
done
( timeout "${LIMIT:-330}" bash tests/gpu_sanitize.sh --shards 3 --out "$logs" \
    > "$logs/sanitize.log" 2>&1; echo "rc=$?" >> "$logs/sanitize.log" ) &
wait
{
  echo "wall $(( $(date +%s) - start )) s"
  for k in $(seq 0 $((shards - 1))); do
    echo "gpu-$k: $(grep -E '(passed|failed)' "$logs/gpu-$k.log" | tail -1) $(tail -1 "$logs/gpu-$k.log")"
  done
  cat "$logs/sanitize.log"
  grep -h "^FAILED\|^ERROR" "$logs"/gpu-*.log
} > "$out/summary.txt"
tar czf "$out/logs.tgz" -C "$logs" .
cat "$out/summary.txt"
