#!/usr/bin/env bash
# Reruns the CUDA and Metal conformance kits on the CPU emulators with the race checks of gpu-device/emu/fibers.h:
# each block's threads resumed in reverse order and in a shuffled order (GOSS_EMU_ORDER), group memory poisoned
# with NaNs at every block start (GOSS_EMU_POISON=1). A kernel with a missing barrier passes the normal run when
# the fixed forward order happens to put the writer first; here it fails. Not in CI (about 8 minutes on 2 cores).
#   scripts/emu-race-check.sh [ORDER...]      default: reverse shuffle:1 (a failing shuffle seed reproduces)
set -euo pipefail
cd "$(dirname "$0")/.."
orders=("$@")
[ ${#orders[@]} -gt 0 ] || orders=(reverse shuffle:1)
export GOSS_EMU_POISON=1
for order in "${orders[@]}"; do
    echo "== GOSS_EMU_ORDER=$order GOSS_EMU_POISON=1: CUDA kit (fake driver)"
    GOSS_EMU_ORDER="$order" backend-cuda/emu/fake-driver/test-with-fake-driver.sh \
        -Dtest='CudaConformanceTest,CudaSmallBlocksConformanceTest' -Dsurefire.failIfNoSpecifiedTests=false
    echo "== GOSS_EMU_ORDER=$order GOSS_EMU_POISON=1: Metal kit (emulated device)"
    GOSS_EMU_ORDER="$order" ./gossw mvn -B -q -pl backend-metal/emu,backend-metal -am test \
        -Dtest='MetalConformanceTest,MetalEmulatorTest' -Dsurefire.failIfNoSpecifiedTests=false
done
echo "emulator race check passed: ${orders[*]}"
