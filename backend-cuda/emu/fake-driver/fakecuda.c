/*
 * A fake CUDA driver for testing goss-gpu on a machine without a GPU: "device" memory is host memory,
 * streams run everything at once, PTX is checked for the entry point but not compiled. cuLaunchKernel
 * (and cuGraphLaunch, replaying captured launches) runs the REAL kernel source of backend-cuda/kernels, compiled
 * for the host as C++ under the CUDA emulator (backend-cuda/emu/cuda-emu: fibers per thread, real __syncthreads
 * and warp-shuffle rendezvous); a kernel the emulator reports (divergent barrier, bad shuffle mask)
 * fails the launch with CUDA_ERROR_LAUNCH_FAILED and a message on stderr. It checks what it is given
 * (launch dimensions, JIT option values, kernel names and parameter sizes) and fails like the driver would.
 * A kernel's parameters are its buffers (8-byte pointers) and one params struct by value (backend-cuda/kernels/README.md);
 * each launch copies them, at the sizes the emulator's registry gives, into its node (MAX_PARAM_BYTES a parameter).
 *
 * It is compiled against the toolkit's own cuda.h, so the C compiler checks every prototype, and the
 * header's macros give each function the versioned symbol name a real CUDA 13 libcuda exports
 * (cuMemAlloc -> cuMemAlloc_v2, cuEventElapsedTime -> cuEventElapsedTime_v2, ...). What the Java
 * bindings pass therefore goes through the same symbols and C types as with the real driver.
 *
 * Built by build.sh (the cuda-emu module runs it); run the CUDA tests against it with
 * backend-cuda/emu/fake-driver/test-with-fake-driver.sh. GOSS_EMU_PROFILE=1 prints, at exit, each kernel's launches and
 * emulated seconds (where a slow emulated test spends its time).
 */
#include <cuda.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_emu_abi.h"

#define MAX_PARAMS GOSS_CUEMU_MAX_PARAMS
#define MAX_NODES 4096 /* a captured decode step: ~10 launches per layer */
/* The largest parameter taken (a params struct by value: a real driver takes up to 4 KiB of parameters in all; these
 * kernels' structs are a few dozen bytes), and the bytes of one launch's parameters, each at a multiple of 8. */
#define MAX_PARAM_BYTES 256
#define NODE_PARAM_BYTES 512

struct CUctx_st { int dummy; };
struct CUmod_st { char *ptx; };
/* maxDynamicShared: what cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) allowed; a real device refuses more than
 * 48 KiB of dynamic shared memory per launch without that opt-in. */
/* offsets: where each parameter's bytes sit in a node's values. */
struct CUfunc_st { char name[64]; int nparams; size_t sizes[MAX_PARAMS], offsets[MAX_PARAMS]; int maxDynamicShared; };
struct node { CUfunction f; unsigned grid[3], block[3], shared; _Alignas(8) unsigned char values[NODE_PARAM_BYTES]; };
struct CUgraph_st { int n; struct node nodes[MAX_NODES]; };
struct CUgraphExec_st { int n; struct node nodes[]; }; /* the graph's n nodes */
struct CUstream_st { int capturing; CUgraph graph; };
struct CUevent_st { double ms; };

static struct CUctx_st the_context;
static int initialised;

/* What the fake reports, as a real driver and GPU would: GOSS_FAKE_CUDA_DRIVER_VERSION (cuDriverGetVersion encoding,
 * default 13000) and GOSS_FAKE_CUDA_CC (compute capability as 75/80/90, default 90), read at cuInit; tests change them
 * in-process with goss_fake_cuda_configure. Module loads then fail as on such a driver and GPU: PTX of an ISA newer
 * than the driver's CUDA version with CUDA_ERROR_UNSUPPORTED_PTX_VERSION, PTX for a newer target with
 * CUDA_ERROR_INVALID_PTX; the opt-in shared memory per block follows the compute capability. */
static int driver_version = 13000, compute_capability = 90;

