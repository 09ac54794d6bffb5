// The kernels of kernels/metal compiled as C++ for the emulated device (see metal_emu.h).
#define GOSS_METAL_EMU 1
#include "metal_emu.h"
#include "goss.metal"
#include "emu_selftest.metal"
