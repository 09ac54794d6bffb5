/*
 * attention.c — causal grouped-query attention with sinks, as an online softmax over chunks of keys.
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
 * Keys come in the cpu backend's cache layout: blocks of 16 slots, transposed so that one vector holds 8 slots
 * of one channel: element (slot s, channel c) at kt[(s >> 4)·kt_block + c·16 + (s & 15)] (kt points at the head's
 * channel 0). Values are rows: v[s·v_stride + d]. A run is the slots s0 .. s0+count−1, holding positions
 * kpos0 .. kpos0+count−1.
 *
 * The cache stores each number as kv_type (KvType's ordinal, goss_cpu.h GOSS_CPU_KV_*), and a stored number reads
 * back as exactly the float KvType.round gives:
 *
 *     F32: x,   F16: x = half(h),   BF16: x = float(b << 16),   Q8_0: x = q · half(dh)
 *
 * (Q8_0: int8 q, one F16 scale dh per block of 32 channels of a row, blocks counted from the row's channel 0, so the
 * head's first channel chan0 says where its blocks start; q·dh is exact in float). The decoded number enters the
 * same sums in the same order as an F32 key or value: a typed cache attends bit for bit as an F32 cache holding the
 * rounded numbers. The arrays keep the F32 layouts with narrower elements; Q8_0's scales are arrays of their own,
 * the keys' in the keys' 16-slot blocks, ks[(s >> 4)·16·nb + b·16 + (s & 15)], the values' row-major, vs[s·nb + b]
 * (nb blocks per row; ks and vs point at slot 0, block 0).
 *
 * attn_update works like a flash-attention tile: for each chunk of up to 64 slots, first every row's scores
 * (a register-blocked product: 4 rows × 16 slots per pass over the channels), then per row the chunk's max,
 * e^(s − m) and the rescale of its state, then acc += P·V (2 rows of one token × 32 channels per pass over the
 * chunk's value rows). Only value rows a token may see enter its sum. Every sum runs in a fixed order, so results
 * do not depend on threads. The same 256-bit code runs in every kernel set (AVX-512 builds included): it is
 * bound by the FMA ports on 256-bit machines and by the cache's bandwidth on wider ones.
 */
#include "isa.h"
#include "vexp.h"

#define INLINE static inline __attribute__((always_inline))

/* Slots per chunk (4 key blocks) and rows whose scores are kept at once. */
enum { CHUNK = 64, ROWS = 32 };

static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* Lanes 0..n−1 of 8 (n ≤ 8). */
INLINE __m256i tailmask(int64_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
INLINE __m256 mload(const float *p, int64_t n) { return n >= 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, tailmask(n)); }
INLINE void mstore(float *p, __m256 x, int64_t n) {
    if (n >= 8) _mm256_storeu_ps(p, x);
    else _mm256_maskstore_ps(p, tailmask(n), x);
}
INLINE float hmax(__m256 x) {
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    return _mm_cvtss_f32(_mm_max_ss(h, _mm_movehdup_ps(h)));
}

/* Bytes of one stored number of kv type `type`. */
INLINE int64_t kv_size(int type) { return type == GOSS_CPU_KV_F32 ? 4 : type == GOSS_CPU_KV_Q8_0 ? 1 : 2; }

/* n ≤ 8 stored numbers at p as floats (lanes n..7 read as 0, nothing past them is touched): F32, F16 and BF16 as
 * they read back, Q8_0 as its integers q (the caller multiplies by the scale). */
INLINE __m256 kv_load8(int type, const char *p, int64_t n) {
    if (type == GOSS_CPU_KV_F32) return mload((const float *)p, n);
    __m128i x;
    if (n >= 8)
        x = type == GOSS_CPU_KV_Q8_0 ? _mm_loadl_epi64((const __m128i *)p) : _mm_loadu_si128((const __m128i *)p);
    else {
        x = _mm_setzero_si128();
        memcpy(&x, p, (size_t)(n * kv_size(type)));
    }
    switch (type) {
        case GOSS_CPU_KV_F16: return _mm256_cvtph_ps(x);
        case GOSS_CPU_KV_BF16: return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(x), 16));
        default: return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(x));
    }
}

