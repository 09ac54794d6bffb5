#!/usr/bin/env bash
# Builds the fake CUDA driver (fakecuda.c) with the CUDA emulator (../cuda-emu on gpu-device/emu) into OUT_DIR:
# OUT_DIR/libcuda.so.1, and runs the emulator's self-test. The real backend-cuda/kernels sources are compiled for the host
# as C++, so launches through this driver run the actual kernels on the CPU.
#   backend-cuda/emu/fake-driver/build.sh OUT_DIR
# Needs g++ and the CUDA toolkit's cuda.h (CUDA_HOME, default /usr/local/cuda); without cuda.h it says so and builds
# nothing (the CUDA tests then skip for lack of a driver, saying why). Sources older than the library: nothing to do.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
emu="$root/backend-cuda/emu/cuda-emu"
gpu_emu="$root/gpu-device/emu"
kernels="$root/backend-cuda/kernels"
out="${1:?usage: build.sh OUT_DIR}"
cuda_include="${CUDA_HOME:-/usr/local/cuda}/include"
if [ ! -f "$cuda_include/cuda.h" ]; then
    echo "fake CUDA driver: not built ($cuda_include/cuda.h not found; set CUDA_HOME to a CUDA toolkit)"
    exit 0
fi
mkdir -p "$out"
lib="$out/libcuda.so.1"
. "$gpu_emu/up-to-date.sh"
if up_to_date "$lib" "$emu" "$gpu_emu" "$here" "$kernels"; then
    echo "fake CUDA driver: up to date ($lib)"
    exit 0
fi
# -fsanitize=alignment: a misaligned load (e.g. a uint4 weight load from an odd row offset) aborts the run, as it
# would fault on a GPU, instead of silently working on x86.
cxxflags=(-std=c++20 -O2 -fPIC -Wall -Wextra -Werror -fvisibility=hidden -fsanitize=alignment -fno-sanitize-recover=alignment
          -Wno-maybe-uninitialized
          -I"$emu" -I"$gpu_emu" -I"$kernels")
# The kernel sources and their entry points, for cuda_kernels.cpp: every backend-cuda/kernels/*.cu, and every name that
# follows a __global__ once the preprocessor has run (so entry points made by macros are found too).
for cu in "$kernels"/*.cu; do echo "#include \"$(basename "$cu")\""; done > "$out/cuda_kernel_sources.inc"
g++ "${cxxflags[@]}" -I"$out" -DGOSS_CUDA_EMU_LIST -E "$emu/cuda_kernels.cpp" \
    | grep -oE 'CUDA_EMU_ENTRY void [A-Za-z_][A-Za-z_0-9]*' | sed -E 's/^CUDA_EMU_ENTRY void (.*)$/CUDA_EMU_KERNEL(\1)/' \
    > "$out/cuda_kernel_registry.inc"
echo "emulated CUDA kernels: $(wc -l < "$out/cuda_kernel_registry.inc") entry points from $(ls "$kernels"/*.cu | wc -l) files"
pids=()
for src in "$emu/cuda_emu_runtime.cpp" "$emu/cuda_kernels.cpp" "$gpu_emu/fibers.cpp"; do
    rm -f "$out/$(basename "$src" .cpp).o"
    g++ "${cxxflags[@]}" -I"$out" -c -o "$out/$(basename "$src" .cpp).o" "$src" &
    pids+=($!)
done
cc -std=c11 -D_POSIX_C_SOURCE=200809L -O1 -Wall -Wextra -Werror -fPIC -I"$cuda_include" -I"$emu" \
   -c -o "$out/fakecuda.o" "$here/fakecuda.c"
for p in "${pids[@]}"; do wait "$p"; done # a plain `wait` returns 0 even when a compile failed: stale objects would run
emu_objs=("$out/cuda_emu_runtime.o" "$out/cuda_kernels.o" "$out/fibers.o")
g++ "${cxxflags[@]}" -o "$out/cuda_emu_selftest" "$emu/cuda_emu_selftest.cpp" "${emu_objs[@]}" -lpthread
"$out/cuda_emu_selftest"
g++ -shared -fsanitize=alignment -o "$lib.tmp" "$out/fakecuda.o" "${emu_objs[@]}" -lpthread -lm
mv "$lib.tmp" "$lib" # last, so that a failed build never leaves a library that looks up to date
echo "fake CUDA driver: $lib"
