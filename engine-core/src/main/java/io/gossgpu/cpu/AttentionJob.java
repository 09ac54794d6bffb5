package io.gossgpu.cpu;

import io.gossgpu.model.ModelConfig;

import java.util.Arrays;

/**
 * Causal GQA attention with sinks and sliding windows ({@link io.gossgpu.backend.Backend#attention}). Keys are
 * read from the cache's 16-slot transposed blocks ({@link CpuKvCache}) and, for the batch's own positions, from a
 * copy of the batch's keys in the same layout; afterwards the batch's keys and values go into the cache. The
 * work runs on the native kernels ({@link NativeAttention}) where the kernel set has them, else here on the Java
 * float kernels: (token, KV head) pairs split across threads, each query head's scores in a per-worker buffer.
 */
final class AttentionJob implements CpuPool.Body {
    /** One call's operands, shared by both implementations. */
    static final class Call {
        float[] q, kIn, vIn, out, ck, cv, sinks, kBatchT;
        int T, start, slots, kvDim, qDim, hd, group, kvHeads, window;
        boolean sliding;
        float scale;
    }

    private final CpuPool pool;
    private final CpuKernels k;
    private final NativeAttention nativeAttention;
    private final int threads;
    private final Call c = new Call();
    private float[][] scores = new float[0][], slotScores = new float[0][], batchScores = new float[0][];
    /** The current batch's keys in 16-position transposed blocks (the cache's key layout). */
    private float[] kBatchT = new float[0];

    AttentionJob(CpuPool pool, io.gossgpu.cpu.matmul.KernelSet kernels, int threads) {
        this.pool = pool;
        this.k = kernels.java();
        this.nativeAttention = kernels.nativeAttention() ? new NativeAttention(pool, kernels) : null;
        this.threads = threads;
    }

    void run(ModelConfig c, int layer, float[] q, float[] kIn, float[] vIn, int T, CpuKvCache cache, float[] sinks,
             int start, float[] out) {
        int kvd = c.kvDim(), tRound = (T + 15) & ~15, ctx = start + T;
        if (nativeAttention == null && (scores.length == 0 || scores[0].length < ctx)) {
            scores = new float[threads][ctx];
            slotScores = new float[threads][(ctx + 15) & ~15];
        }
        if (batchScores.length == 0 || batchScores[0].length < tRound) batchScores = new float[threads][tRound];
        if (kBatchT.length < tRound * kvd) kBatchT = new float[tRound * kvd];
        for (int i = 0; i < T; i++) {
            int kb = (i >> 4) * kvd * 16 + (i & 15);
            for (int ch = 0; ch < kvd; ch++) kBatchT[kb + ch * 16] = kIn[i * kvd + ch];
        }
        Call a = this.c;
        a.q = q;
        a.kIn = kIn;
        a.vIn = vIn;
        a.out = out;
        a.ck = cache.keys[layer];
        a.cv = cache.values[layer];
        a.sinks = sinks;
        a.kBatchT = kBatchT;
        a.T = T;
        a.start = start;
        a.slots = cache.spec.slots(layer);
        a.kvDim = kvd;
        a.qDim = c.qDim();
        a.hd = c.headDim();
        a.group = c.queriesPerKvHead();
        a.kvHeads = c.numKeyValueHeads();
        a.sliding = c.isSlidingLayer(layer);
        a.window = c.slidingWindow();
        a.scale = (float) (1 / Math.sqrt(c.headDim()));
        if (nativeAttention != null) nativeAttention.run(a);
        else pool.run(T * a.kvHeads, 1, this);
        float[] ck = a.ck, cv = a.cv;
        int slots = a.slots;
        // then the batch's keys and values go into the cache (only the last `slots` of them on a ring)
        for (int i = Math.max(0, T - slots); i < T; i++) {
            int slot = (start + i) % slots;
            int kb = (slot >> 4) * kvd * 16 + (slot & 15);
            for (int ch = 0; ch < kvd; ch++) ck[kb + ch * 16] = kIn[i * kvd + ch];
            System.arraycopy(vIn, i * kvd, cv, slot * kvd, kvd);
        }
        a.q = a.kIn = a.vIn = a.out = a.ck = a.cv = a.sinks = null;
    }

    @Override
    public void run(int from, int to, int worker) {
        Call c = this.c;
        float[] q = c.q, vIn = c.vIn, out = c.out, ck = c.ck, cv = c.cv, sinks = c.sinks;
        int start = c.start, slots = c.slots, kvDim = c.kvDim, qDim = c.qDim, hd = c.hd, group = c.group, kvHeads = c.kvHeads,
                window = c.window;
        boolean sliding = c.sliding;
        float scale = c.scale;
        float[] s = scores[worker], bySlot = slotScores[worker];
        for (int item = from; item < to; item++) {
            int i = item / kvHeads, g = item % kvHeads;
            int p = start + i;
            int lo = sliding ? Math.max(0, p - window + 1) : 0;
            int n = p - lo + 1;
            int cachedEnd = Math.min(p + 1, start); // positions lo .. cachedEnd-1 come from the cache
            for (int h = g * group; h < (g + 1) * group; h++) {
                int qo = i * qDim + h * hd;
                float max = sinks[h];
                if (lo < cachedEnd) {
                    // cached positions: at most two runs of consecutive slots (the ring may wrap)
                    int sA = lo % slots, count = cachedEnd - lo;
                    int first = Math.min(count, slots - sA);
                    k.keyScores(q, qo, hd, ck, kvDim, g * hd, sA, sA + first, bySlot);
                    if (first < count) k.keyScores(q, qo, hd, ck, kvDim, g * hd, 0, count - first, bySlot);
                    max = Math.max(max, k.scaleCopyMax(bySlot, sA, s, 0, first, scale));
                    if (first < count) max = Math.max(max, k.scaleCopyMax(bySlot, 0, s, first, count - first, scale));
                }
                int jb0 = Math.max(lo, start);
                if (jb0 <= p) {
                    k.keyScores(q, qo, hd, kBatchT, kvDim, g * hd, jb0 - start, i + 1, batchScores[worker]);
                    max = Math.max(max, k.scaleCopyMax(batchScores[worker], jb0 - start, s, jb0 - lo, p - jb0 + 1, scale));
                }
                float z = k.expSub(s, 0, n, max) + ExpF.exp(sinks[h] - max);
                Arrays.fill(out, qo, qo + hd, 0f);
                if (lo < cachedEnd) {
                    int sA = lo % slots, count = cachedEnd - lo;
                    int first = Math.min(count, slots - sA);
                    k.weightedRows(s, 0, first, cv, sA * kvDim + g * hd, kvDim, out, qo, hd);
                    if (first < count) k.weightedRows(s, first, count - first, cv, g * hd, kvDim, out, qo, hd);
                }
                if (jb0 <= p) k.weightedRows(s, jb0 - lo, p - jb0 + 1, vIn, (jb0 - start) * kvDim + g * hd, kvDim, out, qo, hd);
                k.scale(1 / z, out, qo, hd);
            }
        }
    }
}
