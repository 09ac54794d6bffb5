/*
 * tile_gemm.c — quantized weights (mx4 or q8 tiles, goss_cpu.h) times q8 activation rows:
 *
 *     out[t, r] = Σ_b  w_scale[r, b] · x_scale[t, b] · Σ_{k ∈ b} w[r, k] · q[t, k]   (+ bias[r])
 *
 * Inner sums are exact int32; each block's partial is scaled and added in float, blocks in order, so the
 * result does not depend on threads or tiling. One vector holds 16 rows (AVX-512) or 8 rows (AVX2) of one
 * 4-column quad; the 4 activation bytes of that quad are broadcast, and a byte dot product (vpdpbusd, or
 * vpmaddubsw + vpmaddwd on AVX2) adds each row's 4 products into its own int32 lane.
 *
 * Byte dot products multiply unsigned by signed bytes, so weights go in unsigned with an offset:
 *   mx4: code → 2·FP4(code) + 12 ∈ [0, 24] by a 16-entry table; the block sum is corrected by −12·s_b and
 *        the scale is the halved E8M0, 2^(e−128) (the table is doubled);
 *   q8 (AVX-512): w + 128 ∈ [0, 255] (xor 0x80), corrected by −128·s_b; scale = the F16 scale;
 *   q8 (AVX2): |w| times the activation with w's sign (vpsignb), no correction (vpmaddubsw's int16 pair
 *        sums stay below 2·128·127 < 2^15); with AVX-VNNI (256-bit vpdpbusd) as on AVX-512.
 * Tokens are taken 8 (AVX-512) or 4 (AVX2) at a time while the group's decoded weights stay in registers.
 */
#include "isa.h"

enum { MX4 = 0, Q8 = 1 };

#define INLINE static inline __attribute__((always_inline))

/* The hardware prefetchers alone keep too few weight lines in flight: several tokens take a few times longer per
 * weight byte than one, so fewer blocks fit in the core's out-of-order window (measured: q8, 4 tokens, 2 threads,
 * 18 → 26-30 GB/s with this), and even one token's stream stops at every 4 KiB page (measured with one token, AVX2,
 * 2 threads, medians of 5 interleaved runs: q8 37 → 44 GB/s, the MoE's pattern of 4 random experts 33 → 35 GB/s).
 * Each block asks for the lines PREFETCH bytes ahead of it (past a group's end: the next group's, which follows in
 * memory). The AVX-512 kernel leaves it out for one token of q8, where it measured slower (group_tokens). */
#ifndef PREFETCH
#define PREFETCH 4096
#endif
/* The formats for which the AVX-512 kernel prefetches a block ahead for one token too, a bit per format (1 << MX4,
 * 1 << Q8): mx4 only (see group_tokens); 0 or 3 for benchmarks/scripts/kernel-stream's variants. */
#ifndef PREFETCH_ONE_TOKEN
#define PREFETCH_ONE_TOKEN 1
#endif
/* Bytes of one block of a 16-row group's tile: 32 columns of 16 rows, 4-bit codes or int8. */
INLINE int64_t block_bytes(int fmt) { return fmt == MX4 ? 256 : 512; }

INLINE void prefetch_block(int fmt, const uint8_t *wt, int64_t b) {
    const char *p = (const char *)wt + b * block_bytes(fmt) + PREFETCH;
    if (PREFETCH == 0) return;
    _Pragma("GCC unroll 8")
    for (int i = 0; i < 8; i++)
        if (fmt == Q8 || i < 4) _mm_prefetch(p + 64 * i, _MM_HINT_T0);
}

