/*
 * dense_gemm.c — float weights read in place (F32, F16 or BF16 rows of the mapped file) times float
 * activations, for the checkpoints whose dense layers are not quantized (OpenAI's original/ is BF16):
 *
 *     out[t, r] = Σ_k W[r, k] · x[t, k]   (+ bias[r])
 *
 * 4 rows × 4 tokens per pass: each weight vector is loaded and widened once for 4 tokens, each activation
 * vector once for 4 rows. Every (row, token) keeps one vector accumulator over k, summed across lanes at
 * the end in a fixed order (goss_hsum*), so results do not depend on threads or tiling.
 */
#include "isa.h"

#define INLINE static inline __attribute__((always_inline))
#define RB 4
#define TBD 4
/* Each of the RB rows asks for its line DPREFETCH bytes ahead: RB streams through the 4 KiB pages of the mapped file
 * are more than the hardware prefetchers keep in flight. Past a row's end the line is the next row's start, read in this
 * pass or the next. Measured: BF16 201088×2880, one token, 2 threads, means of 5-6 interleaved runs: AVX2 28 → 36 GB/s,
 * AVX-512 32 → 37 GB/s (1024 and 4096 bytes ahead did less). */
#ifndef DPREFETCH
#define DPREFETCH 2048
#endif

#ifdef __AVX512F__
#define VL 16
typedef __m512 vf;
/* 16 weights from k..k+15 of a row (or fewer, zero-filled, with mask m) as floats. */
INLINE vf wload(int fmt, const uint8_t *row, int64_t k, __mmask16 m) {
    if (m == (__mmask16)0xffff) /* plain loads where the whole vector is in the row (masked ones cost more) */
        switch (fmt) {
        case GOSS_CPU_FORMAT_F16: return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(row + 2 * k)));
        case GOSS_CPU_FORMAT_BF16:
            return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(row + 2 * k))), 16));
        default: return _mm512_loadu_ps(row + 4 * k);
        }
    switch (fmt) {
    case GOSS_CPU_FORMAT_F16: return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, row + 2 * k));
    case GOSS_CPU_FORMAT_BF16:
        return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, row + 2 * k)), 16));
    default: return _mm512_maskz_loadu_ps(m, row + 4 * k);
    }
}
#define XLOAD(p, m) ((m) == (__mmask16)0xffff ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(m, p))
#define FMA _mm512_fmadd_ps
#define ZERO _mm512_setzero_ps
#define HSUM goss_hsum512
typedef __mmask16 vmask;
#define FULL ((__mmask16)0xffff)
#define TAILMASK(n) ((__mmask16)((1u << (n)) - 1))
#else
#define VL 8
typedef __m256 vf;
typedef int vmask; /* AVX2: tails are done in scalar code */
#define FULL 0
INLINE vf wload(int fmt, const uint8_t *row, int64_t k, vmask m) {
    (void)m;
    switch (fmt) {
    case GOSS_CPU_FORMAT_F16: return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(row + 2 * k)));
    case GOSS_CPU_FORMAT_BF16:
        return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(row + 2 * k))), 16));
    default: return _mm256_loadu_ps((const float *)(row + 4 * k));
    }
}
#define XLOAD(p, m) _mm256_loadu_ps(p)
#define FMA _mm256_fmadd_ps
#define ZERO _mm256_setzero_ps
#define HSUM goss_hsum256
#endif

/* One scalar weight, for the AVX2 tail. */
static inline float wscalar(int fmt, const uint8_t *row, int64_t k) {
    uint16_t h;
    float f;
    switch (fmt) {
    case GOSS_CPU_FORMAT_F16: memcpy(&h, row + 2 * k, 2); return _cvtsh_ss(h);
    case GOSS_CPU_FORMAT_BF16: {
        uint32_t u;
        memcpy(&h, row + 2 * k, 2);
        u = (uint32_t)h << 16;
        memcpy(&f, &u, 4);
        return f;
    }
    default: memcpy(&f, row + 4 * k, 4); return f;
    }
}

