#!/usr/bin/env bash
# Runs on the lent GPU machine: before/after figures of a kernel change in one call, so both come from the same
# machine. BEFORE is a small jar holding the previous build's own classes and PTX (io/gossgpu/**),
# put ahead of goss-gpu.jar on the class path; AFTER is goss-gpu.jar as staged. Both bench the same generated
# gpt-oss-20b-shaped model (original layout, BF16 dense), after, then before (GOSS_AB_SIDES="after before after" repeats after, for the spread).
#   backend-cuda/src/test/device/run-ab.sh DIR BEFORE_JAR [LAYERS] [BENCH ARGS...]   (LAYERS default 24)
# Make BEFORE_JAR here from the previous goss-gpu.jar: BEFORE_JAR=old/goss-gpu.jar stage.sh (writes DIR/before.jar).
set -uo pipefail
dir="${1:?DIR}"; before="${2:?BEFORE_JAR}"; layers="${3:-24}"; shift 3 2>/dev/null || shift $#
args=("$@"); [ ${#args[@]} -gt 0 ] || args=(-p 512 -n 128 -r 3)
out="${OUT:-/tmp}"
. "$(dirname "$0")/runtime.sh"
goss_runtime "$dir" || exit 3
goss_20b_model "$dir" "$layers"
status=0
for side in ${GOSS_AB_SIDES:-after before}; do
  cp="$dir/goss-gpu.jar"; [ "$side" = before ] && cp="$before:$cp"
  echo "== $side"
  "${java[@]}" -cp "$cp" io.gossgpu.cli.Launcher bench --backend cuda -m "$model" "${args[@]}" 2>>"$out/ab.err" \
      | grep -E '^\| ' | tee -a "$out/ab.md" || status=1
done
exit $status
