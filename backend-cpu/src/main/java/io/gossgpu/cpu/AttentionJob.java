package io.gossgpu.cpu;

import io.gossgpu.backend.Batch;
import io.gossgpu.backend.KvType;
import io.gossgpu.cpu.compute.CpuKernels;
import io.gossgpu.cpu.compute.CpuPool;
import io.gossgpu.cpu.compute.ExpF;
import io.gossgpu.model.ModelConfig;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * Causal GQA attention with sinks and sliding windows ({@link io.gossgpu.backend.Backend#attention}) for every sequence
 * of a batch. Keys are read from each sequence's cache in 16-slot transposed blocks ({@link CpuKvCache}) and, for the
 * batch's own positions, from a copy of the batch's keys in the same layout (and of its values, row by row), where
 * each sequence's rows start a block of their own: a sequence sees the same lanes whether it runs alone or beside
 * others, so its sums run in the same order. Afterwards each sequence's keys and values go into its cache. The work
 * runs on the native kernels ({@link NativeAttention}) where the kernel set has them, else here on the Java float
 * kernels: (sequence, token, KV head) items split across threads, each query head's scores in a per-worker buffer.
 *
 * <p>A cache of another {@link KvType} than F32 holds each number as it reads back once rounded ({@link CpuKvCache}):
 * the batch's own keys and values are first rounded in place ({@link KvType#round}, as the {@link
 * io.gossgpu.backend.Backend#attention} contract allows), so a prefill attends as the same tokens decoded one by one,
 * and storing them afterwards encodes them exactly. The kernels decode cached numbers to the same floats and sum
 * them in the same order as F32 ones: a typed cache attends bit for bit as an F32 cache holding the rounded numbers.
 * The Java kernels decode a typed cache {@link #DECODE_SLOTS} slots at a time into a per-worker buffer.
 */
final class AttentionJob implements CpuPool.Body {
    /** What every sequence of a call shares: the batch's tensors and the layer's shape. */
    static final class Call {
        float[] q, out, sinks, kBatchT, vBatch;
        int kvDim, qDim, hd, group, kvHeads, window;
        boolean sliding;
        float scale;
        Seq[] seqs = new Seq[0];
        int count;
    }

    /**
     * One sequence of a call: its rows {@code row0 ..} {@code + T − 1} of q and out at positions {@code start ..}, its
     * cache's arrays, and where its keys and values start in the batch copies: slot {@code slot0 + i} of
     * {@code kBatchT}, row {@code slot0 + i} of {@code vBatch} ({@code slot0} a multiple of 16).
     */
    static final class Seq {
        /** The sequence's cache and this layer's arrays in it: ck and cv when F32; as segments, of any type. */
        CpuKvCache cache;

        int layer;
        float[] ck, cv;
        MemorySegment kSeg, vSeg, kScales, vScales;
        int T, start, slots, row0, slot0;
        /** The first work item of this sequence (items of a call are numbered across its sequences). */
        int firstItem;
    }

    private final CpuPool pool;
    private final CpuKernels k;
    private final NativeAttention nativeAttention;
    private final int threads;
    private final Call c = new Call();
    private float[][] scores = new float[0][], slotScores = new float[0][], batchScores = new float[0][];
    /** Slots of a typed cache the Java kernels decode at once, and per worker the decoded keys, scores and values. */
    static final int DECODE_SLOTS = 64;

    private float[][] decodedKeys = new float[0][], decodedScores = new float[0][], decodedValues = new float[0][];
    /** The current batch's keys in 16-position transposed blocks (the cache's key layout), and its values. */
    private float[] kBatchT = new float[0], vBatch = new float[0];

    AttentionJob(CpuPool pool, io.gossgpu.cpu.matmul.KernelSet kernels, int threads) {
        this.pool = pool;
        this.k = kernels.java();
        this.nativeAttention = kernels.nativeAttention() ? new NativeAttention(pool, kernels) : null;
        this.threads = threads;
    }

    void run(ModelConfig c, int layer, float[] q, float[] kIn, float[] vIn, Batch batch, float[] sinks, float[] out) {
        int kvd = c.kvDim(), n = batch.size();
        Call a = this.c;
        if (a.seqs.length < n) {
            a.seqs = Arrays.copyOf(a.seqs, n);
            for (int s = 0; s < n; s++) if (a.seqs[s] == null) a.seqs[s] = new Seq();
        }
        int slotEnd = 0, maxCtx = 0;
        for (int s = 0; s < n; s++) {
            Seq q0 = a.seqs[s];
            CpuKvCache cache = (CpuKvCache) batch.cache(s);
            q0.cache = cache;
            q0.layer = layer;
            q0.ck = cache.type == KvType.F32 ? cache.keys[layer] : null;
            q0.cv = cache.type == KvType.F32 ? cache.values[layer] : null;
            q0.kSeg = cache.keySegment(layer);
            q0.vSeg = cache.valueSegment(layer);
            q0.kScales = cache.keyScaleSegment(layer);
            q0.vScales = cache.valueScaleSegment(layer);
            q0.T = batch.tokens(s);
            q0.start = batch.start(s);
            q0.slots = cache.spec.slots(layer);
            q0.row0 = batch.firstRow(s);
            q0.slot0 = slotEnd;
            slotEnd += (q0.T + 15) & ~15;
            maxCtx = Math.max(maxCtx, q0.start + q0.T);
        }
        if (nativeAttention == null && (scores.length == 0 || scores[0].length < maxCtx)) {
            scores = new float[threads][maxCtx];
            slotScores = new float[threads][(maxCtx + 15) & ~15];
        }
        boolean typed = false;
        for (int s = 0; s < n; s++) {
            Seq q0 = a.seqs[s];
            if (q0.cache.type == KvType.F32) continue;
            typed = true;
            round(q0.cache.type, kIn, vIn, q0.row0, q0.T, kvd);
        }
        int hd = c.headDim();
        int decodedKeyFloats = hd * 16 * (DECODE_SLOTS / 16 + 1); // a run of DECODE_SLOTS may start inside a block
        if (typed && nativeAttention == null && (decodedKeys.length == 0 || decodedKeys[0].length < decodedKeyFloats)) {
            decodedKeys = new float[threads][decodedKeyFloats];
            decodedScores = new float[threads][DECODE_SLOTS + 16];
            decodedValues = new float[threads][hd * DECODE_SLOTS];
        }
        if (batchScores.length == 0 || batchScores[0].length < slotEnd) batchScores = new float[threads][slotEnd];
        if (kBatchT.length < slotEnd * kvd) {
            kBatchT = new float[slotEnd * kvd];
            vBatch = new float[slotEnd * kvd];
        }
        for (int s = 0; s < n; s++) {
            Seq q0 = a.seqs[s];
            for (int i = 0; i < q0.T; i++) {
                int slot = q0.slot0 + i, row = q0.row0 + i;
                int kb = (slot >> 4) * kvd * 16 + (slot & 15);
                for (int ch = 0; ch < kvd; ch++) kBatchT[kb + ch * 16] = kIn[row * kvd + ch];
                System.arraycopy(vIn, row * kvd, vBatch, slot * kvd, kvd);
            }
        }
        a.q = q;
        a.out = out;
        a.sinks = sinks;
        a.kBatchT = kBatchT;
        a.vBatch = vBatch;
        a.count = n;
        a.kvDim = kvd;
        a.qDim = c.qDim();
        a.hd = c.headDim();
        a.group = c.queriesPerKvHead();
        a.kvHeads = c.numKeyValueHeads();
        a.sliding = c.isSlidingLayer(layer);
        a.window = c.slidingWindow();
        a.scale = (float) (1 / Math.sqrt(c.headDim()));
        if (nativeAttention != null) nativeAttention.run(a);
        else {
            int items = 0;
            for (int s = 0; s < n; s++) {
                a.seqs[s].firstItem = items;
                items += a.seqs[s].T * a.kvHeads;
            }
            pool.run(items, 1, this);
        }
        // then each sequence's keys and values go into its cache (only the last `slots` of them on a ring)
        for (int s = 0; s < n; s++) {
            Seq q0 = a.seqs[s];
            for (int i = Math.max(0, q0.T - q0.slots); i < q0.T; i++) {
                int row = q0.row0 + i;
                q0.cache.store(layer, (q0.start + i) % q0.slots, kIn, row * kvd, vIn, row * kvd);
            }
            q0.ck = q0.cv = null;
            q0.cache = null;
            q0.kSeg = q0.vSeg = q0.kScales = q0.vScales = null;
        }
        a.q = a.out = a.sinks = null;
    }

    /** Rounds rows {@code row0 .. row0 + T − 1} of k and v in place to what {@code type} stores (on the pool for a prefill). */
    private void round(KvType type, float[] k, float[] v, int row0, int T, int kvDim) {
        if (T < 16) {
            type.round(k, row0 * kvDim, T, kvDim);
            type.round(v, row0 * kvDim, T, kvDim);
        } else
            pool.run(T, pool.grainFor(T, 4, 4), (from, to, worker) -> {
                type.round(k, (row0 + from) * kvDim, to - from, kvDim);
                type.round(v, (row0 + from) * kvDim, to - from, kvDim);
            });
    }

    /** The sequence of a call that work item {@code item} belongs to (items numbered across sequences, {@link Seq#firstItem}). */
    static int sequenceOf(Call c, int item) {
        int lo = 0, hi = c.count - 1; // the last sequence whose first item is ≤ item
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (c.seqs[mid].firstItem <= item) lo = mid;
            else hi = mid - 1;
        }
        return lo;
    }

    @Override
    public void run(int from, int to, int worker) {
        Call c = this.c;
        float[] q = c.q, vB = c.vBatch, out = c.out, sinks = c.sinks;
        int kvDim = c.kvDim, qDim = c.qDim, hd = c.hd, group = c.group, kvHeads = c.kvHeads, window = c.window;
        boolean sliding = c.sliding;
        float scale = c.scale;
        float[] s = scores[worker], bySlot = slotScores[worker];
        for (int item = from; item < to; item++) {
            Seq sq = c.seqs[sequenceOf(c, item)];
            float[] ck = sq.ck, cv = sq.cv;
            int start = sq.start, slots = sq.slots;
            int local = item - sq.firstItem, i = local / kvHeads, g = local % kvHeads;
            int p = start + i;
            int lo = sliding ? Math.max(0, p - window + 1) : 0;
            int n = p - lo + 1;
            int cachedEnd = Math.min(p + 1, start); // positions lo .. cachedEnd-1 come from the cache
            for (int h = g * group; h < (g + 1) * group; h++) {
                int qo = (sq.row0 + i) * qDim + h * hd;
                float max = sinks[h];
                if (lo < cachedEnd) {
                    // cached positions: at most two runs of consecutive slots (the ring may wrap)
                    int sA = lo % slots, count = cachedEnd - lo;
                    int first = Math.min(count, slots - sA);
                    if (ck != null) {
                        k.keyScores(q, qo, hd, ck, kvDim, g * hd, sA, sA + first, bySlot);
                        if (first < count) k.keyScores(q, qo, hd, ck, kvDim, g * hd, 0, count - first, bySlot);
                        max = Math.max(max, k.scaleCopyMax(bySlot, sA, s, 0, first, scale));
                        if (first < count)
                            max = Math.max(max, k.scaleCopyMax(bySlot, 0, s, first, count - first, scale));
                    } else {
                        max = Math.max(max, decodedScores(sq, g * hd, hd, q, qo, sA, first, scale, s, 0, worker));
                        if (first < count)
                            max = Math.max(
                                    max,
                                    decodedScores(sq, g * hd, hd, q, qo, 0, count - first, scale, s, first, worker));
                    }
                }
                int jb0 = Math.max(lo, start);
                if (jb0 <= p) {
                    k.keyScores(
                            q,
                            qo,
                            hd,
                            c.kBatchT,
                            kvDim,
                            g * hd,
                            sq.slot0 + jb0 - start,
                            sq.slot0 + i + 1,
                            batchScores[worker]);
                    max = Math.max(
                            max,
                            k.scaleCopyMax(
                                    batchScores[worker], sq.slot0 + jb0 - start, s, jb0 - lo, p - jb0 + 1, scale));
                }
                float z = k.expSub(s, 0, n, max) + ExpF.exp(sinks[h] - max);
                Arrays.fill(out, qo, qo + hd, 0f);
                if (lo < cachedEnd) {
                    int sA = lo % slots, count = cachedEnd - lo;
                    int first = Math.min(count, slots - sA);
                    if (cv != null) {
                        k.weightedRows(s, 0, first, cv, sA * kvDim + g * hd, kvDim, out, qo, hd);
                        if (first < count) k.weightedRows(s, first, count - first, cv, g * hd, kvDim, out, qo, hd);
                    } else {
                        decodedRows(sq, g * hd, hd, s, 0, sA, first, out, qo, worker);
                        if (first < count) decodedRows(sq, g * hd, hd, s, first, 0, count - first, out, qo, worker);
                    }
                }
                if (jb0 <= p)
                    k.weightedRows(
                            s,
                            jb0 - lo,
                            p - jb0 + 1,
                            vB,
                            (sq.slot0 + jb0 - start) * kvDim + g * hd,
                            kvDim,
                            out,
                            qo,
                            hd);
                k.scale(1 / z, out, qo, hd);
            }
        }
    }

    /**
     * {@code dst[dOff + j] = scale · q·K[slot0 + j]} for the keys of channels {@code chan ..} of slots {@code slot0 ..
     * slot0 + n − 1} of a typed cache (decoded {@link #DECODE_SLOTS} at a time); returns their maximum. The same sums
     * as {@link CpuKernels#keyScores} on an F32 cache.
     */
    private float decodedScores(
            Seq sq,
            int chan,
            int hd,
            float[] q,
            int qOff,
            int slot0,
            int n,
            float scale,
            float[] dst,
            int dOff,
            int w) {
        float[] keys = decodedKeys[w], bySlot = decodedScores[w];
        float max = Float.NEGATIVE_INFINITY;
        for (int a = slot0, end = slot0 + n; a < end; ) {
            int b0 = a >> 4, to = Math.min(end, (b0 << 4) + DECODE_SLOTS); // slots a .. to−1, within 4 key blocks
            sq.cache.decodeKeys(sq.layer, b0, (to + 15) >> 4, chan, hd, keys);
            int base = b0 << 4;
            k.keyScores(q, qOff, hd, keys, hd, 0, a - base, to - base, bySlot);
            max = Math.max(max, k.scaleCopyMax(bySlot, a - base, dst, dOff + a - slot0, to - a, scale));
            a = to;
        }
        return max;
    }

    /**
     * {@code out[oOff + d] += Σ_j p[pOff + j] · V[slot0 + j][chan + d]} over the slots {@code slot0 .. slot0 + n − 1} of
     * a typed cache (decoded {@link #DECODE_SLOTS} at a time): {@link CpuKernels#weightedRows} on an F32 cache.
     */
    private void decodedRows(
            Seq sq, int chan, int hd, float[] p, int pOff, int slot0, int n, float[] out, int oOff, int w) {
        float[] values = decodedValues[w];
        for (int j = 0; j < n; j += DECODE_SLOTS) {
            int m = Math.min(DECODE_SLOTS, n - j);
            sq.cache.decodeValues(sq.layer, slot0 + j, m, chan, hd, values);
            k.weightedRows(p, pOff + j, m, values, 0, hd, out, oOff, hd);
        }
    }
}
