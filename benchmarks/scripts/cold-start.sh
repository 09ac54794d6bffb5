#!/usr/bin/env bash
# Time to the first token from a cold JVM: `java -jar goss-gpu.jar --model M --prompt P -n 1 --verbose`, run
# again and again, the variants taking turns. Prints one markdown table: the whole run's wall time (JVM start,
# relaunch, load, prefill, one token, exit), the model load and the first token as goss-gpu reports them,
# median and best, and each variant's ratio to the first.
#
# usage: benchmarks/scripts/cold-start.sh [options] MODEL
#   -r N          runs of each variant (default: 5)
#   -t N          cpu threads (default: all)
#   --prompt P    the prompt (default: "Hello! In one sentence, what can you do?")
#   --jar JAR     the goss-gpu jar (default: cli/target/goss-gpu.jar of this checkout)
#   --jar2 JAR    a second build to compare with
#   --env2 K=V    a second variant of the same jar with this environment variable set (repeatable)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
. "$root/backend-cpu/kernels/isa_flags.sh"  # goss_cpu_flags
runs=5 threads="" prompt="Hello! In one sentence, what can you do?" jar="$root/cli/target/goss-gpu.jar" jar2="" env2=() model=""
die() { echo "cold-start: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    -r) runs="${2:?-r needs a number}"; shift 2 ;;
    -t) threads="${2:?-t needs a number}"; shift 2 ;;
    --prompt) prompt="${2:?--prompt needs text}"; shift 2 ;;
    --jar) jar="${2:?--jar needs a path}"; shift 2 ;;
    --jar2) jar2="${2:?--jar2 needs a path}"; shift 2 ;;
    --env2) [[ "${2:-}" == *=* ]] || die "--env2 takes NAME=VALUE"; env2+=("$2"); shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) [ -z "$model" ] || die "one model only"; model="$1"; shift ;;
  esac
done
[ -n "$model" ] || die "no model given (see --help)"
[ -e "$model" ] || die "no such model: $model"
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || die "-r takes a positive whole number, got '$runs'"
for j in "$jar" ${jar2:+"$jar2"}; do [ -f "$j" ] || die "no such jar: $j (build it with ./gossw build)"; done
java="$("$root/scripts/find-jdk.sh")/bin/java"
# the variants: a name, a jar, and environment settings (NAME=VALUE words)
names=("A: $jar") jars=("$jar") envs=("")
[ -n "$jar2" ] && { names+=("B: $jar2"); jars+=("$jar2"); envs+=(""); }
[ ${#env2[@]} -gt 0 ] && { names+=("$([ ${#names[@]} = 1 ] && echo B || echo C): ${env2[*]}"); jars+=("$jar"); envs+=("${env2[*]}"); }
args=(--model "$model" --backend cpu --prompt "$prompt" -n 1 --verbose)
[ -n "$threads" ] && args+=(--threads "$threads")
out="$(mktemp -d /tmp/cold-start.XXXXXX)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for ((r = 1; r <= runs; r++)); do
  for i in "${!jars[@]}"; do
    read -r -a e <<< "${envs[$i]}"
    s=$(date +%s%N)
    env "${e[@]}" "$java" -jar "${jars[$i]}" "${args[@]}" > /dev/null 2> "$out/err" || { tail -3 "$out/err" >&2; die "run failed"; }
    t=$(date +%s%N)
    load=$(sed -n 's/.*loaded in \([0-9]*\) ms.*/\1/p' "$out/err" | head -1)
    first=$(sed -n 's/.*first token \([0-9]*\) ms.*/\1/p' "$out/err" | head -1)
    echo "$i $(( (t - s) / 1000000 )) ${load:-0} ${first:-0}" >> "$out/times"
    echo "cold-start: ${names[$i]} run $r: $(( (t - s) / 1000000 )) ms (load ${load:-?} ms, first token ${first:-?} ms)" >&2
  done
done
python3 - "$out/times" "${names[@]}" <<'EOF'
import statistics, sys
rows = [list(map(int, l.split())) for l in open(sys.argv[1])]
names = sys.argv[2:]
print("| variant | wall ms, median (best) | load ms | first token ms | wall / A |")
print("|---|---:|---:|---:|---:|")
med = {}
for i, name in enumerate(names):
    r = [x[1:] for x in rows if x[0] == i]
    m = [statistics.median(c) for c in zip(*r)]
    b = [min(c) for c in zip(*r)]
    med[i] = m[0]
    print(f"| {name} | {m[0]:.0f} ({b[0]}) | {m[1]:.0f} ({b[1]}) | {m[2]:.0f} ({b[2]}) | {m[0] / med[0]:.2f} |")
EOF
echo
echo "$runs runs each, taking turns; $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores, flags: $(goss_cpu_flags); load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
rm -rf "$out"
