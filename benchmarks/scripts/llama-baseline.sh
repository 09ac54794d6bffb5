#!/usr/bin/env bash
# The llama.cpp side of benchmarks/scripts/cpu-vs-llama.sh: fetches llama.cpp's source at a pinned commit, builds its
# llama-bench for this CPU, and writes the synthetic gpt-oss-20b-shaped GGUFs both engines are timed on.
# Nothing of llama.cpp is part of goss-gpu or committed here; it all goes under DIR.
#
# usage: benchmarks/scripts/llama-baseline.sh [options]
#   --dir DIR       where everything goes (default: $LLAMA_DIR or /tmp/llama): DIR/src (the source), DIR/src/build (llama-bench),
#                   DIR/gpt-oss-20b-synth-L4-mxfp4.gguf (and L24 with --full)
#   --source SRC    a git URL or a local git directory (a clone, its .git, or a bare mirror) to take llama.cpp from
#                   (default: https://github.com/ggml-org/llama.cpp.git)
#   --ref REF       the tag, branch or commit to build (default: b9994, commit 14d3ba45f3369e75a308212399cfada5d349883b,
#                   July 2026); the commit built is printed and kept in DIR/src/.commit
#   --full          also write the 24-layer file (about 11 GiB; the 4-layer one is about 2.8 GiB)
#   --server        also build llama-server (for benchmarks/scripts/server-np.py)
#   --avx2          also build llama-bench for AVX2-only CPUs, into DIR/src/build-avx2 (for cpu-vs-llama.sh --isa avx2)
#   --jobs N        build jobs (default: the number of CPUs)
# Needs git, cmake, a C and C++ compiler, and python3 with numpy (Debian: apt-get install git cmake g++ python3-numpy).
# Steps already done (a source tree, a built llama-bench, a written GGUF) are kept: delete them to redo them.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

PINNED_REF=b9994 PINNED_COMMIT=14d3ba45f3369e75a308212399cfada5d349883b
dir="${LLAMA_DIR:-/tmp/llama}" source="https://github.com/ggml-org/llama.cpp.git" ref="$PINNED_REF" full=0 avx2=0 server=0
jobs="$(nproc 2>/dev/null || echo 2)"
die() { echo "llama-baseline: $*" >&2; exit 2; }
say() { echo "llama-baseline: $*" >&2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) dir="${2:?--dir needs a folder}"; shift 2 ;;
    --source) source="${2:?--source needs a git URL or directory}"; shift 2 ;;
    --ref) ref="${2:?--ref needs a tag, branch or commit}"; shift 2 ;;
    --full) full=1; shift ;;
    --avx2) avx2=1; shift ;;
    --server) server=1; shift ;;
    --jobs) jobs="${2:?--jobs needs a number}"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
done
for tool in git cmake python3; do command -v "$tool" > /dev/null || die "needs $tool (see --help)"; done
python3 -c 'import numpy' 2> /dev/null || die "needs numpy for python3 (Debian: apt-get install python3-numpy)"
src="$dir/src"
mkdir -p "$dir"

# 1. The source at the commit asked for, its commit noted in src/.commit. From a local git directory the tree is
# exported without models/, whose vocabulary files neither the build nor the benchmark reads (a mirror may lack them).
if [ ! -f "$src/CMakeLists.txt" ]; then
  say "fetching llama.cpp $ref from $source"
  rm -rf "$src"
  mkdir -p "$src"
  if [ -d "$source" ]; then
    gitdir="$source"; [ -d "$source/.git" ] && gitdir="$source/.git"
    c="$(git --git-dir="$gitdir" rev-parse --verify -q "$ref^{commit}")" || die "$source has no $ref"
    # (git archive names the blobs of models/ it cannot read even though they are left out; it is no failure)
    git --git-dir="$gitdir" archive "$c" -- . ':(exclude)models' 2> >(grep -v "for 'models/" >&2) | tar -x -C "$src"
  else
    git -C "$src" init -q
    git -C "$src" fetch -q --depth 1 "$source" "$ref" || die "cannot fetch $ref from $source"
    git -C "$src" -c advice.detachedHead=false checkout -q FETCH_HEAD
    c="$(git -C "$src" rev-parse HEAD)"
  fi
  echo "$c" > "$src/.commit"
fi
commit="$(cat "$src/.commit" 2> /dev/null || echo unknown)"
say "llama.cpp source: $src at $commit"
if [ "$ref" = "$PINNED_REF" ] && [ "$commit" != "$PINNED_COMMIT" ]; then
  say "warning: $PINNED_REF should be $PINNED_COMMIT; $src holds $commit (delete it to fetch again)"
fi

# 2. llama-bench, for this CPU. AMX stays off: gcc 12's native build of ggml's AMX code dies with SIGILL on CPUs that
# have it. The AVX2-only build turns the native detection off and names the instruction sets an AVX2 CPU has.
build() { # build FOLDER CMAKE_OPTIONS...
  local out="$1"; shift
  local targets=(llama-bench)
  [ $server = 1 ] && [ "$out" = build ] && targets+=(llama-server)
  local missing=0 t
  for t in "${targets[@]}"; do [ -x "$src/$out/bin/$t" ] || missing=1; done
  [ $missing = 0 ] && { say "already built: ${targets[*]} in $src/$out/bin"; return; }
  say "building ${targets[*]} in $src/$out ($jobs jobs; minutes)"
  # no web UI (it would download a prebuilt one), no HTTPS, no tests or examples: only what the benchmarks run
  cmake -S "$src" -B "$src/$out" -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=$([ $server = 1 ] && echo ON || echo OFF) \
    -DLLAMA_BUILD_UI=OFF -DLLAMA_OPENSSL=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF "$@" > "$dir/cmake-$out.log" 2>&1 \
    || { tail -20 "$dir/cmake-$out.log" >&2; die "cmake failed (log: $dir/cmake-$out.log)"; }
  cmake --build "$src/$out" -j "$jobs" --target "${targets[@]}" > "$dir/build-$out.log" 2>&1 \
    || { tail -20 "$dir/build-$out.log" >&2; die "the build failed (log: $dir/build-$out.log)"; }
}
build build -DGGML_NATIVE=ON
if [ $avx2 = 1 ]; then
  build build-avx2 -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
    -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF -DGGML_AVX_VNNI=OFF
fi

# 3. The models, written with this checkout's gguf-py (benchmarks/scripts/synth_gguf.py says what is in them).
layers=(4)
[ $full = 1 ] && layers+=(24)
for n in "${layers[@]}"; do
  f="$dir/gpt-oss-20b-synth-L$n-mxfp4.gguf"
  [ -f "$f" ] && { say "already written: $f"; continue; }
  say "writing $f"
  PYTHONPATH="$src/gguf-py" python3 "$here/synth_gguf.py" "$f.part" "$n" && mv "$f.part" "$f"
done

say "done. Compare the engines with: benchmarks/scripts/cpu-vs-llama.sh --llama-dir $dir"
ls -la "$src/build/bin/llama-bench" "$dir"/*.gguf >&2
