#!/usr/bin/env bash
# The prefill MoE's expert GEMMs on tensor cores against the FP32 kernels, in one call on one machine (issue 39
# part 3): `goss-gpu bench` pp512 on cuda with GOSS_CUDA_MOE_MMA=1 (the default on compute capability 8.0+:
# moe_gate_up_mma, moe_down_mma) and then =0 (moe_gate_up_tiled, moe_down_tiled), on the 20b-shaped model that
# run-bench.sh generated (made here if it is not there yet).
#   backend-cuda/src/test/device/run-mma-ab.sh [DIR] [LAYERS]      (defaults .cudakit, 24)
# Back: $OUT/mma-ab.md (both tables, each under its knob line, and the last lines of each run's stderr).
set -uo pipefail
dir="${1:-.cudakit}"
layers="${2:-24}"
out="${OUT:-/tmp}"
. "$(dirname "$0")/runtime.sh"
goss_runtime "$dir" || exit 3
goss_20b_model "$dir" "$layers"
status=0
for mma in 1 0; do
  echo "== GOSS_CUDA_MOE_MMA=$mma: bench --backend cuda -p 512 -n 16 -r 3 ==" | tee -a "$out/mma-ab.md"
  GOSS_CUDA_MOE_MMA=$mma "${java[@]}" -jar "$dir/goss-gpu.jar" bench --backend cuda -m "$model" -p 512 -n 16 -r 3 \
    2>"/tmp/mma-ab-$mma.err" | tee -a "$out/mma-ab.md" || status=1
  tail -5 "/tmp/mma-ab-$mma.err" >>"$out/mma-ab.md"
done
exit $status
