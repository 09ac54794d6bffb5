#!/usr/bin/env bash
# Runs on the lent GPU machine (issue 38): the 24-layer gpt-oss-20b shape with the MoE experts of all, half and none
# of its layers on the CPU (goss-gpu bench --n-cpu-moe 24 / 12 / 0 on cuda), prefill and decode, with the runtime and
# goss-gpu.jar that stage.sh put in DIR. The split imitates a small card on an H100/H200; the CPU side runs on the
# machine's 16 cores (cpu backend, its int8 MXFP4 kernels). Tables come back as $OUT/split-N.md, stderr beside them.
# Then prefill with the CPU layers' experts streamed to the GPU instead (--stream-experts-min-t, STREAM_MIN_T, default
# 64) at --n-cpu-moe LAYERS and LAYERS/2 (STREAM_SPLITS): $OUT/split-N-stream.md; compare its pp512 with split-N.md's
# to choose the default (tg should match: decode never streams).
#   backend-cuda/src/test/device/run-split-bench.sh [DIR] [LAYERS] [N ...]   (defaults .cudakit, 24, then 24 12 0)
set -uo pipefail
dir="${1:-.cudakit}"
layers="${2:-24}"
shift $(( $# < 2 ? $# : 2 ))
splits=("$@")
[ ${#splits[@]} -gt 0 ] || splits=("$layers" $((layers / 2)) 0)
out="${OUT:-/tmp}"
. "$(dirname "$0")/runtime.sh"
goss_runtime "$dir" || exit 3
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
nproc | sed 's/^/host cores: /' | tee -a "$out/gpu.txt"
goss_20b_model "$dir" "$layers"
status=0
for n in "${splits[@]}"; do
  echo "== bench --backend cuda --n-cpu-moe $n =="
  # --op-times: the moe row of the CPU's layers is the CPU-side share (the crossing each way included)
  timeout -k 5 "${SPLIT_TIMEOUT:-240}" "${java[@]}" -jar "$dir/goss-gpu.jar" bench --backend cuda --n-cpu-moe "$n" -m "$model" \
    -p 512 -n 64 -r 2 --op-times 2>"$out/split-$n.err" | tee "$out/split-$n.md" || status=1
  tail -5 "$out/split-$n.err"
done
read -r -a streams <<<"${STREAM_SPLITS:-$layers $((layers / 2))}"
for n in "${streams[@]}"; do
  echo "== bench --backend cuda --n-cpu-moe $n --stream-experts-min-t ${STREAM_MIN_T:-64} =="
  timeout -k 5 "${SPLIT_TIMEOUT:-240}" "${java[@]}" -jar "$dir/goss-gpu.jar" bench --backend cuda --n-cpu-moe "$n" \
    --stream-experts-min-t "${STREAM_MIN_T:-64}" -m "$model" -p 512 -n 16 -r 2 --op-times \
    2>"$out/split-$n-stream.err" | tee "$out/split-$n-stream.md" || status=1
  tail -5 "$out/split-$n-stream.err"
done
exit $status
