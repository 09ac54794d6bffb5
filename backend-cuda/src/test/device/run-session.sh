#!/usr/bin/env bash
# One device call for a whole session's GPU checks, in priority order, inside a time budget (the lease is
# 15 minutes of device time, machine start included). Each phase gets at most its cap and never more than
# what is left of BUDGET seconds; a phase that would not fit is skipped with a line saying so.
#   backend-cuda/src/test/device/run-session.sh [DIR] [BUDGET_S]        (defaults .cudakit, 480)
# Phases: the GPU (nvidia-smi), the CUDA kit (run-kit.sh), goss-gpu on llama.cpp's GGUF when llama-cuda-bench.sh ran on
# this machine in the call before (run-gguf-bench.sh, after/before), an ncu per-kernel table (run-ncu.sh), verify
# cuda/opencl op by op on the demo model,
# the 20b-shaped bench on cuda then opencl (run-bench.sh), pp512 with the MoE and dense GEMMs on tensor cores and
# without (run-mma-ab.sh: GOSS_CUDA_MOE_MMA / _DENSE_MMA / _ATTENTION_MMA 1 1 1, 1 1 0, 1 0 0, 0 0 0), tune cuda --quick, the OpenCL kit. OpenCL uses the NVIDIA
# driver's ICD alone (a vendors folder naming libnvidia-opencl.so.1); when the machine has no ICD loader,
# the one stage.sh put in DIR/ocl/ (ocl-icd's libOpenCL.so.1) is used.
# Logs come back under $OUT (the device tool returns at most 8 files): session.log (the summary),
# cuda-kit.log, bench.log (run-bench.sh's and run-gguf-bench.sh's tables, stderr and GPU line), ncu.md, mma-ab.md,
# tune.log, opencl-kit.log.
set -uo pipefail
dir="${1:-.cudakit}"
budget="${2:-480}"
out="${OUT:-/tmp}"
here="$(cd "$(dirname "$0")" && pwd)"
start=$SECONDS
log="$out/session.log"
say() { echo "[$((SECONDS - start))s] $*" | tee -a "$log"; }
left() { echo $((budget - (SECONDS - start))); }
# phase NAME CAP LOGFILE command...: runs with timeout min(CAP, left), appends to LOGFILE
phase() {
  local name="$1" cap="$2" file="$3"; shift 3
  local t; t=$(left); [ "$t" -gt "$cap" ] && t=$cap
  if [ "$t" -lt 20 ]; then say "SKIPPED $name: ${t}s left of the ${budget}s budget"; return 0; fi
  say "BEGIN $name (at most ${t}s)"
  timeout -k 5 "$t" "$@" >>"$file" 2>&1; local rc=$?
  say "END $name rc=$rc$([ $rc = 124 ] && echo ' (timed out)')"
  return 0
}

nvidia-smi 2>&1 | tee -a "$log"
nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total,clocks.max.sm,clocks.max.memory,power.limit \
    --format=csv 2>&1 | tee -a "$log"
. "$(dirname "$0")/runtime.sh"
goss_runtime "$dir" || exit 3
export HOME=/tmp/goss-home
mkdir -p "$HOME"

# OpenCL through the NVIDIA driver: its vendor library, and a loader if the image has none.
icd=$(find /usr/local/nvidia /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib -maxdepth 3 -name 'libnvidia-opencl.so.1' 2>/dev/null | head -1)
say "NVIDIA OpenCL vendor library: ${icd:-none found}; vendors: $(ls /etc/OpenCL/vendors 2>/dev/null | tr '\n' ' ')"
# Only the NVIDIA ICD: the image registers PoCL too, and device 0 would then be the CPU (seen 2026-11-27).
if [ -n "$icd" ]; then
  mkdir -p /tmp/ocl-vendors && echo "$icd" > /tmp/ocl-vendors/nvidia.icd && export OCL_ICD_VENDORS=/tmp/ocl-vendors
fi
if ! ldconfig -p 2>/dev/null | grep -q 'libOpenCL\.so\.1' && [ -f "$dir/ocl/libOpenCL.so.1" ]; then
  export GOSS_OPENCL_LIBRARY="$(cd "$dir/ocl" && pwd)/libOpenCL.so.1"
  say "using the carried ICD loader $GOSS_OPENCL_LIBRARY"
