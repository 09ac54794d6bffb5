#!/usr/bin/env bash
# Runs on the lent GPU machine: whole-model figures for issue 6 with the runtime and goss-gpu.jar that
# stage.sh put in DIR. Generates a gpt-oss-20b-shaped checkpoint with random weights on the machine's
# disk (the real one cannot travel: 64 MiB limit), measures the GPU's read bandwidth with PyTorch (for
# the fraction of the ceiling), then `goss-gpu bench` (pp512, tg128) on cuda and, when the NVIDIA
# OpenCL driver is there, on opencl. Logs come back under $OUT.
#   backend-cuda/src/test/device/run-bench.sh [DIR] [LAYERS]     (LAYERS: 24 = the whole 20b, default)
set -uo pipefail
dir="${1:-.cudakit}"
layers="${2:-24}"
out="${OUT:-/tmp}"
. "$(dirname "$0")/runtime.sh"
goss_runtime "$dir" || exit 3
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.memory --format=csv,noheader | tee "$out/gpu.txt"

# Read bandwidth: sum over 4 GiB of float32, best of 10 after warm-up (bytes read / time).
bw=$(python3 - <<'PY' 2>/dev/null
import torch, time
x = torch.ones(1 << 30, dtype=torch.float32, device="cuda")
for _ in range(3): x.sum()
torch.cuda.synchronize(); best = 1e9
for _ in range(10):
    t = time.perf_counter(); x.sum(); torch.cuda.synchronize(); best = min(best, time.perf_counter() - t)
print(f"{x.numel() * 4 / best / 1e9:.0f}")
PY
)
echo "measured read bandwidth: ${bw:-unknown} GB/s" | tee -a "$out/gpu.txt"

goss_20b_model "$dir" "$layers"
status=0
for b in cuda opencl; do
  echo "== bench --backend $b =="
  "${java[@]}" -jar "$dir/goss-gpu.jar" bench --backend "$b" -m "$model" -p 512 -n 128 -r 3 ${bw:+--bandwidth "$bw"} \
    2>"$out/bench-$b.err" | tee "$out/bench-$b.md" || { [ "$b" = cuda ] && status=1; }
  tail -5 "$out/bench-$b.err"
done
exit $status
