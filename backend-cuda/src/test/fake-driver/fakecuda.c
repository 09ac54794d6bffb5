/*
 * A fake CUDA driver for testing goss-gpu's Java layer on a machine without a GPU. NOT a CUDA
 * implementation: "device" memory is host memory, streams run everything at once, PTX is not
 * compiled, and cuLaunchKernel runs C versions of the packaged kernels (add_f32, rmsnorm_f32 and the
 * model ops of ops.cu, walked block by block over the launch grid). It checks what it is given (launch dimensions, JIT option values, kernel
 * parameters) and fails like the driver would.
 *
 * It is compiled against the toolkit's own cuda.h, so the C compiler checks every prototype, and the
 * header's macros give each function the versioned symbol name a real CUDA 13 libcuda exports
 * (cuMemAlloc -> cuMemAlloc_v2, cuEventElapsedTime -> cuEventElapsedTime_v2, ...). What the Java
 * bindings pass therefore goes through the same symbols and C types as with the real driver.
 *
 * Build and run the CUDA tests against it: backend-cuda/src/test/fake-driver/test-with-fake-driver.sh
 */
#include <cuda.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_PARAMS 24
#define MAX_NODES 4096

struct CUctx_st { int dummy; };
struct CUmod_st { char *ptx; };
struct CUfunc_st { char name[64]; int nparams; size_t sizes[MAX_PARAMS]; };
struct node { CUfunction f; unsigned grid[3], block[3]; unsigned char values[MAX_PARAMS][8]; };
struct CUgraph_st { int n; struct node nodes[MAX_NODES]; };
struct CUgraphExec_st { struct CUgraph_st g; };
struct CUstream_st { int capturing; CUgraph graph; };
struct CUevent_st { double ms; };

static struct CUctx_st the_context;
static int initialised;

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
        default: *pStr = NULL; return CUDA_ERROR_INVALID_VALUE;
    }
}

#define REQUIRE_INIT() do { if (!initialised) return CUDA_ERROR_NOT_INITIALIZED; } while (0)

