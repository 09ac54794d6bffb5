/*
 * RoPE, half-split pairing, in place on rows row0 .. row0+T-1 of the query rows (qHeads*hd columns) and the key rows
 * (kHeads*hd columns), in one launch: for row row0 + t (position p = start + t, start = pos[0]),
 * head h, j < hd/2: x1 = x[h*hd + j], x2 = x[h*hd + hd/2 + j];
 *   x[h*hd + j] = x1*cos - x2*sin,   x[h*hd + hd/2 + j] = x2*cos + x1*sin
 * with cos = table[p*hd + 2j], sin = table[p*hd + 2j + 1] from io.gossgpu.backend.Rope.cosSinTable
 * (angles p*invFreq computed in double on the host, YaRN concentration applied). Global (hd/2, qHeads + kHeads, T):
 * heads below qHeads are q's, the others k's.
 * The same buffers and RopeParams as rope.cu and rope.metal (io.gossgpu.device.RopeOp).
 */
typedef struct { int tokens; int qHeads; int kHeads; int headDim; int row0; } RopeParams;

__kernel void rope(__global float* q, __global float* k, __global const float* table, __global const int* pos, const RopeParams p) {
    const int hd = p.headDim, start = pos[0], row0 = p.row0;
    int j = get_global_id(0), h = get_global_id(1), t = get_global_id(2);
    int hh = hd / 2;
    if (j >= hh) return;
    int isQ = h < p.qHeads;
    __global float* x = isQ ? q : k;
    int cols = (isQ ? p.qHeads : p.kHeads) * hd;
    __global float* b = x + (long) (row0 + t) * cols + (isQ ? h : h - p.qHeads) * hd;
    __global const float* cs = table + (long) (start + t) * hd;
    float c = cs[2 * j], s = cs[2 * j + 1];
    float x1 = b[j], x2 = b[hh + j];
    b[j] = fma(x1, c, -x2 * s);
    b[hh + j] = fma(x2, c, x1 * s);
}