__attribute__((visibility("default"))) void goss_fake_cuda_configure(int driverVersion, int computeCapability) {
    driver_version = driverVersion;
    compute_capability = computeCapability;
}

static int env_int(const char *name, int fallback) {
    const char *v = getenv(name);
    return v && *v ? atoi(v) : fallback;
}

/* The newest PTX ISA (major*10+minor) a driver of this CUDA version JIT-compiles (NVIDIA's PTX ISA release history). */
static int max_isa(int cuda) {
    static const int table[][2] = { {13010, 91}, {13000, 90}, {12090, 88}, {12080, 87}, {12070, 86}, {12050, 85}, {12040, 84},
        {12030, 83}, {12020, 82}, {12010, 81}, {12000, 80}, {11080, 78}, {11070, 77}, {11060, 76}, {11050, 75}, {11040, 74},
        {11030, 73}, {11020, 72}, {11010, 71}, {11000, 70}, {10020, 65}, {10010, 64}, {10000, 63} };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) if (cuda >= table[i][0]) return table[i][1];
    return 0;
}

/* Largest dynamic shared memory per block after opt-in, by compute capability (CUDA programming guide). */
static int max_shared_optin(void) {
    switch (compute_capability) {
        case 75: return 64 * 1024;
        case 80: return 163 * 1024;
        case 86: case 89: return 99 * 1024;
        default: return 227 * 1024;
    }
}

CUresult CUDAAPI cuGetErrorName(CUresult error, const char **pStr) {
    switch (error) {
        case CUDA_SUCCESS: *pStr = "CUDA_SUCCESS"; return CUDA_SUCCESS;
        case CUDA_ERROR_INVALID_VALUE: *pStr = "CUDA_ERROR_INVALID_VALUE"; return CUDA_SUCCESS;
        case CUDA_ERROR_OUT_OF_MEMORY: *pStr = "CUDA_ERROR_OUT_OF_MEMORY"; return CUDA_SUCCESS;
        case CUDA_ERROR_NOT_INITIALIZED: *pStr = "CUDA_ERROR_NOT_INITIALIZED"; return CUDA_SUCCESS;
        case CUDA_ERROR_INVALID_PTX: *pStr = "CUDA_ERROR_INVALID_PTX"; return CUDA_SUCCESS;
        case CUDA_ERROR_NOT_FOUND: *pStr = "CUDA_ERROR_NOT_FOUND"; return CUDA_SUCCESS;
        case CUDA_ERROR_INVALID_HANDLE: *pStr = "CUDA_ERROR_INVALID_HANDLE"; return CUDA_SUCCESS;
        case CUDA_ERROR_INVALID_DEVICE: *pStr = "CUDA_ERROR_INVALID_DEVICE"; return CUDA_SUCCESS;
        case CUDA_ERROR_LAUNCH_FAILED: *pStr = "CUDA_ERROR_LAUNCH_FAILED"; return CUDA_SUCCESS;
        case CUDA_ERROR_UNSUPPORTED_PTX_VERSION: *pStr = "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"; return CUDA_SUCCESS;
        default: *pStr = NULL; return CUDA_ERROR_INVALID_VALUE;
    }
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char **pStr) {
    switch (error) {
        case CUDA_SUCCESS: *pStr = "no error"; return CUDA_SUCCESS;
        case CUDA_ERROR_INVALID_VALUE: *pStr = "invalid argument"; return CUDA_SUCCESS;
        case CUDA_ERROR_OUT_OF_MEMORY: *pStr = "out of memory"; return CUDA_SUCCESS;
        case CUDA_ERROR_NOT_INITIALIZED: *pStr = "initialization error"; return CUDA_SUCCESS;
        case CUDA_ERROR_INVALID_PTX: *pStr = "a PTX JIT compilation failed"; return CUDA_SUCCESS;
        case CUDA_ERROR_NOT_FOUND: *pStr = "named symbol not found"; return CUDA_SUCCESS;
        case CUDA_ERROR_INVALID_HANDLE: *pStr = "invalid resource handle"; return CUDA_SUCCESS;
        case CUDA_ERROR_INVALID_DEVICE: *pStr = "invalid device ordinal"; return CUDA_SUCCESS;
        case CUDA_ERROR_LAUNCH_FAILED: *pStr = "unspecified launch failure"; return CUDA_SUCCESS;
        case CUDA_ERROR_UNSUPPORTED_PTX_VERSION: *pStr = "the provided PTX was compiled with an unsupported toolchain."; return CUDA_SUCCESS;
        default: *pStr = NULL; return CUDA_ERROR_INVALID_VALUE;
    }
}

