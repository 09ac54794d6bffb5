/*
 * On-device greedy pick: out[t] = argmax_r logits[t, r] over r < V, ties to the lower token id; -1
 * (TemperatureDraw.NOT_FINITE) when the row holds NaN or an infinity, which the executor's guard reports.
 * One work-group per row; each work item scans r = lid, lid + wg, ... (ascending, strict >), then a
 * tree reduction keeps the larger value, or the lower id on equal values. Local size = GOSS_OPENCL_ARGMAX_WG.
 */
typedef struct { int rows; int vocab; } ArgmaxParams; /* one work-group per row: rows unread */

__kernel void argmax(__global const float* logits, __global int* out, __local float* lv, __local int* li,
                     const ArgmaxParams p) {
    const int V = p.vocab;
    int t = get_group_id(0), lid = get_local_id(0), wg = get_local_size(0);
    __global const float* l = logits + (long) t * V;
    __local int bad; /* any work item read NaN/Inf */
    if (lid == 0) bad = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    float best = -INFINITY;
    int bi = -1;
    for (int r = lid; r < V; r += wg) {
        float x = l[r];
        if (isnan(x) || isinf(x)) bad = 1;
        else if (bi < 0 || x > best) { best = x; bi = r; }
    }
    lv[lid] = best;
    li[lid] = bi;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = wg >> 1; s > 0; s >>= 1) {
        if (lid < s) {
            float ov = lv[lid + s];
            int oi = li[lid + s];
            int mi = li[lid];
            if (oi >= 0 && (mi < 0 || ov > lv[lid] || (ov == lv[lid] && oi < mi))) {
                lv[lid] = ov;
                li[lid] = oi;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) out[t] = bad ? -1 : li[0] < 0 ? 0 : li[0];
}