INLINE void block(int fmt, const uint8_t *w, int64_t row_stride, int64_t r0, int nr, int64_t k, const float *x,
                  int64_t x_stride, int nt, float *out, int64_t out_stride, const float *bias) {
    vf acc[RB][TBD];
    _Pragma("GCC unroll 8")
    for (int r = 0; r < nr; r++)
        _Pragma("GCC unroll 8")
        for (int t = 0; t < nt; t++) acc[r][t] = ZERO();
    const uint8_t *rows[RB];
    _Pragma("GCC unroll 8")
    for (int r = 0; r < nr; r++) rows[r] = w + (r0 + r) * row_stride;
    int64_t c = 0;
    for (; c + VL <= k; c += VL) {
        vf xv[TBD];
        _Pragma("GCC unroll 8")
        for (int t = 0; t < nt; t++) xv[t] = XLOAD(x + t * x_stride + c, FULL);
        const int64_t esize = fmt == GOSS_CPU_FORMAT_F32 ? 4 : 2;
        if (((c * esize) & 63) == 0)
            _Pragma("GCC unroll 8")
            for (int r = 0; r < nr; r++) _mm_prefetch((const char *)rows[r] + esize * c + DPREFETCH, _MM_HINT_T0);
        _Pragma("GCC unroll 8")
        for (int r = 0; r < nr; r++) {
            vf wv = wload(fmt, rows[r], c, FULL);
            _Pragma("GCC unroll 8")
            for (int t = 0; t < nt; t++) acc[r][t] = FMA(wv, xv[t], acc[r][t]);
        }
    }
#ifdef __AVX512F__
    if (c < k) { /* masked tail: zero-filled lanes add nothing */
        vmask m = TAILMASK(k - c);
        vf xv[TBD];
        _Pragma("GCC unroll 8")
        for (int t = 0; t < nt; t++) xv[t] = XLOAD(x + t * x_stride + c, m);
        _Pragma("GCC unroll 8")
        for (int r = 0; r < nr; r++) {
            vf wv = wload(fmt, rows[r], c, m);
            _Pragma("GCC unroll 8")
            for (int t = 0; t < nt; t++) acc[r][t] = FMA(wv, xv[t], acc[r][t]);
        }
        c = k;
    }
#endif
    _Pragma("GCC unroll 8")
    for (int r = 0; r < nr; r++)
        _Pragma("GCC unroll 8")
        for (int t = 0; t < nt; t++) {
            float sum = HSUM(acc[r][t]);
            for (int64_t j = c; j < k; j++) sum += wscalar(fmt, rows[r], j) * x[t * x_stride + j];
            out[t * out_stride + r] = sum + (bias ? bias[r] : 0.0f);
        }
}

/* All rows of one format (a constant after inlining, so the widening is chosen once, outside the loops). */
INLINE void rows_of(int fmt, const uint8_t *w, int64_t row_stride, int64_t r0, int64_t r1, int64_t k, const float *x,
                    int64_t x_stride, int64_t T, float *out, int64_t out_stride, const float *bias) {
    for (int64_t r = r0; r < r1; r += RB) {
        int nr = r1 - r < RB ? (int)(r1 - r) : RB;
        for (int64_t t0 = 0; t0 < T; t0 += TBD) {
            int nt = T - t0 < TBD ? (int)(T - t0) : TBD;
            const float *xt = x + t0 * x_stride;
            float *ot = out + t0 * out_stride + (r - r0);
            const float *bt = bias ? bias + r : 0;
            /* constant shapes for the common cases keep the accumulators in registers */
            if (nr == RB && nt == TBD) block(fmt, w, row_stride, r, RB, k, xt, x_stride, TBD, ot, out_stride, bt);
            else if (nr == RB && nt == 1) block(fmt, w, row_stride, r, RB, k, xt, x_stride, 1, ot, out_stride, bt);
            else block(fmt, w, row_stride, r, nr, k, xt, x_stride, nt, ot, out_stride, bt);
        }
    }
}

void GOSS_FN(dense_gemm)(int32_t fmt, const uint8_t *w, int64_t row_stride, int64_t r0, int64_t r1, int64_t k,
                         const float *x, int64_t x_stride, int64_t T, float *out, int64_t out_stride,
                         const float *bias) {
    switch (fmt) {
    case GOSS_CPU_FORMAT_BF16: rows_of(GOSS_CPU_FORMAT_BF16, w, row_stride, r0, r1, k, x, x_stride, T, out, out_stride, bias); break;
    case GOSS_CPU_FORMAT_F16: rows_of(GOSS_CPU_FORMAT_F16, w, row_stride, r0, r1, k, x, x_stride, T, out, out_stride, bias); break;
    default: rows_of(GOSS_CPU_FORMAT_F32, w, row_stride, r0, r1, k, x, x_stride, T, out, out_stride, bias); break;
    }
}