#define REQUIRE_INIT() do { if (!initialised) return CUDA_ERROR_NOT_INITIALIZED; } while (0)

CUresult CUDAAPI cuInit(unsigned int Flags) {
    if (Flags != 0) return CUDA_ERROR_INVALID_VALUE;
    if (!initialised) {
        driver_version = env_int("GOSS_FAKE_CUDA_DRIVER_VERSION", driver_version);
        compute_capability = env_int("GOSS_FAKE_CUDA_CC", compute_capability);
    }
    initialised = 1;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDriverGetVersion(int *v) { *v = driver_version; return CUDA_SUCCESS; }
CUresult CUDAAPI cuDeviceGetCount(int *count) { REQUIRE_INIT(); *count = 1; return CUDA_SUCCESS; }
CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal) {
    REQUIRE_INIT();
    if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
    *device = 0;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev) {
    if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
    strncpy(name, "goss-gpu fake CUDA driver", (size_t) len);
    name[len - 1] = 0;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev) {
    if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
    switch (attrib) {
        case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *pi = compute_capability / 10; break;
        case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *pi = compute_capability % 10; break;
        case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *pi = 4; break;
        case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *pi = 1000000; break;
        case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: *pi = 256; break;
        case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *pi = 1500000; break;
        case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = 1024; break;
        case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *pi = max_shared_optin(); break;
        case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *pi = 1 << 20; break;
        case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *pi = 32; break;
        default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceTotalMem(size_t *bytes, CUdevice dev) { if (dev != 0) return CUDA_ERROR_INVALID_DEVICE; *bytes = (size_t) 1 << 30; return CUDA_SUCCESS; }
CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev) { REQUIRE_INIT(); if (dev != 0) return CUDA_ERROR_INVALID_DEVICE; *pctx = &the_context; return CUDA_SUCCESS; }
CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev) { return dev == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE; }
CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx) { return ctx == &the_context || ctx == NULL ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE; }
CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx) { *pctx = &the_context; return CUDA_SUCCESS; }
CUresult CUDAAPI cuCtxSynchronize(void) { return CUDA_SUCCESS; }
/* What cuMemGetInfo reports as free (1 GiB device, half of it free); tests shrink it in-process with
 * goss_fake_cuda_set_free_memory to reach the "does not fit on the device" paths without a large model. */
static size_t free_memory = (size_t) 1 << 29;

__attribute__((visibility("default"))) void goss_fake_cuda_set_free_memory(size_t bytes) { free_memory = bytes; }

CUresult CUDAAPI cuMemGetInfo(size_t *free_, size_t *total) { *free_ = free_memory; *total = (size_t) 1 << 30; return CUDA_SUCCESS; }