/* The hardware prefetchers follow a stream within a 4 KiB page only: when the weight stream enters the next page, its
 * first lines come from memory at the demand loads' pace before the prefetchers pick it up again. Asking for the first
 * two lines of the next page as a block starts a page (a page, 16 mx4 or 8 q8 blocks, ahead) keeps them going. On a
 * Zen 5 (2 threads, 1 GiB of weights in expert-sized jobs, benchmarks/scripts/kernel-stream --paired: the builds with and
 * without it taking turns in one process, shares of the C probe), one token: AVX-512 mx4 68 → 92 %, q8 70 → 97 % (105
 * of 105 samples ahead); on top of the AVX2 kernels' own prefetch (prefetch_block) +15 points for both formats with
 * AVX2, +23 (mx4) and +15 (q8) with AVX-VNNI. Two tokens, on top of prefetch_block: +23/+9 (AVX-512), +5/+19 (AVX2),
 * +8/+18 (AVX-VNNI); eight tokens (bound by the arithmetic): +0.5/+1. One line, four lines, or two pages ahead read no
 * more than two lines one page ahead; in place of prefetch_block for several tokens it read less. PAGE_PREFETCH=0
 * leaves it out (for kernel-stream). */
#ifndef PAGE_PREFETCH
#define PAGE_PREFETCH 1
#endif
/* On this project's VMs a page the process has not read for a while costs the first load that reaches it a wait that
 * a prefetch does not take off it: with one load per 4 KiB page of the jobs done beforehand (untimed,
 * benchmarks/scripts/kernel-stream --touch-b), the kernel reads expert-sized jobs drawn fresh out of 10 GiB 15 (mx4) and 11
 * (q8) points of the C probe faster, as fast as the same gigabyte read again; a prefetch per page instead gains
 * nothing, and loads in line (2, 4, 8 pages ahead) or over each call's pages just before it cost more than they save
 * (−0.5 to −8 points). Address translation is the obvious suspect (no PMU here to tell). The AVX-512 kernel asks
 * for one line FAR_PAGES pages ahead as a page starts, which narrows the gap a little. Zen 5 VM, 2 threads, AVX-512,
 * paired (benchmarks/scripts/kernel-stream --paired --fresh 10, points of the C probe, fast memory): mx4 +5.0, +3.5 (16 pages), +4.5 (12), +3.0, +2.4, −0.8 at
 * 8 pages (2 pages ahead: less), q8 +6.1, +1.9; jobs reshuffled out of 1 GiB (--fresh 1) mx4 +10.4, +5.8. In the
 * engine, paired token by token (the engine-pair harness of commit b299d06): 24 layers +1.0, +1.5, +1.6, +1.8, +1.9, −1.3 points of
 * the whole step, 4 layers +0.0, +3.8, +5.2. The AVX2 and AVX-VNNI kernels, whose prefetch_block asks for every
 * block 4 KiB ahead already, read no more with it (mx4 −1.9, +1.0; AVX-VNNI −5.0, −0.2) and leave it out.
 * FAR_PAGES=0 leaves it out everywhere (for kernel-stream). */
#ifndef FAR_PAGES
#ifdef __AVX512F__
#define FAR_PAGES 8
#else
#define FAR_PAGES 0
#endif
#endif
INLINE void prefetch_next_page(int fmt, const uint8_t *wt, int64_t b) {
    uintptr_t a = (uintptr_t)(wt + b * block_bytes(fmt));
    if (!PAGE_PREFETCH || (a & 4095) >= (uintptr_t)block_bytes(fmt)) return;  /* not the first block starting in its page */
    const char *next = (const char *)((a & ~(uintptr_t)4095) + 4096);
    _mm_prefetch(next, _MM_HINT_T0);
    _mm_prefetch(next + 64, _MM_HINT_T0);
    if (FAR_PAGES) _mm_prefetch(next + (FAR_PAGES - 1) * 4096, _MM_HINT_T0);
}

#ifdef __AVX512F__
#define TB 8

/* 2^(e − 128) for 16 E8M0 bytes: exact, subnormals included (scalef computes 1·2^(e−128)); byte 255 is NaN
 * (the OCP MX rule, as the reference decodes it), so its whole block is NaN. */
INLINE __m512 mx4_scales(const uint8_t *sc) {
    __m512i e = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)sc));
    __m512 v = _mm512_scalef_ps(_mm512_set1_ps(1.0f), _mm512_cvtepi32_ps(_mm512_sub_epi32(e, _mm512_set1_epi32(128))));
    return _mm512_mask_mov_ps(v, _mm512_cmpeq_epi32_mask(e, _mm512_set1_epi32(255)), _mm512_set1_ps(__builtin_nanf("")));
}

