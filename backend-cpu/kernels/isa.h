/*
 * isa.h — included by the kernel files that build once per instruction set (build.sh compiles them with
 * -DGOSS_ISA=avx2 and the AVX2 flags, -DGOSS_ISA=avxvnni with AVX-VNNI added, and -DGOSS_ISA=avx512 with the
 * AVX-512 flags). GOSS_FN(name) is the exported name for this build: goss_avx2_name, goss_avxvnni_name or
 * goss_avx512_name.
 */
#ifndef GOSS_CPU_ISA_H
#define GOSS_CPU_ISA_H

#include <immintrin.h>
#include <stdint.h>
#include <string.h>
#include "goss_cpu.h"

#ifndef GOSS_ISA
#error "build with -DGOSS_ISA=avx2 or -DGOSS_ISA=avx512"
#endif
#define GOSS_CAT3(a, b, c) a##b##c
#define GOSS_CAT(a, b, c) GOSS_CAT3(a, b, c)
#define GOSS_FN(name) GOSS_CAT(goss_, GOSS_ISA, _##name)

#if defined(__AVX512F__) && !(defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512VNNI__))
#error "the avx512 build needs -mavx512bw -mavx512vl -mavx512vnni too"
#endif

/* Four bytes at p as one int32 (for broadcasting an activation quad). */
static inline int32_t goss_load_i32(const void *p) {
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* Horizontal sum of 8 floats in a fixed order ((0+4)+(2+6)) + ((1+5)+(3+7)), so results never depend on
 * the compiler's choice of reduction. */
static inline float goss_hsum256(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

#ifdef __AVX512F__
static inline float goss_hsum512(__m512 v) {
    return goss_hsum256(_mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1)));
}
#endif

#endif
