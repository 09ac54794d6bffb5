/*
 * goss_metal.h — the plain C ABI between goss-gpu's Java Metal backend (Panama FFM) and Metal.
 *
 * Two implementations exist:
 *   backend-metal/shim/goss_metal.m        the real one, Objective-C on macOS (libgoss_metal.dylib)
 *   backend-metal/emu/goss_metal_emu.cpp  an emulated device for Linux CI (libgoss_metal_emu.so) that runs
 *                                    the .metal kernels compiled as C++ on the CPU
 *
 * Conventions:
 *   - Every object is an opaque handle; every create/new function has a matching release.
 *   - Functions that can fail return NULL or a non-zero int; goss_mtl_last_error() then describes the
 *     failure (thread-local, valid until the next failing call on that thread).
 *   - A command buffer records dispatches in order. Dispatches within one command buffer see each
 *     other's writes (one serial compute encoder). Sizes are in threadgroups (grid) and threads per
 *     threadgroup, like -[MTLComputeCommandEncoder dispatchThreadgroups:threadsPerThreadgroup:].
 *   - All sizes are bytes unless said otherwise.
 */
#ifndef GOSS_METAL_H
#define GOSS_METAL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct goss_mtl_device   goss_mtl_device;
typedef struct goss_mtl_queue    goss_mtl_queue;
typedef struct goss_mtl_library  goss_mtl_library;
typedef struct goss_mtl_pipeline goss_mtl_pipeline;
typedef struct goss_mtl_buffer   goss_mtl_buffer;
typedef struct goss_mtl_cmd      goss_mtl_cmd;

#define GOSS_MTL_ABI_VERSION 1

/* Storage modes for goss_mtl_buffer_new. */
#define GOSS_MTL_STORAGE_SHARED  0  /* CPU-visible (contents() is valid) */
#define GOSS_MTL_STORAGE_PRIVATE 1  /* GPU-only (contents() is NULL; fill it with goss_mtl_cmd_copy) */

/* ABI version of the loaded library; the Java side checks it equals GOSS_MTL_ABI_VERSION. */
int32_t goss_mtl_abi_version(void);

/* Last error of this thread, or "" when none. Never NULL. */
const char *goss_mtl_last_error(void);

/* ---- device and queue ---------------------------------------------------------------------- */
/* The system default device, or NULL (no Metal device). */
goss_mtl_device *goss_mtl_device_create(void);
/* Device name (e.g. "Apple M2 Max" or "goss emulated Metal device (CPU)"); owned by the device. */
const char *goss_mtl_device_name(goss_mtl_device *dev);
/* recommendedMaxWorkingSetSize: the memory the device should use. */
uint64_t goss_mtl_device_memory(goss_mtl_device *dev);
/* 1 when the device is the emulator (results are exact CPU float arithmetic), else 0. */
int32_t goss_mtl_device_is_emulated(goss_mtl_device *dev);
void goss_mtl_device_release(goss_mtl_device *dev);

goss_mtl_queue *goss_mtl_queue_create(goss_mtl_device *dev);
void goss_mtl_queue_release(goss_mtl_queue *q);

/* ---- libraries and pipelines ----------------------------------------------------------------- */
/* Compiles Metal source (the emulator accepts the source of a library it was built with: it checks that
 * every kernel the source declares is one it has compiled in). */
goss_mtl_library *goss_mtl_library_from_source(goss_mtl_device *dev, const char *source);
/* Loads a precompiled .metallib from a file. */
goss_mtl_library *goss_mtl_library_from_file(goss_mtl_device *dev, const char *path);
void goss_mtl_library_release(goss_mtl_library *lib);

/* A compute pipeline for kernel function `name`, or NULL when the library has no such function. */
goss_mtl_pipeline *goss_mtl_pipeline_create(goss_mtl_library *lib, const char *name);
/* maxTotalThreadsPerThreadgroup of the pipeline. */
uint32_t goss_mtl_pipeline_max_threads(goss_mtl_pipeline *p);
/* threadExecutionWidth (the simdgroup width: 32 on Apple GPUs and in the emulator). */
uint32_t goss_mtl_pipeline_simd_width(goss_mtl_pipeline *p);
void goss_mtl_pipeline_release(goss_mtl_pipeline *p);

/* ---- buffers --------------------------------------------------------------------------------- */
goss_mtl_buffer *goss_mtl_buffer_new(goss_mtl_device *dev, uint64_t length, int32_t storage);
/* Wraps host memory without copying (newBufferWithBytesNoCopy): `ptr` and `length` must be multiples of
 * the page size; the memory must outlive the buffer. */
goss_mtl_buffer *goss_mtl_buffer_wrap(goss_mtl_device *dev, void *ptr, uint64_t length);
/* The page size that goss_mtl_buffer_wrap needs pointers and lengths aligned to. */
uint64_t goss_mtl_page_size(void);
/* CPU address of a shared buffer, NULL for a private one. */
void *goss_mtl_buffer_contents(goss_mtl_buffer *b);
uint64_t goss_mtl_buffer_length(goss_mtl_buffer *b);
void goss_mtl_buffer_release(goss_mtl_buffer *b);

/* ---- command buffers --------------------------------------------------------------------------- */
goss_mtl_cmd *goss_mtl_cmd_begin(goss_mtl_queue *q);
void goss_mtl_cmd_set_pipeline(goss_mtl_cmd *c, goss_mtl_pipeline *p);
/* Binds `b` at `offset` to [[buffer(index)]]. */
void goss_mtl_cmd_set_buffer(goss_mtl_cmd *c, uint32_t index, goss_mtl_buffer *b, uint64_t offset);
/* Copies `length` (≤ 4096) bytes as [[buffer(index)]] (setBytes: small constant parameters). */
void goss_mtl_cmd_set_bytes(goss_mtl_cmd *c, uint32_t index, const void *bytes, uint64_t length);
/* Dynamic threadgroup memory for [[threadgroup(index)]]. */
void goss_mtl_cmd_set_threadgroup_memory(goss_mtl_cmd *c, uint32_t index, uint32_t length);
/* Records a dispatch of groups_x·groups_y·groups_z threadgroups of threads_x·threads_y·threads_z threads
 * with the current pipeline and bindings (bindings persist to later dispatches, as in Metal). */
int32_t goss_mtl_cmd_dispatch(goss_mtl_cmd *c, uint32_t groups_x, uint32_t groups_y, uint32_t groups_z,
                              uint32_t threads_x, uint32_t threads_y, uint32_t threads_z);
/* Records a buffer-to-buffer copy (blit), ordered after the dispatches recorded before it. Like a Metal
 * blit encoder it ends the current compute encoding: set the pipeline and bindings again afterwards. */
int32_t goss_mtl_cmd_copy(goss_mtl_cmd *c, goss_mtl_buffer *src, uint64_t src_offset,
                          goss_mtl_buffer *dst, uint64_t dst_offset, uint64_t length);
/* Commits and waits; 0 on success, non-zero with goss_mtl_last_error() set when a command failed. */
int32_t goss_mtl_cmd_commit_wait(goss_mtl_cmd *c);
/* GPU seconds of a completed command buffer (GPUEndTime − GPUStartTime); wall time in the emulator. */
double goss_mtl_cmd_gpu_seconds(goss_mtl_cmd *c);
void goss_mtl_cmd_release(goss_mtl_cmd *c);

#ifdef __cplusplus
}
#endif
#endif