/* Scores of 4 rows (q pointers qr, hd channels) against the 16 slots of one key block kb (numbers of kv type `type`;
 * for Q8_0 the block's scales ksb and the head's first channel chan0): s[r·CHUNK + 0..15]. */
INLINE void scores4(int type, const float *const qr[4], const char *kb, const uint16_t *ksb, int64_t chan0,
                    int64_t hd, float scale, float *s, const char *pf) {
    const int64_t es = kv_size(type);
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, b0 = a0, b1 = a0, c0 = a0, c1 = a0, d0 = a0, d1 = a0;
    for (int64_t c = 0; c < hd;) {
        /* channels c .. cend−1: for Q8_0 those of one block, whose 16 slots' scales are q0 (slots 0..7), q1 (8..15) */
        int64_t cend = hd;
        __m256 q0 = _mm256_setzero_ps(), q1 = q0;
        if (type == GOSS_CPU_KV_Q8_0) {
            cend = min64(hd, ((chan0 + c) | 31) + 1 - chan0);
            const uint16_t *sc = ksb + ((chan0 + c) >> 5) * 16;
            q0 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)sc));
            q1 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(sc + 8)));
        }
        for (; c < cend; c++) {
            if (pf && (16 * c * es) % 64 == 0) _mm_prefetch(pf + 16 * c * es, _MM_HINT_T0);
            __m256 k0 = kv_load8(type, kb + 16 * c * es, 8), k1 = kv_load8(type, kb + (16 * c + 8) * es, 8);
            if (type == GOSS_CPU_KV_Q8_0) {
                k0 = _mm256_mul_ps(k0, q0);
                k1 = _mm256_mul_ps(k1, q1);
            }
            __m256 x = _mm256_broadcast_ss(qr[0] + c);
            a0 = _mm256_fmadd_ps(x, k0, a0);
            a1 = _mm256_fmadd_ps(x, k1, a1);
            x = _mm256_broadcast_ss(qr[1] + c);
            b0 = _mm256_fmadd_ps(x, k0, b0);
            b1 = _mm256_fmadd_ps(x, k1, b1);
            x = _mm256_broadcast_ss(qr[2] + c);
            c0 = _mm256_fmadd_ps(x, k0, c0);
            c1 = _mm256_fmadd_ps(x, k1, c1);
            x = _mm256_broadcast_ss(qr[3] + c);
            d0 = _mm256_fmadd_ps(x, k0, d0);
            d1 = _mm256_fmadd_ps(x, k1, d1);
        }
    }
    const __m256 f = _mm256_set1_ps(scale);
    _mm256_storeu_ps(s, _mm256_mul_ps(a0, f));
    _mm256_storeu_ps(s + 8, _mm256_mul_ps(a1, f));
    _mm256_storeu_ps(s + CHUNK, _mm256_mul_ps(b0, f));
    _mm256_storeu_ps(s + CHUNK + 8, _mm256_mul_ps(b1, f));
    _mm256_storeu_ps(s + 2 * CHUNK, _mm256_mul_ps(c0, f));
    _mm256_storeu_ps(s + 2 * CHUNK + 8, _mm256_mul_ps(c1, f));
    _mm256_storeu_ps(s + 3 * CHUNK, _mm256_mul_ps(d0, f));
    _mm256_storeu_ps(s + 3 * CHUNK + 8, _mm256_mul_ps(d1, f));
}

/* One row's online-softmax step over chunk lanes a..b−1 of its scores s (lanes 0..n−1 filled, n a multiple of 8):
 * s becomes e^(s − m_new) there and 0 elsewhere, l and m move on, and the factor acc must be scaled by is returned. */
