#!/usr/bin/env bash
# goss-gpu's cpu backend against llama.cpp's llama-bench: the same GGUF files, the same threads and tests,
# on this machine in one sitting, the engines taking turns. Prints one markdown table (goss-gpu t/s,
# llama.cpp t/s, ratio) under the CPU's flags, the measured read bandwidth and the git commit.
#
# llama.cpp is not part of goss-gpu: benchmarks/scripts/llama-baseline.sh fetches it at a pinned commit, builds its
# llama-bench and writes the synthetic GGUFs (see benchmarks/scripts/README.md). Nothing of it is committed here.
#
# usage: benchmarks/scripts/cpu-vs-llama.sh [options] [MODEL ...]
#   MODEL            GGUF files (default: the recipe's DIR/gpt-oss-20b-synth-L4-mxfp4.gguf and the L24 one, those that
#                    exist). A model that is not a .gguf (an original/ folder) runs on goss-gpu only.
#   --llama-dir DIR  where llama-baseline.sh put llama.cpp and the GGUFs (default: $LLAMA_DIR or /tmp/llama)
#   -t N             threads of both engines (default: 2)
#   -r N             timed repetitions of each test (default: 3)
#   --rounds N       run each group of tests N times, the engines taking turns each round (default: 1); the table pools
#                    the repetitions of all rounds. On a machine whose memory bandwidth drifts (a VM beside noisy
#                    neighbours) decode speed moves by a third within minutes; rounds spread both engines over the drift
#   -d DEPTH         the depth of the second group of tests, pp512 and tg32 @ dDEPTH; 0 skips it (default: 8192)
#   --depth-only     run only the tests at the depth (pp512 and tg32 @ dDEPTH), not those at depth 0
#   -w N             untimed warm-up runs of each test on goss-gpu, for its JIT (default: 2; llama-bench runs its one)
#   --jar JAR        the goss-gpu jar (default: cli/target/goss-gpu.jar of this checkout)
#   --jar2 JAR       a second goss-gpu build to compare with the first (before/after) in the same run
#   --llama-bench B  llama-bench (default: $LLAMA_BENCH or DIR/src/build/bin/llama-bench)
#   --out DIR        where the raw outputs go (default: a new folder under /tmp)
#   --isa avx2       run goss-gpu as it runs on an AVX2-only CPU (GOSS_CPU_KERNELS=avx2, the JVM held to AVX2 with
#                    -XX:UseAVX=2, so 256-bit Vector API species too); give --llama-bench a llama.cpp built for AVX2
#                    only for the same on its side (cmake -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON
#                    -DGGML_F16C=ON -DGGML_BMI2=ON, the AVX-512 and AVX-VNNI options off). The table says so.
# The tests are llama-bench's: pp64, pp512 and tg32 at depth 0, then pp512 and tg32 at the depth.
# Run it on a quiet machine and not under nice: llama.cpp's threads spin-wait for each other, so when other
# processes take the cores it slows down far more than goss-gpu, and the ratios mean nothing (the table warns).
# A depth of 8192 takes minutes to fill on the 24-layer file: use -d 0 for a quick look.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
. "$root/backend-cpu/kernels/isa_flags.sh"  # goss_cpu_flags

depth_only=0 rounds=1 threads=2 reps=3 depth=8192 warm=2 jar="$root/cli/target/goss-gpu.jar" jar2="" out="" isa=""
llama_dir="${LLAMA_DIR:-/tmp/llama}" llama_bench="${LLAMA_BENCH:-}"
models=()
die() { echo "cpu-vs-llama: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    -t) threads="${2:?-t needs a number}"; shift 2 ;;
    -r) reps="${2:?-r needs a number}"; shift 2 ;;
    --rounds) rounds="${2:?--rounds needs a number}"; shift 2 ;;
    -d) depth="${2:?-d needs a number}"; shift 2 ;;
    --depth-only) depth_only=1; shift ;;
    -w) warm="${2:?-w needs a number}"; shift 2 ;;
    --jar) jar="${2:?--jar needs a path}"; shift 2 ;;
    --jar2) jar2="${2:?--jar2 needs a path}"; shift 2 ;;
    --llama-bench) llama_bench="${2:?--llama-bench needs a path}"; shift 2 ;;
    --llama-dir) llama_dir="${2:?--llama-dir needs a folder}"; shift 2 ;;
    --out) out="${2:?--out needs a folder}"; shift 2 ;;
    --isa) isa="${2:?--isa needs avx2}"; [ "$isa" = avx2 ] || die "--isa takes avx2 only"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) models+=("$1"); shift ;;
  esac
