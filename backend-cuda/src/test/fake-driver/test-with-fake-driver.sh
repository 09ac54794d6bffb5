#!/usr/bin/env bash
# Runs the CUDA backend's tests against the fake driver in fakecuda.c (host memory, C kernels), so the
# Java layer (bindings, argument packing, JIT options, graphs, error paths) runs end to end on a
# machine without a GPU. It proves plumbing, not the CUDA kernels: those only run on a real GPU.
# fakecuda.c also has host C versions of the ops.cu kernels (block by block over the launch grid), so
# CudaConformanceTest runs the whole kit through CudaBackend here (GOSS_CUDA_FAKE_OPS=0 skips it).
#   backend-cuda/src/test/fake-driver/test-with-fake-driver.sh [extra Maven args]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
cuda_include="${CUDA_HOME:-/usr/local/cuda}/include"
out="$root/backend-cuda/target/fake-driver"
mkdir -p "$out"
cc -std=c11 -D_POSIX_C_SOURCE=200809L -O1 -Wall -Wextra -Werror -shared -fPIC -I"$cuda_include" \
   -o "$out/libcuda.so.1" "$here/fakecuda.c" -lm
echo "fake driver: $out/libcuda.so.1"
cd "$root"
GOSS_CUDA_LIBRARY="$out/libcuda.so.1" ./gossw mvn -B -q -pl kernels,backend-cuda -am test "$@"
