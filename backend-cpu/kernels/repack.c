/*
 * repack.c — weights from the file's layout into the kernels' 16-row tiles (goss_cpu.h), once at load.
 *
 * A tile holds 16 rows side by side so that one 512-bit vector (16 int32 lanes) carries 4 consecutive
 * columns of 16 rows: the kernels broadcast 4 activation bytes and multiply them with all 16 rows at once,
 * accumulating each row's dot product in its own lane (no horizontal sums per block).
 *
 * mx4 tile, per 16-row group and 32-column block (256 bytes):
 *     byte 64·L + 4·r + j = code(row r, col 8L + j) | code(row r, col 8L + 4 + j) << 4
 * q8 tile (512 bytes):
 *     byte 64·c + 4·r + j = q(row r, col 4c + j)
 *
 * Float rows (F32/F16/BF16 dense weights) become q8 tiles by Q8_0's rule (goss_cpu_repack_float_q8):
 *     d = max_j |x_j| / 127,  q_j = round(x_j / d),  x_j ≈ d·q_j
 * A block holding NaN gets d = NaN, one holding ±Inf d = Inf with code ±127 there: non-finite weights stay
 * non-finite in every product, so the guard that names the op where NaN first appeared still sees them.
 * which halves the bytes a BF16 weight costs per token; the activations are int8 blocks of the same kind.
 */
#include <immintrin.h>
#include <math.h>
#include <string.h>
#include "goss_cpu.h"

/*
 * One block's codes of an mx4 row into its group's tile, from n0 = codes of columns 0..15 and n1 = columns
 * 16..31, one per byte: x = n | (n shifted down 4 bytes) << 4 puts columns 8L+j | 8L+4+j << 4 in bytes 0..3
 * (L even) and 8..11 (L odd). SSE2, the x86-64 baseline.
 */
static void put_mx4_block(__m128i n0, __m128i n1, int r, uint8_t *tile) {
    const __m128i f0 = _mm_set1_epi8((char)0xf0);
    __m128i x0 = _mm_or_si128(n0, _mm_and_si128(_mm_slli_epi16(_mm_srli_si128(n0, 4), 4), f0));
    __m128i x1 = _mm_or_si128(n1, _mm_and_si128(_mm_slli_epi16(_mm_srli_si128(n1, 4), 4), f0));
    uint32_t q[4] = {(uint32_t)_mm_cvtsi128_si32(x0), (uint32_t)_mm_cvtsi128_si32(_mm_srli_si128(x0, 8)),
                     (uint32_t)_mm_cvtsi128_si32(x1), (uint32_t)_mm_cvtsi128_si32(_mm_srli_si128(x1, 8))};
    for (int L = 0; L < 4; L++) memcpy(tile + 64 * L + 4 * r, &q[L], 4);
}

void goss_cpu_repack_mx4_openai(const uint8_t *codes, int64_t code_row_stride, const uint8_t *scales,
                                int64_t scale_row_stride, int64_t rows, int64_t blocks, int64_t g0, int64_t g1,
                                uint8_t *out_codes, uint8_t *out_scales) {
    for (int64_t g = g0; g < g1; g++)
        for (int64_t b = 0; b < blocks; b++) {
            uint8_t *tile = out_codes + (g * blocks + b) * 256, *sc = out_scales + (g * blocks + b) * 16;
            memset(tile, 0, 256);
            memset(sc, 0, 16);
            for (int r = 0; r < 16 && g * 16 + r < rows; r++) {
                int64_t row = g * 16 + r;
                /* OpenAI: low nibble = even column, high = odd: interleave them into column order */
                __m128i v = _mm_loadu_si128((const __m128i *)(codes + row * code_row_stride + b * 16));
                __m128i lo = _mm_and_si128(v, _mm_set1_epi8(15)), hi = _mm_and_si128(_mm_srli_epi16(v, 4), _mm_set1_epi8(15));
                put_mx4_block(_mm_unpacklo_epi8(lo, hi), _mm_unpackhi_epi8(lo, hi), r, tile);
                sc[r] = scales[row * scale_row_stride + b];
            }
        }
}

