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
 * The cache stores its numbers as kv_type (KvType's ordinal, goss_cpu.h GOSS_CPU_KV_*), in those layouts with
 * narrower elements, and each reads back as exactly the float KvType.round gives:
 *
 *     F32: x,   F16: x = half(h),   BF16: x = float(b << 16),   Q8_0: x = q · half(dh)
 *
 * (Q8_0: int8 q and one F16 scale dh per block of 32 channels of a row, blocks counted from the row's channel 0, so
 * the head's first channel chan0 says where its blocks begin; q·dh is exact in float). The scales are arrays of
 * their own: the keys' in the keys' 16-slot blocks, ks[(s >> 4)·16·nb + b·16 + (s & 15)], the values' row-major,
 * vs[s·nb + b] (nb blocks per row; ks and vs point at slot 0, block 0). A typed chunk is decoded once into the
 * caller's scratch, in the F32 layouts, and then runs the F32 code: a typed cache attends bit for bit as an F32
 * cache holding the rounded numbers.
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

/* n ≤ 8 stored numbers (not F32) at p as floats, lanes n..7 zero and nothing past them read: F16 and BF16 as they
 * read back, Q8_0 as its integers q (the caller multiplies by the scale). */
INLINE __m256 kv_load8(int type, const char *p, int64_t n) {
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

/* Keys of the n slots c0 .. c0+n−1 (whole 16-slot blocks; c0 a multiple of 16), channels 0..hd−1 of the head, as
 * floats in the F32 layout with blocks of 16·hd:  dst[(j >> 4)·16·hd + c·16 + (j & 15)] = k(c0 + j, c)
 * (Q8_0: q · half(dh) with the slot's scale of block (chan0 + c) >> 5). The next chunk's keys are prefetched. */
INLINE void decode_keys(int type, const char *kt, int64_t kt_block, const uint16_t *ks, int64_t nb, int64_t chan0,
                        int64_t hd, int64_t c0, int64_t n, float *dst) {
    const int64_t es = kv_size(type);
    for (int64_t j = 0; j < n; j += 16) {
        const int64_t blk = (c0 + j) >> 4;
        const char *src = kt + blk * kt_block * es, *pf = kt + (blk + CHUNK / 16) * kt_block * es;
        float *d = dst + (j >> 4) * 16 * hd;
        for (int64_t c = 0; c < hd;) {
            /* channels c .. cend−1: for Q8_0 those of one block, the 16 slots' scales f0 (slots 0..7), f1 (8..15) */
            int64_t cend = hd;
            __m256 f0 = _mm256_setzero_ps(), f1 = f0;
            if (type == GOSS_CPU_KV_Q8_0) {
                cend = min64(hd, ((chan0 + c) | 31) + 1 - chan0);
                const uint16_t *sc = ks + blk * 16 * nb + ((chan0 + c) >> 5) * 16;
                f0 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)sc));
                f1 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(sc + 8)));
            }
            for (; c < cend; c++) {
                if ((16 * c * es) % 64 == 0) _mm_prefetch(pf + 16 * c * es, _MM_HINT_T0);
                __m256 k0 = kv_load8(type, src + 16 * c * es, 8), k1 = kv_load8(type, src + (16 * c + 8) * es, 8);
                if (type == GOSS_CPU_KV_Q8_0) {
                    k0 = _mm256_mul_ps(k0, f0);
                    k1 = _mm256_mul_ps(k1, f1);
                }
                _mm256_storeu_ps(d + 16 * c, k0);
                _mm256_storeu_ps(d + 16 * c + 8, k1);
            }
        }
    }
}

/* Values of the slots c0+ja .. c0+jb−1, channels 0..hd−1 of the head, as float rows:  dst[j·hd + d] = v(c0 + j, d)
 * (Q8_0: q · half(dh) with the row's scale of block (chan0 + d) >> 5). The next chunk's rows are prefetched. */
