/*
 * quantize_q8.c — activations to int8 blocks of 32, once per op, so weight rows can be multiplied in
 * integers:  d_b = max_{k∈b} |x_k| / 127,  q_k = round(x_k / d_b)  (nearest, ties to even),
 *            s_b = Σ_{k∈b} q_k   (the kernels subtract offset·s_b for weights stored with an offset).
 * A block of zeros gets d = 0, q = 0. The relative error per value is at most 1/254 of the block's
 * largest magnitude, about what the official reference's bf16 activations carry.
 * A block holding NaN or ±Inf gets d = NaN (d + Σ x_k·0), so every product with it is NaN, as in float:
 * the rounding to int8 would otherwise turn a non-finite value into a finite one and hide it from the
 * guard that names the op where NaN first appeared.
 */
#include "isa.h"

void GOSS_FN(quantize_q8)(const float *x, int64_t x_stride, int64_t n, int64_t k, int8_t *q, float *d,
                          int32_t *s) {
    const int64_t nb = k / 32;
    for (int64_t i = 0; i < n; i++) {
        const float *xr = x + i * x_stride;
        int8_t *qr = q + i * k;
        for (int64_t b = 0; b < nb; b++) {
            const float *xb = xr + 32 * b;
#ifdef __AVX512F__
            __m512 v0 = _mm512_loadu_ps(xb), v1 = _mm512_loadu_ps(xb + 16);
            float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(v0), _mm512_abs_ps(v1)));
            const __m512 zero = _mm512_setzero_ps();
            float nonfinite = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_mul_ps(v0, zero), _mm512_mul_ps(v1, zero))); /* 0 or NaN */
            float db = amax / 127.0f + nonfinite, id = amax != 0.0f ? 127.0f / amax : 0.0f;
            __m512 m = _mm512_set1_ps(id);
            __m512i i0 = _mm512_cvtps_epi32(_mm512_mul_ps(v0, m)), i1 = _mm512_cvtps_epi32(_mm512_mul_ps(v1, m));
            _mm_storeu_si128((__m128i *)(qr + 32 * b), _mm512_cvtsepi32_epi8(i0));
            _mm_storeu_si128((__m128i *)(qr + 32 * b + 16), _mm512_cvtsepi32_epi8(i1));
            s[i * nb + b] = _mm512_reduce_add_epi32(_mm512_add_epi32(i0, i1));
#else
            const __m256 sign = _mm256_set1_ps(-0.0f), zero = _mm256_setzero_ps();
            __m256 v[4], a = zero, z = zero;
            for (int j = 0; j < 4; j++) {
                v[j] = _mm256_loadu_ps(xb + 8 * j);
                a = _mm256_max_ps(a, _mm256_andnot_ps(sign, v[j]));
                z = _mm256_add_ps(z, _mm256_mul_ps(v[j], zero)); /* NaN where a value is not finite */
            }
            __m128 z4 = _mm_add_ps(_mm256_castps256_ps128(z), _mm256_extractf128_ps(z, 1));
            z4 = _mm_add_ps(z4, _mm_movehl_ps(z4, z4));
            float nonfinite = _mm_cvtss_f32(_mm_add_ss(z4, _mm_movehdup_ps(z4))); /* 0 or NaN */
            __m128 h = _mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
            h = _mm_max_ps(h, _mm_movehl_ps(h, h));
            h = _mm_max_ss(h, _mm_movehdup_ps(h));
            float amax = _mm_cvtss_f32(h);
            float db = amax / 127.0f + nonfinite, id = amax != 0.0f ? 127.0f / amax : 0.0f;
            __m256 m = _mm256_set1_ps(id);
            __m256i iv[4];
            for (int j = 0; j < 4; j++) iv[j] = _mm256_cvtps_epi32(_mm256_mul_ps(v[j], m));
            /* pack 32 int32 → 32 int8 in order: packs work within 128-bit lanes, so fix the order after */
            __m256i p01 = _mm256_packs_epi32(iv[0], iv[1]), p23 = _mm256_packs_epi32(iv[2], iv[3]);
            __m256i p = _mm256_packs_epi16(p01, p23);
            p = _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
            _mm256_storeu_si256((__m256i *)(qr + 32 * b), p);
            __m256i sum = _mm256_add_epi32(_mm256_add_epi32(iv[0], iv[1]), _mm256_add_epi32(iv[2], iv[3]));
            __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(sum), _mm256_extracti128_si256(sum, 1));
            s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4e));
            s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xb1));
            s[i * nb + b] = _mm_cvtsi128_si32(s4);
#endif
            d[i * nb + b] = db;
        }
    }
}
