/*
 * goss_cpu.h — the C ABI of the cpu backend's native kernels (libgoss_cpu), bound from Java by
 * io.gossgpu.cpu.bindings.goss_cpu_h. Every kernel is a leaf: it works on the rows/tokens it is given on
 * the calling thread; the Java side (CpuPool) splits work across threads. Apart from the memory functions and
 * the bandwidth probe, nothing here allocates, keeps state, or reads the environment.
 *
 * Kernels that depend on the instruction set are compiled once per ISA and exported with the ISA in the
 * name: goss_avx2_<kernel> (AVX2 + FMA + F16C), goss_avxvnni_<kernel> (the same plus AVX-VNNI) and
 * goss_avx512_<kernel> (AVX-512 F/BW/VL/DQ + VNNI).
 * goss_cpu_features() says which of them this CPU can run.
 *
 * Data layouts shared with Java:
 *  - Quantized activations ("q8 rows"): for each token row of K values (K a multiple of 32),
 *    q[K] int8, d[K/32] float and s[K/32] int32: x[k] ≈ d[k/32]·q[k], |q| ≤ 127, s[b] = Σ q of block b.
 *  - Repacked 4-bit weights ("mx4 tiles", from either MXFP4 layout): rows in groups of 16; per group and
 *    32-column block, 256 code bytes then (in a separate array) 16 scale bytes (E8M0, one per row).
 *    Code byte 64·L + 4·r + j holds row r's column 8L + j in its low nibble and column 8L + 4 + j in its
 *    high nibble (L = 0..3, j = 0..3). Rows beyond the matrix are zero codes.
 *  - Repacked Q8_0 weights ("q8 tiles"): rows in groups of 16; per group and block, 512 bytes (byte
 *    64·c + 4·r + j = row r's column 4c + j, int8) and (separately) 16 F16 scales.
 */
#ifndef GOSS_CPU_H
#define GOSS_CPU_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GOSS_CPU_ABI_VERSION 5

/* goss_cpu_features() bits */
#define GOSS_CPU_AVX2    1u  /* avx2, fma, f16c */
#define GOSS_CPU_AVX512  2u  /* avx512f, bw, vl, dq, vnni */
#define GOSS_CPU_AVXVNNI 4u  /* avx2, fma, f16c and the 256-bit VEX vpdpbusd (Intel since Alder Lake, AMD Zen 5) */

int goss_cpu_abi_version(void);
uint32_t goss_cpu_features(void);

/* Memory for repacked weights (memory.c): 2 MiB aligned, transparent huge pages advised, zero-filled;
 * NULL when the system refuses. Freed with the same size. */
void *goss_cpu_alloc(int64_t bytes);
void goss_cpu_free(void *p, int64_t bytes);
/* Maps the pages of [p, p + bytes) of a file mapping in one call (MADV_POPULATE_READ; a no-op where unsupported). */
void goss_cpu_prefault(const void *p, int64_t bytes);
/* Drops the pages of [p, p + bytes) of a file mapping from the page cache once they were copied (MADV_PAGEOUT;
 * a no-op where unsupported). */
void goss_cpu_release(const void *p, int64_t bytes);

/* What memory gives a plain streaming read (stream_probe.c): `threads` threads sum their slices of a buffer of about
 * `bytes` (allocated as goss_cpu_alloc does), `passes` times (at most 64); returns the best pass in 10^9 bytes per
 * second, or a negative number when the buffer or the threads cannot be had. *method: 1 for 256-bit AVX2 loads,
 * 0 for 64-bit words. */
double goss_cpu_stream_probe(int32_t threads, int64_t bytes, int32_t passes, int32_t *method);
/* The same probe kept open, for measuring between other work (a decode token's neighbours): the buffer is allocated
 * and written once by open (NULL when it cannot be had), each goss_cpu_probe_pass reads it `passes` times (1 to 64)
 * with fresh threads and returns the best pass in GB/s (negative when a thread cannot start). */
typedef struct goss_stream_probe goss_stream_probe;
goss_stream_probe *goss_cpu_probe_open(int32_t threads, int64_t bytes);
double goss_cpu_probe_pass(goss_stream_probe *probe, int32_t passes);
void goss_cpu_probe_close(goss_stream_probe *probe);

/* ---- repacking (ISA-independent): groups g0..g1-1 of one expert's matrix ------------------------ */

/* OpenAI MXFP4: row r's codes at codes + r·code_row_stride (16 bytes per block; low nibble = even column),
 * scales at scales + r·scale_row_stride (1 byte per block). */
void goss_cpu_repack_mx4_openai(const uint8_t *codes, int64_t code_row_stride, const uint8_t *scales,
                                int64_t scale_row_stride, int64_t rows, int64_t blocks, int64_t g0, int64_t g1,
                                uint8_t *out_codes, uint8_t *out_scales);
/* ggml block_mxfp4: row r at src + r·row_stride, 17-byte blocks (scale, then 16 bytes: low nibbles are
 * columns 0..15, high nibbles 16..31). */
void goss_cpu_repack_mx4_ggml(const uint8_t *src, int64_t row_stride, int64_t rows, int64_t blocks,
                              int64_t g0, int64_t g1, uint8_t *out_codes, uint8_t *out_scales);
