/*
 * attention.c — causal grouped-query attention with sinks, as an online softmax over runs of keys.
 *
 * Query row r is head h of token t of one KV group (r = t·group + h) at position p_t = qpos0 + t. It sees the
 * keys j at positions P_j with P_j ≤ p_t (and P_j > p_t − W on sliding layers, window W):
 *
 *     s_j = scale · q_r·k_j,   m = max_j s_j,   l = Σ_j e^(s_j − m),   acc = Σ_j e^(s_j − m) · v_j
 *
 * The state (m, l, acc) of each row is extended by attn_update with more keys (m starts at −∞, l and acc at 0),
 * two states over disjoint keys are combined by attn_merge (split-K), and attn_finish adds the row's sink
 * logit S (not scaled) and divides:   M = max(m, S),   out = acc·e^(m−M) / (l·e^(m−M) + e^(S−M)).
 *
 * Keys come in the cpu backend's cache layout: blocks of 16 slots, transposed so that one vector holds 16
 * slots of one channel: element (slot s, channel c) at kt[(s >> 4)·kt_block + c·16 + (s & 15)] (kt points at the
 * head's channel 0). Values are rows: v[s·v_stride + d]. A run is the slots s0 .. s0+count−1, holding positions
 * kpos0 .. kpos0+count−1. Every sum runs in a fixed order, so results do not depend on threads.
 */
#include "isa.h"
#include "vexp.h"

#define INLINE static inline __attribute__((always_inline))

#ifdef __AVX512F__
#define VL 16
#define RT 8
typedef __m512 vf;
typedef __mmask16 vmask;
#define VZERO _mm512_setzero_ps()
#define VSET1 _mm512_set1_ps
#define VLOAD _mm512_loadu_ps
#define VFMA _mm512_fmadd_ps
#define VMUL _mm512_mul_ps
#define VSUB _mm512_sub_ps
#define VEXP goss_exp512
#define VHSUM goss_hsum512
INLINE vmask lanes(int a, int b) { return (vmask)(((1u << b) - 1) & ~((1u << a) - 1)); }
INLINE vf masked(vf x, vmask m, float fill) { return _mm512_mask_mov_ps(_mm512_set1_ps(fill), m, x); }
/* n ≤ 16 values; whole vectors with plain loads and stores (masked ones cost more) */
INLINE vf mload(const float *p, int n) { return n == VL ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps((vmask)((1u << n) - 1), p); }
INLINE void mstore(float *p, vf x, int n) {
    if (n == VL) _mm512_storeu_ps(p, x);
    else _mm512_mask_storeu_ps(p, (vmask)((1u << n) - 1), x);
}
INLINE float vmax(vf x) { return _mm512_reduce_max_ps(x); }
#else
#define VL 8
#define RT 4
typedef __m256 vf;
typedef __m256 vmask;
#define VZERO _mm256_setzero_ps()
#define VSET1 _mm256_set1_ps
#define VLOAD _mm256_loadu_ps
#define VFMA _mm256_fmadd_ps
#define VMUL _mm256_mul_ps
#define VSUB _mm256_sub_ps
#define VEXP goss_exp256
#define VHSUM goss_hsum256
INLINE vmask lanes(int a, int b) {
    __m256i i = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256i in = _mm256_and_si256(_mm256_cmpgt_epi32(i, _mm256_set1_epi32(a - 1)), _mm256_cmpgt_epi32(_mm256_set1_epi32(b), i));
    return _mm256_castsi256_ps(in);
}
INLINE vf masked(vf x, vmask m, float fill) { return _mm256_blendv_ps(_mm256_set1_ps(fill), x, m); }
INLINE __m256i tailmask(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
INLINE vf mload(const float *p, int n) { return n == VL ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, tailmask(n)); }
INLINE void mstore(float *p, vf x, int n) {
    if (n == VL) _mm256_storeu_ps(p, x);
    else _mm256_maskstore_ps(p, tailmask(n), x);
}
INLINE float vmax(vf x) {
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    return _mm_cvtss_f32(_mm_max_ss(h, _mm_movehdup_ps(h)));
}
#endif

static inline int imin(int64_t a, int64_t b) { return (int)(a < b ? a : b); }
static inline int imax(int64_t a, int64_t b) { return (int)(a > b ? a : b); }

