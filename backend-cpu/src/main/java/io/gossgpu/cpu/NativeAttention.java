package io.gossgpu.cpu;

import io.gossgpu.backend.KvType;
import io.gossgpu.cpu.compute.CpuPool;
import io.gossgpu.cpu.matmul.KernelSet;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * The work items of {@link AttentionJob} on the native kernels ({@code backend-cpu/kernels/attention.c}): an online
 * softmax per (sequence, KV head, block of {@link #TOKENS} query tokens), over the sequence's cached keys (at most two
 * runs of ring slots) and then its own keys in the batch. Short sequences (≤ {@link #TOKENS} tokens, decode) also split
 * the keys into chunks of {@link #CHUNK} positions, so that every thread streams part of a long cache; the chunks'
 * states are merged in chunk order afterwards. Chunks and blocks depend only on the sequence, never on the thread
 * count or the other sequences of the batch, so its result is the same whatever the threads and its neighbours. The
 * items of all sequences go to the pool as one job. A cache of any {@link KvType} is read in place: the kernel decodes
 * each chunk of it into a per-worker scratch ({@code attention.c}); the batch's own keys and values are floats, already
 * rounded by {@link AttentionJob}.
 */
final class NativeAttention implements CpuPool.Body {
    static final int TOKENS = 4;
    static final int CHUNK = 1024;

    private final CpuPool pool;
    private final KernelSet kernels;
    /** Softmax states of the chunked items: per item, up to TOKENS·group rows of (m, l) and of hd accumulators. */
    private float[] m = new float[0], l = new float[0], acc = new float[0];

    // the current call (set by AttentionJob.run) and, per sequence, its blocks, chunks, rows per item and first state
    private AttentionJob.Call c;
    private int[] blocks = new int[0], chunks = new int[0], rows = new int[0], lo0 = new int[0], stateItem = new int[0];
    /** State rows per item in m/l/acc (a fixed stride, whatever a sequence's rows). */
    private int stride;

    NativeAttention(CpuPool pool, KernelSet kernels) {
        this.pool = pool;
        this.kernels = kernels;
    }

    void run(AttentionJob.Call call) {
        c = call;
        int n = c.count;
        if (blocks.length < n) {
            blocks = new int[n];
            chunks = new int[n];
            rows = new int[n];
            lo0 = new int[n];
            stateItem = new int[n];
        }
        stride = TOKENS * c.group;
        int items = 0, stateItems = 0;
        for (int s = 0; s < n; s++) {
            AttentionJob.Seq q = c.seqs[s];
            blocks[s] = (q.T + TOKENS - 1) / TOKENS;
            rows[s] = Math.min(TOKENS, q.T) * c.group;
            // keys of the whole sequence: positions lo0 .. start+T−1
            lo0[s] = c.sliding ? Math.max(0, q.start - c.window + 1) : 0;
            chunks[s] = q.T <= TOKENS ? Math.max(1, (q.start + q.T - lo0[s] + CHUNK - 1) / CHUNK) : 1;
            q.firstItem = items;
            int mine = c.kvHeads * blocks[s] * chunks[s];
            items += mine;
            stateItem[s] = stateItems;
            if (chunks[s] > 1) stateItems += mine;
        }
        if (m.length < stateItems * stride) {
            m = new float[stateItems * stride];
            l = new float[stateItems * stride];
            acc = new float[stateItems * stride * c.hd];
        }
        pool.run(items, 1, this);
        for (int s = 0; s < n; s++) {
            if (chunks[s] == 1) continue;
            for (int g = 0; g < c.kvHeads; g++)
                for (int b = 0; b < blocks[s]; b++) {
                    int first = stateItem[s] + (g * blocks[s] + b) * chunks[s];
                    for (int ch = 1; ch < chunks[s]; ch++)
                        kernels.attnMerge(
                                rows[s],
                                c.hd,
                                seg(m, first * stride),
                                seg(l, first * stride),
                                seg(acc, (long) first * stride * c.hd),
                                seg(m, (first + ch) * stride),
                                seg(l, (first + ch) * stride),
                                seg(acc, (long) (first + ch) * stride * c.hd));
                    finish(c.seqs[s], g, b, first * stride, m, l, acc);
                }
        }
        c = null;
    }

    private static MemorySegment seg(float[] a, long off) {
        return MemorySegment.ofArray(a).asSlice(4 * off);
    }

    /** Per worker: the state of one item when it is finished at once (long sequences). */
    private float[][] wm = new float[0][], wl = new float[0][], wacc = new float[0][];
    /** Per worker: where the kernel decodes a chunk of a typed cache (128·hd floats). */
    private float[][] wscratch = new float[0][];

    @Override
    public void run(int from, int to, int worker) {
        for (int item = from; item < to; item++) {
            int s = AttentionJob.sequenceOf(c, item);
            AttentionJob.Seq q = c.seqs[s];
            int local = item - q.firstItem, nch = chunks[s];
            int ch = local % nch, gb = local / nch, b = gb % blocks[s], g = gb / blocks[s];
            float[] sm, sl, sacc;
            int off, r = rows[s];
            if (nch > 1) {
                sm = m;
                sl = l;
                sacc = acc;
                off = (stateItem[s] + local) * stride;
            } else {
                ensureWorker(worker);
                sm = wm[worker];
                sl = wl[worker];
                sacc = wacc[worker];
                off = 0;
            }
            Arrays.fill(sm, off, off + r, Float.NEGATIVE_INFINITY);
            Arrays.fill(sl, off, off + r, 0f);
            Arrays.fill(sacc, off * c.hd, (off + r) * c.hd, 0f);
            keys(q, lo0[s], nch, g, b, ch, seg(sm, off), seg(sl, off), seg(sacc, (long) off * c.hd), worker);
            if (nch == 1) finish(q, g, b, 0, sm, sl, sacc);
        }
    }

    private synchronized void ensureWorker(int worker) {
        if (wm.length <= worker) {
            wm = Arrays.copyOf(wm, worker + 1);
            wl = Arrays.copyOf(wl, worker + 1);
            wacc = Arrays.copyOf(wacc, worker + 1);
        }
        if (wm[worker] == null || wm[worker].length < stride || wacc[worker].length < stride * c.hd) {
            wm[worker] = new float[stride];
            wl[worker] = new float[stride];
            wacc[worker] = new float[stride * c.hd];
        }
    }

    private synchronized float[] scratch(int worker) {
        if (wscratch.length <= worker) wscratch = Arrays.copyOf(wscratch, worker + 1);
        if (wscratch[worker] == null || wscratch[worker].length < 128 * c.hd) wscratch[worker] = new float[128 * c.hd];
        return wscratch[worker];
    }

    /** Extends the state with the keys item (sequence q, g, block b, chunk ch) sees: cached positions, then the batch's. */
    private void keys(
            AttentionJob.Seq s,
            int lo0,
            int chunks,
            int g,
            int b,
            int ch,
            MemorySegment sm,
            MemorySegment sl,
            MemorySegment sacc,
            int worker) {
        int t0 = b * TOKENS, nt = Math.min(TOKENS, s.T - t0);
        int pFirst = s.start + t0, pLast = pFirst + nt - 1;
        int lo = c.sliding ? Math.max(0, pFirst - c.window + 1) : 0, hi = pLast + 1; // key positions lo .. hi−1
        if (chunks > 1) {
            lo = Math.max(lo, lo0 + ch * CHUNK);
            hi = Math.min(hi, lo0 + (ch + 1) * CHUNK);
        }
        MemorySegment q = seg(c.q, (long) (s.row0 + t0) * c.qDim + (long) g * c.group * c.hd);
        int window = c.sliding ? c.window : 0;
        // cached positions lo .. min(hi, start)−1: at most two runs of consecutive ring slots
        int cachedEnd = Math.min(hi, s.start);
        if (lo < cachedEnd) {
            // the cache's arrays from the head's channel 0 (elements of its type), its Q8_0 scales from slot 0
            CpuKvCache cache = s.cache;
            long size = cache.elementBytes, chan = (long) g * c.hd;
            MemorySegment kt = s.kSeg.asSlice(size * chan * 16), v = s.vSeg.asSlice(size * chan);
            MemorySegment scratch = cache.type == KvType.F32 ? MemorySegment.NULL : seg(scratch(worker), 0);
            int pos = lo;
            while (pos < cachedEnd) {
                int slot = pos % s.slots, count = Math.min(cachedEnd - pos, s.slots - slot);
                kernels.attnUpdate(
                        q,
                        c.qDim,
                        nt,
                        c.group,
                        c.hd,
                        pFirst,
                        window,
                        cache.type.ordinal(),
                        kt,
                        (long) c.kvDim * 16,
                        v,
                        c.kvDim,
                        s.kScales,
                        s.vScales,
                        cache.blocks,
                        chan,
                        slot,
                        count,
                        pos,
                        c.scale,
                        sm,
                        sl,
                        sacc,
                        scratch);
                pos += count;
            }
        }
        // the sequence's own positions max(lo, start) .. hi−1, at batch slots slot0 + pos − start
        int b0 = Math.max(lo, s.start);
        if (b0 < hi)
            kernels.attnUpdate(
                    q,
                    c.qDim,
                    nt,
                    c.group,
                    c.hd,
                    pFirst,
                    window,
                    KvType.F32.ordinal(),
                    seg(c.kBatchT, (long) g * c.hd * 16),
                    (long) c.kvDim * 16,
                    seg(c.vBatch, (long) g * c.hd),
                    c.kvDim,
                    MemorySegment.NULL,
                    MemorySegment.NULL,
                    0,
                    (long) g * c.hd,
                    s.slot0 + b0 - s.start,
                    hi - b0,
                    b0,
                    c.scale,
                    sm,
                    sl,
                    sacc,
                    MemorySegment.NULL);
    }

    private void finish(AttentionJob.Seq s, int g, int b, int off, float[] sm, float[] sl, float[] sacc) {
        int t0 = b * TOKENS, nt = Math.min(TOKENS, s.T - t0);
        kernels.attnFinish(
                nt,
                c.group,
                c.hd,
                seg(sm, off),
                seg(sl, off),
                seg(sacc, (long) off * c.hd),
                seg(c.sinks, (long) g * c.group),
                seg(c.out, (long) (s.row0 + t0) * c.qDim + (long) g * c.group * c.hd),
                c.qDim);
    }
}
