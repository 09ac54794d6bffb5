#!/bin/bash
# Stages llama.cpp's CUDA llama-bench (the same-card anchor, issue 39) for the lent GPU machine, in DEST
# (default .llamakit) inside the checkout, added to .git/info/exclude so that it travels only when named in
# the device tool's `carry`:
#   DEST/bin/llama-bench     the binary llama-cuda-build.sh made (sm_90, stripped), when BUILD has one
#   DEST/llama-src.tar.xz    the llama.cpp source without docs/tests/examples/models (~5 MB), for building
#                            on the device when the carried binary does not start there
#   DEST/gguf-py/gguf        llama.cpp's gguf-py package and DEST/make_synth_gguf.py: the 24-layer
#                            gpt-oss-20b-shaped GGUF is generated on the device (11.3 GiB cannot travel)
#
#   llama-cuda-stage.sh [-n] SRC BUILD [DEST]
# SRC: the llama.cpp source tree the binary was built from (BUILD/src when llama-cuda-build.sh checked it out)
# BUILD: llama-cuda-build.sh's OUT folder (may lack bin/llama-bench: then the device builds)
# SYNTH: make_synth_gguf.py (default: benchmarks/scripts/make_synth_gguf.py or ../shared/bench/make_synth_gguf.py)
# -n: say what would be staged and stop.
# Then (device tool): run(command="backend-cuda/src/test/device/llama-cuda-bench.sh .llamakit", carry=[".llamakit"])
set -euo pipefail
dry=0
[[ ${1:-} == -n ]] && { dry=1; shift; }
[[ $# -ge 2 && $# -le 3 ]] || { echo "usage: $(basename "$0") [-n] SRC BUILD [DEST]" >&2; exit 2; }
src=$(cd "$1" 2>/dev/null && pwd) || { echo "llama-cuda-stage: no folder $1" >&2; exit 2; }
build=$(cd "$2" 2>/dev/null && pwd) || { echo "llama-cuda-stage: no folder $2" >&2; exit 2; }
[[ -f $src/CMakeLists.txt && -d $src/gguf-py/gguf ]] || { echo "llama-cuda-stage: $src is not a llama.cpp source tree" >&2; exit 2; }
root=$(git rev-parse --show-toplevel)
cd "$root"
dest=${3:-.llamakit}
synth=${SYNTH:-}
if [[ -z $synth ]]; then
  for s in benchmarks/scripts/make_synth_gguf.py ../shared/bench/make_synth_gguf.py /work/shared/bench/make_synth_gguf.py; do
    [[ -f $s ]] && { synth=$s; break; }
  done
fi
[[ -n $synth && -f $synth ]] || { echo "llama-cuda-stage: make_synth_gguf.py not found; set SYNTH" >&2; exit 2; }
bin=$build/bin/llama-bench
[[ -x $bin ]] || bin=""
echo "stage into $dest: binary ${bin:-none (the device will build)}, source of $src, $synth"
[[ $dry == 1 ]] && exit 0

exclude=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$exclude")"
case $dest in /*) ;; *) grep -qxF "/$dest/" "$exclude" 2>/dev/null || echo "/$dest/" >>"$exclude" ;; esac
rm -rf "$dest"; mkdir -p "$dest/gguf-py"
# The source (for the build-there fallback) travels in the kit only when no binary is staged: the checkout plus the
# binary already use ~65 MB of the 64 MiB carry limit (2026-11-28). Otherwise it waits in DEST-src/ (also excluded),
# to be carried instead of DEST if the binary ever stops starting there.
srcdir=$dest
if [[ -n $bin ]]; then
  srcdir=$dest-src
  case $dest in /*) ;; *) grep -qxF "/$dest-src/" "$exclude" 2>/dev/null || echo "/$dest-src/" >>"$exclude" ;; esac
  rm -rf "$srcdir"; mkdir -p "$srcdir"
fi
[[ -n $bin ]] && { mkdir -p "$dest/bin"; cp "$bin" "$dest/bin/"; }
# Only what a CUDA llama-bench build reads (the top-level CMakeLists adds tests/examples only when asked).
tar -C "$src" -cf - --exclude=./docs --exclude=./media --exclude=./tests --exclude=./examples --exclude=./pocs \
    --exclude=./benches --exclude=./app --exclude=./ci --exclude=./models --exclude='./tools/server/public*' \
    --exclude=./tools/ui --exclude=.git . | xz -T2 -6 >"$srcdir/llama-src.tar.xz"
cp -r "$src/gguf-py/gguf" "$dest/gguf-py/"
find "$dest/gguf-py" -name __pycache__ -prune -exec rm -rf {} +
cp "$synth" "$dest/make_synth_gguf.py"
du -sh "$dest"/* | sed "s/^/  /"; du -sh "$dest"
echo "staged in $dest; on the device: backend-cuda/src/test/device/llama-cuda-bench.sh $dest"
