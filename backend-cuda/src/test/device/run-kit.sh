#!/usr/bin/env bash
# Runs on the lent GPU machine (no JDK there): the CUDA conformance kit with the runtime and jars that
# stage.sh put in DIR. Prints each test's outcome; exit 0 when all ran and passed, 1 on a failure, 2 when
# nothing ran (the skip reason is printed, e.g. the driver is too old for the PTX).
#   backend-cuda/src/test/device/run-kit.sh [DIR] [test classes ...]
# Other test classes on the staged class path run the same way, e.g. io.gossgpu.opencl.OpenClConformanceTest
# (run-session.sh runs it on the NVIDIA driver's OpenCL). KIT_LOG names the log under $OUT (default cuda-kit.log).
# GOSS_SANITIZE=memcheck (or racecheck, synccheck, initcheck) runs it under compute-sanitizer (slow: name
# one test class, e.g. io.gossgpu.cuda.CudaConformanceTest; seen working on the Firecracker machines only).
set -uo pipefail
dir="${1:-.cudakit}"; [ $# -gt 0 ] && shift
# the GPU, its driver and the CUDA version that driver supports (what decides which PTX loads: README's driver table)
nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total --format=csv,noheader || true
nvidia-smi | grep -m1 -o 'CUDA Version: [0-9.]*' || true
out="${OUT:-/tmp}"
. "$(dirname "$0")/runtime.sh"
goss_runtime "$dir" || exit 3
san=()
[ -n "${GOSS_SANITIZE:-}" ] && san=(compute-sanitizer --tool "$GOSS_SANITIZE" --error-exitcode 1)
"${san[@]}" "${java[@]}" -Xmx8g \
    -cp "$dir/lib/*:$dir/goss-gpu.jar" io.gossgpu.cuda.DeviceKitMain "$@" 2>&1 | tee "$out/${KIT_LOG:-cuda-kit.log}"
exit "${PIPESTATUS[0]}"