INLINE void decode_values(int type, const char *v, int64_t v_stride, const uint16_t *vs, int64_t nb, int64_t chan0,
                          int64_t hd, int64_t c0, int64_t ja, int64_t jb, float *dst) {
    const int64_t es = kv_size(type);
    for (int64_t j = ja; j < jb; j++) {
        const char *src = v + (c0 + j) * v_stride * es;
        for (int64_t d = 0; d < hd * es; d += 64) _mm_prefetch(src + CHUNK * v_stride * es + d, _MM_HINT_T0);
        const uint16_t *sj = type == GOSS_CPU_KV_Q8_0 ? vs + (c0 + j) * nb : 0;
        for (int64_t d = 0; d < hd; d += 8) {
            const int64_t n = min64(8, hd - d);
            __m256 x = kv_load8(type, src + d * es, n);
            if (type == GOSS_CPU_KV_Q8_0) {
                /* lanes of channel chan0+d.. in block b, and from lane `first` on (if any) in block b + 1 */
                const int64_t ch = chan0 + d, b = ch >> 5, first = 32 - (ch & 31);
                __m256 f = _mm256_set1_ps(_cvtsh_ss(sj[b]));
                if (first < n)
                    f = _mm256_blendv_ps(f, _mm256_set1_ps(_cvtsh_ss(sj[b + 1])),
                                         _mm256_castsi256_ps(_mm256_cmpgt_epi32(
                                             _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32((int)first - 1))));
                x = _mm256_mul_ps(x, f);
            }
            mstore(dst + j * hd + d, x, n);
        }
    }
}

