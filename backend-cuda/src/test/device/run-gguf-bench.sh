#!/usr/bin/env bash
# Runs on the lent GPU machine: goss-gpu's cuda bench on the GGUF that llama-cuda-bench.sh wrote there (the same
# file, the same -p/-n/-d/-r as llama.cpp's anchor), so both engines' figures come from one machine. Call it in the
# call after llama-cuda-bench.sh (the GGUF stays in /tmp/llama while the machine is warm) or from it.
#   backend-cuda/src/test/device/run-gguf-bench.sh [DIR] [GGUF]     (defaults .cudakit, the newest /tmp/llama/*.gguf)
# Back under $OUT: gguf-bench.md (the tables; stderr in gguf-bench.err).
set -uo pipefail
dir="${1:-.cudakit}"
gguf="${2:-$(ls -t /tmp/llama/*.gguf 2>/dev/null | head -1)}"
out="${OUT:-/tmp}"
[ -n "$gguf" ] && [ -f "$gguf" ] || { echo "run-gguf-bench: no GGUF (run llama-cuda-bench.sh first on this machine)" >&2; exit 2; }
. "$(dirname "$0")/runtime.sh"
goss_runtime "$dir" || exit 3
# With DIR/before.jar (stage.sh BEFORE_JAR=...), the previous build's CUDA classes and PTX bench the same file after
# the staged build: a before/after of a kernel change on one machine (GOSS_AB_SIDES overrides the order).
sides="${GOSS_AB_SIDES:-after$([ -f "$dir/before.jar" ] && echo ' before')}"
status=0
for side in $sides; do
  cp="$dir/goss-gpu.jar"; [ "$side" = before ] && cp="$dir/before.jar:$cp"
  echo "== $side: bench --backend cuda -m $(basename "$gguf") -p 512 -n 128 -d 0,8192 -r 3" | tee -a "$out/gguf-bench.md"
  timeout -k 5 "${GOSS_TIMEOUT:-300}" "${java[@]}" -cp "$cp" io.gossgpu.cli.Launcher bench --backend cuda -m "$gguf" \
      -p 512 -n 128 -d 0,8192 -r 3 2>>"$out/gguf-bench.err" | tee -a "$out/gguf-bench.md"
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
done
tail -5 "$out/gguf-bench.err"
exit "$status"