/* One 16-row group against nt ≤ TB tokens. */
INLINE void group_tokens(int fmt, const uint8_t *wt, const void *scales, int64_t nb, const int8_t *q,
                         const float *d, const int32_t *s, int nt, float *out, int64_t out_stride,
                         const float *bias, int nvalid) {
    const __m512i m4 = _mm512_set1_epi8(0x0f), flip = _mm512_set1_epi8((char)0x80);
    const __m512i lut = _mm512_broadcast_i32x4(_mm_setr_epi8(12, 13, 14, 15, 16, 18, 20, 24, 12, 11, 10, 9, 8, 6, 4, 0));
    const int32_t off = fmt == MX4 ? -12 : -128;
    const int64_t k = nb * 32;
    __m512 acc[TB];
    _Pragma("GCC unroll 8")
    for (int t = 0; t < nt; t++) acc[t] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; b++) {
        __m512i w[8];
        __m512 dw;
        /* One token (decode) of q8 streams faster on the hardware prefetchers alone: on a Zen 4 (2 threads, 1-2 GiB of
         * weights, medians of ~20 runs against a C probe read just before and after each) this prefetch made q8 read
         * 85 % of a 55-70 GB/s probe against 95 % without it, and mx4 92 % against 95 %; against a 30-37 GB/s probe
         * q8 96 % against 99 %, mx4 100 % against 98 %. Several tokens keep it (see prefetch_block). On a Zen 5 the
         * kernel alone streamed better with it (the harness of benchmarks/scripts/kernel-stream, fast memory: mx4 68 → 73 %,
         * q8 78 → 84 % of a ~70 GB/s probe) but the engine did not (decode-vs-llama A/B, same run: 4-layer 0.89×,
         * 24-layer 0.98× the t/s without). Alternated token by token in one process (a throw-away build, 15 runs of 24
         * layers), prefetching 2048 B ahead with T1 read +1.8 points of the probe per step on average, spread ~5; 3072 B
         * with T1 +5 in the one set of 4 runs that had it; T0 at 4096 B, T2, NTA, the scales prefetched too: no better.
         * With the next page's lines asked for (prefetch_next_page), it pays for mx4, whose blocks take twice the
         * arithmetic per byte of q8's: paired in kernel-stream (Zen 5, 2 threads, expert-sized jobs in a random order,
         * a ~65 GB/s probe) mx4 +7 to +10 points at 4096 B (2048 B +4, 3072 B +6, 6144 B +8), and q8 −8; against a
         * ~40 GB/s probe mx4 −2 at 4096 B, −8 at 8192 B. In the engine, paired token by token (the engine-pair harness of commit b299d06,
         * 24 layers): +3.5 to +6 points of the whole step's share of a 60-75 GB/s probe, −0.3 of a 42 GB/s one. So mx4
         * takes it and q8 goes without. */
        if (nt > 1 || (PREFETCH_ONE_TOKEN >> fmt & 1)) prefetch_block(fmt, wt, b);
        prefetch_next_page(fmt, wt, b);
        if (fmt == MX4) {
            const uint8_t *c = wt + b * 256;
            _Pragma("GCC unroll 8")
            for (int L = 0; L < 4; L++) {
                __m512i raw = _mm512_loadu_si512(c + 64 * L);
                w[2 * L] = _mm512_shuffle_epi8(lut, _mm512_and_si512(raw, m4));
                w[2 * L + 1] = _mm512_shuffle_epi8(lut, _mm512_and_si512(_mm512_srli_epi16(raw, 4), m4));
            }
            dw = mx4_scales((const uint8_t *)scales + 16 * b);
        } else {
            const uint8_t *c = wt + b * 512;
            _Pragma("GCC unroll 8")
            for (int i = 0; i < 8; i++) w[i] = _mm512_xor_si512(_mm512_loadu_si512(c + 64 * i), flip);
            dw = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)((const uint16_t *)scales + 16 * b)));
        }
        _Pragma("GCC unroll 8")
        for (int t = 0; t < nt; t++) {
            const int8_t *qa = q + t * k + 32 * b;
            /* two chains of 4: one chain of 8 would be bound by the dot products' latency, not their throughput */
            __m512i ia = _mm512_set1_epi32(off * s[t * nb + b]), ib = _mm512_setzero_si512();
            _Pragma("GCC unroll 4")
            for (int i = 0; i < 4; i++) {
                ia = _mm512_dpbusd_epi32(ia, w[i], _mm512_set1_epi32(goss_load_i32(qa + 4 * i)));
                ib = _mm512_dpbusd_epi32(ib, w[4 + i], _mm512_set1_epi32(goss_load_i32(qa + 16 + 4 * i)));
            }
            ia = _mm512_add_epi32(ia, ib);
            acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(ia), _mm512_mul_ps(dw, _mm512_set1_ps(d[t * nb + b])), acc[t]);
        }
    }
    __mmask16 m = (__mmask16)((1u << nvalid) - 1);
    __m512 bv = bias ? _mm512_maskz_loadu_ps(m, bias) : _mm512_setzero_ps();
    _Pragma("GCC unroll 8")
    for (int t = 0; t < nt; t++) _mm512_mask_storeu_ps(out + t * out_stride, m, _mm512_add_ps(acc[t], bv));
}

