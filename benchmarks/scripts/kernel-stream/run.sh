#!/usr/bin/env bash
# One token's tile_gemm streaming its weights, against the C probe in the same process (stream_gemm.c), for variants
# of backend-cpu/kernels/tile_gemm.c built with other macros, taking turns; prints every sample and the medians per format,
# variant and memory speed. For finding where a decode op's bytes stop flowing without the engine around the kernel.
#
# usage: benchmarks/scripts/kernel-stream/run.sh [options] NAME[:CFLAGS] ...
#   NAME:CFLAGS     a build of the kernel with these extra compiler flags, e.g. base:  or  pf:-DPREFETCH_ONE_TOKEN=3
#                   or  pf8k:"-DPREFETCH_ONE_TOKEN=3 -DPREFETCH=8192" (quote flags with spaces); NAME@ISA:CFLAGS
#                   builds that variant for another kernel family (e.g. vnni@avxvnni: beside base: in the same turns)
#   --isa ISA       avx512 (default when the CPU has it), avxvnni or avx2: the kernel family of variants without @ISA
#   --formats F     mx4, q8 or "mx4 q8" (default)
#   --gib G         weights per format (default 1; far above the caches)
#   --job MB        0: each thread one call over its half; else jobs of MB split in halves (default 4.4, an expert)
#   --rounds N      rounds of turns (default 4); --samples N samples per process (default 4)
#   --shuffled      jobs in a random order (as decode picks experts), not in memory order
#   --fresh SPAN    each pass reads --gib of jobs drawn at random anew out of SPAN GiB of weights (a model's size, e.g.
#                   10), as decode reads experts it has not read for a while; on this project's VMs that reads slower
#                   than the same gigabyte again (benchmarks/scripts/README.md)
#   --touch-b       with --fresh and --paired: a load from every 4 KiB page of B's jobs before each of B's passes
#                   (untimed); with two builds alike (base: touched:), B − A is what reading each page once before
#                   the kernel does saves it
#   --tokens N      activation rows per call (default 1, decode; 2-8: a batch of sequences, the multi-token kernels)
#   --reps N        reads of the buffer per pass (default 1; with --gib 0.004, the kernel's rate from the caches)
#   --out FILE      where the samples go (default: a new file under /tmp)
#   --paired        exactly two variants, A and B, built into one program: each sample runs both between the same
#                   two probe passes (A B, then B A), and the summary gives B's gain in points of the probe, sample
#                   by sample; use many samples (e.g. --rounds 2 --samples 20). Small effects show here first.
# Needs gcc. A sample whose probes before and after differ by more than 10 % is left out of the medians; "fast" and
# "slow" split the samples at 80 % of the fastest probe seen (some VMs' memory changes speed every few seconds).
# Dry run: benchmarks/scripts/kernel-stream/run.sh --gib 0.05 --rounds 1 --samples 1 base: pf:-DPREFETCH_ONE_TOKEN=3
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
kernels="$(cd "$here/../../../backend-cpu/kernels" && pwd)"
isa="" formats="mx4 q8" gib=1 job=4.4 rounds=4 samples=4 reps=1 order=memory span=0 tokens=1 out="" paired=0 touch_b=0 variants=()
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
    --fresh) order=fresh; span="${2:?--fresh needs the GiB of weights to draw from}"; shift 2 ;;
    --tokens) tokens="${2:?}"; shift 2 ;;
    --touch-b) touch_b=1; shift ;;
    --paired) paired=1; shift ;;
    --out) out="${2:?}"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) variants+=("$1"); shift ;;
  esac