/* Scores of 4 rows (q pointers qr, hd channels) against the 16 slots of one key block kb: s[r·CHUNK + 0..15]. */
INLINE void scores4(const float *const qr[4], const float *kb, int64_t hd, float scale, float *s, const float *pf) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, b0 = a0, b1 = a0, c0 = a0, c1 = a0, d0 = a0, d1 = a0;
    for (int64_t c = 0; c < hd; c++) {
        if (pf) _mm_prefetch((const char *)(pf + 16 * c), _MM_HINT_T0);
        __m256 k0 = _mm256_loadu_ps(kb + 16 * c), k1 = _mm256_loadu_ps(kb + 16 * c + 8);
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
 * the last vector holds `tail` (1..8) channels. */
INLINE void pv_tile(int nr, int nv, int64_t tail, float *const accr[2], const float alpha[2], const float *const pr[2],
                    const float *vrow, int64_t v_stride, int64_t a, int64_t b, int pf) {
    __m256 o[2][4];
    _Pragma("GCC unroll 2")
    for (int r = 0; r < nr; r++) {
        __m256 f = _mm256_set1_ps(alpha[r]);
        _Pragma("GCC unroll 4")
        for (int i = 0; i < nv; i++) o[r][i] = _mm256_mul_ps(mload(accr[r] + 8 * i, i == nv - 1 ? tail : 8), f);
    }
    for (int64_t j = a; j < b; j++) {
        const float *vj = vrow + j * v_stride;
        if (pf) {
            _mm_prefetch((const char *)(vj + CHUNK * v_stride), _MM_HINT_T0);
            if (nv > 2) _mm_prefetch((const char *)(vj + CHUNK * v_stride + 16), _MM_HINT_T0);
        }
        __m256 w[4];
        _Pragma("GCC unroll 4")
        for (int i = 0; i < nv; i++) w[i] = mload(vj + 8 * i, i == nv - 1 ? tail : 8);
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

/* pv_tile over all channels, 32 at a time (constant tile shapes keep the accumulators in registers). */
INLINE void pv_rows(int nr, float *const accr[2], const float alpha[2], const float *const pr[2], const float *vrow,
                    int64_t v_stride, int64_t hd, int64_t a, int64_t b, int pf) {
    for (int64_t d0 = 0; d0 < hd; d0 += 32) {
        int64_t w = min64(32, hd - d0), tail = w - 8 * ((w - 1) / 8);
        int nv = (int)((w + 7) / 8);
        float *acc2[2] = {accr[0] + d0, accr[1] + d0};
        const float *v = vrow + d0;
        if (nr == 2) {
            switch (nv) {
                case 1: pv_tile(2, 1, tail, acc2, alpha, pr, v, v_stride, a, b, pf); break;
                case 2: pv_tile(2, 2, tail, acc2, alpha, pr, v, v_stride, a, b, pf); break;
                case 3: pv_tile(2, 3, tail, acc2, alpha, pr, v, v_stride, a, b, pf); break;
                default: pv_tile(2, 4, tail, acc2, alpha, pr, v, v_stride, a, b, pf); break;
            }
        } else {
            switch (nv) {
                case 1: pv_tile(1, 1, tail, acc2, alpha, pr, v, v_stride, a, b, pf); break;
                case 2: pv_tile(1, 2, tail, acc2, alpha, pr, v, v_stride, a, b, pf); break;
                case 3: pv_tile(1, 3, tail, acc2, alpha, pr, v, v_stride, a, b, pf); break;
                default: pv_tile(1, 4, tail, acc2, alpha, pr, v, v_stride, a, b, pf); break;
            }
        }
    }
}

/* attn_update for one kv type (a constant in each caller, so every type gets code of its own; F32's is the
 * plain kernel). A typed chunk is first decoded into scratch: keys at scratch (blocks of 16·hd), values at
 * scratch + CHUNK·hd (rows of hd, those the run holds). */
INLINE void update(int type, const float *q, int64_t q_stride, int64_t nt, int64_t group, int64_t hd, int64_t qpos0,
                   int64_t window, const void *k_in, int64_t kt_block, const void *v_in, int64_t v_stride,
                   const uint16_t *ks, const uint16_t *vs, int64_t nb, int64_t chan0, int64_t s0, int64_t count,
                   int64_t kpos0, float scale, float *m, float *l, float *acc, float *scratch) {
    const int f32 = type == GOSS_CPU_KV_F32;
    const float *kt = k_in, *v = v_in; /* F32 */
    const int64_t rows = nt * group, end = s0 + count, base = kpos0 - s0; /* slot σ holds position σ + base */
    _Alignas(32) float s[ROWS * CHUNK];
    float alpha[ROWS];
    for (int64_t r0 = 0; r0 < rows; r0 += ROWS) {
        const int64_t nr = min64(ROWS, rows - r0);
        for (int64_t c0 = s0 & ~(int64_t)15; c0 < end; c0 += CHUNK) {
            /* slots c0 .. c0+n−1: whole key blocks, those past the run masked below */
            const int64_t n = min64(CHUNK, ((end - c0) + 15) & ~(int64_t)15);
            /* this chunk's keys (kc, blocks of kc_block) and values (vc: slot c0's row, rows of vc_stride) as floats */
            const float *kc, *vc;
            int64_t kc_block, vc_stride;
            if (f32) {
                kc = kt + (c0 >> 4) * kt_block;
                vc = v + c0 * v_stride;
                kc_block = kt_block;
                vc_stride = v_stride;
            } else {
                decode_keys(type, k_in, kt_block, ks, nb, chan0, hd, c0, n, scratch);
                decode_values(type, v_in, v_stride, vs, nb, chan0, hd, c0, max64(s0, c0) - c0, min64(end, c0 + n) - c0,
                              scratch + CHUNK * hd);
                kc = scratch;
                vc = scratch + CHUNK * hd;
                kc_block = 16 * hd;
                vc_stride = hd;
            }
            for (int64_t i = 0; i < nr; i += 4) {
                const float *qr[4];
                _Pragma("GCC unroll 4")
                for (int k = 0; k < 4; k++) {
                    int64_t row = r0 + min64(i + k, nr - 1); /* rows past nr repeat the last; their scores are not read */
                    qr[k] = q + (row / group) * q_stride + (row % group) * hd;
                }
                float tmp[4 * CHUNK], *dst = i + 4 <= nr ? s + i * CHUNK : tmp;
                for (int64_t j = 0; j < n; j += 16)
                    scores4(qr, kc + (j >> 4) * kc_block, hd, scale, dst + j,
                            f32 && i == 0 ? kt + ((c0 + j + CHUNK) >> 4) * kt_block : 0);
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
                    pv_rows(nrow, accr, al, pr, vc, vc_stride, hd, a, b, f32 && row == h0);
                }
            }
        }
    }
}

void GOSS_FN(attn_update)(const float *q, int64_t q_stride, int64_t nt, int64_t group, int64_t hd, int64_t qpos0,
                          int64_t window, int32_t kv_type, const void *kt, int64_t kt_block, const void *v,
                          int64_t v_stride, const uint16_t *ks, const uint16_t *vs, int64_t nb, int64_t chan0,
                          int64_t s0, int64_t count, int64_t kpos0, float scale, float *m, float *l, float *acc,
                          float *scratch) {
#define UPDATE(T)                                                                                                    \
    update(T, q, q_stride, nt, group, hd, qpos0, window, kt, kt_block, v, v_stride, ks, vs, nb, chan0, s0, count, \
           kpos0, scale, m, l, acc, scratch)
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
