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
 */
#include <string.h>
#include "goss_cpu.h"

/* One block's 32 codes of an mx4 row, natural column order, into its group's tile. */
static void put_mx4_block(const uint8_t c[32], int r, uint8_t *tile) {
    for (int L = 0; L < 4; L++)
        for (int j = 0; j < 4; j++)
            tile[64 * L + 4 * r + j] = (uint8_t)(c[8 * L + j] | (c[8 * L + 4 + j] << 4));
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
                const uint8_t *src = codes + row * code_row_stride + b * 16;
                uint8_t c[32];
                for (int i = 0; i < 16; i++) {  /* OpenAI: low nibble = even column, high = odd */
                    c[2 * i] = src[i] & 15;
                    c[2 * i + 1] = src[i] >> 4;
                }
                put_mx4_block(c, r, tile);
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
                uint8_t c[32];
                for (int i = 0; i < 16; i++) {  /* ggml: low nibbles are columns 0..15, high 16..31 */
                    c[i] = blk[1 + i] & 15;
                    c[16 + i] = blk[1 + i] >> 4;
                }
                put_mx4_block(c, r, tile);
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
