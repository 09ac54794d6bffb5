package io.gossgpu.cpu;

import io.gossgpu.backend.DeviceWeights;
import io.gossgpu.cpu.compute.CpuKernels;
import io.gossgpu.cpu.compute.CpuPool;
import io.gossgpu.cpu.matmul.CpuMatrix;
import io.gossgpu.cpu.matmul.KernelSet;
import io.gossgpu.cpu.matmul.MatrixInput;
import io.gossgpu.model.ModelConfig;
import java.util.Arrays;

/**
 * The MoE of a batch, tokens grouped by expert so each expert's weight rows are read once for all the
 * tokens that chose it (decode: one token, its k experts, which read its row in place). Three phases on the pool:
 * <ol>
 *   <li>for (active expert, tile of {@link #TILE} intermediate rows): gate and up products of the expert's
 *       tokens, then SwiGLU into {@code h};</li>
 *   <li>for (active expert, tile of output rows): the down product into {@code y}, one row per (token, slot),
 *       so no two items write the same place;</li>
 *   <li>per token: {@code out[t] = Σ_j ω_{t,j} · y[row of (t, j)]}, in slot order.</li>
 * </ol>
 * Every sum has a fixed order, so the result does not depend on the thread count. Long batches run in
 * chunks of {@link #chunkTokens} tokens, which bounds the staging buffers.
 */
final class MoeJob {
    /**
     * Rows of one work item. Each item is a native call per matrix, and a decode step's MoE is 4 experts of 2880 gate,
     * 2880 up and 2880 down rows: 16-row items made ~2,000 calls per layer and read the experts at half the rate of
     * the dense matrices ({@code bench --op-times}); 256 rows (~400 KB of MXFP4 per call) reads them near it.
     */
    static final int TILE = 256;
    /**
     * Rows × tokens of one call: a thread's claimed run of an expert's tiles goes in one call per matrix up to this
     * (which bounds the gate/up staging per thread), so a decode step streams each expert's rows without stopping
     * (and paying a native call) at every tile.
     */
    static final int MERGED_ROWS = 4096;

    private final CpuPool pool;
    private final KernelSet kernels;
    private final CpuKernels k;
    /** Tokens per pass (tests lower it to cover chunking). */
    int chunkTokens = 512;
    /** Rows per work item, a multiple of the 16-row weight tiles ({@link #TILE}; tests lower it to cover several items per expert). */
    int tileRows = TILE;
    /** {@link #MERGED_ROWS} (tests lower it to one tile, the calls before merging). */
    int mergedRows = MERGED_ROWS;
    /**
     * Whether a chunk of one token reads its row of {@code x} in place ({@link #chunk}); tests turn it off to compare
     * with the rows copied per slot.
     */
    boolean oneTokenInPlace = true;

    private final MatrixInput xIn = new MatrixInput(), hIn = new MatrixInput();
    private int[] order = new int[0], groupStart = new int[0], active = new int[0], slotRow = new int[0];
    private float[] xs = new float[0], h = new float[0], y = new float[0];
    private float[][] gateOut, upOut;
    /** Row stride of gateOut/upOut in the current chunk: the rows one gate/up call covers at most. */
    private int spanRows;

    // the current chunk
    private DeviceWeights.Layer<float[], CpuMatrix, CpuMatrix> layer;
    private int H, I, K, tok0;
    private float limit;
    /** Every (token, slot) row of the current chunk is input row 0: one token, read in place. */
    private boolean oneRow;

    private float[] out, weights;

    MoeJob(CpuPool pool, KernelSet kernels, int threads) {
        this.pool = pool;
        this.kernels = kernels;
        this.k = kernels.java();
        gateOut = new float[threads][0];
        upOut = new float[threads][0];
    }

    /** {@code out[t] = Σ_j ω_{t,j}·expert_{e_{t,j}}(x[t])} for the T rows of {@code x}. */
    void run(
            CpuWeights w, int layerIndex, float[] x, int T, int[] experts, float[] routingWeights, int k, float[] out) {
        ModelConfig c = w.config;
        layer = w.m.layer(layerIndex);
        H = c.hiddenSize();
        I = c.intermediateSize();
        K = k;
        limit = c.swigluLimit();
        this.out = out;
        this.weights = routingWeights;
        for (int t0 = 0; t0 < T; t0 += chunkTokens)
            chunk(x, experts, t0, Math.min(chunkTokens, T - t0), c.numExperts());
        layer = null;
        this.out = null;
        this.weights = null;
    }

