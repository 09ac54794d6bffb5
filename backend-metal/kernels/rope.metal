// RoPE, half-split pairs, in place on the query and key heads of rows row0 .. row0 + T - 1, in one launch
// (io.gossgpu.device.RopeOp;
// the same buffers and RopeParams in rope.cu and rope.cl).
//
// Reference: per row row0 + t (position p = start + t, start = pos[0]), head h, j < hd/2:
//   x1 = x[h*hd + j], x2 = x[h*hd + hd/2 + j], cos = tab[p*hd + 2j], sin = tab[p*hd + 2j + 1]
//   (Rope.cosSinTable: angles in double on the host, YaRN concentration applied)
//   x[h*hd + j] = x1*cos - x2*sin,  x[h*hd + hd/2 + j] = x2*cos + x1*sin

#include "common.h"

// ---- RoPE (half-split pairs) from a cos/sin table computed in double on the host ---------------------
// One thread per (row, head, pair): heads below qHeads are q's (rows of qHeads * headDim values), the others k's.
struct RopeParams { uint tokens; uint qHeads; uint kHeads; uint headDim; uint row0; };

KERNEL(rope)(BUF(device float *, q, 0), BUF(device float *, k, 1), BUF(device const float *, table, 2),
             BUF(device const int *, positions, 3), PARAMS(RopeParams, p, 4), GRID_POS(gid)) {
    uint half_ = p.headDim / 2, heads = p.qHeads + p.kHeads;
    if (gid >= p.tokens * heads * half_) return;
    uint j = gid % half_, h = (gid / half_) % heads, t = gid / (half_ * heads);
    bool isQ = h < p.qHeads;
    device float *x = isQ ? q : k;
    uint cols = (isQ ? p.qHeads : p.kHeads) * p.headDim;
    uint pos = uint(positions[0]) + t;
    float c = table[pos * p.headDim + 2 * j], s = table[pos * p.headDim + 2 * j + 1];
    uint base = (p.row0 + t) * cols + (isQ ? h : h - p.qHeads) * p.headDim;
    float x1 = x[base + j], x2 = x[base + half_ + j];
    x[base + j] = x1 * c - x2 * s;
    x[base + half_ + j] = x2 * c + x1 * s;
}
