#!/usr/bin/env bash
# One token's tile_gemm streaming its weights, against the C probe in the same process (stream_gemm.c), for variants
# of kernels/cpu/tile_gemm.c built with other macros, taking turns; prints every sample and the medians per format,
# variant and memory speed. For finding where a decode op's bytes stop flowing without the engine around the kernel.
#
# usage: scripts/bench/kernel-stream/run.sh [options] NAME[:CFLAGS] ...
#   NAME:CFLAGS     a build of the kernel with these extra compiler flags, e.g. base:  or  pf:-DPREFETCH_ONE_TOKEN=1
#                   or  pf8k:"-DPREFETCH_ONE_TOKEN=1 -DPREFETCH=8192" (quote flags with spaces); NAME@ISA:CFLAGS
#                   builds that variant for another kernel family (e.g. vnni@avxvnni: beside base: in the same turns)
#   --isa ISA       avx512 (default when the CPU has it), avxvnni or avx2: the kernel family of variants without @ISA
#   --formats F     mx4, q8 or "mx4 q8" (default)
#   --gib G         weights per format (default 1; far above the caches)
#   --job MB        0: each thread one call over its half; else jobs of MB split in halves (default 4.4, an expert)
#   --rounds N      rounds of turns (default 4); --samples N samples per process (default 4)
#   --shuffled      jobs in a random order (as decode picks experts), not in memory order
#   --reps N        reads of the buffer per pass (default 1; with --gib 0.004, the kernel's rate from the caches)
#   --out FILE      where the samples go (default: a new file under /tmp)
# Needs gcc. A sample whose probes before and after differ by more than 10 % is left out of the medians; "fast" and
# "slow" split the samples at 80 % of the fastest probe seen (some VMs' memory changes speed every few seconds).
# Dry run: scripts/bench/kernel-stream/run.sh --gib 0.05 --rounds 1 --samples 1 base: pf:-DPREFETCH_ONE_TOKEN=1
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
kernels="$(cd "$here/../../../kernels/cpu" && pwd)"
isa="" formats="mx4 q8" gib=1 job=4.4 rounds=4 samples=4 reps=1 order=memory out="" variants=()
die() { echo "kernel-stream: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --isa) isa="${2:?--isa needs avx512, avxvnni or avx2}"; shift 2 ;;
    --formats) formats="${2:?--formats needs mx4 and/or q8}"; shift 2 ;;
    --gib) gib="${2:?}"; shift 2 ;;
    --job) job="${2:?}"; shift 2 ;;
    --rounds) rounds="${2:?}"; shift 2 ;;
    --samples) samples="${2:?}"; shift 2 ;;
    --reps) reps="${2:?}"; shift 2 ;;
    --shuffled) order=shuffled; shift ;;
    --out) out="${2:?}"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) variants+=("$1"); shift ;;
  esac
done
[ ${#variants[@]} -gt 0 ] || die "name at least one variant, e.g. base: (see --help)"
for f in $formats; do [[ "$f" =~ ^(mx4|q8)$ ]] || die "--formats takes mx4 and/or q8, got '$f'"; done
if [ -z "$isa" ]; then grep -qw avx512_vnni /proc/cpuinfo && isa=avx512 || { grep -qw avx_vnni /proc/cpuinfo && isa=avxvnni || isa=avx2; }; fi
. "$kernels/isa_flags.sh"
isa_flags() { goss_isa_flags "$1" || die "a kernel family is avx512, avxvnni or avx2, got '$1'"; }
isa_flags "$isa" > /dev/null
build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT
out="${out:-$(mktemp /tmp/kernel-stream.XXXXXX.txt)}"
names=()
for v in "${variants[@]}"; do
  name="${v%%:*}" flags="" vi="$isa"; [[ "$v" == *:* ]] && flags="${v#*:}"
  [[ "$name" == *@* ]] && { vi="${name#*@}"; name="${name%@*}"; }
  isa_flags "$vi" > /dev/null
  [[ "$name" =~ ^[A-Za-z0-9_.-]+$ ]] || die "variant names are letters, digits, _ . -: '$name'"
  # shellcheck disable=SC2086,SC2046
  gcc -std=c11 -O2 -I"$kernels" -DGOSS_ISA="$vi" $(isa_flags "$vi") $flags -Wno-maybe-uninitialized -c "$kernels/tile_gemm.c" -o "$build/$name.o"
  gcc -std=c11 -O2 -I"$kernels" -DGOSS_ISA="$vi" -DLABEL="\"$name\"" "$here/stream_gemm.c" "$build/$name.o" \
      "$kernels/memory.c" "$kernels/stream_probe.c" -pthread -o "$build/$name"
  names+=("$name")
done
echo "kernel-stream: $isa kernels (unless @ISA), $(nproc) CPUs; flags: $(grep -m1 -o -wE 'avx2|fma|f16c|avx512f|avx512_vnni|avx_vnni|avx512_bf16|amx_tile' /proc/cpuinfo | sort -u | tr '\n' ' ')" | tee "$out" >&2
for r in $(seq "$rounds"); do
  for name in "${names[@]}"; do
    for f in $formats; do "$build/$name" "$f" "$gib" "$job" "$samples" "$reps" "$order" | tee -a "$out"; done
  done
done
python3 - "$out" <<'PY'
import collections, statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.count(" GB/s probe ")]
fastest = max((float(r[6]) + float(r[7])) / 2 for r in rows)
cells = collections.defaultdict(list)
for r in rows:
    if r[10] != "ok": continue
    mode = "fast" if (float(r[6]) + float(r[7])) / 2 >= 0.8 * fastest else "slow"
    cells[(r[1] + " " + r[2], mode, r[0])].append(float(r[9].rstrip("%")))
if not cells: print("\nno steady samples: the probes before and after every sample differed by more than 10 % (a busy machine?)")
print(f"\nmedian share of the probe around each sample (fastest probe {fastest:.1f} GB/s; 'slow': under 80 % of it):")
for (fmt, mode, name), v in sorted(cells.items()):
    print(f"  {fmt:14} {mode:4} {name:12} {statistics.median(v):4.0f} %  (n={len(v)}: {' '.join(f'{x:.0f}' for x in sorted(v))})")
print(f"samples: {sys.argv[1]}")
PY