INLINE float softmax_step(float *s, int64_t n, int64_t a, int64_t b, float *m, float *l) {
    const __m256 ninf = _mm256_set1_ps(-__builtin_inff());
    __m256 mx = ninf;
    for (int64_t j = 0; j < n; j += 8) {
        __m256i lane = _mm256_add_epi32(_mm256_set1_epi32((int)j), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        __m256 in = _mm256_castsi256_ps(_mm256_and_si256(_mm256_cmpgt_epi32(lane, _mm256_set1_epi32((int)a - 1)),
                                                         _mm256_cmpgt_epi32(_mm256_set1_epi32((int)b), lane)));
        __m256 x = _mm256_blendv_ps(ninf, _mm256_loadu_ps(s + j), in);
        _mm256_storeu_ps(s + j, x);
        mx = _mm256_max_ps(mx, x);
    }
    float mb = hmax(mx), mnew = *m > mb ? *m : mb;
    float alpha = goss_expf(*m - mnew);
    __m256 sum = _mm256_setzero_ps(), mv = _mm256_set1_ps(mnew);
    for (int64_t j = 0; j < n; j += 8) {
        __m256 p = goss_exp256(_mm256_sub_ps(_mm256_loadu_ps(s + j), mv)); /* −∞ → 0 */
        _mm256_storeu_ps(s + j, p);
        sum = _mm256_add_ps(sum, p);
    }
    *l = *l * alpha + goss_hsum256(sum);
    *m = mnew;
    return alpha;
}

/* acc_r = acc_r·alpha_r + Σ_{j=a..b−1} p_r[j]·v_j for nr ≤ 2 rows (the same token), channels d0 .. d0+8·nv−1 of which
 * the last vector holds `tail` (1..8) channels: vrow is channel d0 of row 0 (numbers of kv type `type`); for Q8_0, vs
 * is row 0's scales (nb per row) and ch the row's channel that d0 is. */
INLINE void pv_tile(int type, int nr, int nv, int64_t tail, float *const accr[2], const float alpha[2],
                    const float *const pr[2], const char *vrow, int64_t v_stride, const uint16_t *vs, int64_t nb,
                    int64_t ch, int64_t a, int64_t b, int pf) {
    const int64_t es = kv_size(type);
    __m256 o[2][4];
    /* Q8_0: vector i's lanes lie in block blk[i] of the row, and from lane `first` on in the next one where cross[i];
     * when ch starts a block, every vector of the tile (≤ 32 channels) lies in block blk[0] */
    int64_t blk[4] = {0, 0, 0, 0};
    int cross[4] = {0, 0, 0, 0};
    __m256 next[4];
    const int one = (ch & 31) == 0;
    if (type == GOSS_CPU_KV_Q8_0) {
        _Pragma("GCC unroll 4")
        for (int i = 0; i < nv; i++) {
            int64_t c = ch + 8 * i, first = 32 - (c & 31);
            blk[i] = c >> 5;
            cross[i] = first < (i == nv - 1 ? tail : 8);
            next[i] = _mm256_castsi256_ps(
                _mm256_cmpgt_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32((int)first - 1)));
        }
    }
    _Pragma("GCC unroll 2")
    for (int r = 0; r < nr; r++) {
        __m256 f = _mm256_set1_ps(alpha[r]);
        _Pragma("GCC unroll 4")
        for (int i = 0; i < nv; i++) o[r][i] = _mm256_mul_ps(mload(accr[r] + 8 * i, i == nv - 1 ? tail : 8), f);
    }
    for (int64_t j = a; j < b; j++) {
        const char *vj = vrow + j * v_stride * es;
        if (pf) {
            _mm_prefetch(vj + CHUNK * v_stride * es, _MM_HINT_T0);
            if (nv * 8 * es > 64) _mm_prefetch(vj + CHUNK * v_stride * es + 64, _MM_HINT_T0);
        }
        __m256 w[4];
        _Pragma("GCC unroll 4")
        for (int i = 0; i < nv; i++) w[i] = kv_load8(type, vj + 8 * i * es, i == nv - 1 ? tail : 8);
        if (type == GOSS_CPU_KV_Q8_0) {
            const uint16_t *sj = vs + j * nb;
            if (one) {
                __m256 d = _mm256_set1_ps(_cvtsh_ss(sj[blk[0]]));
                _Pragma("GCC unroll 4")
                for (int i = 0; i < nv; i++) w[i] = _mm256_mul_ps(w[i], d);
            } else {
                _Pragma("GCC unroll 4")
                for (int i = 0; i < nv; i++) {
                    __m256 d = _mm256_set1_ps(_cvtsh_ss(sj[blk[i]]));
                    if (cross[i]) d = _mm256_blendv_ps(d, _mm256_set1_ps(_cvtsh_ss(sj[blk[i] + 1])), next[i]);
                    w[i] = _mm256_mul_ps(w[i], d);
                }
            }
        }
        _Pragma("GCC unroll 2")
        for (int r = 0; r < nr; r++) {
            __m256 p = _mm256_broadcast_ss(pr[r] + j);
            _Pragma("GCC unroll 4")
            for (int i = 0; i < nv; i++) o[r][i] = _mm256_fmadd_ps(p, w[i], o[r][i]);
        }
    }
    _Pragma("GCC unroll 2")
    for (int r = 0; r < nr; r++) {
        _Pragma("GCC unroll 4")
        for (int i = 0; i < nv; i++) mstore(accr[r] + 8 * i, o[r][i], i == nv - 1 ? tail : 8);
    }
}

