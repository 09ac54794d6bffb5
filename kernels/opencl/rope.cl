/*
 * RoPE, half-split pairing, in place on rows row0 .. row0+T-1 of a tensor of heads*hd columns: for row row0 + t
 * (position p = start + t, start = pos[0]),
 * head h, j < hd/2: x1 = x[h*hd + j], x2 = x[h*hd + hd/2 + j];
 *   x[h*hd + j] = x1*cos - x2*sin,   x[h*hd + hd/2 + j] = x2*cos + x1*sin
 * with cos = table[p*hd + 2j], sin = table[p*hd + 2j + 1] from io.gossgpu.backend.Rope.cosSinTable
 * (angles p*invFreq computed in double on the host, YaRN concentration applied). Global (hd/2, heads, T).
 * The same buffers and RopeParams as rope.cu and rope.metal (io.gossgpu.device.RopeOp).
 */
typedef struct { int tokens; int heads; int headDim; int cols; int row0; } RopeParams;

__kernel void rope(__global float* x, __global const float* table, __global const int* pos, const RopeParams p) {
    const int cols = p.cols, hd = p.headDim, start = pos[0], row0 = p.row0;
    int j = get_global_id(0), h = get_global_id(1), t = get_global_id(2);
    int hh = hd / 2;
    if (j >= hh) return;
    __global float* b = x + (long) (row0 + t) * cols + h * hd;
    __global const float* cs = table + (long) (start + t) * hd;
    float c = cs[2 * j], s = cs[2 * j + 1];
    float x1 = b[j], x2 = b[hh + j];
    b[j] = fma(x1, c, -x2 * s);
    b[hh + j] = fma(x2, c, x1 * s);
}