/* ggml block_q8_0: row r at src + r·row_stride, 34-byte blocks (F16 scale, then 32 int8). */
void goss_cpu_repack_q8_0(const uint8_t *src, int64_t row_stride, int64_t rows, int64_t blocks,
                          int64_t g0, int64_t g1, int8_t *out_q, uint16_t *out_scales);
/* Float rows (format: GOSS_CPU_FORMAT_F32, _F16 or _BF16; row r at src + r·row_stride) quantized into q8 tiles
 * by the rule of ggml's Q8_0, bit for bit as io.gossgpu.quant.Q8_0.quantizeRow writes it: per block of 32,
 * d = max|x| / 127 (stored as F16, rounded to nearest even), q = round(x · (1/d)) with halves rounded up, q = 0
 * when d = 0; a block holding NaN gets d = NaN, one holding ±Inf d = Inf and code ±127 at the infinite value (so
 * non-finite weights stay non-finite in products). Needs F16C (every native kernel set has it). */
void goss_cpu_repack_float_q8(int32_t format, const uint8_t *src, int64_t row_stride, int64_t rows, int64_t blocks,
                              int64_t g0, int64_t g1, int8_t *out_q, uint16_t *out_scales);

/* ---- per-ISA kernels ---------------------------------------------------------------------------- */

#define GOSS_CPU_DECLARE_ISA(isa)                                                                         \
    /* Quantize n rows of K floats (row i at x + i·x_stride) into q8 rows (row i at q + i·K,              \
     * d + i·K/32, s + i·K/32). */                                                                        \
    void goss_##isa##_quantize_q8(const float *x, int64_t x_stride, int64_t n, int64_t k, int8_t *q,      \
                                  float *d, int32_t *s);                                                  \
    /* out[t·out_stride + r − 16·g0] = Σ_k W[r,k]·x_t[k] (+ bias[r]) for rows r of groups g0..g1-1       \
     * (r < rows) and tokens t < T, from mx4 tiles of `blocks` blocks per row group and q8 rows of         \
     * K = 32·blocks. */                                                                                  \
    void goss_##isa##_mx4_gemm(const uint8_t *codes, const uint8_t *scales, int64_t blocks, int64_t rows, \
                               int64_t g0, int64_t g1, const int8_t *q, const float *d, const int32_t *s,  \
                               int64_t T, float *out, int64_t out_stride, const float *bias);             \
    /* The same from q8 tiles. */                                                                          \
    void goss_##isa##_q8_gemm(const int8_t *qw, const uint16_t *scales, int64_t blocks, int64_t rows,     \
                              int64_t g0, int64_t g1, const int8_t *q, const float *d, const int32_t *s,   \
                              int64_t T, float *out, int64_t out_stride, const float *bias);              \
    /* Row-major float weights in place (format: 0 = F32, 1 = F16, 2 = BF16; row r at w + r·row_stride    \
     * bytes): out[t·out_stride + r − r0] = Σ_k W[r,k]·x[t·x_stride + k] (+ bias[r]) for r0 ≤ r < r1,     \
     * t < T. */                                                                                          \
    void goss_##isa##_dense_gemm(int32_t format, const uint8_t *w, int64_t row_stride, int64_t r0,        \
                                 int64_t r1, int64_t k, const float *x, int64_t x_stride, int64_t T,       \
                                 float *out, int64_t out_stride, const float *bias);                       \
    /* Attention as an online softmax (attention.c): extend the states (m, l, acc) of the nt·group query  \
     * rows with the keys of slots s0..s0+count−1 (positions kpos0..), then merge or finish them. Keys and \
     * values are stored as kv_type (GOSS_CPU_KV_*); for Q8_0 ks and vs are their scales (nb blocks per    \
     * row) and chan0 the head's first channel in the row (NULL, 0 and any for the other types). scratch: \
     * 128·hd floats the kernel overwrites (typed caches are decoded there); NULL for F32. */               \
    void goss_##isa##_attn_update(const float *q, int64_t q_stride, int64_t nt, int64_t group, int64_t hd, \
                                  int64_t qpos0, int64_t window, int32_t kv_type, const void *kt,          \
                                  int64_t kt_block, const void *v, int64_t v_stride, const uint16_t *ks,   \
                                  const uint16_t *vs, int64_t nb, int64_t chan0, int64_t s0, int64_t count, \
                                  int64_t kpos0, float scale, float *m, float *l, float *acc,              \
                                  float *scratch);                                                         \
    void goss_##isa##_attn_merge(int64_t rows, int64_t hd, float *m, float *l, float *acc, const float *m2, \
                                 const float *l2, const float *acc2);                                      \
    void goss_##isa##_attn_finish(int64_t nt, int64_t group, int64_t hd, const float *m, const float *l,  \
                                  const float *acc, const float *sinks, float *out, int64_t out_stride);

/* How a KV cache stores its numbers (KvType's ordinals; attention.c has the formulas and layouts). */
#define GOSS_CPU_KV_F32 0
#define GOSS_CPU_KV_F16 1
#define GOSS_CPU_KV_BF16 2
#define GOSS_CPU_KV_Q8_0 3

#define GOSS_CPU_FORMAT_F32 0
#define GOSS_CPU_FORMAT_F16 1
#define GOSS_CPU_FORMAT_BF16 2

GOSS_CPU_DECLARE_ISA(avx2)
GOSS_CPU_DECLARE_ISA(avxvnni)
GOSS_CPU_DECLARE_ISA(avx512)

#ifdef __cplusplus
}
#endif
#endif
