// The kernels of backend-cuda/kernels compiled as host C++ for the emulated CUDA device (see cuda_emu.h), and the
// emulator's self-test kernels. Nothing here names a kernel: the build (backend-cuda/emu/fake-driver/build.sh) writes
//   cuda_kernel_sources.inc   an #include of every backend-cuda/kernels/*.cu
//   cuda_kernel_registry.inc  a CUDA_EMU_KERNEL(name) line for every entry point, found by preprocessing this file
//                             with -DGOSS_CUDA_EMU_LIST (each __global__ then reads CUDA_EMU_ENTRY in the output,
//                             entry points made by macros such as dense.cu's included)
#include "cuda_emu.h"

#include "cuda_kernel_sources.inc"
#include "emu_selftest.cu"

#ifndef GOSS_CUDA_EMU_LIST
#include "cuda_kernel_registry.inc"
#endif
