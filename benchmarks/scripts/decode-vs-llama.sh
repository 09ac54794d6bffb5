#!/usr/bin/env bash
# Issue 42's "Done when" protocol: decode (tg32) on goss-gpu's cpu backend and llama.cpp's llama-bench, on the 4- and
# 24-layer gpt-oss-20b-width GGUFs, in pooled rounds with the engines taking turns, a plain C streaming-read probe
# (backend-cpu/kernels/stream_probe.c) before each model of each round, then one `goss-gpu bench --op-times` per model. Prints
# a markdown table of medians and ratios, each tg32 as a share of the median C probe and (a short probe follows every
# engine run) as the median share of the probes just before and after each run, the op table's rows of more than 50 MB
# with their share of that run's probe, and the verdicts, under the CPU's flags and the load averages.
#
# usage: benchmarks/scripts/decode-vs-llama.sh [options] [MODEL.gguf ...]
#   MODEL            GGUFs (default: DIR/gpt-oss-20b-synth-L4-mxfp4.gguf and the L24 one of llama-baseline.sh, those there)
#   --llama-dir DIR  where benchmarks/scripts/llama-baseline.sh put llama.cpp and the GGUFs (default: $LLAMA_DIR or /tmp/llama)
#   --llama-bench B  llama-bench built for the CPU (default: $LLAMA_BENCH or DIR/src/build/bin/llama-bench)
#   --jar JAR        the goss-gpu jar (default: cli/target/goss-gpu.jar of this checkout)
#   --jar2 JAR       a second goss-gpu build (after a change) timed in the same rounds, the three taking turns: the table
#                    gives it a row of its own and its ratio to the first (an A/B of the same sitting)
#   --rounds N       rounds (default: 3); each runs every model on both engines, the order flipping each round
#   -n N             tokens of the decode test (default: 32)
#   -r N             timed repetitions per engine per round (default: 3); the table pools every round's
#   -w N             untimed warm-up runs on goss-gpu per round, for its JIT (default: 2; llama-bench runs its one)
#   -t N             threads of both engines and of the probe (default: the number of CPUs)
#   --probe-gib G    the C probe's buffer (default: 4)
#   --no-op-times    skip the closing `bench --op-times` runs
#   --llama-no-mmap  llama-bench -mmp 0: llama.cpp reads the model into memory it allocates, as goss-gpu's repacked
#                    weights are, instead of mapping the file (whose pages stay cached from run to run)
#   --fresh-probe    after every engine run, also read fresh memory against the same memory again over the model's
#                    size (a diagnosis of slow rounds; each allocates that much, which on a VM may itself stir the host)
#   --out DIR        where the raw outputs go (default: a new folder under /tmp)
# Run it on a quiet machine, not under nice: llama.cpp's threads spin-wait for each other, so other processes on the
# cores slow it far more than goss-gpu. The table shows the load average before and after.
# Dry run: benchmarks/scripts/decode-vs-llama.sh --rounds 1 -n 4 -r 1 -w 1 --probe-gib 1 MODEL.gguf
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
. "$root/backend-cpu/kernels/isa_flags.sh"  # goss_cpu_flags

rounds=3 gen=32 reps=3 warm=2 threads="$(nproc 2>/dev/null || echo 2)" probe_gib=4 op_times=1 fresh_probe=0 llama_mmap=1 out=""
jar="$root/cli/target/goss-gpu.jar" jar2="" llama_dir="${LLAMA_DIR:-/tmp/llama}" llama_bench="${LLAMA_BENCH:-}"
models=()
die() { echo "decode-vs-llama: $*" >&2; exit 2; }
say() { echo "decode-vs-llama: $*" >&2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --llama-dir) llama_dir="${2:?--llama-dir needs a folder}"; shift 2 ;;
    --llama-bench) llama_bench="${2:?--llama-bench needs a path}"; shift 2 ;;
    --jar) jar="${2:?--jar needs a path}"; shift 2 ;;
    --jar2) jar2="${2:?--jar2 needs a path}"; shift 2 ;;
    --rounds) rounds="${2:?--rounds needs a number}"; shift 2 ;;
    -n) gen="${2:?-n needs a number}"; shift 2 ;;
    -r) reps="${2:?-r needs a number}"; shift 2 ;;
    -w) warm="${2:?-w needs a number}"; shift 2 ;;
    -t) threads="${2:?-t needs a number}"; shift 2 ;;
    --probe-gib) probe_gib="${2:?--probe-gib needs a number}"; shift 2 ;;
    --no-op-times) op_times=0; shift ;;
    --fresh-probe) fresh_probe=1; shift ;;
    --llama-no-mmap) llama_mmap=0; shift ;;
    --out) out="${2:?--out needs a folder}"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) models+=("$1"); shift ;;
  esac
