#!/usr/bin/env bash
# Runs the cuda backend's tests against the fake driver in fakecuda.c, so the whole CUDA path runs end to end
# on a machine without a GPU: the Java layer (bindings, argument packing, JIT options, graphs, error paths)
# and the REAL kernels of kernels/cuda (every .cu file), compiled for the host as C++ under the
# CUDA emulator (native/cuda-emu/cuda_emu.h on the fiber scheduler native/gpu-emu/fibers.cpp). cuLaunchKernel
# and graph replay run them block by block (blocks on a few OS threads, GOSS_EMU_THREADS), so
# CudaConformanceTest and CudaSmallBlocksConformanceTest compare the actual kernels with the reference backend
# (GOSS_CUDA_FAKE_OPS=0 skips the kit). Before Maven the emulator's self-test (cuda_emu_selftest.cpp) runs.
# What this does not prove: PTX codegen, timing, memory-model races between warps; those need a GPU. Missing
# barriers: GOSS_EMU_ORDER / GOSS_EMU_POISON reach the emulator through Maven (scripts/emu-race-check.sh).
#   backend-cuda/src/test/fake-driver/test-with-fake-driver.sh [extra Maven args]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
cuda_include="${CUDA_HOME:-/usr/local/cuda}/include"
emu="$root/native/cuda-emu"
out="$root/backend-cuda/target/fake-driver"
mkdir -p "$out"
# -fsanitize=alignment: a misaligned load (e.g. a uint4 weight load from an odd row offset) aborts the run, as it
# would fault on a GPU, instead of silently working on x86.
cxxflags=(-std=c++20 -O2 -fPIC -Wall -Wextra -Werror -fvisibility=hidden -fsanitize=alignment -fno-sanitize-recover=alignment
          -Wno-maybe-uninitialized
          -I"$emu" -I"$root/native/gpu-emu" -I"$root/kernels/cuda")
# The kernel sources and their entry points, for cuda_kernels.cpp: every kernels/cuda/*.cu, and every name that
# follows a __global__ once the preprocessor has run (so entry points made by macros are found too).
for cu in "$root"/kernels/cuda/*.cu; do echo "#include \"$(basename "$cu")\""; done > "$out/cuda_kernel_sources.inc"
g++ "${cxxflags[@]}" -I"$out" -DGOSS_CUDA_EMU_LIST -E "$emu/cuda_kernels.cpp" \
    | grep -oE 'CUDA_EMU_ENTRY void [A-Za-z_][A-Za-z_0-9]*' | sed -E 's/^CUDA_EMU_ENTRY void (.*)$/CUDA_EMU_KERNEL(\1)/' \
    > "$out/cuda_kernel_registry.inc"
echo "emulated CUDA kernels: $(wc -l < "$out/cuda_kernel_registry.inc") entry points from $(ls "$root"/kernels/cuda/*.cu | wc -l) files"
pids=()
for src in "$emu/cuda_emu_runtime.cpp" "$emu/cuda_kernels.cpp" "$root/native/gpu-emu/fibers.cpp"; do
    rm -f "$out/$(basename "$src" .cpp).o"
    g++ "${cxxflags[@]}" -I"$out" -c -o "$out/$(basename "$src" .cpp).o" "$src" &
    pids+=($!)
done
cc -std=c11 -D_POSIX_C_SOURCE=200809L -O1 -Wall -Wextra -Werror -fPIC -I"$cuda_include" -I"$emu" \
   -c -o "$out/fakecuda.o" "$here/fakecuda.c"
for p in "${pids[@]}"; do wait "$p"; done # a plain `wait` returns 0 even when a compile failed: stale objects would run
emu_objs=("$out/cuda_emu_runtime.o" "$out/cuda_kernels.o" "$out/fibers.o")
g++ -shared -fsanitize=alignment -o "$out/libcuda.so.1" "$out/fakecuda.o" "${emu_objs[@]}" -lpthread -lm
g++ "${cxxflags[@]}" -o "$out/cuda_emu_selftest" "$emu/cuda_emu_selftest.cpp" "${emu_objs[@]}" -lpthread
"$out/cuda_emu_selftest"
echo "fake driver: $out/libcuda.so.1"
cd "$root"
GOSS_CUDA_LIBRARY="$out/libcuda.so.1" ./gossw mvn -B -q -pl kernels,backend-cuda -am test "$@"