done
for n in "$threads" "$reps" "$depth" "$warm" "$rounds"; do [[ "$n" =~ ^[0-9]+$ ]] || die "-t, -r, -d, -w and --rounds take whole numbers, got '$n'"; done
[ "$threads" -ge 1 ] && [ "$reps" -ge 1 ] && [ "$rounds" -ge 1 ] || die "-t, -r and --rounds must be at least 1"
[ $depth_only = 0 ] || [ "$depth" -gt 0 ] || die "--depth-only needs a depth above 0 (-d)"
llama_bench="${llama_bench:-$llama_dir/src/build/bin/llama-bench}"
if [ ${#models[@]} -eq 0 ]; then
  for f in "$llama_dir"/gpt-oss-20b-synth-L4-mxfp4.gguf "$llama_dir"/gpt-oss-20b-synth-L24-mxfp4.gguf; do [ -e "$f" ] && models+=("$f"); done
  [ ${#models[@]} -gt 0 ] || die "no model given and none of the recipe's GGUFs in $llama_dir: run benchmarks/scripts/llama-baseline.sh (see benchmarks/scripts/README.md)"
fi
for m in "${models[@]}"; do [ -e "$m" ] || die "no such model: $m"; done
jars=("$jar"); [ -n "$jar2" ] && jars+=("$jar2")
for j in "${jars[@]}"; do [ -f "$j" ] || die "no such jar: $j (build it with ./gossw build)"; done
need_llama=0
for m in "${models[@]}"; do [[ "$m" == *.gguf ]] && need_llama=1; done
[ $need_llama = 0 ] || [ -x "$llama_bench" ] || die "llama-bench not found at $llama_bench: build it with benchmarks/scripts/llama-baseline.sh (see benchmarks/scripts/README.md)"
java="$("$root/scripts/find-jdk.sh")/bin/java"
if [ "$isa" = avx2 ]; then # read by the java launcher, so the relaunched JVM gets it too
  export GOSS_CPU_KERNELS=avx2 JDK_JAVA_OPTIONS="${JDK_JAVA_OPTIONS:+$JDK_JAVA_OPTIONS }-XX:UseAVX=2"
fi
out="${out:-$(mktemp -d /tmp/cpu-vs-llama.XXXXXX)}"
mkdir -p "$out"

# What a run is: everything the table shows, in one JSON file the table script reads.
{
  echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host=$(hostname)"
  echo "threads=$threads"
  echo "cores=$(nproc)"
  echo "nice=$(nice)"
  echo "reps=$reps"
  echo "rounds=$rounds"
  echo "warm=$warm"
  echo "cpu=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)"
  echo "flags=$(goss_cpu_flags)"
  [ -z "$isa" ] || echo "isa=AVX2 only: goss-gpu with GOSS_CPU_KERNELS=avx2 and -XX:UseAVX=2; llama.cpp as built ($llama_bench)"
  echo "load_before=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
  echo "llama_bench=$llama_bench"
  for i in "${!jars[@]}"; do
    j="${jars[$i]}"
    repo="$(git -C "$(dirname "$j")" rev-parse --show-toplevel 2>/dev/null || true)"
    commit="unknown (not in a git checkout)"
    if [ -n "$repo" ]; then
      commit="$(git -C "$repo" rev-parse --short HEAD)"
      [ -n "$(git -C "$repo" status --porcelain --untracked-files=no 2>/dev/null)" ] && commit="$commit+uncommitted changes"
    fi
    echo "jar$i=$j"
    echo "commit$i=$commit (jar built $(date -u -r "$j" +%Y-%m-%dT%H:%M:%SZ))"
  done
} > "$out/run.env"

# Does this jar's bench know -d and -o json (this branch on), or is it an older build (one test per call, markdown)?
modern() { "$java" -jar "$1" bench --help 2>/dev/null | grep -q -- '--n-depth'; }

# goss JAR_INDEX MODEL GROUP P N D: one goss-gpu bench run; output to $out/goss<i>-<model>-<group>.json (or .md)
goss() {
  local i="$1" m="$2" g="$3" p="$4" n="$5" d="$6" j="${jars[$1]}" base
  base="$out/goss$i-$(basename "$m")-$g$suffix"
  echo "cpu-vs-llama: goss-gpu$([ "$i" = 0 ] || echo " #2") $(basename "$m") -p $p -n $n -d $d" >&2
  if modern "$j"; then
    "$java" -jar "$j" bench --model "$m" --backend cpu --threads "$threads" -p "$p" -n "$n" -d "$d" -r "$reps" -w "$warm" -o json \
      > "$base.json" 2> "$base.log" || { tail -3 "$base.log" >&2; return 0; }
  else
    [ "$d" = 0 ] || { echo "cpu-vs-llama:   (this build has no -d: skipped)" >&2; return 0; }
    : > "$base.md"
    local x
    for x in ${p//,/ }; do "$java" -jar "$j" bench --model "$m" --backend cpu --threads "$threads" -p "$x" -n 0 -r "$reps" >> "$base.md" 2>> "$base.log" || true; done
    for x in ${n//,/ }; do "$java" -jar "$j" bench --model "$m" --backend cpu --threads "$threads" -p 0 -n "$x" -r "$reps" >> "$base.md" 2>> "$base.log" || true; done
  fi
}

# llama MODEL GROUP P N D: one llama-bench run; output to $out/llama-<model>-<group>.json
llama() {
  local m="$1" g="$2" p="$3" n="$4" d="$5" base
  [[ "$m" == *.gguf ]] || return 0
  base="$out/llama-$(basename "$m")-$g$suffix"
  echo "cpu-vs-llama: llama-bench $(basename "$m") -p $p -n $n -d $d" >&2
  "$llama_bench" -m "$m" -t "$threads" -p "$p" -n "$n" -d "$d" -r "$reps" -o json --progress > "$base.json" 2> "$base.log" \
    || tail -3 "$base.log" >&2
}

# The engines take turns; the order flips from one group to the next, so that neither always runs first.
engines=(llama)
for i in "${!jars[@]}"; do engines+=("$i"); done
turn=0 suffix=""
for m in "${models[@]}"; do
  groups=()
  [ $depth_only = 1 ] || groups+=("d0 64,512 32 0")
  [ "$depth" -gt 0 ] && groups+=("d$depth 512 32 $depth")
  for spec in "${groups[@]}"; do
    read -r g p n d <<< "$spec"
    for ((round = 1; round <= rounds; round++)); do
      suffix=""; [ "$rounds" = 1 ] || suffix=".r$round"   # one file per engine, group and round
      order=("${engines[@]}")
      [ $((turn % 2)) = 1 ] && for ((k = 0; k < ${#engines[@]}; k++)); do order[$k]="${engines[$((${#engines[@]} - 1 - k))]}"; done
      for e in "${order[@]}"; do
        if [ "$e" = llama ]; then llama "$m" "$g" "$p" "$n" "$d"; else goss "$e" "$m" "$g" "$p" "$n" "$d"; fi
      done
      turn=$((turn + 1))
    done
  done
done
echo "load_after=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)" >> "$out/run.env"

python3 "$here/cpu_vs_llama_table.py" "$out"
echo "(raw outputs: $out)" >&2
