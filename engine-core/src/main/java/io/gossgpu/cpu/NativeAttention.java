package io.gossgpu.cpu;

import io.gossgpu.cpu.matmul.KernelSet;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * The work items of {@link AttentionJob} on the native kernels ({@code kernels/cpu/attention.c}): an online
 * softmax per (KV head, block of {@link #TOKENS} query tokens), over the cached keys (at most two runs of ring
 * slots) and then the batch's own keys. Short batches (≤ {@link #TOKENS} tokens, decode) also split the keys
 * into chunks of {@link #CHUNK} positions, so that every thread streams part of a long cache; the chunks' states
 * are merged in chunk order afterwards. Chunks and blocks depend only on the batch, never on the thread count,
 * so the result is the same whatever the threads.
 */
final class NativeAttention implements CpuPool.Body {
    static final int TOKENS = 4;
    static final int CHUNK = 1024;

    private final CpuPool pool;
    private final KernelSet kernels;
    /** Softmax states: per item, rows × (m, l) and rows × hd accumulators. */
    private float[] m = new float[0], l = new float[0], acc = new float[0];

    // the current call (set by AttentionJob.run)
    private AttentionJob.Call c;
    private int blocks, chunks, rows, lo0;

    NativeAttention(CpuPool pool, KernelSet kernels) {
        this.pool = pool;
        this.kernels = kernels;
    }

    void run(AttentionJob.Call call) {
        c = call;
        blocks = (c.T + TOKENS - 1) / TOKENS;
        rows = Math.min(TOKENS, c.T) * c.group;
        // keys of the whole batch: positions lo0 .. start+T−1
        lo0 = c.sliding ? Math.max(0, c.start - c.window + 1) : 0;
        chunks = c.T <= TOKENS ? Math.max(1, (c.start + c.T - lo0 + CHUNK - 1) / CHUNK) : 1;
        int items = c.kvHeads * blocks * chunks;
        int stateItems = chunks > 1 ? items : 0;
        if (chunks > 1 && m.length < stateItems * rows) {
            m = new float[stateItems * rows];
            l = new float[stateItems * rows];
            acc = new float[stateItems * rows * c.hd];
        }
        pool.run(items, 1, this);
        if (chunks > 1)
            for (int g = 0; g < c.kvHeads; g++)
                for (int b = 0; b < blocks; b++) {
                    int first = (g * blocks + b) * chunks;
                    for (int ch = 1; ch < chunks; ch++)
                        kernels.attnMerge(rows, c.hd, seg(m, first * rows), seg(l, first * rows), seg(acc, first * rows * c.hd),
                                seg(m, (first + ch) * rows), seg(l, (first + ch) * rows), seg(acc, (first + ch) * rows * c.hd));
                    finish(g, b, first * rows, m, l, acc);
                }
        c = null;
    }

    private static MemorySegment seg(float[] a, long off) {
        return MemorySegment.ofArray(a).asSlice(4 * off);
    }

    /** Per worker: the state of one item when it is finished at once (long batches). */
    private float[][] wm = new float[0][], wl = new float[0][], wacc = new float[0][];

    @Override
    public void run(int from, int to, int worker) {
        for (int item = from; item < to; item++) {
            int ch = item % chunks, gb = item / chunks, b = gb % blocks, g = gb / blocks;
            float[] sm, sl, sacc;
            int off;
            if (chunks > 1) {
                sm = m;
                sl = l;
                sacc = acc;
                off = item * rows;
            } else {
                ensureWorker(worker);
                sm = wm[worker];
                sl = wl[worker];
                sacc = wacc[worker];
                off = 0;
            }
            Arrays.fill(sm, off, off + rows, Float.NEGATIVE_INFINITY);
            Arrays.fill(sl, off, off + rows, 0f);
            Arrays.fill(sacc, off * c.hd, (off + rows) * c.hd, 0f);
            keys(g, b, ch, seg(sm, off), seg(sl, off), seg(sacc, (long) off * c.hd));
            if (chunks == 1) finish(g, b, 0, sm, sl, sacc);
        }
    }

    private synchronized void ensureWorker(int worker) {
        if (wm.length <= worker) {
            wm = Arrays.copyOf(wm, worker + 1);
            wl = Arrays.copyOf(wl, worker + 1);
            wacc = Arrays.copyOf(wacc, worker + 1);
        }
        if (wm[worker] == null || wm[worker].length < rows || wacc[worker].length < rows * c.hd) {
            wm[worker] = new float[rows];
            wl[worker] = new float[rows];
            wacc[worker] = new float[rows * c.hd];
        }
    }

    /** Extends the state with the keys item (g, block b, chunk ch) sees: cached positions, then the batch's. */
    private void keys(int g, int b, int ch, MemorySegment sm, MemorySegment sl, MemorySegment sacc) {
        int t0 = b * TOKENS, nt = Math.min(TOKENS, c.T - t0);
        int pFirst = c.start + t0, pLast = pFirst + nt - 1;
        int lo = c.sliding ? Math.max(0, pFirst - c.window + 1) : 0, hi = pLast + 1; // key positions lo .. hi−1
        if (chunks > 1) {
            lo = Math.max(lo, lo0 + ch * CHUNK);
            hi = Math.min(hi, lo0 + (ch + 1) * CHUNK);
        }
        MemorySegment q = seg(c.q, (long) t0 * c.qDim + (long) g * c.group * c.hd);
        int window = c.sliding ? c.window : 0;
        // cached positions lo .. min(hi, start)−1: at most two runs of consecutive ring slots
        int cachedEnd = Math.min(hi, c.start);
        if (lo < cachedEnd) {
            MemorySegment kt = seg(c.ck, (long) g * c.hd * 16), v = seg(c.cv, (long) g * c.hd);
            int pos = lo;
            while (pos < cachedEnd) {
                int slot = pos % c.slots, count = Math.min(cachedEnd - pos, c.slots - slot);
                kernels.attnUpdate(q, c.qDim, nt, c.group, c.hd, pFirst, window, kt, (long) c.kvDim * 16, v, c.kvDim,
                        slot, count, pos, c.scale, sm, sl, sacc);
                pos += count;
            }
        }
        // the batch's own positions max(lo, start) .. hi−1, at batch rows pos − start
        int b0 = Math.max(lo, c.start);
        if (b0 < hi)
            kernels.attnUpdate(q, c.qDim, nt, c.group, c.hd, pFirst, window, seg(c.kBatchT, (long) g * c.hd * 16),
                    (long) c.kvDim * 16, seg(c.vIn, (long) g * c.hd), c.kvDim, b0 - c.start, hi - b0, b0, c.scale, sm, sl, sacc);
    }

    private void finish(int g, int b, int off, float[] sm, float[] sl, float[] sacc) {
        int t0 = b * TOKENS, nt = Math.min(TOKENS, c.T - t0);
        kernels.attnFinish(nt, c.group, c.hd, seg(sm, off), seg(sl, off), seg(sacc, (long) off * c.hd),
                seg(c.sinks, (long) g * c.group), seg(c.out, (long) t0 * c.qDim + (long) g * c.group * c.hd), c.qDim);
    }
}
