#!/bin/bash
# Builds llama.cpp's CUDA llama-bench for sm_90 (H100/H200) alone, as small as it goes: the same-card
# anchor that goss-gpu's cuda figures are compared with (issue 39, item 1).
#
#   llama-cuda-build.sh [-n] [-j N] SRC OUT
#
# SRC: a llama.cpp source tree (from `git archive` of a mirror; models/ not needed), or a git dir
#      (bare mirror or a clone's .git), which is then checked out to OUT/src first.
# OUT: build folder; the stripped binary lands in OUT/bin/llama-bench, the build log in OUT/build.log.
# -n:  print the cmake commands and stop (dry run).
# -j:  parallel jobs (default 2: the dev machine has 2 cores shared by several sessions).
#
# Environment:
#   CUBLAS_DIR  folder holding include/cublas_v2.h and lib/libcublas.so.13 (the nvidia-cublas cu13 wheel's
#               nvidia/cu13). Unset: looked for in python3's site-packages (the device image has the wheel).
#   CUDA_ARCH   CMAKE_CUDA_ARCHITECTURES (default 90-real: sm_90 machine code, no PTX, half the size).
#   NICE        niceness of the build (default 19).
#
# What the binary needs at run time: libcublas.so.13 and libcublasLt.so.13 (from the wheel, found through
# LD_LIBRARY_PATH), libcuda.so.1 (the driver), glibc. cudart, libstdc++ and libgcc are linked in statically,
# OpenMP is off (ggml's own thread pool), so nothing else.
set -euo pipefail
usage() { echo "usage: $(basename "$0") [-n] [-j N] SRC OUT" >&2; exit 2; }
dry=0; jobs=2
while getopts "nj:" opt; do
  case $opt in
    n) dry=1 ;;
    j) [[ $OPTARG =~ ^[1-9][0-9]*$ ]] || { echo "llama-cuda-build: -j wants a positive number, got '$OPTARG'" >&2; exit 2; }
       jobs=$OPTARG ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