CUresult CUDAAPI cuInit(unsigned int Flags) { if (Flags != 0) return CUDA_ERROR_INVALID_VALUE; initialised = 1; return CUDA_SUCCESS; }
CUresult CUDAAPI cuDriverGetVersion(int *v) { *v = 13000; return CUDA_SUCCESS; }
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
        case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *pi = 9; break;
        case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *pi = 0; break;
        case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *pi = 4; break;
        case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *pi = 1000000; break;
        case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: *pi = 256; break;
        case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *pi = 1500000; break;
        case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = 1024; break;
        case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *pi = 232448; break;
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
CUresult CUDAAPI cuMemGetInfo(size_t *free_, size_t *total) { *free_ = (size_t) 1 << 29; *total = (size_t) 1 << 30; return CUDA_SUCCESS; }

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
    if (!strstr(ptx, ".version") || !strstr(ptx, ".target") || strstr(ptx, "this is not ptx")) {
        if (errorLog) {
            strncpy(errorLog, "ptxas application ptx input, line 5; error   : syntax error\nptxas fatal   : Ptx assembly aborted due to errors", errorLogSize);
            errorLog[errorLogSize - 1] = 0;
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
    struct CUfunc_st *f = calloc(1, sizeof *f);
    strncpy(f->name, name, sizeof f->name - 1);
    if (strcmp(name, "add_f32") == 0) { f->nparams = 4; for (int i = 0; i < 4; i++) f->sizes[i] = 8; }
    else if (strcmp(name, "rmsnorm_f32") == 0) { f->nparams = 5; f->sizes[0] = f->sizes[1] = f->sizes[2] = 8; f->sizes[3] = f->sizes[4] = 4; }
    else {
        /* the model kernels of ops.cu: p = 8-byte pointer, i = int, f = float (see CudaKernelSignaturesTest) */
        static const char *sigs[][2] = {
            {"embed_f32", "ppiip"}, {"linear_f32", "ppipiiip"}, {"rope_f32", "piiipp"},
            {"sdpa_f32", "pppppppipiiiiiif"}, {"kv_store_f32", "ppppipiii"}, {"topk_softmax_f32", "piiipp"},
            {"moe_gate_up", "ppppippppiiiifp"}, {"moe_down", "ppippppiiiip"}, {"argmax_f32", "piip"},
            {"moe_sort", "piipppp"}, {"moe_gate_up_tiled", "ppppipppppppiiifp"}, {"moe_down_tiled", "ppippppppiip"},
            {"moe_combine", "ppiiip"}, {"sdpa_tiled_f32", "pppppppipiiiiiifip"},
            {"sdpa_combine_f32", "ppiiiip"}};
        const char *sig = NULL;
        for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) if (strcmp(name, sigs[i][0]) == 0) sig = sigs[i][1];
        if (!sig || strlen(sig) > MAX_PARAMS) { free(f); return CUDA_ERROR_NOT_FOUND; }
        f->nparams = (int) strlen(sig);
        for (int i = 0; i < f->nparams; i++) f->sizes[i] = sig[i] == 'p' ? 8 : 4;
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
CUresult CUDAAPI cuFuncSetAttribute(CUfunction f, CUfunction_attribute attrib, int value) { (void) attrib; (void) value; return f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE; }

/* ---- ops.cu on the host: block by block over the launch grid, so a launch shape that misses work
 * (or arguments in the wrong order) shows in the results. Same formulas, serial float arithmetic. */
#define PA(i) (*(void **) (void *) v[i])
#define IA(i) (*(const int *) (const void *) v[i])
#define FA(i) (*(const float *) (const void *) v[i])
static const float FP4[16] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f, -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};
static float mx_dot(const unsigned char *codes, const unsigned char *scales, int ggml, size_t row, int cols, const float *x) {
    int nb = cols / 32; float acc = 0.0f;
    for (int b = 0; b < nb; b++) {
        float s = 0.0f; int e;
        if (ggml) {
            const unsigned char *blk = codes + row * (size_t) nb * 17 + (size_t) b * 17;
            for (int q = 0; q < 16; q++) { s = fmaf(FP4[blk[1 + q] & 15], x[b * 32 + q], s); s = fmaf(FP4[blk[1 + q] >> 4], x[b * 32 + 16 + q], s); }
            e = blk[0];
        } else {
            const unsigned char *blk = codes + row * (size_t) (cols / 2) + (size_t) b * 16;
            for (int q = 0; q < 16; q++) { s = fmaf(FP4[blk[q] & 15], x[b * 32 + 2 * q], s); s = fmaf(FP4[blk[q] >> 4], x[b * 32 + 2 * q + 1], s); }
            e = scales[row * (size_t) nb + b];
        }
        acc += ldexpf(s, e - 127);
    }
    return acc;
}
/* One MXFP4 value: element k of row `row` (moe_prefill.cu decodes weights before the dot products). */
static float mx_val(const unsigned char *codes, const unsigned char *scales, int ggml, size_t row, int cols, int k) {
    int nb = cols / 32, b = k / 32, i = k % 32, code, e;
    if (ggml) {
        const unsigned char *blk = codes + row * (size_t) nb * 17 + (size_t) b * 17;
        code = i < 16 ? blk[1 + i] & 15 : blk[1 + i - 16] >> 4; e = blk[0];
    } else {
        unsigned char byte = codes[row * (size_t) (cols / 2) + (size_t) b * 16 + i / 2];
        code = i % 2 ? byte >> 4 : byte & 15; e = scales[row * (size_t) nb + b];
    }
    return ldexpf(FP4[code], e - 127);
}
static void sdpa_one(const float *q, const float *kk, const float *vv, const float *ck, const float *cv, const float *sinks, float *out,
                     int i, int h, int start, int heads, int group, int hd, int kvDim, int slots, int window, float scale);
static void sdpa_state(const float *q, const float *kk, const float *vv, const float *ck, const float *cv, const float *sinks,
                       int i, int h, int start, int heads, int group, int hd, int kvDim, int slots, int window, float scale,
                       float *acc, float *mOut, float *zOut);
/* moe_prefill.cu on the host, block by block: (expert, first place, slots) of work tile `by`, or 0 past ntiles. */
static int moe_tile(const int *offsets, const int *tiles, const int *ntiles, unsigned by, int *e, int *p0, int *n) {
    if ((int) by >= ntiles[0]) return 0;
    *e = tiles[2 * by]; *p0 = tiles[2 * by + 1]; *n = offsets[*e + 1] - *p0; if (*n > 32) *n = 32;
    return 1;
}
static int run_moe_prefill(const struct node *n) {
    const unsigned char (*v)[8] = n->values;
    const char *k = n->f->name;
    unsigned gx = n->grid[0], gy = n->grid[1];
    if (strcmp(k, "moe_sort") == 0) {
        const int *ids = PA(0); int S = IA(1), E = IA(2); int *offsets = PA(3), *order = PA(4), *tiles = PA(5), *ntiles = PA(6);
        int sum = 0, nt = 0; offsets[0] = 0;
        for (int e = 0; e < E; e++) {
            int c = 0; for (int s = 0; s < S; s++) if (ids[s] == e) order[sum + c++] = s;
            for (int b = 0; b < c; b += 32) { tiles[2 * nt] = e; tiles[2 * nt + 1] = sum + b; nt++; }
            sum += c; offsets[e + 1] = sum;
        }
        ntiles[0] = nt;
    } else if (strcmp(k, "moe_gate_up_tiled") == 0) {
        const unsigned char *gc = PA(0), *gs = PA(1), *uc = PA(2), *us = PA(3); int ggml = IA(4);
        const float *gb = PA(5), *ub = PA(6), *x = PA(7); const int *offsets = PA(8), *order = PA(9), *tiles = PA(10), *ntiles = PA(11);
        int K = IA(12), H = IA(13), I = IA(14); float limit = FA(15); float *hout = PA(16);
        for (unsigned by = 0; by < gy; by++) {
            int e, p0, cnt; if (!moe_tile(offsets, tiles, ntiles, by, &e, &p0, &cnt)) continue;
            for (unsigned bx = 0; bx < gx; bx++) for (int u = (int) bx * 32; u < (int) bx * 32 + 32 && u < I; u++) for (int m = 0; m < cnt; m++) {
                int slot = order[p0 + m]; const float *xt = x + (size_t) (slot / K) * H; size_t row = (size_t) e * I + u;
                float a = 0.0f, b = 0.0f;
                for (int c = 0; c < H; c++) { a = fmaf(mx_val(gc, gs, ggml, row, H, c), xt[c], a); b = fmaf(mx_val(uc, us, ggml, row, H, c), xt[c], b); }
                a = fminf(a + gb[row], limit); b = fmaxf(-limit, fminf(b + ub[row], limit));
                hout[(size_t) slot * I + u] = a / (1.0f + expf(-1.702f * a)) * (b + 1.0f);
            }
        }
    } else if (strcmp(k, "moe_down_tiled") == 0) {
        const unsigned char *dc = PA(0), *ds = PA(1); int ggml = IA(2); const float *db = PA(3), *hin = PA(4);
        const int *offsets = PA(5), *order = PA(6), *tiles = PA(7), *ntiles = PA(8); int H = IA(9), I = IA(10); float *yout = PA(11);
        for (unsigned by = 0; by < gy; by++) {
            int e, p0, cnt; if (!moe_tile(offsets, tiles, ntiles, by, &e, &p0, &cnt)) continue;
            for (unsigned bx = 0; bx < gx; bx++) for (int d = (int) bx * 64; d < (int) bx * 64 + 64 && d < H; d++) for (int m = 0; m < cnt; m++) {
                int slot = order[p0 + m]; size_t row = (size_t) e * H + d; float acc = 0.0f;
                for (int c = 0; c < I; c++) acc = fmaf(mx_val(dc, ds, ggml, row, I, c), hin[(size_t) slot * I + c], acc);
                yout[(size_t) slot * H + d] = acc + db[row];
            }
        }
    } else if (strcmp(k, "sdpa_tiled_f32") == 0) {
        const float *q = PA(0), *kk = PA(1), *vv = PA(2), *ck = PA(3), *cv = PA(4), *sinks = PA(5); float *out = PA(6);
        int T = IA(7), start = *(const int *) PA(8), heads = IA(9), group = IA(10), hd = IA(11), kvDim = IA(12), slots = IA(13), window = IA(14);
        float scale = FA(15); int tq = IA(16); float *part = PA(17);
        if (n->grid[2] > 1) {
            /* decode split: split 0 holds the whole row's state (m, Z without the sink's term, unnormalised sums), the
             * others the empty state (S[h], 0, 0); sdpa_combine_f32 then gives the row. The real split logic runs
             * under the CUDA emulator. */
            if (T != 1 || gy != 1) { fprintf(stderr, "fake CUDA driver: sdpa_tiled_f32 splits with T != 1\n"); abort(); }
            for (unsigned z = 0; z < n->grid[2]; z++) for (int h = 0; h < heads; h++) {
                float *pt = part + ((size_t) z * heads + h) * (hd + 2), m, zs;
                if (z == 0) {
                    sdpa_state(q, kk, vv, ck, cv, sinks, 0, h, start, heads, group, hd, kvDim, slots, window, scale, pt + 2, &m, &zs);
                    pt[0] = m; pt[1] = zs - expf(sinks[h] - m);
                } else {
                    pt[0] = sinks[h]; pt[1] = 0.0f; for (int d = 0; d < hd; d++) pt[2 + d] = 0.0f;
                }
            }
            return 1;
        }
        if (n->block[0] != 256 || hd > 128 || tq * group > 16 || (int) gx * group != heads) {
            fprintf(stderr, "fake CUDA driver: sdpa_tiled_f32 launched outside its contract\n");
            abort();
        }
        for (unsigned g = 0; g < gx; g++) for (unsigned by = 0; by < gy; by++)
            for (int i = (int) by * tq; i < (int) by * tq + tq && i < T; i++) for (int h = (int) g * group; h < (int) g * group + group; h++)
                sdpa_one(q, kk, vv, ck, cv, sinks, out, i, h, start, heads, group, hd, kvDim, slots, window, scale);
    } else if (strcmp(k, "sdpa_combine_f32") == 0) {
        const float *part = PA(0), *sinks = PA(1); int T = IA(2), heads = IA(3), hd = IA(4), splits = IA(5); float *out = PA(6);
        size_t stride = (size_t) T * heads * (hd + 2);
        for (unsigned h = 0; h < gx; h++) for (unsigned by = 0; by < gy; by++) for (int i = (int) by; i < T; i += (int) gy) {
            const float *p0 = part + ((size_t) i * heads + h) * (hd + 2);
            float mx = sinks[h], zs;
            for (int z = 0; z < splits; z++) mx = fmaxf(mx, p0[z * stride]);
            zs = expf(sinks[h] - mx);
            for (int z = 0; z < splits; z++) zs = fmaf(p0[z * stride + 1], expf(p0[z * stride] - mx), zs);
            for (int d = 0; d < hd; d++) {
                float a = 0.0f;
                for (int z = 0; z < splits; z++) a = fmaf(p0[z * stride + 2 + d], expf(p0[z * stride] - mx), a);
                out[((size_t) i * heads + h) * hd + d] = a / zs;
            }
        }
    } else if (strcmp(k, "moe_combine") == 0) {
        const float *y = PA(0), *w = PA(1); int T = IA(2), K = IA(3), H = IA(4); float *out = PA(5);
        for (unsigned bx = 0; bx < gx; bx++) for (int t = (int) bx; t < T; t += (int) gx) for (int d = 0; d < H; d++) {
            float acc = 0.0f; for (int j = 0; j < K; j++) acc = fmaf(w[(size_t) t * K + j], y[((size_t) t * K + j) * H + d], acc);
            out[(size_t) t * H + d] = acc;
        }
    } else {
        return 0;
    }
    return 1;
}
/* One (row i, head h) of attention, two passes (max, then sums): the unnormalised sums acc[hd], the max m and
 * Z (with the sink's term). */
static void sdpa_state(const float *q, const float *kk, const float *vv, const float *ck, const float *cv, const float *sinks,
                       int i, int h, int start, int heads, int group, int hd, int kvDim, int slots, int window, float scale,
                       float *acc, float *mOut, float *zOut) {
    for (int c = 0; c < hd; c++) acc[c] = 0.0f;
    int p = start + i, g = h / group, lo = window > 0 ? (p - window + 1 > 0 ? p - window + 1 : 0) : 0;
    const float *qh = q + (size_t) i * heads * hd + (size_t) h * hd;
    float m = sinks[h];
    for (int j = lo; j <= p; j++) {
        const float *kr = j < start ? ck + (size_t) (j % slots) * kvDim + (size_t) g * hd : kk + (size_t) (j - start) * kvDim + (size_t) g * hd;
        float d = 0.0f; for (int c = 0; c < hd; c++) d = fmaf(qh[c], kr[c], d);
        if (d * scale > m) m = d * scale;
    }
    float z = expf(sinks[h] - m);
    for (int j = lo; j <= p; j++) {
        const float *kr = j < start ? ck + (size_t) (j % slots) * kvDim + (size_t) g * hd : kk + (size_t) (j - start) * kvDim + (size_t) g * hd;
        const float *vr = j < start ? cv + (size_t) (j % slots) * kvDim + (size_t) g * hd : vv + (size_t) (j - start) * kvDim + (size_t) g * hd;
        float d = 0.0f; for (int c = 0; c < hd; c++) d = fmaf(qh[c], kr[c], d);
        float e = expf(d * scale - m); z += e;
        for (int c = 0; c < hd; c++) acc[c] = fmaf(e, vr[c], acc[c]);
    }
    *mOut = m;
    *zOut = z;
}
/* ops.cu's sdpa_f32 and sdpa_prefill.cu's sdpa_tiled_f32 for one (row i, head h). */
static void sdpa_one(const float *q, const float *kk, const float *vv, const float *ck, const float *cv, const float *sinks, float *out,
                     int i, int h, int start, int heads, int group, int hd, int kvDim, int slots, int window, float scale) {
    float acc[256], m, z;
    sdpa_state(q, kk, vv, ck, cv, sinks, i, h, start, heads, group, hd, kvDim, slots, window, scale, acc, &m, &z);
    for (int c = 0; c < hd; c++) out[(size_t) i * heads * hd + (size_t) h * hd + c] = acc[c] / z;
}
static int run_ops(const struct node *n) {
    const unsigned char (*v)[8] = n->values;
    const char *k = n->f->name;
    unsigned gx = n->grid[0], gy = n->grid[1], B = n->block[0];
    if (strcmp(k, "embed_f32") == 0) {
        const float *table = PA(0); const int *tok = PA(1); int T = IA(2), H = IA(3); float *out = PA(4);
        for (unsigned bx = 0; bx < gx; bx++) for (int t = (int) bx; t < T; t += (int) gx)
            for (int c = 0; c < H; c++) out[(size_t) t * H + c] = table[(size_t) tok[t] * H + c];
    } else if (strcmp(k, "linear_f32") == 0) {
        const float *w = PA(0), *bias = PA(1); int has = IA(2); const float *x = PA(3); int T = IA(4), cols = IA(5), rows = IA(6); float *out = PA(7);
        unsigned warps = B / 32;
        for (unsigned bx = 0; bx < gx; bx++) for (unsigned wi = 0; wi < warps; wi++) {
            int r = (int) (bx * warps + wi); if (r >= rows) continue;
            for (unsigned by = 0; by < gy; by++) for (int t = (int) by; t < T; t += (int) gy) {
                float acc = 0.0f;
                for (int c = 0; c < cols; c++) acc = fmaf(w[(size_t) r * cols + c], x[(size_t) t * cols + c], acc);
                out[(size_t) t * rows + r] = has ? acc + bias[r] : acc;
            }
        }
    } else if (strcmp(k, "rope_f32") == 0) {
        float *x = PA(0); int T = IA(1), cols = IA(2), hd = IA(3); const float *tab = PA(4); int start = *(const int *) PA(5);
        for (unsigned h = 0; h < gx; h++) for (unsigned by = 0; by < gy; by++) for (int t = (int) by; t < T; t += (int) gy) {
            float *b = x + (size_t) t * cols + (size_t) h * hd; const float *cs = tab + (size_t) (start + t) * hd;
            for (int j = 0; j < hd / 2; j++) {
                float c = cs[2 * j], s = cs[2 * j + 1], x1 = b[j], x2 = b[hd / 2 + j];
                b[j] = fmaf(x1, c, -x2 * s); b[hd / 2 + j] = fmaf(x2, c, x1 * s);
            }
        }
    } else if (strcmp(k, "sdpa_f32") == 0) {
        const float *q = PA(0), *kk = PA(1), *vv = PA(2), *ck = PA(3), *cv = PA(4), *sinks = PA(5); float *out = PA(6);
        int T = IA(7), start = *(const int *) PA(8), heads = IA(9), group = IA(10), hd = IA(11), kvDim = IA(12), slots = IA(13), window = IA(14);
        float scale = FA(15);
        for (unsigned h = 0; h < gx; h++) for (unsigned by = 0; by < gy; by++) for (int i = (int) by; i < T; i += (int) gy)
            sdpa_one(q, kk, vv, ck, cv, sinks, out, i, (int) h, start, heads, group, hd, kvDim, slots, window, scale);
    } else if (strcmp(k, "kv_store_f32") == 0) {
        const float *kk = PA(0), *vv = PA(1); float *ck = PA(2), *cv = PA(3); int T = IA(4), start = *(const int *) PA(5), slots = IA(6), kvDim = IA(7), first = IA(8);
        for (unsigned bx = 0; bx < gx; bx++) for (unsigned tid = 0; tid < B; tid++) {
            int c = (int) (bx * B + tid); if (c >= kvDim) continue;
            for (unsigned by = 0; by < gy; by++) for (int i = first + (int) by; i < T; i += (int) gy) {
                size_t slot = (size_t) ((start + i) % slots);
                ck[slot * kvDim + c] = kk[(size_t) i * kvDim + c]; cv[slot * kvDim + c] = vv[(size_t) i * kvDim + c];
            }
        }
    } else if (strcmp(k, "topk_softmax_f32") == 0) {
        const float *lg = PA(0); int T = IA(1), E = IA(2), K = IA(3); int *ids = PA(4); float *w = PA(5);
        for (unsigned t = 0; t < gx * B; t++) {
            if ((int) t >= T) continue;
            const float *g = lg + (size_t) t * E; int chosen[32];
            for (int j = 0; j < K; j++) {
                int best = -1;
                for (int x = 0; x < E; x++) {
                    int taken = 0; for (int u = 0; u < j; u++) taken |= chosen[u] == x;
                    if (!taken && (best < 0 || g[x] > g[best])) best = x;
                }
                chosen[j] = best;
            }
            float mx = g[chosen[0]], z = 0.0f;
            for (int j = 0; j < K; j++) z += expf(g[chosen[j]] - mx);
            for (int j = 0; j < K; j++) { ids[(size_t) t * K + j] = chosen[j]; w[(size_t) t * K + j] = expf(g[chosen[j]] - mx) / z; }
        }
    } else if (strcmp(k, "moe_gate_up") == 0) {
        const unsigned char *gc = PA(0), *gs = PA(1), *uc = PA(2), *us = PA(3); int ggml = IA(4);
        const float *gb = PA(5), *ub = PA(6), *x = PA(7); const int *ids = PA(8); int T = IA(9), K = IA(10), H = IA(11), I = IA(12);
        float limit = FA(13); float *hout = PA(14);
        for (unsigned bx = 0; bx < gx; bx++) for (unsigned u = 0; u < gy; u++) for (int s = (int) bx; s < T * K; s += (int) gx) {
            int t = s / K; size_t row = (size_t) ids[s] * I + u;
            float a = mx_dot(gc, gs, ggml, row, H, x + (size_t) t * H) + gb[row];
            float b = mx_dot(uc, us, ggml, row, H, x + (size_t) t * H) + ub[row];
            a = fminf(a, limit); b = fmaxf(-limit, fminf(b, limit));
            hout[(size_t) s * I + u] = a / (1.0f + expf(-1.702f * a)) * (b + 1.0f);
        }
    } else if (strcmp(k, "moe_down") == 0) {
        const unsigned char *dc = PA(0), *ds = PA(1); int ggml = IA(2); const float *db = PA(3), *hin = PA(4);
        const int *ids = PA(5); const float *w = PA(6); int T = IA(7), K = IA(8), H = IA(9), I = IA(10); float *out = PA(11);
        for (unsigned bx = 0; bx < gx; bx++) for (unsigned d = 0; d < gy; d++) for (int t = (int) bx; t < T; t += (int) gx) {
            float acc = 0.0f;
            for (int j = 0; j < K; j++) {
                size_t s = (size_t) t * K + j;
                acc = fmaf(w[s], mx_dot(dc, ds, ggml, (size_t) ids[s] * H + d, I, hin + s * I) + db[(size_t) ids[s] * H + d], acc);
            }
            out[(size_t) t * H + d] = acc;
        }
    } else if (strcmp(k, "argmax_f32") == 0) {
        const float *lg = PA(0); int rows = IA(1), V = IA(2); int *out = PA(3);
        for (unsigned bx = 0; bx < gx; bx++) for (int t = (int) bx; t < rows; t += (int) gx) {
            int bi = 0; for (int r = 1; r < V; r++) if (lg[(size_t) t * V + r] > lg[(size_t) t * V + bi]) bi = r;
            out[t] = bi;
        }
    } else {
        return 0;
    }
    return 1;
}

/* The kernels, on the host, with the same float arithmetic as the .cu files. */
static void run_node(const struct node *n) {
    const unsigned char (*v)[8] = n->values;
    if (run_ops(n) || run_moe_prefill(n)) return;
    if (strcmp(n->f->name, "add_f32") == 0) {
        const float *a, *b; float *y; long long count;
        memcpy(&a, v[0], 8); memcpy(&b, v[1], 8); memcpy(&y, v[2], 8); memcpy(&count, v[3], 8);
        for (long long i = 0; i < count; i++) y[i] = a[i] + b[i];
    } else {
        const float *x, *scale; float *y; int cols; float eps;
        memcpy(&x, v[0], 8); memcpy(&scale, v[1], 8); memcpy(&y, v[2], 8); memcpy(&cols, v[3], 4); memcpy(&eps, v[4], 4);
        unsigned threads = n->block[0];
        for (unsigned row = 0; row < n->grid[0]; row++) {
            const float *xr = x + (size_t) row * cols;
            float *yr = y + (size_t) row * cols;
            float sum = 0.0f;
            for (unsigned t = 0; t < threads; t++) {
                float s = 0.0f;
                for (int i = (int) t; i < cols; i += (int) threads) s = fmaf(xr[i], xr[i], s);
                sum += s;
            }
            float inv = 1.0f / sqrtf(sum / (float) cols + eps);
            for (int i = 0; i < cols; i++) yr[i] = (xr[i] * inv) * scale[i];
        }
    }
}

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by,
                                unsigned int bz, unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra) {
    if (!f || !hStream) return CUDA_ERROR_INVALID_HANDLE;
    if (extra != NULL || kernelParams == NULL) return CUDA_ERROR_INVALID_VALUE;
    if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0 || (size_t) bx * by * bz > 1024 || sharedMemBytes > 232448)
        return CUDA_ERROR_INVALID_VALUE;
    if (strcmp(f->name, "rmsnorm_f32") == 0 && (bx % 32 != 0 || gy != 1 || gz != 1 || by != 1 || bz != 1)) return CUDA_ERROR_INVALID_VALUE;
    struct node n = { f, { gx, gy, gz }, { bx, by, bz }, { { 0 } } };
    for (int i = 0; i < f->nparams; i++) memcpy(n.values[i], kernelParams[i], f->sizes[i]);
    if (hStream->capturing) {
        if (hStream->graph->n == MAX_NODES) return CUDA_ERROR_OUT_OF_MEMORY;
        hStream->graph->nodes[hStream->graph->n++] = n;
        return CUDA_SUCCESS;
    }
    run_node(&n);
    return CUDA_SUCCESS;
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
CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t n, CUstream s) { if (!s) return CUDA_ERROR_INVALID_HANDLE; memcpy(DEV(dst), src, n); return CUDA_SUCCESS; }
CUresult CUDAAPI cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t n, CUstream s) { if (!s) return CUDA_ERROR_INVALID_HANDLE; memcpy(dst, DEV(src), n); return CUDA_SUCCESS; }
CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) { if (!s) return CUDA_ERROR_INVALID_HANDLE; memmove(DEV(dst), DEV(src), n); return CUDA_SUCCESS; }
CUresult CUDAAPI cuMemsetD8(CUdeviceptr dst, unsigned char uc, size_t n) { memset(DEV(dst), uc, n); return CUDA_SUCCESS; }
CUresult CUDAAPI cuMemsetD32(CUdeviceptr dst, unsigned int ui, size_t n) { unsigned int *p = DEV(dst); for (size_t i = 0; i < n; i++) p[i] = ui; return CUDA_SUCCESS; }
CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dst, unsigned char uc, size_t n, CUstream s) { if (!s) return CUDA_ERROR_INVALID_HANDLE; return cuMemsetD8(dst, uc, n); }
CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr dst, unsigned int ui, size_t n, CUstream s) { if (!s) return CUDA_ERROR_INVALID_HANDLE; return cuMemsetD32(dst, ui, n); }
CUresult CUDAAPI cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags) { (void) Flags; *pp = malloc(bytesize); return *pp ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY; }
CUresult CUDAAPI cuMemFreeHost(void *p) { free(p); return CUDA_SUCCESS; }

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
    *phGraphExec = malloc(sizeof(struct CUgraphExec_st));
    (*phGraphExec)->g = *hGraph;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGraphLaunch(CUgraphExec e, CUstream s) {
    if (!e || !s) return CUDA_ERROR_INVALID_HANDLE;
    for (int i = 0; i < e->g.n; i++) run_node(&e->g.nodes[i]);
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec e) { free(e); return CUDA_SUCCESS; }
CUresult CUDAAPI cuGraphDestroy(CUgraph g) { free(g); return CUDA_SUCCESS; }
