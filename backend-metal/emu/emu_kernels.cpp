// The kernels of backend-metal/kernels compiled as C++ for the emulated device (see metal_emu.h).
#define GOSS_METAL_EMU 1
#include "metal_emu.h"
#include "goss.metal"
#include "emu_selftest.metal"
// one EMU_REGISTER(name) per KERNEL(name) line of the files above, written by build.sh
#include "metal_kernel_registry.inc"
