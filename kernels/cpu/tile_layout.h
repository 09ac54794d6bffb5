/*
 * tile_layout.h — where a block's code and scale bytes sit in a 16-row group's tile stream (goss_cpu.h),
 * shared by repack.c (which writes it) and tile_gemm.c (which reads it).
 *
 * A group's blocks go in super-blocks of up to 4: their code bytes (256 per mx4 block, 512 per q8 block), then
 * their scale bytes (16 E8M0 or 32 F16 bytes per block), padded to whole 64-byte lines. A matrix-vector product
 * then reads one sequential stream per thread: with the scales in an array of their own, each core read two
 * streams and got about 20 % less of the memory bandwidth (measured on Zen 5, one thread: 23 → 30 GB/s for
 * the loads alone).
 */
#ifndef GOSS_CPU_TILE_LAYOUT_H
#define GOSS_CPU_TILE_LAYOUT_H

#include <stdint.h>

#define GOSS_TILE_SUPER 4

/* Code and scale bytes of one block of 16 rows. */
static inline int64_t goss_tile_code_bytes(int q8) { return q8 ? 512 : 256; }
static inline int64_t goss_tile_scale_bytes(int q8) { return q8 ? 32 : 16; }

/* Bytes of a super-block of n ≤ 4 blocks: codes, then scales padded to whole lines. */
static inline int64_t goss_tile_super_bytes(int q8, int64_t n) {
    return n * goss_tile_code_bytes(q8) + ((n * goss_tile_scale_bytes(q8) + 63) & ~(int64_t)63);
}

/* Bytes of one 16-row group of `blocks` blocks (a multiple of 64: every group starts on a line). */
static inline int64_t goss_tile_group_bytes_of(int q8, int64_t blocks) {
    int64_t full = blocks / GOSS_TILE_SUPER, rest = blocks % GOSS_TILE_SUPER;
    return full * goss_tile_super_bytes(q8, GOSS_TILE_SUPER) + (rest ? goss_tile_super_bytes(q8, rest) : 0);
}

/* Block b's code bytes in a group of `blocks` blocks starting at group. */
static inline const uint8_t *goss_tile_codes(int q8, const uint8_t *group, int64_t b) {
    return group + (b / GOSS_TILE_SUPER) * goss_tile_super_bytes(q8, GOSS_TILE_SUPER) + (b % GOSS_TILE_SUPER) * goss_tile_code_bytes(q8);
}

/* Block b's scale bytes (16 E8M0 bytes or 16 F16 values, one per row). */
static inline const uint8_t *goss_tile_scales(int q8, const uint8_t *group, int64_t blocks, int64_t b) {
    int64_t s = b / GOSS_TILE_SUPER, first = s * GOSS_TILE_SUPER;
    int64_t n = blocks - first < GOSS_TILE_SUPER ? blocks - first : GOSS_TILE_SUPER;
    return group + s * goss_tile_super_bytes(q8, GOSS_TILE_SUPER) + n * goss_tile_code_bytes(q8) + (b - first) * goss_tile_scale_bytes(q8);
}

#endif
