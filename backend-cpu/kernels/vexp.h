/*
 * vexp.h — e^x for float vectors, the same sequence of operations on AVX2 and AVX-512 so both kernel sets give
 * the same bits: x = n·ln2 + r (|r| ≤ ln2/2, ln2 split in two parts), e^r by a degree-6 polynomial
 * (Horner, fused multiply-adds; relative error about 1e-7), times 2^n built in the exponent bits.
 * Below −87.3 the result is 0 (it would be subnormal), and −∞ gives 0; above 88.7 it is +∞.
 */
#ifndef GOSS_CPU_VEXP_H
#define GOSS_CPU_VEXP_H
#include <immintrin.h>

#define GOSS_EXP_LO -87.33654f
#define GOSS_EXP_HI 88.72283f
#define GOSS_LOG2E 1.44269504088896341f
#define GOSS_LN2_HI 0.693359375f
#define GOSS_LN2_LO -2.12194440e-4f
#define GOSS_EXP_P0 1.9875691500e-4f
#define GOSS_EXP_P1 1.3981999507e-3f
#define GOSS_EXP_P2 8.3334519073e-3f
#define GOSS_EXP_P3 4.1665795894e-2f
#define GOSS_EXP_P4 1.6666665459e-1f
#define GOSS_EXP_P5 5.0000001201e-1f

#ifdef __AVX512F__
static inline __m512 goss_exp512(__m512 x) {
    __mmask16 under = _mm512_cmp_ps_mask(x, _mm512_set1_ps(GOSS_EXP_LO), _CMP_LT_OQ);
    __mmask16 over = _mm512_cmp_ps_mask(x, _mm512_set1_ps(GOSS_EXP_HI), _CMP_GT_OQ);
    __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(GOSS_LOG2E)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(GOSS_LN2_HI), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(GOSS_LN2_LO), r);
    __m512 p = _mm512_set1_ps(GOSS_EXP_P0);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(GOSS_EXP_P1));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(GOSS_EXP_P2));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(GOSS_EXP_P3));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(GOSS_EXP_P4));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(GOSS_EXP_P5));
    p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
    __m512i e = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
    __m512 y = _mm512_mul_ps(p, _mm512_castsi512_ps(e));
    y = _mm512_mask_mov_ps(y, under, _mm512_setzero_ps());
    return _mm512_mask_mov_ps(y, over, _mm512_set1_ps(__builtin_inff()));
}
#endif

static inline __m256 goss_exp256(__m256 x) {
    __m256 under = _mm256_cmp_ps(x, _mm256_set1_ps(GOSS_EXP_LO), _CMP_LT_OQ);
    __m256 over = _mm256_cmp_ps(x, _mm256_set1_ps(GOSS_EXP_HI), _CMP_GT_OQ);
    __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(GOSS_LOG2E)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(GOSS_LN2_HI), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(GOSS_LN2_LO), r);
    __m256 p = _mm256_set1_ps(GOSS_EXP_P0);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(GOSS_EXP_P1));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(GOSS_EXP_P2));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(GOSS_EXP_P3));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(GOSS_EXP_P4));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(GOSS_EXP_P5));
    p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    __m256 y = _mm256_mul_ps(p, _mm256_castsi256_ps(e));
    y = _mm256_andnot_ps(under, y);
    return _mm256_blendv_ps(y, _mm256_set1_ps(__builtin_inff()), over);
}

/* e^x of one float, by the same polynomial (lane 0 of the 8-wide version): for scalars that must agree. */
static inline float goss_expf(float x) { return _mm256_cvtss_f32(goss_exp256(_mm256_set1_ps(x))); }
#endif