INLINE void group(int fmt, const uint8_t *wt, const void *scales, int64_t nb, const int8_t *q, const float *d,
                  const int32_t *s, int64_t T, float *out, int64_t out_stride, const float *bias, int nvalid) {
    const int64_t k = nb * 32;
    for (int64_t t0 = 0; t0 < T; t0 += TB) {
        const int8_t *qt = q + t0 * k;
        const float *dt = d + t0 * nb;
        const int32_t *st = s + t0 * nb;
        float *ot = out + t0 * out_stride;
        switch (T - t0 < TB ? (int)(T - t0) : TB) {  /* constant token counts keep the accumulators in registers */
#define CASE(n) case n: group_tokens(fmt, wt, scales, nb, qt, dt, st, n, ot, out_stride, bias, nvalid); break;
            CASE(1) CASE(2) CASE(3) CASE(4) CASE(5) CASE(6) CASE(7) CASE(8)
#undef CASE
        }
    }
}

#else /* AVX2 (and AVX-VNNI): 8 rows per vector; a group is two halves of 8 rows (bytes 0..31 and 32..63 of each 64) */
#define TB 4

/* 2^(e − 128) for 8 E8M0 bytes, exact: (e − 1) << 23 as float bits, the two subnormals for e < 2, and NaN
 * for byte 255 (the OCP MX rule, as the reference decodes it). */
INLINE __m256 mx4_scales(const uint8_t *sc) {
    __m256i e = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)sc));
    __m256i normal = _mm256_slli_epi32(_mm256_sub_epi32(e, _mm256_set1_epi32(1)), 23);
    __m256i tiny = _mm256_sllv_epi32(_mm256_set1_epi32(1 << 21), e);
    __m256i is_tiny = _mm256_cmpgt_epi32(_mm256_set1_epi32(2), e);
    __m256i bits = _mm256_blendv_epi8(normal, tiny, is_tiny);
    /* all bits set is a NaN: or-ing the byte-255 lanes' all-ones compare result makes them NaN in one op */
    return _mm256_castsi256_ps(_mm256_or_si256(bits, _mm256_cmpgt_epi32(e, _mm256_set1_epi32(254))));
}

/* True when none of a block's 16 E8M0 bytes is 0 or 255 (a zero byte in v or in ~v, found a word at a time): the
 * common case, where mx4_scales_plain8 gives the same values in 3 operations instead of 8. */
INLINE int mx4_scales_plain(const uint8_t *sc) {
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    uint64_t a, b;
    memcpy(&a, sc, 8);
    memcpy(&b, sc + 8, 8);
    uint64_t zero = ((a - ones) & ~a) | ((b - ones) & ~b) | ((~a - ones) & a) | ((~b - ones) & b);
    return (zero & highs) == 0;
}