CUresult CUDAAPI cuStreamCreate(CUstream *phStream, unsigned int Flags) {
    if (Flags != CU_STREAM_NON_BLOCKING && Flags != CU_STREAM_DEFAULT) return CUDA_ERROR_INVALID_VALUE;
    *phStream = calloc(1, sizeof(struct CUstream_st));
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuStreamSynchronize(CUstream s) { return s ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE; }
CUresult CUDAAPI cuStreamWaitEvent(CUstream s, CUevent e, unsigned int Flags) { (void) Flags; return s && e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE; }
CUresult CUDAAPI cuStreamDestroy(CUstream s) { if (!s) return CUDA_ERROR_INVALID_HANDLE; free(s); return CUDA_SUCCESS; }

static double now_ms(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
CUresult CUDAAPI cuEventCreate(CUevent *e, unsigned int Flags) { (void) Flags; *e = calloc(1, sizeof(struct CUevent_st)); return CUDA_SUCCESS; }
CUresult CUDAAPI cuEventRecord(CUevent e, CUstream s) { (void) s; if (!e) return CUDA_ERROR_INVALID_HANDLE; e->ms = now_ms(); return CUDA_SUCCESS; }
CUresult CUDAAPI cuEventSynchronize(CUevent e) { return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE; }
CUresult CUDAAPI cuEventElapsedTime(float *ms, CUevent a, CUevent b) { if (!a || !b) return CUDA_ERROR_INVALID_HANDLE; *ms = (float) (b->ms - a->ms); return CUDA_SUCCESS; }
CUresult CUDAAPI cuEventDestroy(CUevent e) { free(e); return CUDA_SUCCESS; }

CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions, CUjit_option *options, void **optionValues) {
    REQUIRE_INIT();
    char *errorLog = NULL;
    size_t errorLogSize = 0;
    for (unsigned i = 0; i < numOptions; i++) {
        if (options[i] == CU_JIT_ERROR_LOG_BUFFER) errorLog = optionValues[i];
        if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) errorLogSize = (size_t) (uintptr_t) optionValues[i];
        if (options[i] == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES && ((uintptr_t) optionValues[i] == 0 || (uintptr_t) optionValues[i] > (1u << 24)))
            return CUDA_ERROR_INVALID_VALUE;
    }
    if (errorLog && (errorLogSize == 0 || errorLogSize > (1u << 24))) return CUDA_ERROR_INVALID_VALUE;
    const char *ptx = image;
    const char *version = strstr(ptx, ".version "), *target = strstr(ptx, ".target sm_");
    if (!version || !target || strstr(ptx, "this is not ptx")) {
        if (errorLog) {
            strncpy(errorLog, "ptxas application ptx input, line 5; error   : syntax error\nptxas fatal   : Ptx assembly aborted due to errors", errorLogSize);
            errorLog[errorLogSize - 1] = 0;
        }
        return CUDA_ERROR_INVALID_PTX;
    }
    int isaMajor = 0, isaMinor = 0, sm = 0;
    if (sscanf(version, ".version %d.%d", &isaMajor, &isaMinor) != 2 || sscanf(target, ".target sm_%d", &sm) != 1)
        return CUDA_ERROR_INVALID_PTX;
    if (isaMajor * 10 + isaMinor > max_isa(driver_version)) return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
    if (sm > compute_capability) {
        if (errorLog) {
            snprintf(errorLog, errorLogSize, "ptxas fatal   : SM version specified by .target is higher than default SM version assumed");
        }
        return CUDA_ERROR_INVALID_PTX;
    }
    *module = malloc(sizeof(struct CUmod_st));
    (*module)->ptx = strdup(ptx);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name) {
    if (!hmod) return CUDA_ERROR_INVALID_HANDLE;
    char entry[96];
    snprintf(entry, sizeof entry, ".entry %s(", name);
    if (!strstr(hmod->ptx, entry)) return CUDA_ERROR_NOT_FOUND;
    int nparams;
    size_t sizes[GOSS_CUEMU_MAX_PARAMS];
    if (goss_cuemu_kernel(name, &nparams, sizes) != 0) {
        fprintf(stderr, "fake CUDA driver: kernel %s is in the PTX but not compiled into the emulator (backend-cuda/emu/cuda-emu/cuda_kernels.cpp: is its file in backend-cuda/kernels?)\n", name);
        return CUDA_ERROR_NOT_FOUND;
    }
    if (nparams > MAX_PARAMS) return CUDA_ERROR_NOT_FOUND;
    struct CUfunc_st *f = calloc(1, sizeof *f);
    strncpy(f->name, name, sizeof f->name - 1);
    f->nparams = nparams;
    f->maxDynamicShared = 48 * 1024;
    size_t at = 0;
    for (int i = 0; i < nparams; i++) {
        if (sizes[i] == 0 || sizes[i] > MAX_PARAM_BYTES || at + sizes[i] > NODE_PARAM_BYTES) {
            fprintf(stderr, "fake CUDA driver: kernel %s: parameter %d is %zu bytes (%zu before it); this fake takes parameters "
                    "of 1..%d bytes, %d in all (backend-cuda/emu/fake-driver/fakecuda.c: MAX_PARAM_BYTES, NODE_PARAM_BYTES)\n",
                    name, i, sizes[i], at, MAX_PARAM_BYTES, NODE_PARAM_BYTES);
            free(f);
            return CUDA_ERROR_INVALID_VALUE;
        }
        f->sizes[i] = sizes[i];
        f->offsets[i] = at;
        at += (sizes[i] + 7) & ~(size_t) 7;
    }
    *hfunc = f;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuModuleUnload(CUmodule hmod) { if (!hmod) return CUDA_ERROR_INVALID_HANDLE; free(hmod->ptx); free(hmod); return CUDA_SUCCESS; }
CUresult CUDAAPI cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction f) {
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    if (attrib == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK) { *pi = 1024; return CUDA_SUCCESS; }
    if (attrib == CU_FUNC_ATTRIBUTE_NUM_REGS) { *pi = 24; return CUDA_SUCCESS; }
    return CUDA_ERROR_INVALID_VALUE;
}
CUresult CUDAAPI cuFuncSetAttribute(CUfunction f, CUfunction_attribute attrib, int value) {
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    if (attrib == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
        if (value < 0 || value > max_shared_optin()) return CUDA_ERROR_INVALID_VALUE;
        f->maxDynamicShared = value > 48 * 1024 ? value : 48 * 1024;
    }
    return CUDA_SUCCESS;
}

