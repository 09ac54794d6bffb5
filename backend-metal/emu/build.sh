#!/usr/bin/env bash
# Builds the emulated Metal device, OUT_DIR/libgoss_metal_emu.so: goss_metal_emu.cpp (the ABI of
# backend-metal/shim/goss_metal.h), the kernels of backend-metal/kernels and the self-test kernels compiled as C++
# (emu_kernels.cpp), on the fiber scheduler of gpu-device/emu.
#   backend-metal/emu/build.sh OUT_DIR [CXX]
# Sources older than the library: nothing to do.
# Every kernel is registered by name without being named here or in its file: a line that starts with
# "KERNEL(name)" declares one (the convention of backend-metal/kernels/common.h), and this writes one
# EMU_REGISTER(name) per such line into OUT_DIR/metal_kernel_registry.inc, which emu_kernels.cpp includes.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
gpu_emu="$root/gpu-device/emu"
kernels="$root/backend-metal/kernels"
shim="$root/backend-metal/shim"
out="${1:?usage: build.sh OUT_DIR [CXX]}"
cxx="${2:-${CXX:-g++}}"
lib="$out/libgoss_metal_emu.so"
. "$gpu_emu/up-to-date.sh"
if up_to_date "$lib" "$here" "$gpu_emu" "$kernels" "$shim/goss_metal.h"; then
    echo "emulated Metal device: up to date ($lib)"
    exit 0
fi
mkdir -p "$out"
sed -n 's/^KERNEL(\([A-Za-z_][A-Za-z_0-9]*\)).*/EMU_REGISTER(\1)/p' "$kernels"/*.metal "$here/emu_selftest.metal" \
    > "$out/metal_kernel_registry.inc"
[ -s "$out/metal_kernel_registry.inc" ] || { echo "metal-emu: no KERNEL(...) lines found in backend-metal/kernels" >&2; exit 1; }
"$cxx" -std=c++20 -O2 -fPIC -shared -Wall -Werror \
    -I"$shim" -I"$here" -I"$gpu_emu" -I"$kernels" -I"$out" \
    -o "$lib.tmp" "$here/goss_metal_emu.cpp" "$here/emu_kernels.cpp" "$gpu_emu/fibers.cpp"
mv "$lib.tmp" "$lib" # last, so that a failed build never leaves a library that looks up to date
echo "emulated Metal device: $(wc -l < "$out/metal_kernel_registry.inc") kernels, $lib"