fi
"${java[@]}" -jar "$dir/goss-gpu.jar" info --backends 2>&1 | tee -a "$log"

phase "CUDA kit" 200 /tmp/kit.out "$here/run-kit.sh" "$dir"
grep -E 'PASSED|FAILED|ABORTED|SKIPPED|tests (successful|failed|skipped|found)|Exception' "$out/cuda-kit.log" \
    | grep -vE '^\s+at ' | tail -60 >>"$log"
# goss-gpu on the GGUF that llama-cuda-bench.sh (the call before, same machine) left in /tmp/llama: the same file
# and arguments as llama.cpp's anchor, after and (with DIR/before.jar) before the staged change.
if ls /tmp/llama/*.gguf >/dev/null 2>&1; then
  phase "bench cuda on llama.cpp's GGUF (after$([ -f "$dir/before.jar" ] && echo ', before'))" 150 /tmp/gguf.out "$here/run-gguf-bench.sh" "$dir"
  grep -E '^== |\| (pp|tg)' "$out/gguf-bench.md" >>"$log" 2>/dev/null
else
  say "no GGUF in /tmp/llama (llama-cuda-bench.sh did not run on this machine): no same-file bench"
fi
# Where a decode step's time goes, kernel by kernel (ncu; the GGUF when there, else the generated model).
phase "ncu per-kernel profile" 170 /tmp/ncu.out env GOSS_AB_SIDES=after "$here/run-ncu.sh" "$dir" "" -p 512 -n 8 -r 1
head -14 "$out"/ncu.md "$out"/ncu-before.md >>"$log" 2>/dev/null
cat "$out"/ncu.md "$out"/ncu-before.md >"$out/ncu.all" 2>/dev/null; rm -f "$out"/ncu*.txt "$out"/ncu.md "$out"/ncu-before.md
[ -s "$out/ncu.all" ] && mv "$out/ncu.all" "$out/ncu.md"
for b in cuda opencl; do
  phase "verify $b (demo model, every op against the reference)" 60 "$log" "${java[@]}" -jar "$dir/goss-gpu.jar" verify -b "$b"
done
phase "bench cuda + opencl, gpt-oss-20b-shaped, 24 layers" 200 /tmp/bench.out "$here/run-bench.sh" "$dir" 24
cat "$out"/bench-*.md >>"$log" 2>/dev/null
for f in /tmp/bench.out "$out"/gpu.txt "$out"/bench-* "$out"/gguf-bench.md "$out"/gguf-bench.err; do [ -f "$f" ] && { echo "== $(basename "$f")"; cat "$f"; }; done \
    >"$out/bench.all" 2>/dev/null
rm -f "$out"/gpu.txt "$out"/bench-* "$out"/gguf-bench.*; mv "$out/bench.all" "$out/bench.log"
phase "pp512 on tensor cores (GOSS_CUDA_MOE_MMA, _DENSE_MMA, _ATTENTION_MMA: 1 1 1, 1 1 0, 1 0 0, 0 0 0)" 220 /tmp/mma.out "$here/run-mma-ab.sh" "$dir" 24
grep -E '^== |pp512' "$out/mma-ab.md" >>"$log" 2>/dev/null
phase "tune cuda --quick" 120 "$out/tune.log" "${java[@]}" -jar "$dir/goss-gpu.jar" tune -b cuda --quick
tail -15 "$out/tune.log" >>"$log" 2>/dev/null
# The OpenCL conformance kit on the NVIDIA driver (the ICD chosen above); GOSS_REQUIRE_OPENCL=1 makes a missing
# platform a failure instead of 120 skips.
GOSS_REQUIRE_OPENCL=1 KIT_LOG=opencl-kit.log \
  phase "OpenCL kit (NVIDIA driver)" 150 /tmp/kit.out "$here/run-kit.sh" "$dir" io.gossgpu.opencl.OpenClConformanceTest
grep -E 'FAILED|tests (successful|failed|skipped|found)' "$out/opencl-kit.log" | tail -20 >>"$log" 2>/dev/null
say "done"