done
for n in "$rounds" "$gen" "$reps" "$warm" "$threads"; do [[ "$n" =~ ^[0-9]+$ ]] || die "--rounds, -n, -r, -w and -t take whole numbers, got '$n'"; done
[ "$rounds" -ge 1 ] && [ "$gen" -ge 1 ] && [ "$reps" -ge 1 ] && [ "$threads" -ge 1 ] || die "--rounds, -n, -r and -t must be at least 1"
[[ "$probe_gib" =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--probe-gib takes a number of GiB, got '$probe_gib'"
llama_bench="${llama_bench:-$llama_dir/src/build/bin/llama-bench}"
if [ ${#models[@]} -eq 0 ]; then
  for f in "$llama_dir"/gpt-oss-20b-synth-L4-mxfp4.gguf "$llama_dir"/gpt-oss-20b-synth-L24-mxfp4.gguf; do [ -e "$f" ] && models+=("$f"); done
  [ ${#models[@]} -gt 0 ] || die "no model given and none of the recipe's GGUFs in $llama_dir: run benchmarks/scripts/llama-baseline.sh --full"
fi
for m in "${models[@]}"; do [[ "$m" == *.gguf && -f "$m" ]] || die "not a GGUF file: $m"; done
[ -f "$jar" ] || die "no such jar: $jar (build it: ./gossw mvn -q -B -pl cli -am -DskipTests package)"
[ -z "$jar2" ] || [ -f "$jar2" ] || die "no such jar: $jar2"
[ -x "$llama_bench" ] || die "llama-bench not found at $llama_bench (build it with benchmarks/scripts/llama-baseline.sh)"
command -v gcc > /dev/null || die "needs gcc for the C probe"
java="$("$root/scripts/find-jdk.sh")/bin/java"
out="${out:-$(mktemp -d /tmp/decode-vs-llama.XXXXXX)}"
mkdir -p "$out"

# The probe: the same C file bench binds, built as a command of its own.
probe="$out/stream_probe"
gcc -std=c11 -O2 -DGOSS_STREAM_PROBE_MAIN -I"$root/backend-cpu/kernels" "$root/backend-cpu/kernels/stream_probe.c" "$root/backend-cpu/kernels/memory.c" \
  -pthread -o "$probe" || die "cannot build the C probe"

{
  echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host=$(hostname)"
  echo "cpu=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)"
  echo "cores=$(nproc)"
  echo "flags=$(goss_cpu_flags)"
  echo "threads=$threads"
  echo "rounds=$rounds"
  echo "gen=$gen"
  echo "reps=$reps"
  echo "nice=$(nice)"
  echo "load_before=$(cut -d' ' -f1-3 /proc/loadavg)"
  echo "thp=$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo unknown)"
  if [ "$(readlink -f "$jar")" = "$(readlink -f "$root/cli/target/goss-gpu.jar")" ]; then
    c="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    [ -n "$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null)" ] && c="$c+uncommitted changes"
    echo "commit=$c (jar built $(date -u -r "$jar" +%Y-%m-%dT%H:%M:%SZ))"
  else  # a jar from elsewhere: this checkout's commit says nothing about it
    echo "commit=unknown ($jar, built $(date -u -r "$jar" +%Y-%m-%dT%H:%M:%SZ))"
  fi
  if [ -n "$jar2" ]; then
    r2="$(git -C "$(dirname "$jar2")" rev-parse --show-toplevel 2>/dev/null || true)"
    c2="$( [ -n "$r2" ] && git -C "$r2" rev-parse --short HEAD || echo unknown)"
    echo "commit2=$c2 ($jar2, built $(date -u -r "$jar2" +%Y-%m-%dT%H:%M:%SZ))"
  fi
  echo "llama_bench=$llama_bench"
  echo "llama_mmap=$llama_mmap"
  echo "llama_commit=$(cat "$(dirname "$llama_bench")/../../.commit" 2>/dev/null || echo unknown)"
} > "$out/run.env"
[ "$(nice)" = 0 ] || say "warning: running under nice $(nice): llama.cpp's spin-waits make its figures meaningless"

# Every probe and engine run in time order (events.tsv), and a short probe after each engine run: this machine's memory
# can change speed from one minute to the next (shared hosts), so each run is also compared with the probes around it.
event() { printf '%s\n' "$*" >> "$out/events.tsv"; }
# With --fresh-probe, then fresh memory against the same memory again, over the model's size: on some hosts (this
# project's VMs) memory a process has just allocated reads at a fraction of the speed for a while, the parts not read
# lately the longest, as a model's experts are (benchmarks/scripts/README.md, section 4).
probe_after() { # probe_after KIND MODEL ROUND
  local f="$out/around-$1-$(basename "$2")-r$3.txt"
  "$probe" "$threads" 1 4 > "$f" && event "probe $(cut -d' ' -f1 "$f")"
  [ "$fresh_probe" = 1 ] || return 0
  local span=$(( ($(stat -c %s "$2") >> 30) + 2 ))  # GiB: the model's file and 2 more
  "$probe" "$threads" 1 4 "$span" 2> /dev/null | tail -1 > "$out/fresh-$1-$(basename "$2")-r$3.txt" || say "the fresh-memory probe failed"
}

goss() { # goss MODEL ROUND [2: the second jar]
  local j="$jar" kind=goss
  [ "${3:-}" = 2 ] && { j="$jar2"; kind=goss2; }
  local base="$out/$kind-$(basename "$1")-r$2"
  say "round $2: $kind $(basename "$1") tg$gen"
  "$java" -jar "$j" bench --model "$1" --backend cpu --threads "$threads" -p 0 -n "$gen" -r "$reps" -w "$warm" \
    --no-bandwidth-probe -o json > "$base.json" 2> "$base.log" || { tail -3 "$base.log" >&2; rm -f "$base.json"; }
  event "run $kind $(basename "$1") $2"
  probe_after "$kind" "$1" "$2"
}
llama() { # llama MODEL ROUND
  local base="$out/llama-$(basename "$1")-r$2"
  say "round $2: llama-bench $(basename "$1") tg$gen"
  "$llama_bench" -m "$1" -t "$threads" -p 0 -n "$gen" -r "$reps" -mmp "$llama_mmap" -o json > "$base.json" 2> "$base.log" \
    || { tail -3 "$base.log" >&2; rm -f "$base.json"; }
  event "run llama $(basename "$1") $2"
  probe_after llama "$1" "$2"
}
turn=0
for ((r = 1; r <= rounds; r++)); do
  for m in "${models[@]}"; do
    say "round $r: C probe ($probe_gib GiB, $threads threads)"
    "$probe" "$threads" "$probe_gib" 8 > "$out/probe-$(basename "$m")-r$r.txt" || say "the C probe failed"
    event "probe $(cut -d' ' -f1 "$out/probe-$(basename "$m")-r$r.txt")"
    if [ -z "$jar2" ]; then
      if [ $((turn % 2)) = 0 ]; then goss "$m" "$r"; llama "$m" "$r"; else llama "$m" "$r"; goss "$m" "$r"; fi
    else # A, B, llama; then B, llama, A; then llama, A, B: each goes first, second and third in turn
      case $((turn % 3)) in
        0) goss "$m" "$r"; goss "$m" "$r" 2; llama "$m" "$r" ;;
        1) goss "$m" "$r" 2; llama "$m" "$r"; goss "$m" "$r" ;;
        2) llama "$m" "$r"; goss "$m" "$r"; goss "$m" "$r" 2 ;;
      esac
    fi
    turn=$((turn + 1))
  done
done
if [ $op_times = 1 ]; then
  for m in "${models[@]}"; do
    say "op times: goss-gpu $(basename "$m") tg$gen --op-times (with both probes)"
    "$java" -jar "$jar" bench --model "$m" --backend cpu --threads "$threads" -p 0 -n "$gen" -r "$reps" -w "$warm" --op-times -o json \
      > "$out/optimes-$(basename "$m").json" 2> "$out/optimes-$(basename "$m").log" || tail -3 "$out/optimes-$(basename "$m").log" >&2
    [ -z "$jar2" ] || "$java" -jar "$jar2" bench --model "$m" --backend cpu --threads "$threads" -p 0 -n "$gen" -r "$reps" -w "$warm" --op-times \
      -o json > "$out/optimes2-$(basename "$m").json" 2> "$out/optimes2-$(basename "$m").log" || tail -3 "$out/optimes2-$(basename "$m").log" >&2
  done
fi
echo "load_after=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/run.env"
python3 "$here/decode_vs_llama_table.py" "$out"
say "raw outputs in $out"
