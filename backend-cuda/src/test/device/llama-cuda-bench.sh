#!/bin/bash
# Runs on the lent GPU machine: llama.cpp's CUDA llama-bench, the same-card anchor of issue 39, on a
# gpt-oss-20b-shaped GGUF (24 layers, MXFP4 experts, Q8_0 dense, random weights) generated there, then
# goss-gpu's cuda bench on the same file when a staged goss-gpu kit is on the machine.
#
#   llama-cuda-bench.sh [-n] [LLAMA_DIR] [LAYERS]      (defaults .llamakit, 24)
#
# LLAMA_DIR is what llama-cuda-stage.sh staged. Steps, each under a timeout:
#   1. nvidia-smi;
#   2. the carried DIR/bin/llama-bench if it starts here (every library found, --help answers, the CUDA device
#      listed), else a build on this machine with llama-cuda-build.sh from DIR/llama-src.tar.xz (all cores,
#      at most BUILD_TIMEOUT s, default 480);
#   3. the GGUF, written once to /tmp/llama/ by DIR/make_synth_gguf.py with DIR/gguf-py;
#   4. llama-bench -ngl 99 -fa 1 -p 512 -n 128 -d 0,8192 -r 3: pp512 and tg128, at depth 0 and 8192;
#   5. when GOSS_KIT (default .cudakit) holds goss-gpu.jar and rt.tar.xz: goss-gpu bench -b cuda on the same GGUF
#      with the same -p/-n/-d/-r;
#   6. the split of issue 38 (experts of N layers on the CPU): for each N of N_CPU_MOE (default "LAYERS LAYERS/2";
#      empty: skipped), llama-bench --n-cpu-moe N and goss-gpu bench --n-cpu-moe N, -p 512 -n 64 -r 2 at depth 0.
# Back under $OUT: llama-anchor.log (the summary: GPU, which binary, its ldd, timings, both tables) and
# llama-bench.md (llama.cpp's table alone), and after a build here the binary, xz'ed (split in 15 MB parts
# when larger), for the next lease to carry. -n prints the plan without running anything.
set -uo pipefail
dry=0
[[ ${1:-} == -n ]] && { dry=1; shift; }
[[ $# -le 2 ]] || { echo "usage: $(basename "$0") [-n] [LLAMA_DIR] [LAYERS]" >&2; exit 2; }
dir=${1:-.llamakit}
layers=${2:-24}
[[ $layers =~ ^[1-9][0-9]*$ ]] || { echo "llama-cuda-bench: LAYERS must be a positive number, got '$layers'" >&2; exit 2; }
[[ -d $dir ]] || { echo "llama-cuda-bench: no staged folder $dir (run llama-cuda-stage.sh here first)" >&2; exit 2; }
dir=$(cd "$dir" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp}
kit=${GOSS_KIT:-.cudakit}
gguf=/tmp/llama/gpt-oss-20b-synth-L$layers-mxfp4.gguf
# shellcheck disable=SC2054  # "0,8192" is one argument: llama-bench's list of depths
bench_args=(-ngl 99 -fa 1 -p 512 -n 128 -d 0,8192 -r 3)
log=$out/llama-anchor.log
n_cpu_moe=${N_CPU_MOE-$layers $((layers / 2))}
split_args=(-ngl 99 -fa 1 -p 512 -n 64 -r 2)
start=$SECONDS

if [[ $dry == 1 ]]; then
  echo "binary: $dir/bin/llama-bench $([[ -x $dir/bin/llama-bench ]] && echo '(carried)' || echo '(absent: build from llama-src.tar.xz)')"
  echo "build fallback: $here/llama-cuda-build.sh -j \$(nproc) /tmp/llama-cuda/src /tmp/llama-cuda (at most ${BUILD_TIMEOUT:-480} s)"
  echo "model: PYTHONPATH=$dir/gguf-py python3 $dir/make_synth_gguf.py $gguf $layers"
  echo "llama: llama-bench -m $gguf ${bench_args[*]} -o md"
  [[ -f $kit/goss-gpu.jar && -f $kit/rt.tar.xz ]] && echo "goss-gpu: bench --backend cuda -m $gguf -p 512 -n 128 -d 0,8192 -r 3" \
    || echo "goss-gpu: skipped ($kit has no goss-gpu.jar and rt.tar.xz)"
  for n in ${n_cpu_moe}; do echo "split: llama-bench -m $gguf ${split_args[*]} --n-cpu-moe $n; goss-gpu bench --backend cuda --n-cpu-moe $n ${split_args[*]:4}"; done
  exit 0
fi

say() { echo "[$((SECONDS - start))s] $*" | tee -a "$log"; }
nvidia-smi 2>&1 | tee -a "$log"
nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total,clocks.max.sm,clocks.max.memory,power.limit \
    --format=csv 2>&1 | tee -a "$log"

# shellcheck source=llama-cuda-env.sh
. "$here/llama-cuda-env.sh"
cublas=$(llama_cublas_dir)
say "cuBLAS wheel: ${cublas:-none in the site-packages of python3}"
[[ -n $cublas ]] && export LD_LIBRARY_PATH=$cublas/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# starts BIN: every library resolves, --help answers, and llama.cpp lists a CUDA device.
starts() {
  local bin=$1
  [[ -x $bin ]] || { say "$bin: absent"; return 1; }
  local text
  text=$(ldd "$bin" 2>&1); echo "$text" >>"$log"
  [[ $text == *"not found"* ]] && { say "$bin: a library is missing"; return 1; }
  timeout 30 "$bin" --help >/dev/null 2>>"$log" || { say "$bin --help failed"; return 1; }
  text=$(timeout 60 "$bin" --list-devices 2>&1); echo "$text" >>"$log"
  [[ $text == *CUDA* ]] || { say "$bin lists no CUDA device"; return 1; }
}

bin=$dir/bin/llama-bench
if starts "$bin"; then
  say "using the carried llama-bench"
else
  say "building llama-bench here (at most ${BUILD_TIMEOUT:-480} s)"
  mkdir -p /tmp/llama-cuda/src
  tarball=$dir/llama-src.tar.xz
  [[ -f $tarball ]] || tarball=$dir-src/llama-src.tar.xz
  [[ -f /tmp/llama-cuda/src/CMakeLists.txt || -f $tarball ]] \
      || { say "no llama.cpp source to build from: carry ${dir##*/}-src (llama-cuda-stage.sh put it there)"; exit 1; }
  [[ -f /tmp/llama-cuda/src/CMakeLists.txt ]] || tar -xJf "$tarball" -C /tmp/llama-cuda/src
  NICE=0 timeout -k 5 "${BUILD_TIMEOUT:-480}" "$here/llama-cuda-build.sh" -j "$(nproc)" /tmp/llama-cuda/src /tmp/llama-cuda \
      2>&1 | tee -a "$log"
  tail -5 /tmp/llama-cuda/build.log >>"$log" 2>/dev/null
  bin=/tmp/llama-cuda/bin/llama-bench
  starts "$bin" || { say "no llama-bench that runs here"; exit 1; }
  say "using the llama-bench built here"
  # Bring it back, so that the next lease can carry it (files from \$OUT: at most 16 MiB each).
  xz -T0 -6 -c "$bin" >"$out/llama-bench.xz"
  if [[ $(stat -c %s "$out/llama-bench.xz") -gt 16000000 ]]; then
    split -b 15000000 -d "$out/llama-bench.xz" "$out/llama-bench.xz." && rm "$out/llama-bench.xz"
  fi
  say "returned as $(cd "$out" && ls llama-bench.xz*) (cat them | xz -d > .llamakit/bin/llama-bench)"
fi

mkdir -p /tmp/llama
if [[ ! -f $gguf ]]; then
  say "writing $gguf"
  if PYTHONPATH=$dir/gguf-py timeout 600 python3 "$dir/make_synth_gguf.py" "$gguf.part" "$layers" 2>&1 | tail -3 | tee -a "$log"; then
    mv "$gguf.part" "$gguf"
  else
    say "the GGUF could not be written"; exit 1
  fi
fi
say "model: $(ls -l "$gguf")"

say "llama-bench ${bench_args[*]}"
timeout -k 5 "${LLAMA_TIMEOUT:-300}" "$bin" -m "$gguf" "${bench_args[@]}" -o md >"$out/llama-bench.md" 2>>"$log"
rc=$?
say "llama-bench rc=$rc"
cat "$out/llama-bench.md" >>"$log"

status=$rc
if [[ -f $kit/goss-gpu.jar && -f $kit/rt.tar.xz ]]; then
  say "goss-gpu bench --backend cuda on the same GGUF"
  "$here/run-gguf-bench.sh" "$kit" "$gguf" >>"$log" 2>&1 || status=1
else
  say "goss-gpu skipped: $kit holds no goss-gpu.jar and rt.tar.xz (carry it in the next call: run-gguf-bench.sh)"
fi
# Issue 38: the experts of N layers on the CPU, llama.cpp's --n-cpu-moe beside goss-gpu's (a failure here leaves the
# figures above standing).
for n in $n_cpu_moe; do
  say "llama-bench ${split_args[*]} --n-cpu-moe $n"
  timeout -k 5 "${LLAMA_TIMEOUT:-300}" "$bin" -m "$gguf" "${split_args[@]}" --n-cpu-moe "$n" -o md >"$out/llama-split-$n.md" 2>>"$log" \
    || say "llama-bench --n-cpu-moe $n failed"
  cat "$out/llama-split-$n.md" >>"$log"
  if [[ -f $kit/goss-gpu.jar && -f $kit/rt.tar.xz ]]; then
    # shellcheck source=runtime.sh
    . "$here/runtime.sh"
    goss_runtime "$kit" || exit 3
    say "goss-gpu bench --backend cuda --n-cpu-moe $n"
    timeout -k 5 "${GOSS_TIMEOUT:-300}" "${java[@]}" -jar "$kit/goss-gpu.jar" bench --backend cuda --n-cpu-moe "$n" -m "$gguf" \
        "${split_args[@]:4}" >>"$log" 2>/tmp/goss-split.err || say "goss-gpu --n-cpu-moe $n failed"
    tail -5 /tmp/goss-split.err >>"$log"
  fi
done
say "done"
exit $status
