// RoPE, half-split pairs, in place on the query and key heads (MetalBackend.qkvRope).
//
// Reference: per row t (position p = start + t), head h, j < hd/2:
//   x1 = x[h*hd + j], x2 = x[h*hd + hd/2 + j], cos = tab[p*hd + 2j], sin = tab[p*hd + 2j + 1]
//   (Rope.cosSinTable: angles in double on the host, YaRN concentration applied)
//   x[h*hd + j] = x1*cos - x2*sin,  x[h*hd + hd/2 + j] = x2*cos + x1*sin

#include "common.h"

// ---- RoPE (half-split pairs) from a cos/sin table computed in double on the host ---------------------
struct RopeParams { uint T; uint heads; uint hd; uint start; uint cols; };

KERNEL(rope)(BUF(device float *, x, 0), BUF(device const float *, table, 1), PARAMS(RopeParams, p, 2), GRID_POS(gid)) {
    uint half_ = p.hd / 2;
    if (gid >= p.T * p.heads * half_) return;
    uint j = gid % half_, h = (gid / half_) % p.heads, t = gid / (half_ * p.heads);
    uint pos = p.start + t;
    float c = table[pos * p.hd + 2 * j], s = table[pos * p.hd + 2 * j + 1];
    uint base = t * p.cols + h * p.hd;
    float x1 = x[base + j], x2 = x[base + half_ + j];
    x[base + j] = x1 * c - x2 * s;
    x[base + half_ + j] = x2 * c + x1 * s;
}
