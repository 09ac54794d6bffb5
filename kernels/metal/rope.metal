// RoPE, half-split pairs, in place on the query and key heads of rows row0 .. row0 + T - 1 (io.gossgpu.device.RopeOp;
// the same buffers and RopeParams in rope.cu and rope.cl).
//
// Reference: per row row0 + t (position p = start + t, start = pos[0]), head h, j < hd/2:
//   x1 = x[h*hd + j], x2 = x[h*hd + hd/2 + j], cos = tab[p*hd + 2j], sin = tab[p*hd + 2j + 1]
//   (Rope.cosSinTable: angles in double on the host, YaRN concentration applied)
//   x[h*hd + j] = x1*cos - x2*sin,  x[h*hd + hd/2 + j] = x2*cos + x1*sin

#include "common.h"

// ---- RoPE (half-split pairs) from a cos/sin table computed in double on the host ---------------------
struct RopeParams { uint tokens; uint heads; uint headDim; uint cols; uint row0; };

KERNEL(rope)(BUF(device float *, x, 0), BUF(device const float *, table, 1), BUF(device const int *, positions, 2),
             PARAMS(RopeParams, p, 3), GRID_POS(gid)) {
    uint half_ = p.headDim / 2;
    if (gid >= p.tokens * p.heads * half_) return;
    uint j = gid % half_, h = (gid / half_) % p.heads, t = gid / (half_ * p.heads);
    uint pos = uint(positions[0]) + t;
    float c = table[pos * p.headDim + 2 * j], s = table[pos * p.headDim + 2 * j + 1];
    uint base = (p.row0 + t) * p.cols + h * p.headDim;
    float x1 = x[base + j], x2 = x[base + half_ + j];
    x[base + j] = x1 * c - x2 * s;
    x[base + half_ + j] = x2 * c + x1 * s;
}
