/*
 * Embedding lookup: out[t, c] = E[tokens[t], c]   (exact: a decode of the stored value, no arithmetic
 * beyond Q8_0's d*q). Token ids are checked on the host. Global size (H, T).
 */
typedef struct { int tokens; int cols; int fmt; } EmbedParams; /* one work item per (column, token): tokens unread */

__kernel void embed(__global const uchar* table, __global const int* tokens, __global float* out,
                    const EmbedParams p) {
    const int fmt = p.fmt, H = p.cols;
    int c = get_global_id(0), t = get_global_id(1);
    if (c >= H) return;
    __global const uchar* row = table + (long) tokens[t] * dense_row_bytes(fmt, H);
    out[(long) t * H + c] = load_dense(row, fmt, c);
}