/* mx4_scales for bytes 1..254: e << 23 is the float 2^(e − 127), halved exactly (2^(e − 128) is a normal float,
 * or for e = 1 the subnormal 2^−127). */
INLINE __m256 mx4_scales_plain8(const uint8_t *sc) {
    __m256i e = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)sc));
    return _mm256_mul_ps(_mm256_castsi256_ps(_mm256_slli_epi32(e, 23)), _mm256_set1_ps(0.5f));
}

INLINE __m256i bcast4(const int8_t *p) { return _mm256_set1_epi32(goss_load_i32(p)); }

/* Σ_i w[i]·x[i] per int32 lane for 4 quads (w unsigned, x the broadcast signed activation quads), added to acc.
 * With AVX-VNNI any unsigned w (vpdpbusd). Without it w must be below 25 (mx4's table): the int16 pair sums of 4
 * quads stay below 4·2·24·127 < 2^15, so vpmaddubsw results add in 16 bits before one vpmaddwd. */
INLINE __m256i dot4_small(__m256i acc, __m256i w0, __m256i w1, __m256i w2, __m256i w3, __m256i x0, __m256i x1,
                          __m256i x2, __m256i x3) {
#ifdef __AVXVNNI__
    acc = _mm256_dpbusd_avx_epi32(acc, w0, x0);
    acc = _mm256_dpbusd_avx_epi32(acc, w1, x1);
    acc = _mm256_dpbusd_avx_epi32(acc, w2, x2);
    return _mm256_dpbusd_avx_epi32(acc, w3, x3);
#else
    __m256i p = _mm256_add_epi16(_mm256_add_epi16(_mm256_maddubs_epi16(w0, x0), _mm256_maddubs_epi16(w1, x1)),
                                 _mm256_add_epi16(_mm256_maddubs_epi16(w2, x2), _mm256_maddubs_epi16(w3, x3)));
    return _mm256_add_epi32(acc, _mm256_madd_epi16(p, _mm256_set1_epi16(1)));
#endif
}

/* The same over the 8 quads of a block, activation quads read at qa, in two independent chains of 4. */
INLINE __m256i dot8_small(const __m256i w[8], const int8_t *qa) {
    const __m256i z = _mm256_setzero_si256();
    return _mm256_add_epi32(dot4_small(z, w[0], w[1], w[2], w[3], bcast4(qa), bcast4(qa + 4), bcast4(qa + 8), bcast4(qa + 12)),
                            dot4_small(z, w[4], w[5], w[6], w[7], bcast4(qa + 16), bcast4(qa + 20), bcast4(qa + 24), bcast4(qa + 28)));
}

/* mx4 codes → table values (2·FP4 + 12, unsigned bytes): the low and the high nibbles of 32 code bytes. */
INLINE __m256i mx4_lo(__m256i raw) {
    const __m256i lut = _mm256_setr_epi8(12, 13, 14, 15, 16, 18, 20, 24, 12, 11, 10, 9, 8, 6, 4, 0,
                                         12, 13, 14, 15, 16, 18, 20, 24, 12, 11, 10, 9, 8, 6, 4, 0);
    return _mm256_shuffle_epi8(lut, _mm256_and_si256(raw, _mm256_set1_epi8(0x0f)));
}

INLINE __m256i mx4_hi(__m256i raw) {
    return mx4_lo(_mm256_srli_epi16(raw, 4));
}

