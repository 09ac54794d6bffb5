package io.gossgpu.cpu;

import io.gossgpu.cpu.compute.CpuPool;
import io.gossgpu.cpu.matmul.CpuMatrix;
import io.gossgpu.cpu.matmul.KernelSet;
import io.gossgpu.cpu.matmul.MatrixInput;

/**
 * {@code out_p[t, r] = Σ_c W_p[r, c]·x[t, c] + b_p[r]} for up to three matrices {@code p} that share one
 * input (Q, K and V; or one matrix alone): their rows, in blocks of {@link #BLOCK_ROWS}, form one range of
 * work items split across the pool's threads. Long batches go in panels of {@link #PANEL} tokens, so a
 * panel's activations stay in L2 while every row block streams past them.
 */
final class MatrixJob implements CpuPool.Body {
    static final int PANEL = 64;
    /** Rows per work item: a multiple of every matrix's row grain (16 for tiles); the smallest claim (the tail of a job). */
    static final int BLOCK_ROWS = 64;
    /**
     * Rows per work item of a job too small to give every thread a {@link #BLOCK_ROWS} item: the router's 32 rows were
     * one item, on the caller alone while the other cores waited (0.7 ms of a 24-layer decode token).
     */
    static final int SMALL_BLOCK_ROWS = 16;

    private final CpuPool pool;
    private final KernelSet kernels;
    private final MatrixInput input = new MatrixInput();
    private final CpuMatrix[] mats = new CpuMatrix[3];
    private final float[][] biases = new float[3][], outs = new float[3][];
    private final int[] outStride = new int[3], firstItem = new int[4];
    private int parts, panelRow0, panelT, blockRows;

    MatrixJob(CpuPool pool, KernelSet kernels) {
        this.pool = pool;
        this.kernels = kernels;
    }

    /** Starts a job over the {@code T} rows of {@code cols} floats at {@code x[off + t·cols]}. */
    MatrixJob begin(float[] x, int off, int T, int cols) {
        input.set(x, off, cols, T, cols);
        parts = 0;
        return this;
    }

    /** Adds a matrix; row {@code r} of token {@code t} goes to {@code out[t·stride + r]}. */
    MatrixJob add(CpuMatrix m, float[] bias, float[] out, int stride) {
        mats[parts] = m;
        biases[parts] = bias;
        outs[parts] = out;
        outStride[parts] = stride;
        parts++;
        return this;
    }

    /** The work items of the matrices added: their rows in blocks of {@link #blockRows}. */
    int items() {
        int rows = 0;
        for (int p = 0; p < parts; p++) rows += mats[p].rows();
        blockRows = rows < pool.threads() * BLOCK_ROWS ? SMALL_BLOCK_ROWS : BLOCK_ROWS;
        firstItem[0] = 0;
        for (int p = 0; p < parts; p++) firstItem[p + 1] = firstItem[p] + (mats[p].rows() + blockRows - 1) / blockRows;
        return firstItem[parts];
    }

    void run() {
        for (int p = 0; p < parts; p++) input.prepare(mats[p].inputForm(), kernels, pool);
        int items = items(), T = input.rows();
        for (int p0 = 0; p0 < T; p0 += PANEL) {
            panelRow0 = p0;
            panelT = Math.min(PANEL, T - p0);
            pool.runInShares(items, 1, this);
        }
        for (int p = 0; p < parts; p++) mats[p] = null;
    }

    /**
     * A claimed run of items is one call per matrix it covers: each call streams its rows from start to end, where
     * one call per item stopped the stream (and paid a native call) every {@link #BLOCK_ROWS} rows.
     */
    @Override
    public void run(int from, int to, int worker) {
        int p = 0;
        for (int item = from; item < to; ) {
            while (firstItem[p + 1] <= item) p++;
            CpuMatrix m = mats[p];
            int last = Math.min(to, firstItem[p + 1]);
            int r0 = (item - firstItem[p]) * blockRows, r1 = Math.min(m.rows(), (last - firstItem[p]) * blockRows);
            m.gemm(
                    0,
                    r0,
                    r1,
                    input,
                    panelRow0,
                    panelT,
                    outs[p],
                    panelRow0 * outStride[p] + r0,
                    outStride[p],
                    biases[p],
                    0,
                    worker);
            item = last;
        }
    }
}
