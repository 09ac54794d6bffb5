#!/usr/bin/env bash
# Builds libgoss_cpu.so (the cpu backend's native kernels) into OUT_DIR with the system C compiler:
# ISA-independent files once, per-ISA kernel files once per instruction set (see isa.h).
#   backend-cpu/kernels/build.sh OUT_DIR [CC]
# Linux x86-64 only; elsewhere the cpu backend runs its Java (Vector API) kernels.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: build.sh OUT_DIR [CC]}
cc=${2:-${CC:-gcc}}
mkdir -p "$out"
obj=$(mktemp -d)
trap 'rm -rf "$obj"' EXIT
# -Wno-maybe-uninitialized: gcc flags the register arrays of the fully unrolled kernels falsely
common=(-std=c11 -O2 -fPIC -Wall -Wextra -Werror -Wno-maybe-uninitialized -fno-strict-aliasing -I"$here")
isa_files=(quantize_q8.c tile_gemm.c dense_gemm.c attention.c)
for f in cpu_features.c repack.c memory.c stream_probe.c; do "$cc" "${common[@]}" -c "$here/$f" -o "$obj/${f%.c}.o"; done
. "$here/isa_flags.sh"
for f in "${isa_files[@]}"; do
  for isa in avx2 avxvnni avx512; do
    # shellcheck disable=SC2046
    "$cc" "${common[@]}" -DGOSS_ISA=$isa $(goss_isa_flags $isa) -c "$here/$f" -o "$obj/${f%.c}.$isa.o"
  done
done
"$cc" -shared -pthread -o "$out/libgoss_cpu.so" "$obj"/*.o