/* GOSS_EMU_PROFILE: launches and wall seconds per kernel name, printed at exit. */
#define MAX_PROFILED 64
static struct { char name[64]; long launches; double seconds; } profile[MAX_PROFILED];
static int profiled, profiling = -1; /* profiling -1: GOSS_EMU_PROFILE not read yet */

static void print_profile(void) {
    double total = 0;
    for (int i = 0; i < profiled; i++) total += profile[i].seconds;
    fprintf(stderr, "fake CUDA profile: %.1f s in kernels\n", total);
    for (int i = 0; i < profiled; i++)
        fprintf(stderr, "  %-28s %8ld launches %8.2f s\n", profile[i].name, profile[i].launches, profile[i].seconds);
}

static void count_launch(const char *name, double seconds) {
    int i = 0;
    while (i < profiled && strcmp(profile[i].name, name) != 0) i++;
    if (i == profiled) {
        if (profiled == MAX_PROFILED) return;
        snprintf(profile[profiled++].name, sizeof profile[0].name, "%s", name);
    }
    profile[i].launches++;
    profile[i].seconds += seconds;
}

/* Runs a launch (direct or replayed from a graph) with the real kernel source, emulated on the CPU. */
static CUresult run_node(const struct node *n) {
    void *params[MAX_PARAMS];
    for (int i = 0; i < n->f->nparams; i++) params[i] = (void *) (n->values + n->f->offsets[i]);
    if (profiling < 0) {
        profiling = env_int("GOSS_EMU_PROFILE", 0) != 0;
        if (profiling) atexit(print_profile);
    }
    double t0 = profiling ? now_ms() : 0;
    int rc = goss_cuemu_launch(n->f->name, n->grid, n->block, n->shared, params);
    if (profiling) count_launch(n->f->name, (now_ms() - t0) / 1e3);
    return rc == 0 ? CUDA_SUCCESS : CUDA_ERROR_LAUNCH_FAILED;
}

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by,
                                unsigned int bz, unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra) {
    if (!f || !hStream) return CUDA_ERROR_INVALID_HANDLE;
    if (extra != NULL || kernelParams == NULL) return CUDA_ERROR_INVALID_VALUE;
    if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0 || (size_t) bx * by * bz > 1024 || (int) sharedMemBytes > max_shared_optin())
        return CUDA_ERROR_INVALID_VALUE;
    if ((int) sharedMemBytes > f->maxDynamicShared) {
        fprintf(stderr, "fake CUDA: kernel %s asks for %u bytes of dynamic shared memory; above 48 KiB needs "
                "cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) first\n", f->name, sharedMemBytes);
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (strcmp(f->name, "rmsnorm") == 0 && (bx % 32 != 0 || gy != 1 || gz != 1 || by != 1 || bz != 1)) return CUDA_ERROR_INVALID_VALUE;
    struct node n = { f, { gx, gy, gz }, { bx, by, bz }, sharedMemBytes, { 0 } };
    for (int i = 0; i < f->nparams; i++) memcpy(n.values + f->offsets[i], kernelParams[i], f->sizes[i]);
    if (hStream->capturing) {
        if (hStream->graph->n == MAX_NODES) return CUDA_ERROR_OUT_OF_MEMORY;
        hStream->graph->nodes[hStream->graph->n++] = n;
        return CUDA_SUCCESS;
    }
    return run_node(&n);
}