void goss_cpu_repack_mx4_ggml(const uint8_t *src0, int64_t row_stride, int64_t rows, int64_t blocks,
                              int64_t g0, int64_t g1, uint8_t *out_codes, uint8_t *out_scales) {
    for (int64_t g = g0; g < g1; g++)
        for (int64_t b = 0; b < blocks; b++) {
            uint8_t *tile = out_codes + (g * blocks + b) * 256, *sc = out_scales + (g * blocks + b) * 16;
            memset(tile, 0, 256);
            memset(sc, 0, 16);
            for (int r = 0; r < 16 && g * 16 + r < rows; r++) {
                const uint8_t *blk = src0 + (g * 16 + r) * row_stride + b * 17;
                /* ggml: low nibbles are columns 0..15, high 16..31 */
                __m128i v = _mm_loadu_si128((const __m128i *)(blk + 1));
                put_mx4_block(_mm_and_si128(v, _mm_set1_epi8(15)), _mm_and_si128(_mm_srli_epi16(v, 4), _mm_set1_epi8(15)), r, tile);
                sc[r] = blk[0];
            }
        }
}

void goss_cpu_repack_q8_0(const uint8_t *src0, int64_t row_stride, int64_t rows, int64_t blocks,
                          int64_t g0, int64_t g1, int8_t *out_q, uint16_t *out_scales) {
    for (int64_t g = g0; g < g1; g++)
        for (int64_t b = 0; b < blocks; b++) {
            int8_t *tile = out_q + (g * blocks + b) * 512;
            uint16_t *sc = out_scales + (g * blocks + b) * 16;
            memset(tile, 0, 512);
            memset(sc, 0, 32);
            for (int r = 0; r < 16 && g * 16 + r < rows; r++) {
                const uint8_t *blk = src0 + (g * 16 + r) * row_stride + b * 34;
                memcpy(&sc[r], blk, 2);
                for (int c = 0; c < 8; c++) memcpy(tile + 64 * c + 4 * r, blk + 2 + 4 * c, 4);
            }
        }
}

/* Column k of a float row of the given format. F16C through a target attribute: this file is built for the
 * x86-64 baseline, and it is only called where a native kernel set (all of which have F16C) runs. */
__attribute__((target("f16c"))) static float float_at(int32_t format, const uint8_t *row, int64_t k) {
    switch (format) {
    case GOSS_CPU_FORMAT_F16: { uint16_t h; memcpy(&h, row + 2 * k, 2); return _cvtsh_ss(h); }
    case GOSS_CPU_FORMAT_BF16: { uint16_t h; memcpy(&h, row + 2 * k, 2); uint32_t u = (uint32_t)h << 16; float f; memcpy(&f, &u, 4); return f; }
    default: { float f; memcpy(&f, row + 4 * k, 4); return f; }
    }
}

/* F16 bits of d, rounded to nearest even (subnormals included), as Java's Float.floatToFloat16. */
__attribute__((target("f16c"))) static uint16_t f16_bits(float d) {
    return (uint16_t)_cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT);
}

/* Java's Math.round for the |v| ≤ 127.5 that occur here: floor(v + 1/2), with v − floor(v) exact (no rounding of v + 0.5);
 * NaN gives 0, as Math.round does (a cast of NaN to an integer is undefined in C). */
static int8_t round_half_up(float v) {
    if (v != v) return 0;
    float f = floorf(v);
    return (int8_t)(v - f >= 0.5f ? f + 1 : f);
}

void goss_cpu_repack_float_q8(int32_t format, const uint8_t *src, int64_t row_stride, int64_t rows, int64_t blocks,
                              int64_t g0, int64_t g1, int8_t *out_q, uint16_t *out_scales) {
    for (int64_t g = g0; g < g1; g++)
        for (int64_t b = 0; b < blocks; b++) {
            int8_t *tile = out_q + (g * blocks + b) * 512;
            uint16_t *sc = out_scales + (g * blocks + b) * 16;
            memset(tile, 0, 512);
            memset(sc, 0, 32);
            for (int r = 0; r < 16 && g * 16 + r < rows; r++) {
                const uint8_t *row = src + (g * 16 + r) * row_stride;
                float x[32], amax = 0;
                for (int j = 0; j < 32; j++) {
                    x[j] = float_at(format, row, 32 * b + j);
                    float a = fabsf(x[j]);
                    /* Math.max's rule: the first NaN wins, so a NaN weight gives the block scale NaN and every
                     * product with it NaN, as in float (a comparison alone would skip it and hide it from the guard) */
                    if (amax == amax && (a != a || a > amax)) amax = a;
                }
                float d = amax / 127.0f, id = d != 0 ? 1.0f / d : 0.0f;
                sc[r] = f16_bits(d);
                /* an infinite weight: scale ±Inf, its code ±127 and the block's others 0, so products are ±Inf (NaN
                 * times a zero activation), as in float */
                for (int j = 0; j < 32; j++)
                    tile[64 * (j / 4) + 4 * r + j % 4] = isinf(x[j]) ? (x[j] > 0 ? 127 : -127) : round_half_up(x[j] * id);
            }
        }
}