/* pv_tile over all channels, 32 at a time (constant tile shapes keep the accumulators in registers); vrow, vs and
 * chan0 as pv_tile's for channel 0 of the head. */
INLINE void pv_rows(int type, int nr, float *const accr[2], const float alpha[2], const float *const pr[2],
                    const char *vrow, int64_t v_stride, const uint16_t *vs, int64_t nb, int64_t chan0, int64_t hd,
                    int64_t a, int64_t b, int pf) {
    const int64_t es = kv_size(type);
    for (int64_t d0 = 0; d0 < hd; d0 += 32) {
        int64_t w = min64(32, hd - d0), tail = w - 8 * ((w - 1) / 8);
        int nv = (int)((w + 7) / 8);
        float *acc2[2] = {accr[0] + d0, accr[1] + d0};
        const char *v = vrow + d0 * es;
#define PV(NR, NV) pv_tile(type, NR, NV, tail, acc2, alpha, pr, v, v_stride, vs, nb, chan0 + d0, a, b, pf)
        if (nr == 2) {
            switch (nv) {
                case 1: PV(2, 1); break;
                case 2: PV(2, 2); break;
                case 3: PV(2, 3); break;
                default: PV(2, 4); break;
            }
        } else {
            switch (nv) {
                case 1: PV(1, 1); break;
                case 2: PV(1, 2); break;
                case 3: PV(1, 3); break;
                default: PV(1, 4); break;
            }
        }
#undef PV
    }
}

/* attn_update for one kv type (a constant in each caller, so every type gets code of its own). */
INLINE void update(int type, const float *q, int64_t q_stride, int64_t nt, int64_t group, int64_t hd, int64_t qpos0,
                   int64_t window, const char *kt, int64_t kt_block, const char *v, int64_t v_stride,
                   const uint16_t *ks, const uint16_t *vs, int64_t nb, int64_t chan0, int64_t s0, int64_t count,
                   int64_t kpos0, float scale, float *m, float *l, float *acc) {
    const int64_t es = kv_size(type), q8 = type == GOSS_CPU_KV_Q8_0;
    const int64_t rows = nt * group, end = s0 + count, base = kpos0 - s0; /* slot σ holds position σ + base */
    _Alignas(32) float s[ROWS * CHUNK];
    float alpha[ROWS];
    for (int64_t r0 = 0; r0 < rows; r0 += ROWS) {
        const int64_t nr = min64(ROWS, rows - r0);
        for (int64_t c0 = s0 & ~(int64_t)15; c0 < end; c0 += CHUNK) {
            /* slots c0 .. c0+n−1: whole key blocks, those past the run masked below */
            const int64_t n = min64(CHUNK, ((end - c0) + 15) & ~(int64_t)15);
            for (int64_t i = 0; i < nr; i += 4) {
                const float *qr[4];
                _Pragma("GCC unroll 4")
                for (int k = 0; k < 4; k++) {
                    int64_t row = r0 + min64(i + k, nr - 1); /* rows past nr repeat the last; their scores are not read */
                    qr[k] = q + (row / group) * q_stride + (row % group) * hd;
                }
                float tmp[4 * CHUNK], *dst = i + 4 <= nr ? s + i * CHUNK : tmp;
                for (int64_t j = 0; j < n; j += 16) {
                    const int64_t blk = (c0 + j) >> 4;
                    scores4(type, qr, kt + blk * kt_block * es, q8 ? ks + blk * 16 * nb : 0, chan0, hd, scale,
                            dst + j, i == 0 ? kt + ((c0 + j + CHUNK) >> 4) * kt_block * es : 0);
                }
                if (dst == tmp) memcpy(s + i * CHUNK, tmp, sizeof(float) * CHUNK * (nr - i));
            }
            /* per token: the chunk lanes it sees (run bounds, causal, window), then its rows' softmax and P·V */
            for (int64_t t = (r0 / group); t * group < r0 + nr; t++) {
                const int64_t p = qpos0 + t;
                int64_t lo = max64(s0, c0), hi = min64(end, min64(c0 + n, p + 1 - base));
                if (window > 0) lo = max64(lo, p - window + 1 - base);
                const int64_t a = lo - c0, b = hi - c0, h0 = max64(t * group, r0), h1 = min64((t + 1) * group, r0 + nr);
                if (a >= b) continue;
                for (int64_t row = h0; row < h1; row++)
                    alpha[row - r0] = softmax_step(s + (row - r0) * CHUNK, n, a, b, m + row, l + row);
                for (int64_t row = h0; row < h1; row += 2) {
                    int nrow = row + 1 < h1 ? 2 : 1;
                    float *accr[2] = {acc + row * hd, acc + (row + nrow - 1) * hd};
                    const float *pr[2] = {s + (row - r0) * CHUNK, s + (row + nrow - 1 - r0) * CHUNK};
                    const float al[2] = {alpha[row - r0], alpha[row + nrow - 1 - r0]};
                    pv_rows(type, nrow, accr, al, pr, v + c0 * v_stride * es, v_stride, q8 ? vs + c0 * nb : 0, nb,
                            chan0, hd, a, b, row == h0);
                }
            }
        }
    }
}