/* One 8-row half group (wt points at its first 32 bytes) against nt ≤ TB tokens. */
INLINE void half_tokens(int fmt, const uint8_t *wt, const void *scales, int half, int64_t nb, const int8_t *q,
                        const float *d, const int32_t *s, int nt, float *out, int64_t out_stride,
                        const float *bias, int nvalid) {
    const int64_t k = nb * 32;
    __m256 acc[TB];
    _Pragma("GCC unroll 8")
    for (int t = 0; t < nt; t++) acc[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; b++) {
        if (half == 0) {  /* whole lines: the second half's pass finds them too */
            prefetch_block(fmt, wt, b);
            prefetch_next_page(fmt, wt, b);
        }
        if (fmt == MX4) {
            const uint8_t *c = wt + b * 256;
            __m256i w[8];
            _Pragma("GCC unroll 8")
            for (int L = 0; L < 4; L++) {
                __m256i raw = _mm256_loadu_si256((const __m256i *)(c + 64 * L));
                w[2 * L] = mx4_lo(raw);
                w[2 * L + 1] = mx4_hi(raw);
            }
            const uint8_t *sc = (const uint8_t *)scales + 16 * b;
            __m256 dw = mx4_scales_plain(sc) ? mx4_scales_plain8(sc + 8 * half) : mx4_scales(sc + 8 * half);
            _Pragma("GCC unroll 8")
            for (int t = 0; t < nt; t++) {
                const int8_t *qa = q + t * k + 32 * b;
                __m256i ia = _mm256_add_epi32(dot8_small(w, qa), _mm256_set1_epi32(-12 * s[t * nb + b]));
                acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(ia), _mm256_mul_ps(dw, _mm256_set1_ps(d[t * nb + b])), acc[t]);
            }
        } else {
            const uint8_t *c = wt + b * 512;
            __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)((const uint16_t *)scales + 16 * b + 8 * half)));
#ifdef __AVXVNNI__
            /* as on AVX-512: w + 128 as unsigned bytes, corrected by −128·s */
            __m256i w[8];
            _Pragma("GCC unroll 8")
            for (int i = 0; i < 8; i++) w[i] = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(c + 64 * i)), _mm256_set1_epi8((char)0x80));
            _Pragma("GCC unroll 8")
            for (int t = 0; t < nt; t++) {
                __m256i ia = _mm256_add_epi32(dot8_small(w, q + t * k + 32 * b), _mm256_set1_epi32(-128 * s[t * nb + b]));
                acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(ia), _mm256_mul_ps(dw, _mm256_set1_ps(d[t * nb + b])), acc[t]);
            }
#else
            const __m256i ones = _mm256_set1_epi16(1);
            __m256i ia[TB];
            _Pragma("GCC unroll 8")
            for (int t = 0; t < nt; t++) ia[t] = _mm256_setzero_si256();
            _Pragma("GCC unroll 8")
            for (int i = 0; i < 8; i++) {
                __m256i w = _mm256_loadu_si256((const __m256i *)(c + 64 * i)), aw = _mm256_abs_epi8(w);
                _Pragma("GCC unroll 8")
                for (int t = 0; t < nt; t++) {
                    __m256i a = _mm256_sign_epi8(bcast4(q + t * k + 32 * b + 4 * i), w);
                    ia[t] = _mm256_add_epi32(ia[t], _mm256_madd_epi16(_mm256_maddubs_epi16(aw, a), ones));
                }
            }
            _Pragma("GCC unroll 8")
            for (int t = 0; t < nt; t++)
                acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(ia[t]), _mm256_mul_ps(dw, _mm256_set1_ps(d[t * nb + b])), acc[t]);
#endif
        }
    }
    float tmp[8];
    _Pragma("GCC unroll 8")
    for (int t = 0; t < nt; t++) {
        _mm256_storeu_ps(tmp, acc[t]);
        for (int r = 0; r < nvalid; r++) out[t * out_stride + r] = tmp[r] + (bias ? bias[r] : 0.0f);
    }
}

/* Stores a group's two 8-row halves for one token (+ bias), the first nvalid rows. */
INLINE void store16(float *out, __m256 a, __m256 b, const float *bias, int nvalid) {
    if (nvalid == 16) {
        if (bias) {
            a = _mm256_add_ps(a, _mm256_loadu_ps(bias));
            b = _mm256_add_ps(b, _mm256_loadu_ps(bias + 8));
        }
        _mm256_storeu_ps(out, a);
        _mm256_storeu_ps(out + 8, b);
        return;
    }
    float tmp[16];
    _mm256_storeu_ps(tmp, a);
    _mm256_storeu_ps(tmp + 8, b);
    for (int r = 0; r < nvalid; r++) out[r] = tmp[r] + (bias ? bias[r] : 0.0f);
}

