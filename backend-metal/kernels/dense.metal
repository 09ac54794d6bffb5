// Dense layers (MetalBackend.runLinear): decode and, from GOSS_METAL_DENSE_PREFILL_MIN_T tokens, a tiled matmul.
//
// Reference: y[t, r] = sum_c W[r, c] * x[t, c] + b[r]   (b optional: hasBias = 0), W in F32 or BF16 (load_w)

#include "common.h"

// ---- dense linear: one simdgroup per output row, every token of the batch --------------------------
// n0, n1, split: CUDA's (fused QKV outputs, warps per row); vec, rowBytes: OpenCL's; unread here
struct DenseParams { uint fmt; uint hasBias; uint tokens; uint cols; uint rows; uint xRow0; uint n0; uint n1; uint split; uint vec; long rowBytes; };

KERNEL(dense)(BUF(device const uchar *, W, 0), BUF(device const float *, bias, 1), BUF(device const float *, x, 2),
              BUF(device float *, out, 3), PARAMS(DenseParams, p, 4), TG_POS(tg), TG_SIZE(nt), SIMD_LANE(lane),
              SIMD_GROUP(sg)) {
    uint r = tg * (nt / 32) + sg;
    if (r >= p.rows) return; // uniform across the simdgroup
    uint wrow = r * p.cols;
    float b = p.hasBias != 0 ? bias[r] : 0.0f;
    for (uint t = 0; t < p.tokens; t++) {
        device const float *xr = x + (p.xRow0 + t) * p.cols;
        float acc = 0.0f;
        for (uint c = lane; c < p.cols; c += 32) acc += load_w(W, p.fmt, wrow + c) * xr[c];
        acc = simd_sum(acc);
        if (lane == 0) out[t * p.rows + r] = acc + b;
    }
}

// ---- dense linear for prefill: a threadgroup computes a tile of LT_R output rows × LT_T tokens -------
// W and x chunks of LT_K columns are staged in threadgroup memory (rows padded to LT_KP against bank
// conflicts); each thread accumulates up to 8 outputs of the tile (any threadgroup size from 32 up).
#define LT_R 32
#define LT_T 8
#define LT_K 32
#define LT_KP 33

KERNEL(dense_tiled)(BUF(device const uchar *, W, 0), BUF(device const float *, bias, 1), BUF(device const float *, x, 2),
                    BUF(device float *, out, 3), PARAMS(DenseParams, p, 4), TG_POS(tg), TID(tid), TG_SIZE(nt)) {
    TG_ARRAY(float, ws, LT_R * LT_KP);
    TG_ARRAY(float, xs, LT_T * LT_KP);
    uint rowTiles = (p.rows + LT_R - 1) / LT_R;
    uint r0 = (tg % rowTiles) * LT_R, t0 = (tg / rowTiles) * LT_T;
    float acc[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    for (uint k0 = 0; k0 < p.cols; k0 += LT_K) {
        for (uint i = tid; i < LT_R * LT_K; i += nt) {
            uint r = i / LT_K, c = i % LT_K;
            ws[r * LT_KP + c] = (r0 + r < p.rows && k0 + c < p.cols) ? load_w(W, p.fmt, (r0 + r) * p.cols + k0 + c) : 0.0f;
        }
        for (uint i = tid; i < LT_T * LT_K; i += nt) {
            uint t = i / LT_K, c = i % LT_K;
            xs[t * LT_KP + c] = (t0 + t < p.tokens && k0 + c < p.cols) ? x[(p.xRow0 + t0 + t) * p.cols + k0 + c] : 0.0f;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint j = 0; j < 8; j++) {
            uint o = tid + j * nt;
            if (o >= LT_R * LT_T) break;
            uint r = o % LT_R, t = o / LT_R;
            float s = 0.0f;
            for (uint c = 0; c < LT_K; c++) s += ws[r * LT_KP + c] * xs[t * LT_KP + c];
            acc[j] += s;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    for (uint j = 0; j < 8; j++) {
        uint o = tid + j * nt;
        if (o >= LT_R * LT_T) break;
        uint r = r0 + o % LT_R, t = t0 + o / LT_R;
        if (r < p.rows && t < p.tokens) out[t * p.rows + r] = acc[j] + (p.hasBias != 0 ? bias[r] : 0.0f);
    }
}