done
[ ${#variants[@]} -gt 0 ] || die "name at least one variant, e.g. base: (see --help)"
[ "$paired" = 0 ] || [ ${#variants[@]} = 2 ] || die "--paired takes exactly two variants, A and B"
if [ "$touch_b" = 1 ]; then
  [ "$paired" = 1 ] && [ "$order" = fresh ] || die "--touch-b needs --paired and --fresh SPAN"
  order=fresh-touch-b
fi
for f in $formats; do [[ "$f" =~ ^(mx4|q8)$ ]] || die "--formats takes mx4 and/or q8, got '$f'"; done
. "$kernels/isa_flags.sh"
[ -n "$isa" ] || isa="$(goss_best_isa)"
isa_flags() { goss_isa_flags "$1" || die "a kernel family is avx512, avxvnni or avx2, got '$1'"; }
isa_flags "$isa" > /dev/null
build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT
out="${out:-$(mktemp /tmp/kernel-stream.XXXXXX.txt)}"
names=() isas=()
for v in "${variants[@]}"; do
  name="${v%%:*}" flags="" vi="$isa"; [[ "$v" == *:* ]] && flags="${v#*:}"
  [[ "$name" == *@* ]] && { vi="${name#*@}"; name="${name%@*}"; }
  isa_flags "$vi" > /dev/null
  [[ "$name" =~ ^[A-Za-z0-9_.-]+$ ]] || die "variant names are letters, digits, _ . -: '$name'"
  # the paired program's second build exports its kernels under another name (goss_<isa>_b_mx4_gemm, ...)
  fn="$vi"; [ "$paired" = 1 ] && [ ${#names[@]} = 1 ] && fn="${vi}_b"
  # shellcheck disable=SC2086,SC2046
  gcc -std=c11 -O2 -I"$kernels" -DGOSS_ISA="$fn" $(isa_flags "$vi") $flags -Wno-maybe-uninitialized -c "$kernels/tile_gemm.c" -o "$build/$name.o"
  names+=("$name") isas+=("$fn")
done
link() {  # program, its GOSS_ISA, -D definitions, objects...
  local prog="$1" fn="$2" defs="$3"; shift 3
  # shellcheck disable=SC2086
  gcc -std=c11 -O2 -Werror=implicit-function-declaration -I"$kernels" -DGOSS_ISA="$fn" $defs "$here/stream_gemm.c" "$@" "$kernels/memory.c" \
      "$kernels/stream_probe.c" -pthread -o "$build/$prog"
}
if [ "$paired" = 1 ]; then
  link pair "${isas[0]}" "-DLABEL=\"${names[0]}\" -DLABEL_B=\"${names[1]}\" -DPAIR_ISA=${isas[1]}" "$build/${names[0]}.o" "$build/${names[1]}.o"
  names=(pair)
else
  for i in "${!names[@]}"; do link "${names[$i]}" "${isas[$i]}" "-DLABEL=\"${names[$i]}\"" "$build/${names[$i]}.o"; done
fi
echo "kernel-stream: $isa kernels (unless @ISA), $(nproc) CPUs; flags: $(goss_cpu_flags)" | tee "$out" >&2
for r in $(seq "$rounds"); do
  for name in "${names[@]}"; do
    for f in $formats; do "$build/$name" "$f" "$gib" "$job" "$samples" "$reps" "$order" "$tokens" "$span" | tee -a "$out"; done
  done
done
python3 - "$out" <<'PY'
import collections, statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.count(" GB/s probe ")]
fastest = max([(float(r[6]) + float(r[7])) / 2 for r in rows] or [0])
cells = collections.defaultdict(list)
for r in rows:
    if r[10] != "ok": continue
    mode = "fast" if (float(r[6]) + float(r[7])) / 2 >= 0.8 * fastest else "slow"
    cells[(r[1] + " " + r[2], mode, r[0])].append(float(r[9].rstrip("%")))
if rows and not cells: print("\nno steady samples: the probes before and after every sample differed by more than 10 % (a busy machine?)")
if rows: print(f"\nmedian share of the probe around each sample (fastest probe {fastest:.1f} GB/s; 'slow': under 80 % of it):")
for (fmt, mode, name), v in sorted(cells.items()):
    print(f"  {fmt:14} {mode:4} {name:12} {statistics.median(v):4.0f} %  (n={len(v)}: {' '.join(f'{x:.0f}' for x in sorted(v))})")
pairs = [l.split() for l in open(sys.argv[1]) if l.count(" GB/s pair-probe ")]
if pairs:
    top = max((float(r[7]) + float(r[8])) / 2 for r in pairs)
    diffs = collections.defaultdict(list)
    for r in pairs:
        if r[14] != "ok": continue
        mode = "fast" if (float(r[7]) + float(r[8])) / 2 >= 0.8 * top else "slow"
        diffs[(r[1] + " " + r[2], mode, r[0])].append((float(r[10].rstrip("%")), float(r[11].rstrip("%")), float(r[13])))
    print(f"\npaired samples, shares of the probe around each (fastest probe {top:.1f} GB/s; 'slow': under 80 % of it):")
    for (fmt, mode, ab), v in sorted(diffs.items()):
        a, b = ab.split("/")
        d = [x[2] for x in v]
        print(f"  {fmt:14} {mode:4} {a} {statistics.median(x[0] for x in v):3.0f} %, {b} {statistics.median(x[1] for x in v):3.0f} %:"
              f" {b} − {a} median {statistics.median(d):+.1f} points, mean {statistics.mean(d):+.1f}, {b} ahead in"
              f" {sum(x > 0 for x in d)} of {len(d)}")
print(f"samples: {sys.argv[1]}")
PY