void GOSS_FN(attn_update)(const float *q, int64_t q_stride, int64_t nt, int64_t group, int64_t hd, int64_t qpos0,
                          int64_t window, int32_t kv_type, const void *kt, int64_t kt_block, const void *v,
                          int64_t v_stride, const uint16_t *ks, const uint16_t *vs, int64_t nb, int64_t chan0,
                          int64_t s0, int64_t count, int64_t kpos0, float scale, float *m, float *l, float *acc) {
#define UPDATE(T) \
    update(T, q, q_stride, nt, group, hd, qpos0, window, kt, kt_block, v, v_stride, ks, vs, nb, chan0, s0, count, \
           kpos0, scale, m, l, acc)
    switch (kv_type) {
        case GOSS_CPU_KV_F16: UPDATE(GOSS_CPU_KV_F16); break;
        case GOSS_CPU_KV_BF16: UPDATE(GOSS_CPU_KV_BF16); break;
        case GOSS_CPU_KV_Q8_0: UPDATE(GOSS_CPU_KV_Q8_0); break;
        default: UPDATE(GOSS_CPU_KV_F32); break;
    }
#undef UPDATE
}

void GOSS_FN(attn_merge)(int64_t rows, int64_t hd, float *m, float *l, float *acc, const float *m2, const float *l2,
                         const float *acc2) {
    for (int64_t r = 0; r < rows; r++) {
        float M = m[r] > m2[r] ? m[r] : m2[r];
        if (M == -__builtin_inff()) continue; /* neither saw a key */
        float a1 = goss_expf(m[r] - M), a2 = goss_expf(m2[r] - M);
        l[r] = l[r] * a1 + l2[r] * a2;
        for (int64_t d = 0; d < hd; d += 8) {
            int64_t n = min64(8, hd - d);
            mstore(acc + r * hd + d, _mm256_fmadd_ps(mload(acc + r * hd + d, n), _mm256_set1_ps(a1),
                                                     _mm256_mul_ps(mload(acc2 + r * hd + d, n), _mm256_set1_ps(a2))), n);
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
            for (int64_t d = 0; d < hd; d += 8) {
                int64_t n = min64(8, hd - d);
                mstore(out + t * out_stride + h * hd + d, _mm256_mul_ps(mload(acc + r * hd + d, n), _mm256_set1_ps(f)), n);
            }
        }
}
