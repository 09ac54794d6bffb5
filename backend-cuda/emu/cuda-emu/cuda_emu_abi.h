/* cuda_emu_abi.h — the C interface of the emulated CUDA device, called by the fake driver
 * (backend-cuda/emu/fake-driver/fakecuda.c) and by the emulator's self-test. */
#ifndef GOSS_CUDA_EMU_ABI_H
#define GOSS_CUDA_EMU_ABI_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GOSS_CUEMU_MAX_PARAMS 32

/* Looks a kernel up by its extern "C" name: 0 and its parameter count and sizes, or -1 when the emulator has no
 * kernel of that name. sizes must hold GOSS_CUEMU_MAX_PARAMS entries. */
int goss_cuemu_kernel(const char *name, int *nparams, size_t *sizes);

/* Runs one launch to completion (kernelParams as cuLaunchKernel takes them). 0 on success; otherwise the error
 * (naming the kernel) is printed on stderr, is returned by goss_cuemu_last_error, and the result is -1. */
int goss_cuemu_launch(const char *name, const unsigned grid[3], const unsigned block[3], unsigned sharedMemBytes,
                      void **kernelParams);

const char *goss_cuemu_last_error(void);

#ifdef __cplusplus
}
#endif
#endif