/* One 16-row mx4 group against one token (decode). Both halves go in one pass over the blocks, so every 64-byte line
 * is used whole when it arrives and the loads stream without pause (two 8-row passes read each line twice, the second
 * time from L1 while no memory loads go out), and each activation broadcast serves 16 rows. */
INLINE void mx4_group_1(const uint8_t *wt, const uint8_t *scales, int64_t nb, const int8_t *q, const float *d,
                        const int32_t *s, float *out, const float *bias, int nvalid) {
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; b++) {
        const uint8_t *c = wt + b * 256;
        const int8_t *qa = q + 32 * b;
        prefetch_block(MX4, wt, b);
        prefetch_next_page(MX4, wt, b);
        __m256i i0 = _mm256_set1_epi32(-12 * s[b]), i1 = i0;
        _Pragma("GCC unroll 2")
        for (int L = 0; L < 4; L += 2) {  /* two 64-byte lines: quads 2L..2L+3 of all 16 rows */
            __m256i r0 = _mm256_loadu_si256((const __m256i *)(c + 64 * L));
            __m256i r1 = _mm256_loadu_si256((const __m256i *)(c + 64 * L + 32));
            __m256i r2 = _mm256_loadu_si256((const __m256i *)(c + 64 * L + 64));
            __m256i r3 = _mm256_loadu_si256((const __m256i *)(c + 64 * L + 96));
            __m256i x0 = bcast4(qa + 8 * L), x1 = bcast4(qa + 8 * L + 4), x2 = bcast4(qa + 8 * L + 8),
                    x3 = bcast4(qa + 8 * L + 12);
            i0 = dot4_small(i0, mx4_lo(r0), mx4_hi(r0), mx4_lo(r2), mx4_hi(r2), x0, x1, x2, x3);
            i1 = dot4_small(i1, mx4_lo(r1), mx4_hi(r1), mx4_lo(r3), mx4_hi(r3), x0, x1, x2, x3);
        }
        const uint8_t *sc = scales + 16 * b;
        int plain = mx4_scales_plain(sc);
        __m256 d0 = plain ? mx4_scales_plain8(sc) : mx4_scales(sc), d1 = plain ? mx4_scales_plain8(sc + 8) : mx4_scales(sc + 8);
        __m256 x = _mm256_set1_ps(d[b]);
        acc0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(i0), _mm256_mul_ps(d0, x), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(i1), _mm256_mul_ps(d1, x), acc1);
    }
    store16(out, acc0, acc1, bias, nvalid);
}

/* One 16-row q8 group against one token, in one pass for the same reasons. */
INLINE void q8_group_1(const uint8_t *wt, const uint16_t *scales, int64_t nb, const int8_t *q, const float *d,
                       const int32_t *s, float *out, const float *bias, int nvalid) {
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; b++) {
        const uint8_t *c = wt + b * 512;
        const int8_t *qa = q + 32 * b;
        prefetch_block(Q8, wt, b);
        prefetch_next_page(Q8, wt, b);
#ifdef __AVXVNNI__
        /* w + 128 as unsigned bytes, corrected by −128·s */
        const __m256i flip = _mm256_set1_epi8((char)0x80);
        __m256i i0 = _mm256_set1_epi32(-128 * s[b]), i1 = i0, j0 = _mm256_setzero_si256(), j1 = j0;
        _Pragma("GCC unroll 4")
        for (int i = 0; i < 8; i += 2) {
            __m256i x0 = bcast4(qa + 4 * i), x1 = bcast4(qa + 4 * i + 4);
            i0 = _mm256_dpbusd_avx_epi32(i0, _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(c + 64 * i)), flip), x0);
            i1 = _mm256_dpbusd_avx_epi32(i1, _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(c + 64 * i + 32)), flip), x0);
            j0 = _mm256_dpbusd_avx_epi32(j0, _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(c + 64 * i + 64)), flip), x1);
            j1 = _mm256_dpbusd_avx_epi32(j1, _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(c + 64 * i + 96)), flip), x1);
        }
        i0 = _mm256_add_epi32(i0, j0);
        i1 = _mm256_add_epi32(i1, j1);
