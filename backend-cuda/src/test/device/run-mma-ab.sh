#!/usr/bin/env bash
# Prefill on tensor cores against the FP32 kernels, in one call on one machine (issue 39 part 3): `goss-gpu bench`
# pp512 on cuda with the three mma knobs on (the default on compute capability 8.0+: GOSS_CUDA_MOE_MMA=1, moe_gate_up_mma
# and moe_down_mma; GOSS_CUDA_DENSE_MMA=1, dense_gemm_mma_bf16 for the BF16 dense GEMMs; GOSS_CUDA_ATTENTION_MMA=1,
# attention_mma), then attention off (its share: attention_gqa), then the dense GEMM off too, then all off (moe_*_tiled,
# dense_gemm_bf16_*, attention_gqa), on the 20b-shaped model that run-bench.sh generated (made here if it is not there yet).
#   backend-cuda/src/test/device/run-mma-ab.sh [DIR] [LAYERS]      (defaults .cudakit, 24)
# Back: $OUT/mma-ab.md (each table under its knob line, and the last lines of each run's stderr).
set -uo pipefail
dir="${1:-.cudakit}"
layers="${2:-24}"
out="${OUT:-/tmp}"
. "$(dirname "$0")/runtime.sh"
goss_runtime "$dir" || exit 3
goss_20b_model "$dir" "$layers"
status=0
for knobs in "1 1 1" "1 1 0" "1 0 0" "0 0 0"; do
  read -r moe dense attn <<<"$knobs"
  echo "== GOSS_CUDA_MOE_MMA=$moe GOSS_CUDA_DENSE_MMA=$dense GOSS_CUDA_ATTENTION_MMA=$attn: bench --backend cuda -p 512 -n 16 -r 3 ==" \
    | tee -a "$out/mma-ab.md"
  GOSS_CUDA_MOE_MMA=$moe GOSS_CUDA_DENSE_MMA=$dense GOSS_CUDA_ATTENTION_MMA=$attn "${java[@]}" -jar "$dir/goss-gpu.jar" bench \
    --backend cuda -m "$model" -p 512 -n 16 -r 3 2>"/tmp/mma-ab-$moe$dense$attn.err" | tee -a "$out/mma-ab.md" || status=1
  tail -5 "/tmp/mma-ab-$moe$dense$attn.err" >>"$out/mma-ab.md"
done
exit $status
