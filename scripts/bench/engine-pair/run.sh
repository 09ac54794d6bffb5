#!/usr/bin/env bash
# The engine's decode with two builds of the tile kernels (backend-cpu/kernels/tile_gemm.c), A and B, taking turns token by
# token in one process: a small change to a kernel, measured where it counts (the whole decode step, every op around
# the kernel), with the VM's memory speed the same for both. Between processes this machine kind's memory moves decode
# by 10-30 %; token by token, A and B see the same memory, and each token is set against the C probe passes around it.
#
# usage: scripts/bench/engine-pair/run.sh --a A_CFLAGS --b B_CFLAGS --model M.gguf [options]
#   --a, --b FLAGS       compiler flags of each build (tile_gemm.c's macros; "" for none), e.g.
#                        --a -DPREFETCH_ONE_TOKEN=0 --b ""
#   --model M.gguf       a model to decode (repeatable; at least one: the built-in model is too small to stream)
#   -n N                 tokens per run, A and B half each (default 64)
#   --runs R             bench runs per model, one process each (default 3)
#   --isa ISA            the kernel family paired: avx512, avxvnni or avx2 (default: the one this CPU runs best); the
#                        engine is forced onto it (GOSS_CPU_KERNELS)
#   --threads T          decode threads (default: every CPU)
#   --out FILE           where the bench logs go (default: a new file under /tmp)
#
# How: a throw-away git worktree of this checkout (its uncommitted changes included) gets pair.patch, hooks that a
# product build has no use for: build.sh compiles the family's tile_gemm.c with A's flags and a second time with B's
# (exported as goss_pair_b_*), KernelSet calls B's kernels while a flag is set, and `bench --op-times` sets it for
# tokens 1, 2, 5, 6, ... (A B B A ...) and prints a PAIRED line: each build's median share of the probe and B − A per
# pair of tokens. The op table beside it mixes both builds. The worktree is removed at the end.
# When pair.patch no longer applies, remake it: the four hooks above, in a worktree, then `git diff > pair.patch`.
# Needs git, gcc, Maven's repository as ./gossw build uses it, and a JDK >= 22 (scripts/find-jdk.sh).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
die() { echo "engine-pair: $*" >&2; exit 2; }
models=() gen=64 runs=3 isa="" threads="$(nproc)" out="" a="" b="" given=0
while [ $# -gt 0 ]; do
  case "$1" in
    --a) a="${2?--a needs the flags of build A}"; given=$((given + 1)); shift 2 ;;
    --b) b="${2?--b needs the flags of build B}"; given=$((given + 1)); shift 2 ;;
    --model) models+=("${2:?--model needs a GGUF file}"); shift 2 ;;
    -n) gen="${2:?-n needs a token count}"; shift 2 ;;
    --runs) runs="${2:?--runs needs a count}"; shift 2 ;;
    --isa) isa="${2:?--isa needs avx512, avxvnni or avx2}"; shift 2 ;;
    --threads) threads="${2:?--threads needs a count}"; shift 2 ;;
    --out) out="${2:?--out needs a file}"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) die "unexpected argument '$1' (see --help)" ;;
  esac
done
[ "$given" = 2 ] || die "give both builds' flags, --a and --b (\"\" for none; see --help)"
[ ${#models[@]} -gt 0 ] || die "name a model with --model (see --help)"
for m in "${models[@]}"; do [ -f "$m" ] || die "no model file at $m"; done
[[ "$gen" =~ ^[0-9]+$ ]] && [ "$gen" -ge 4 ] || die "-n must be at least 4, got '$gen'"
[[ "$runs" =~ ^[0-9]+$ ]] && [ "$runs" -ge 1 ] || die "--runs must be at least 1, got '$runs'"
. "$root/backend-cpu/kernels/isa_flags.sh"
[ -n "$isa" ] || isa="$(goss_best_isa)"
goss_isa_flags "$isa" > /dev/null || die "--isa takes avx512, avxvnni or avx2, got '$isa'"
java="$("$root/scripts/find-jdk.sh")/bin/java"
out="${out:-$(mktemp /tmp/engine-pair.XXXXXX.txt)}"

tmp="$(mktemp -d)"
wt="$tmp/worktree"
cleanup() { git -C "$root" worktree remove --force "$wt" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
git -C "$root" worktree add -q --detach "$wt" HEAD
git -C "$root" diff HEAD --binary > "$tmp/local.diff"
[ ! -s "$tmp/local.diff" ] || git -C "$wt" apply "$tmp/local.diff" || die "this checkout's uncommitted changes did not apply to HEAD"
git -C "$wt" apply "$here/pair.patch" || die "pair.patch no longer applies to this checkout: remake it (see --help)"
echo "engine-pair: building A (${a:-no flags}) and B (${b:-no flags}) of the $isa tile kernels in $wt" >&2
(cd "$wt" && GOSS_PAIR_ISA="$isa" GOSS_PAIR_A_FLAGS="$a" GOSS_PAIR_B_FLAGS="$b" ./gossw build) > "$tmp/build.log" 2>&1 \
  || { tail -20 "$tmp/build.log" >&2; die "the paired build failed (log above)"; }

{ echo "# engine-pair $(date -u +%FT%TZ) on $(hostname): A = '$a', B = '$b', $isa, $threads threads, tg$gen"
  echo "# commit $(git -C "$root" rev-parse --short HEAD)$( [ -s "$tmp/local.diff" ] && echo ' with uncommitted changes')"
  echo "# cpu flags: $(goss_cpu_flags)"; } > "$out"
for r in $(seq 1 "$runs"); do
  for m in "${models[@]}"; do
    echo "engine-pair: run $r of $runs, $(basename "$m")" >&2
    echo "## run $r, $(basename "$m")" >> "$out"
    GOSS_CPU_KERNELS="$isa" "$java" -jar "$wt/cli/target/goss-gpu.jar" bench --model "$m" --backend cpu --threads "$threads" \
      -p 0 -n "$gen" -r 1 -w 2 --op-times >> "$out" 2>&1 || die "bench failed (see $out)"
  done
done
echo "PAIRED lines (B − A in points of the C probe, per pair of tokens; a probe far under the fastest is slow memory):"
awk '/^## run/ { run = $0 } /^PAIRED:/ { sub(/^## /, "", run); print "  " run ": " substr($0, 9) }' "$out"
echo "bench logs: $out"