#else
        (void)s;
        /* |w| times the activation with w's sign (vpsignb); each int16 pair sum widened at once (two would overflow) */
        const __m256i ones = _mm256_set1_epi16(1);
        __m256i i0 = _mm256_setzero_si256(), i1 = i0;
        _Pragma("GCC unroll 8")
        for (int i = 0; i < 8; i++) {
            __m256i x = bcast4(qa + 4 * i);
            __m256i w0 = _mm256_loadu_si256((const __m256i *)(c + 64 * i));
            __m256i w1 = _mm256_loadu_si256((const __m256i *)(c + 64 * i + 32));
            i0 = _mm256_add_epi32(i0, _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_abs_epi8(w0), _mm256_sign_epi8(x, w0)), ones));
            i1 = _mm256_add_epi32(i1, _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_abs_epi8(w1), _mm256_sign_epi8(x, w1)), ones));
        }
#endif
        __m256 x = _mm256_set1_ps(d[b]);
        __m256 d0 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(scales + 16 * b)));
        __m256 d1 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(scales + 16 * b + 8)));
        acc0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(i0), _mm256_mul_ps(d0, x), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(i1), _mm256_mul_ps(d1, x), acc1);
    }
    store16(out, acc0, acc1, bias, nvalid);
}

INLINE void group(int fmt, const uint8_t *wt, const void *scales, int64_t nb, const int8_t *q, const float *d,
                  const int32_t *s, int64_t T, float *out, int64_t out_stride, const float *bias, int nvalid) {
    if (T == 1) {
        if (fmt == MX4) mx4_group_1(wt, scales, nb, q, d, s, out, bias, nvalid);
        else q8_group_1(wt, scales, nb, q, d, s, out, bias, nvalid);
        return;
    }
    const int64_t k = nb * 32;
    for (int half = 0; half < 2 && 8 * half < nvalid; half++) {
        int nv = nvalid - 8 * half < 8 ? nvalid - 8 * half : 8;
        const float *bh = bias ? bias + 8 * half : 0;
        for (int64_t t0 = 0; t0 < T; t0 += TB) {
            const int8_t *qt = q + t0 * k;
            const float *dt = d + t0 * nb;
            const int32_t *st = s + t0 * nb;
            float *ot = out + t0 * out_stride + 8 * half;
            switch (T - t0 < TB ? (int)(T - t0) : TB) {
#define CASE(n) case n: half_tokens(fmt, wt + 32 * half, scales, half, nb, qt, dt, st, n, ot, out_stride, bh, nv); break;
                CASE(1) CASE(2) CASE(3) CASE(4)
#undef CASE
            }
        }
    }
}
#endif

void GOSS_FN(mx4_gemm)(const uint8_t *codes, const uint8_t *scales, int64_t blocks, int64_t rows, int64_t g0,
                       int64_t g1, const int8_t *q, const float *d, const int32_t *s, int64_t T, float *out,
                       int64_t out_stride, const float *bias) {
    for (int64_t g = g0; g < g1; g++) {
        int nvalid = rows - 16 * g < 16 ? (int)(rows - 16 * g) : 16;
        group(MX4, codes + g * blocks * 256, scales + g * blocks * 16, blocks, q, d, s, T, out + 16 * (g - g0), out_stride,
              bias ? bias + 16 * g : 0, nvalid);
    }
}

void GOSS_FN(q8_gemm)(const int8_t *qw, const uint16_t *scales, int64_t blocks, int64_t rows, int64_t g0,
                      int64_t g1, const int8_t *q, const float *d, const int32_t *s, int64_t T, float *out,
                      int64_t out_stride, const float *bias) {
    for (int64_t g = g0; g < g1; g++) {
        int nvalid = rows - 16 * g < 16 ? (int)(rows - 16 * g) : 16;
        group(Q8, (const uint8_t *)qw + g * blocks * 512, scales + g * blocks * 16, blocks, q, d, s, T, out + 16 * (g - g0),
              out_stride, bias ? bias + 16 * g : 0, nvalid);
    }
}