/* One row's update with the VL keys of lanes a..b−1 (scores sv, unscaled), whose values start at vrow. */
INLINE void row_update(vf sv, int a, int b, float scale, const float *vrow, int64_t v_stride, int64_t hd,
                       float *m, float *l, float *acc) {
    vmask mk = lanes(a, b);
    vf s = masked(VMUL(sv, VSET1(scale)), mk, -__builtin_inff());
    float mb = vmax(s), mnew = *m > mb ? *m : mb;
    float alpha = goss_expf(*m - mnew);
    vf p = masked(VEXP(VSUB(s, VSET1(mnew))), mk, 0.0f);
    *l = *l * alpha + VHSUM(p);
    _Alignas(64) float pv[VL];
#ifdef __AVX512F__
    _mm512_store_ps(pv, p);
#else
    _mm256_store_ps(pv, p);
#endif
    for (int64_t d = 0; d < hd; d += VL) {
        int n = imin(VL, hd - d);
        vf o = VMUL(mload(acc + d, n), VSET1(alpha));
        for (int j = a; j < b; j++) o = VFMA(VSET1(pv[j]), mload(vrow + j * v_stride + d, n), o);
        mstore(acc + d, o, n);
    }
    *m = mnew;
}

void GOSS_FN(attn_update)(const float *q, int64_t q_stride, int64_t nt, int64_t group, int64_t hd, int64_t qpos0,
                          int64_t window, const float *kt, int64_t kt_block, const float *v, int64_t v_stride,
                          int64_t s0, int64_t count, int64_t kpos0, float scale, float *m, float *l, float *acc) {
    const int64_t rows = nt * group, end = s0 + count;
    for (int64_t sb = s0 & ~(int64_t)(VL - 1); sb < end; sb += VL) {
        /* lanes j hold slots sb + j; those in the run are lo..hi−1, at positions P0 + j */
        const float *kb = kt + (sb >> 4) * kt_block + (sb & 15);
        const int lo = imax(0, s0 - sb), hi = imin(VL, end - sb);
        const int64_t P0 = kpos0 + (sb - s0);
        for (int64_t r0 = 0; r0 < rows; r0 += RT) {
            const int nr = imin(RT, rows - r0);
            const float *qr[RT];
            vf sc[RT];
            _Pragma("GCC unroll 8")
            for (int r = 0; r < RT; r++) {
                int64_t row = r0 + (r < nr ? r : 0);
                qr[r] = q + (row / group) * q_stride + (row % group) * hd;
                sc[r] = VZERO;
            }
            for (int64_t c = 0; c < hd; c++) {
                vf kv = VLOAD(kb + c * 16);
                _Pragma("GCC unroll 8")
                for (int r = 0; r < RT; r++) sc[r] = VFMA(VSET1(qr[r][c]), kv, sc[r]);
            }
            for (int r = 0; r < nr; r++) {
                int64_t row = r0 + r, p = qpos0 + row / group;
                int a = lo, b = hi;                       /* causal: P ≤ p; window: P > p − W */
                if (p - P0 + 1 < b) b = imax(0, p - P0 + 1);
                if (window > 0 && p - window + 1 - P0 > a) a = imin(VL, p - window + 1 - P0);
                if (a >= b) continue;
                row_update(sc[r], a, b, scale, v + sb * v_stride, v_stride, hd, m + row, l + row, acc + row * hd);
            }
        }
    }
}

void GOSS_FN(attn_merge)(int64_t rows, int64_t hd, float *m, float *l, float *acc, const float *m2, const float *l2,
                         const float *acc2) {
    for (int64_t r = 0; r < rows; r++) {
        float M = m[r] > m2[r] ? m[r] : m2[r];
        if (M == -__builtin_inff()) continue; /* neither saw a key */
        float a1 = goss_expf(m[r] - M), a2 = goss_expf(m2[r] - M);
        l[r] = l[r] * a1 + l2[r] * a2;
        for (int64_t d = 0; d < hd; d += VL) {
            int n = imin(VL, hd - d);
            mstore(acc + r * hd + d, VFMA(mload(acc + r * hd + d, n), VSET1(a1), VMUL(mload(acc2 + r * hd + d, n), VSET1(a2))), n);
        }
        m[r] = M;
    }
}

void GOSS_FN(attn_finish)(int64_t nt, int64_t group, int64_t hd, const float *m, const float *l, const float *acc,
                          const float *sinks, float *out, int64_t out_stride) {
    for (int64_t t = 0; t < nt; t++)
        for (int64_t h = 0; h < group; h++) {
            int64_t r = t * group + h;
            float S = sinks[h], M = m[r] > S ? m[r] : S;
            float a = goss_expf(m[r] - M), z = l[r] * a + goss_expf(S - M), f = a / z;
            for (int64_t d = 0; d < hd; d += VL) {
                int n = imin(VL, hd - d);
                mstore(out + t * out_stride + h * hd + d, VMUL(mload(acc + r * hd + d, n), VSET1(f)), n);
            }
        }
}
