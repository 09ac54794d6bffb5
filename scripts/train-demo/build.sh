#!/usr/bin/env bash
# Builds the demo model from nothing: conversations (data.py), rendered and tokenized by goss-gpu's own Harmony
# renderer and o200k tokenizer (`goss-gpu render`), trained on the CPU (train.py), exported to OpenAI's original/
# layout (export.py), then packed as the jar's resource and the tests' held-out set (pack step below).
#
#   scripts/train-demo/build.sh [WORK_DIR]        (default /tmp/train-demo; STEPS, SEED, TRAIN, THREADS override)
#
# Needs Debian's python3-torch (apt-get install python3-torch) and, for a tenfold faster matmul than Debian's
# reference BLAS, libopenblas0-pthread (used through LD_LIBRARY_PATH when present; the system's choice is left alone).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="${1:-/tmp/train-demo}"
STEPS="${STEPS:-3000}" SEED="${SEED:-1}" TRAIN="${TRAIN:-40000}" THREADS="${THREADS:-1}"
# Python runs under a process name of its own (demo-model-python), so that tools stopping "python3 ... train"
# processes of other runs leave this pipeline alone.
py() { (exec -a demo-model-python /usr/bin/python3 "$@"); }
openblas=/usr/lib/x86_64-linux-gnu/openblas-pthread
[ -d "$openblas" ] && export LD_LIBRARY_PATH="$openblas${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# One thread by default: on a shared 2-core machine two threads that wait for each other ran 4x slower than one.
export OPENBLAS_NUM_THREADS="$THREADS" OMP_NUM_THREADS="$THREADS"
# Keep freed tensors in the heap instead of returning them to the system and page-faulting them back (1.5x faster).
export MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=1073741824 MALLOC_TOP_PAD_=268435456
mkdir -p "$work"

"$root/gossw" build >"$work/build.log" 2>&1 || { echo "build failed: see $work/build.log" >&2; exit 1; }
JAVA_HOME="$("$root/scripts/find-jdk.sh")"
goss() { "$JAVA_HOME/bin/java" -jar "$root/cli/target/goss-gpu.jar" "$@" 2> >(grep -v '^WARNING: Using incubator' >&2); }

py "$here/data.py" --seed "$SEED" --train "$TRAIN" --heldout 20 --out "$work"
goss render <"$work/train.jsonl" >"$work/train.tok.jsonl"
py -c 'import json,sys
for l in sys.stdin:
    for r in json.loads(l)["references"]: print(json.dumps({"messages": r}))' <"$work/heldout.jsonl" | goss render >"$work/heldout.tok.jsonl"

# A killed run goes on from $work/resume.pt (saved every 100 steps) when started again.
[ "${SKIP_TRAIN:-}" = 1 ] || py "$here/train.py" --data "$work" --out "$work" --steps "$STEPS" --seed "$SEED" \
  --threads "$THREADS" 2>&1 | tee -a "$work/train.log"
py "$here/export.py" "$work/trained.pt" "$work/original"

# The jar's copy (gzip -n: no name or time in the header, so the same model gives the same bytes) and the held-out set
# (in the jar too: the tests score it, and `verify --kl` measures a backend's logits over its conversations).
res="$root/engine-core/src/main/resources/io/gossgpu/demo"
mkdir -p "$res"
cp "$work/original/config.json" "$res/config.json"
gzip -9 -n -c "$work/original/model.safetensors" >"$res/model.safetensors.gz"
sha256sum "$work/original/model.safetensors" | cut -d' ' -f1 >"$res/model.safetensors.sha256"
cp "$work/heldout.jsonl" "$res/heldout.jsonl"
cp "$work/train.log" "$here/train.log"
echo "packed: $(du -h "$res/model.safetensors.gz" | cut -f1) gzipped, $(du -h "$work/original/model.safetensors" | cut -f1) unpacked"
