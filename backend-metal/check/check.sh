#!/usr/bin/env bash
# Compiles the Metal shim backend-metal/shim/goss_metal.m on Linux and checks every Metal API it uses against Apple's,
# without a Mac, and checks that the kernels use only the Metal Shading Language. Each failing fails the script:
#   1. clang (Objective-C, ARC, -Wall -Wextra -Werror, -fsyntax-only) compiles the shim against GNUstep's Foundation
#      and include/Metal/Metal.h, a stand-in for <Metal/Metal.h> holding what the shim uses with Apple's selectors and
#      types: a misspelled selector or an argument of the wrong type is a compile error;
#   2. MetalApiCheck.java reads clang's AST of the shim and compares every message sent to a Metal object, and every
#      declaration of the stand-in header, with metal-api.txt (facts from Apple's metal-cpp: ExtractMetalApi.java);
#   3. g++ compiles the Metal branch of backend-metal/kernels/goss.metal against msl/metal_stdlib, which has the language's
#      built-in functions and no C or C++ standard library.
# Installs clang, gobjc and GNUstep base with scripts/setup-objc.sh when they are missing.
#
#   backend-metal/check/check.sh            check the shim
#   backend-metal/check/check.sh --planted  also check four broken copies (a misspelled selector, an argument of the
#                                          wrong type, a wrong type in the stand-in header, a C library call in the
#                                          kernels) and fail unless each fails
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
shim_dir="$root/backend-metal/shim"
kernels="$root/backend-metal/kernels"
work="$here/target"
planted=0
[ "${1:-}" = --planted ] && planted=1

"$root/scripts/setup-objc.sh"
clang="$(command -v clang || ls /usr/bin/clang-[0-9]* | sort -V | tail -1)"
java="$("$root/scripts/find-jdk.sh")/bin/java"

# GNUstep's headers include the GNU runtime's <objc/runtime.h>, which is not written for ARC (an inline function that
# reads an object's class pointer, three `Protocol **` results without ownership). For this syntax-only check, a copy
# with those declarations adjusted, and the blocks-runtime header GNUstep expects when blocks are on.
rm -rf "$work/include" && mkdir -p "$work/include"
cp -r "$(gcc -print-file-name=include)/objc" "$work/include/"
sed -i -e 's/Protocol \*\*/Protocol * __unsafe_unretained */g' -e 's/return object->class_pointer;/return Nil;/' \
    "$work/include/objc/runtime.h"
printf '%s\n' 'void *_Block_copy(const void *);' 'void _Block_release(const void *);' > "$work/include/objc/blocks_runtime.h"

flags=(-fsyntax-only -fobjc-arc -fobjc-runtime=gnustep-2.0 -fblocks -fobjc-exceptions -fno-color-diagnostics
       -DGNUSTEP -DGNUSTEP_BASE_LIBRARY=1 -DGNU_RUNTIME=1
       -isystem "$work/include" -isystem /usr/include/GNUstep -include "$here/include/macos-sdk.h"
       -I "$shim_dir")

# check SHIM METAL_INCLUDE_DIR: prints what each check says; exit 1 when either fails
check() {
  local shim="$1" inc="$2" rc=0
  if ! "$clang" "${flags[@]}" -I "$inc" -Wall -Wextra -Werror "$shim" 2>"$work/clang.txt"; then
    echo "clang: the shim does not compile against Apple's API:"
    grep -E 'error:' "$work/clang.txt" | sed "s|^$root/||; s|^$work/||; s/^/  /" | head -5
    rc=1
  fi
  "$clang" "${flags[@]}" -I "$inc" -w -Xclang -ast-dump "$shim" >"$work/ast.txt" 2>/dev/null || true
  "$java" "$here/MetalApiCheck.java" "$work/ast.txt" "$shim" "$inc/Metal/Metal.h" "$here/metal-api.txt" >"$work/api.txt" || rc=1
  if [ "$rc" = 0 ]; then cat "$work/api.txt"; else grep -A20 '^FAILED' "$work/api.txt" || true; fi
  return "$rc"
}

mkdir -p "$work"
echo "== backend-metal/shim/goss_metal.m: clang $("$clang" -dumpversion), GNUstep Foundation, include/Metal/Metal.h"
check "$shim_dir/goss_metal.m" "$here/include"
echo "Metal shim: compiled with clang (ARC, -Werror) and every Metal message checked against Apple's API: passed"

# The kernels: only what the Metal Shading Language has (msl/metal_stdlib: its built-in functions and nothing of the
# C or C++ standard libraries). msl_check METAL_FILE
msl_check() {
  g++ -std=c++17 -fsyntax-only -nostdinc -nostdinc++ -Wall -Wno-attributes -Wno-unused-parameter -fno-diagnostics-color \
      -I "$here/msl" -x c++ "$1" 2>"$work/msl.txt" && return 0
  echo "the kernels use what the Metal Shading Language does not have:"
  grep -E 'error' "$work/msl.txt" | sed "s|^$root/||; s|^$work/||; s/^/  /" | head -5
  return 1
}
msl_check "$kernels/goss.metal"
echo "Metal kernels (backend-metal/kernels/goss.metal and the files it includes): only Metal Shading Language built-ins: passed"

[ "$planted" = 1 ] || exit 0
# plant ID WHAT FILE SED: a copy of the shim and header with one mistake; the check must fail on it
plant() {
  local name="$2" file="$3" edit="$4" dir="$work/planted/$1"
  rm -rf "$dir" && mkdir -p "$dir/Metal"
  cp "$shim_dir/goss_metal.m" "$dir/" && cp "$here/include/Metal/Metal.h" "$dir/Metal/"
  local before; before="$(md5sum < "$dir/$file")"
  sed -i "$edit" "$dir/$file"
  [ "$(md5sum < "$dir/$file")" != "$before" ] || { echo "planted $name: the edit changed nothing"; exit 1; }
  echo "== planted: $name"
  if check "$dir/goss_metal.m" "$dir" >"$dir/out.txt" 2>&1; then
    cat "$dir/out.txt"; echo "planted $name: NOT caught"; exit 1
  fi
  sed 's/^/  /' "$dir/out.txt"
}
plant selector "misspelled selector (setBufer:offset:atIndex:)" goss_metal.m 's/ setBuffer:H(id<MTLBuffer>, b)/ setBufer:H(id<MTLBuffer>, b)/'
plant argument "wrong argument type (a command buffer as the pipeline state)" goss_metal.m 's/\[encoder(c) setComputePipelineState:c->pso\]/[encoder(c) setComputePipelineState:c->cb]/'
plant header "wrong type in the stand-in header (offset:(uint32_t))" Metal/Metal.h 's/offset:(NSUInteger)offset atIndex/offset:(uint32_t)offset atIndex/'
echo "== planted: a C library call in the kernels (sqrtf instead of rsqrt)"
rm -rf "$work/planted/msl" && mkdir -p "$work/planted/msl" && cp "$kernels"/*.metal "$kernels"/*.h "$work/planted/msl/"
sed -i 's|float inv = rsqrt(total|float inv = 1.0f / sqrtf(total|' "$work/planted/msl/rmsnorm.metal"
grep -q sqrtf "$work/planted/msl/rmsnorm.metal" || { echo "planted sqrtf: the edit changed nothing"; exit 1; }
if msl_check "$work/planted/msl/goss.metal" > "$work/planted/msl/out.txt"; then echo "planted sqrtf: NOT caught"; exit 1; fi
sed 's/^/  /' "$work/planted/msl/out.txt"
echo "planted mistakes: all 4 caught"