CUresult CUDAAPI cuMemAlloc(CUdeviceptr *dptr, size_t bytesize) {
    REQUIRE_INIT();
    if (bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
    if (bytesize > ((size_t) 1 << 34)) return CUDA_ERROR_OUT_OF_MEMORY;
    void *p = malloc(bytesize);
    if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
    memset(p, 0xA5, bytesize); /* uninitialised device memory is garbage, not zero */
    *dptr = (CUdeviceptr) (uintptr_t) p;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemFree(CUdeviceptr dptr) { free((void *) (uintptr_t) dptr); return CUDA_SUCCESS; }
#define DEV(p) ((void *) (uintptr_t) (p))
CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t n) { memcpy(DEV(dst), src, n); return CUDA_SUCCESS; }
CUresult CUDAAPI cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t n) { memcpy(dst, DEV(src), n); return CUDA_SUCCESS; }
CUresult CUDAAPI cuMemcpyDtoD(CUdeviceptr dst, CUdeviceptr src, size_t n) { memmove(DEV(dst), DEV(src), n); return CUDA_SUCCESS; }
/* Page-locked host memory (cuMemHostAlloc) still allocated, so that tests see which async copies use it and that closing
 * a backend frees it: goss_fake_cuda_host_allocations (live allocations) and goss_fake_cuda_pinned_copies (async copies
 * whose host side lies inside one). A free of a pointer not allocated so fails as the driver would. */
#define MAX_HOST_ALLOCS 256
static struct { const char *p; size_t n; } host_allocs[MAX_HOST_ALLOCS];
static int host_alloc_count;
static long pinned_copies;
static pthread_mutex_t host_lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((visibility("default"))) int goss_fake_cuda_host_allocations(void) {
    pthread_mutex_lock(&host_lock);
    int n = host_alloc_count;
    pthread_mutex_unlock(&host_lock);
    return n;
}
__attribute__((visibility("default"))) long goss_fake_cuda_pinned_copies(void) {
    pthread_mutex_lock(&host_lock);
    long n = pinned_copies;
    pthread_mutex_unlock(&host_lock);
    return n;
}

/* Counts an async copy of n bytes at host address p when they lie inside a page-locked allocation. */
static void count_pinned(const void *p, size_t n) {
    const char *c = p;
    pthread_mutex_lock(&host_lock);
    for (int i = 0; i < host_alloc_count; i++)
        if (c >= host_allocs[i].p && c + n <= host_allocs[i].p + host_allocs[i].n) { pinned_copies++; break; }
    pthread_mutex_unlock(&host_lock);
}

CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t n, CUstream s) { if (!s) return CUDA_ERROR_INVALID_HANDLE; count_pinned(src, n); memcpy(DEV(dst), src, n); return CUDA_SUCCESS; }
CUresult CUDAAPI cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t n, CUstream s) { if (!s) return CUDA_ERROR_INVALID_HANDLE; count_pinned(dst, n); memcpy(dst, DEV(src), n); return CUDA_SUCCESS; }
CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) { if (!s) return CUDA_ERROR_INVALID_HANDLE; memmove(DEV(dst), DEV(src), n); return CUDA_SUCCESS; }
CUresult CUDAAPI cuMemsetD8(CUdeviceptr dst, unsigned char uc, size_t n) { memset(DEV(dst), uc, n); return CUDA_SUCCESS; }
CUresult CUDAAPI cuMemsetD32(CUdeviceptr dst, unsigned int ui, size_t n) { unsigned int *p = DEV(dst); for (size_t i = 0; i < n; i++) p[i] = ui; return CUDA_SUCCESS; }
CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dst, unsigned char uc, size_t n, CUstream s) { if (!s) return CUDA_ERROR_INVALID_HANDLE; return cuMemsetD8(dst, uc, n); }
CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr dst, unsigned int ui, size_t n, CUstream s) { if (!s) return CUDA_ERROR_INVALID_HANDLE; return cuMemsetD32(dst, ui, n); }
CUresult CUDAAPI cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags) {
    REQUIRE_INIT();
    if (bytesize == 0 || (Flags & ~(unsigned) (CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED)))
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&host_lock);
    void *p = host_alloc_count < MAX_HOST_ALLOCS ? malloc(bytesize) : NULL;
    if (p) {
        host_allocs[host_alloc_count].p = p;
        host_allocs[host_alloc_count++].n = bytesize;
    }
    pthread_mutex_unlock(&host_lock);
    *pp = p;
    return p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
CUresult CUDAAPI cuMemFreeHost(void *p) {
    pthread_mutex_lock(&host_lock);
    int found = 0;
    for (int i = 0; i < host_alloc_count; i++)
        if (host_allocs[i].p == p) {
            host_allocs[i] = host_allocs[--host_alloc_count];
            found = 1;
            break;
        }
    pthread_mutex_unlock(&host_lock);
    if (!found) return CUDA_ERROR_INVALID_VALUE;
    free(p);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamBeginCapture(CUstream s, CUstreamCaptureMode mode) {
    if (!s) return CUDA_ERROR_INVALID_HANDLE;
    if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL && mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL && mode != CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    s->capturing = 1;
    s->graph = calloc(1, sizeof(struct CUgraph_st));
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuStreamEndCapture(CUstream s, CUgraph *phGraph) {
    if (!s || !s->capturing) return CUDA_ERROR_INVALID_VALUE;
    s->capturing = 0;
    *phGraph = s->graph;
    s->graph = NULL;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags) {
    if (!hGraph || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    *phGraphExec = malloc(sizeof(struct CUgraphExec_st) + (size_t) hGraph->n * sizeof(struct node));
    if (!*phGraphExec) return CUDA_ERROR_OUT_OF_MEMORY;
    (*phGraphExec)->n = hGraph->n;
    memcpy((*phGraphExec)->nodes, hGraph->nodes, (size_t) hGraph->n * sizeof(struct node));
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGraphLaunch(CUgraphExec e, CUstream s) {
    if (!e || !s) return CUDA_ERROR_INVALID_HANDLE;
    for (int i = 0; i < e->n; i++) {
        CUresult r = run_node(&e->nodes[i]);
        if (r != CUDA_SUCCESS) return r;
    }
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec e) { free(e); return CUDA_SUCCESS; }
CUresult CUDAAPI cuGraphDestroy(CUgraph g) { free(g); return CUDA_SUCCESS; }
