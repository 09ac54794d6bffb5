#!/usr/bin/env bash
# Runs the cuda backend's tests against the fake driver in fakecuda.c, so the whole CUDA path runs end to end
# on a machine without a GPU: the Java layer (bindings, argument packing, JIT options, graphs, error paths)
# and the REAL kernels of backend-cuda/kernels (every .cu file), compiled for the host as C++ under the
# CUDA emulator (backend-cuda/emu/cuda-emu/cuda_emu.h on the fiber scheduler gpu-device/emu/fibers.cpp). cuLaunchKernel
# and graph replay run them block by block (blocks on a few OS threads, GOSS_EMU_THREADS), so
# CudaConformanceTest and CudaSmallBlocksConformanceTest compare the actual kernels with the reference backend
# (GOSS_CUDA_FAKE_OPS=0 skips the kit). The cuda-emu module (backend-cuda/emu) builds the driver (build.sh: the emulator's
# self-test runs first); Maven then runs the tests with GOSS_CUDA_LIBRARY pointing at it.
# What this does not prove: PTX codegen, timing, memory-model races between warps; those need a GPU. Missing
# barriers: GOSS_EMU_ORDER / GOSS_EMU_POISON reach the emulator through Maven (scripts/emu-race-check.sh).
#   backend-cuda/emu/fake-driver/test-with-fake-driver.sh [extra Maven args]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
lib="$root/backend-cuda/emu/target/fake-driver/libcuda.so.1"
"$here/build.sh" "$(dirname "$lib")"
[ -f "$lib" ] || { echo "test-with-fake-driver: no fake driver was built (see above)" >&2; exit 1; }
cd "$root"
GOSS_CUDA_LIBRARY="$lib" ./gossw mvn -B -q -pl backend-cuda/kernels,backend-cuda/emu,backend-cuda -am test "$@"
