/*
 * Dense linear with bias: out[t, r] = sum_c W[r, c] * x[xRow0 + t, c] + b[r]   (t < T, r < R)
 * W rows are F32, F16, BF16 or Q8_0 (fmt), rowBytes apart. One work-group per (output row r,
 * tile of DENSE_TILE tokens): the weight row is read once per tile; every work item sums a strided
 * slice of the columns for each token of the tile; a tree reduction finishes. hasBias = 0 for the
 * unembedding. vec != 0 (GOSS_OPENCL_DENSE_VEC) reads 4 columns per work item when C % 4 == 0.
 * Local size = GOSS_OPENCL_DENSE_WG (power of two); DENSE_TILE =
 * GOSS_OPENCL_DENSE_TILE (a build option).
 */
#ifndef DENSE_TILE
#define DENSE_TILE 4
#endif

typedef struct { int fmt; int hasBias; int tokens; int cols; int rows; int xRow0; int n0; int n1; int split; int vec; long rowBytes; }
    DenseParams; /* n0, n1, split: CUDA's (fused QKV outputs, warps per row), unread here */

__kernel void dense(__global const uchar* W, __global const float* bias, __global const float* x,
                    __global float* out, __local float* scratch, const DenseParams p) {
    const int fmt = p.fmt, hasBias = p.hasBias, xRow0 = p.xRow0, T = p.tokens, C = p.cols, R = p.rows, vec = p.vec;
    const long rowBytes = p.rowBytes;
    int r = get_group_id(0), t0 = get_group_id(1) * DENSE_TILE;
    int lid = get_local_id(0), wg = get_local_size(0);
    __global const uchar* wr = W + (long) r * rowBytes;
    float acc[DENSE_TILE];
    for (int u = 0; u < DENSE_TILE; u++) acc[u] = 0.0f;
    int nt = min(DENSE_TILE, T - t0);
    __global const float* x0 = x + (long) (xRow0 + t0) * C;
    if (fmt == FMT_Q8_0) {
        /* one 32-value block per step: its scale is read once */
        for (int blk = lid; blk < C / 32; blk += wg) {
            __global const uchar* b = wr + blk * 34;
            float d = f16_to_f32((uint) b[0] | ((uint) b[1] << 8));
            float part[DENSE_TILE];
            for (int u = 0; u < DENSE_TILE; u++) part[u] = 0.0f;
            for (int j = 0; j < 32; j++) {
                float w = (float) ((char) b[2 + j]);
                for (int u = 0; u < nt; u++) part[u] = fma(w, x0[(long) u * C + blk * 32 + j], part[u]);
            }
            for (int u = 0; u < nt; u++) acc[u] = fma(d, part[u], acc[u]);
        }
    } else if (vec && (C & 3) == 0 && fmt != FMT_Q8_0) {
        /* 4 consecutive columns per work item (vload4: element alignment only): wider, coalesced loads */
        __global const ushort* w16 = (__global const ushort*) wr;
        __global const float* w32 = (__global const float*) wr;
        for (int c4 = lid; c4 < C / 4; c4 += wg) {
            float4 w;
            if (fmt == FMT_BF16) w = as_float4(convert_uint4(vload4(c4, w16)) << 16);
            else if (fmt == FMT_F32) w = vload4(c4, w32);
            else {
                ushort4 h = vload4(c4, w16);
                w = (float4) (f16_to_f32(h.x), f16_to_f32(h.y), f16_to_f32(h.z), f16_to_f32(h.w));
            }
            for (int u = 0; u < DENSE_TILE; u++) {
                if (u >= nt) break;
                float4 xv = vload4(c4, x0 + (long) u * C);
                float a = acc[u];
                a = fma(w.x, xv.x, a);
                a = fma(w.y, xv.y, a);
                a = fma(w.z, xv.z, a);
                a = fma(w.w, xv.w, a);
                acc[u] = a;
            }
        }
    } else if (fmt == FMT_BF16) {
        __global const ushort* w16 = (__global const ushort*) wr;
        for (int c = lid; c < C; c += wg) {
            float w = bf16_to_f32(w16[c]);
            for (int u = 0; u < DENSE_TILE; u++) if (u < nt) acc[u] = fma(w, x0[(long) u * C + c], acc[u]);
        }
    } else if (fmt == FMT_F32) {
        __global const float* w32 = (__global const float*) wr;
        for (int c = lid; c < C; c += wg) {
            float w = w32[c];
            for (int u = 0; u < DENSE_TILE; u++) if (u < nt) acc[u] = fma(w, x0[(long) u * C + c], acc[u]);
        }
    } else {
        __global const ushort* w16 = (__global const ushort*) wr;
        for (int c = lid; c < C; c += wg) {
            float w = f16_to_f32(w16[c]);
            for (int u = 0; u < DENSE_TILE; u++) if (u < nt) acc[u] = fma(w, x0[(long) u * C + c], acc[u]);
        }
    }
    for (int u = 0; u < nt; u++) {
        float total = wg_sum(scratch, acc[u]);
        if (lid == 0) out[(long) (t0 + u) * R + r] = total + (hasBias ? bias[r] : 0.0f);
    }
}