    private void chunk(float[] x, int[] experts, int t0, int T, int E) {
        int n = T * K, s0 = t0 * K;
        if (order.length < n) {
            order = new int[n];
            slotRow = new int[n];
        }
        if (groupStart.length < E + 2) groupStart = new int[E + 2];
        if (active.length < E) active = new int[E];
        if (xs.length < n * H) xs = new float[n * H];
        if (h.length < n * I) h = new float[n * I];
        if (y.length < n * H) y = new float[n * H];
        // counting sort of the (token, slot) pairs by expert; afterwards gs[e] = start of expert e's rows
        int[] gs = groupStart;
        Arrays.fill(gs, 0, E + 2, 0);
        for (int s = 0; s < n; s++) gs[experts[s0 + s] + 2]++;
        for (int e = 0; e < E; e++) gs[e + 2] += gs[e + 1];
        for (int s = 0; s < n; s++) order[gs[experts[s0 + s] + 1]++] = s;
        int na = 0;
        for (int e = 0; e < E; e++) if (gs[e + 1] > gs[e]) active[na++] = e;
        for (int row = 0; row < n; row++) slotRow[order[row]] = row;
        tok0 = t0;
        int maxGroup = 0;
        for (int a = 0; a < na; a++) maxGroup = Math.max(maxGroup, gs[active[a] + 1] - gs[active[a]]);
        // one token (decode) whose slots chose distinct experts: each expert's input is that token's row, so the
        // experts read it in place, and its q8 or permuted form is made once instead of once per slot
        oneRow = oneTokenInPlace && T == 1 && maxGroup == 1;
        if (oneRow) xIn.set(x, t0 * H, H, 1, H);
        else {
            int[] ord = order;
            float[] staged = xs;
            CpuPool.Body gather = (from, to, worker) -> {
                for (int row = from; row < to; row++) System.arraycopy(x, (t0 + ord[row] / K) * H, staged, row * H, H);
            };
            if (n < 16) gather.run(0, n, 0);
            else pool.run(n, pool.grainFor(n, 4, 4), gather);
            xIn.set(xs, 0, H, n, H);
        }
        int tilesPerCall = Math.max(1, mergedRows / (maxGroup * tileRows));
        spanRows = tilesPerCall * tileRows;
        for (int wk = 0; wk < gateOut.length; wk++)
            if (gateOut[wk].length < maxGroup * spanRows) {
                gateOut[wk] = new float[maxGroup * spanRows];
                upOut[wk] = new float[maxGroup * spanRows];
            }

        xIn.prepare(layer.gate().inputForm(), kernels, pool);
        int upTiles = (I + tileRows - 1) / tileRows, downTiles = (H + tileRows - 1) / tileRows;
        int activeCount = na;
        // in shares: each thread streams its own run of experts' tiles, a call per claimed piece of one expert
        int upItems = activeCount * upTiles, downItems = activeCount * downTiles;
        pool.tag(CpuJobTag.MOE_GATE_UP.tag());
        pool.runInShares(upItems, 1, (from, to, worker) -> {
            for (int item = from; item < to; ) {
                int e = item / upTiles, last = Math.min(Math.min(to, (e + 1) * upTiles), item + tilesPerCall);
                upRows(active[e], (item % upTiles) * tileRows, Math.min(I, (last - e * upTiles) * tileRows), worker);
                item = last;
            }
        });
        pool.tag(CpuJobTag.OTHER.tag());
        hIn.set(h, 0, I, n, I);
        hIn.prepare(layer.down().inputForm(), kernels, pool);
        pool.tag(CpuJobTag.MOE_DOWN.tag());
        pool.runInShares(downItems, 1, (from, to, worker) -> {
            for (int item = from; item < to; ) {
                int e = item / downTiles, last = Math.min(Math.min(to, (e + 1) * downTiles), item + tilesPerCall);
                downRows(
                        active[e],
                        (item % downTiles) * tileRows,
                        Math.min(H, (last - e * downTiles) * tileRows),
                        worker);
                item = last;
            }
        });
        pool.tag(CpuJobTag.OTHER.tag());
        pool.run(T, Math.max(1, pool.grainFor(T, 2, 1)), (from, to, worker) -> {
            for (int t = from; t < to; t++) sum(t);
        });
    }

    /** Phase 1: rows u0 .. u1 (at most {@code spanRows}) of expert e's gate and up for its tokens, then SwiGLU into h. */
    private void upRows(int e, int u0, int u1, int worker) {
        int g0 = groupStart[e], n = groupStart[e + 1] - g0, rows = u1 - u0, stride = spanRows;
        float[] a = gateOut[worker], b = upOut[worker];
        int x0 = oneRow ? 0 : g0;
        layer.gate().gemm(e, u0, u1, xIn, x0, n, a, 0, stride, layer.gateBias(), e * I, worker);
        layer.up().gemm(e, u0, u1, xIn, x0, n, b, 0, stride, layer.upBias(), e * I, worker);
        for (int t = 0; t < n; t++) k.swiglu(a, t * stride, b, t * stride, limit, h, (g0 + t) * I + u0, rows);
    }

    /** Phase 2: output rows d0 .. d1 of expert e's down projection for its tokens, into y. */
    private void downRows(int e, int d0, int d1, int worker) {
        int g0 = groupStart[e], n = groupStart[e + 1] - g0;
        layer.down().gemm(e, d0, d1, hIn, g0, n, y, g0 * H + d0, H, layer.downBias(), e * H, worker);
    }

    /** Phase 3: token t's weighted sum over its slots, in slot order. */
    private void sum(int t) {
        int o = (tok0 + t) * H;
        Arrays.fill(out, o, o + H, 0f);
        for (int j = 0; j < K; j++) k.axpy(weights[(tok0 + t) * K + j], y, slotRow[t * K + j] * H, out, o, H);
    }
}
