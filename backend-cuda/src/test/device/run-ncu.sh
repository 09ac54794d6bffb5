#!/usr/bin/env bash
# Runs on the lent GPU machine: a per-kernel profile of goss-gpu's cuda bench (kernels launched one by one, not as
# CUDA graphs, so that ncu sees each), as one table: calls, mean time, DRAM bytes and read rate per kernel shape.
# ncu flushes the caches before each kernel, so small kernels read slower than inside a decode step's graph.
#   backend-cuda/src/test/device/run-ncu.sh [DIR] [MODEL] [BENCH ARGS...]
#       (defaults .cudakit, the newest /tmp/llama/*.gguf else the generated 24-layer model, -p 512 -n 8 -r 1)
# Back under $OUT: ncu.md (the table), ncu.txt (ncu's summary). With DIR/before.jar, the previous build too
# (ncu-before.md). Seen 2026-11-28 on an H200: 150 s for the 24-layer GGUF at -p 512 -n 8 -r 1.
set -uo pipefail
dir="${1:-.cudakit}"; model="${2:-}"; shift 2 2>/dev/null || shift $#
args=("$@"); [ ${#args[@]} -gt 0 ] || args=(-p 512 -n 8 -r 1)
out="${OUT:-/tmp}"
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/runtime.sh"
goss_runtime "$dir" || exit 3
if [ -z "$model" ]; then
  model="$(ls -t /tmp/llama/*.gguf 2>/dev/null | head -1)"
  [ -n "$model" ] || { goss_20b_model "$dir" 24; }
fi
ncu="$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)"
[ -n "$ncu" ] || { echo "run-ncu: no ncu on this machine" >&2; exit 2; }
sides="${GOSS_AB_SIDES:-after$([ -f "$dir/before.jar" ] && echo ' before')}"
for side in $sides; do
  cp="$dir/goss-gpu.jar"; [ "$side" = before ] && cp="$dir/before.jar:$cp"
  suffix=""; [ "$side" = before ] && suffix="-before"
  GOSS_CUDA_GRAPH=0 "$ncu" --clock-control none --target-processes all --print-summary per-kernel \
      --metrics gpu__time_duration.sum,dram__bytes_read.sum \
      "${java[@]}" -cp "$cp" io.gossgpu.cli.Launcher bench -b cuda -m "$model" "${args[@]}" >"$out/ncu$suffix.txt" 2>&1
  echo "== $side: $(basename "$model") ${args[*]} (rc $?)" | tee "$out/ncu$suffix.md"
  python3 "$here/ncu-table.py" "$out/ncu$suffix.txt" | tee -a "$out/ncu$suffix.md"
done