[[ $# -eq 2 ]] || usage
src=$1; out=$2
if [[ -f $src/CMakeLists.txt ]]; then
  src=$(cd "$src" && pwd)
elif ! git --git-dir="$src" rev-parse --verify -q HEAD >/dev/null 2>&1; then
  echo "llama-cuda-build: $src is neither a llama.cpp source tree nor a git dir" >&2; exit 2
fi
mkdir -p "$out"; out=$(cd "$out" && pwd)

if [[ ! -f $src/CMakeLists.txt ]]; then   # a git dir
  if [[ $dry == 0 && ! -f $out/src/CMakeLists.txt ]]; then
    mkdir -p "$out/src"
    # models/ holds blobs a mirror lacks: archive every top-level entry but it
    mapfile -t top < <(git --git-dir="$src" ls-tree --name-only HEAD | grep -vx models)
    git --git-dir="$src" archive HEAD -- "${top[@]}" | tar -x -C "$out/src"
  fi
  src=$out/src
fi

nvcc=$(command -v nvcc || true)
[[ -z $nvcc && -x /usr/local/cuda/bin/nvcc ]] && nvcc=/usr/local/cuda/bin/nvcc
[[ -n $nvcc ]] || { echo "llama-cuda-build: nvcc not found (PATH, /usr/local/cuda/bin)" >&2; exit 2; }
cuda_lib=$(cd "$(dirname "$(readlink -f "$nvcc")")/.." && pwd)/lib64
[[ -f $cuda_lib/libcudart_static.a ]] || cuda_lib=/usr/local/cuda/lib64

# shellcheck source=llama-cuda-env.sh
. "$(dirname "$0")/llama-cuda-env.sh"
[[ -n ${CUBLAS_DIR:-} ]] || CUBLAS_DIR=$(llama_cublas_dir)
[[ -n ${CUBLAS_DIR:-} && -f $CUBLAS_DIR/include/cublas_v2.h ]] || {
  echo "llama-cuda-build: no cuBLAS: set CUBLAS_DIR to the nvidia-cublas wheel's nvidia/cu13 folder" >&2; exit 2; }
libs=("$CUBLAS_DIR"/lib/libcublas.so.*); cublas=${libs[0]}
libs=("$CUBLAS_DIR"/lib/libcublasLt.so.*); cublaslt=${libs[0]}

# No libcuda.so to link against (this dev machine's toolkit has no stubs/ folder and no driver): ggml-cuda
# calls a few driver functions (its VMM pool). Then a stub libcuda.so.1 is made from the symbols the compiled
# ggml-cuda leaves undefined; at run time the driver's real libcuda.so.1 is loaded in its place.
stub=""
if [[ ! -e $cuda_lib/stubs/libcuda.so && ! -e $cuda_lib/libcuda.so ]] && ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so '; then
  stub=$out/stub/libcuda.so
fi

# CUDA::cublas and CUDA::cublasLt are pointed at the wheel's files (it has no unversioned libcublas.so),
# CUDA::cudart at the static runtime, so the binary needs no libcudart on the device.
cfg=(cmake -S "$src" -B "$out/build" -G Ninja
  -DCMAKE_BUILD_TYPE=Release
  -DCMAKE_CUDA_COMPILER="$nvcc"
  -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90-real}"
  -DGGML_CUDA=ON -DGGML_CUDA_FA_ALL_QUANTS=OFF -DGGML_CUDA_NCCL=OFF -DGGML_CUDA_COMPRESSION_MODE=size
  -DGGML_NATIVE=OFF -DGGML_OPENMP=OFF -DGGML_CCACHE=OFF -DGGML_BACKEND_DL=OFF -DBUILD_SHARED_LIBS=OFF
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF
  -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF
  -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_COMMON=ON
  -DCUDA_cublas_LIBRARY="$cublas" -DCUDA_cublasLt_LIBRARY="$cublaslt"
  -DCUDA_cudart_LIBRARY="$cuda_lib/libcudart_static.a"
  -DCMAKE_CUDA_FLAGS="-I$CUBLAS_DIR/include"
  -DCMAKE_CXX_FLAGS="-I$CUBLAS_DIR/include"
  -DCMAKE_EXE_LINKER_FLAGS="-static-libstdc++ -static-libgcc")
[[ -n $stub ]] && cfg+=(-DCUDA_cuda_driver_LIBRARY="$stub")
lib=(nice -n "${NICE:-19}" cmake --build "$out/build" -j "$jobs" --target ggml-cuda)
bld=(nice -n "${NICE:-19}" cmake --build "$out/build" -j "$jobs" --target llama-bench)

if [[ $dry == 1 ]]; then
  printf '%q ' "${cfg[@]}"; echo
  [[ -n $stub ]] && { printf '%q ' "${lib[@]}"; echo; echo "# then: stub $stub from nm -u of libggml-cuda.a"; }
  printf '%q ' "${bld[@]}"; echo
  exit 0
fi

# A stub libcuda.so.1 that defines, as empty functions, every cu* driver symbol ARCHIVE leaves undefined.
make_stub() {
  local archive=$1 so=$2
  mkdir -p "$(dirname "$so")"
  nm -u "$archive" | awk '$2 ~ /^cu[A-Z]/ {print $2}' | sort -u | awk '{print "void " $1 "(void) {}"}' >"${so%.so}.c"
  echo "stub libcuda: $(wc -l <"${so%.so}.c") symbols"
  gcc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$so" "${so%.so}.c"
}

start=$(date +%s)
{
  "${cfg[@]}"
  if [[ -n $stub ]]; then
    "${lib[@]}"
    make_stub "$(find "$out/build" -name libggml-cuda.a | head -1)" "$stub"
  fi
  "${bld[@]}"
} >"$out/build.log" 2>&1 || { tail -30 "$out/build.log" >&2; echo "llama-cuda-build: failed, log in $out/build.log" >&2; exit 1; }
mkdir -p "$out/bin"
cp "$out/build/bin/llama-bench" "$out/bin/llama-bench.unstripped"
strip -o "$out/bin/llama-bench" "$out/bin/llama-bench.unstripped"
rm "$out/bin/llama-bench.unstripped"
secs=$(( $(date +%s) - start ))
echo "llama-cuda-build: built in ${secs} s with -j $jobs: $(stat -c %s "$out/bin/llama-bench") bytes, $out/bin/llama-bench" \
  | tee -a "$out/build.log"
