package io.gossgpu.cpu.matmul;

import io.gossgpu.cpu.compute.CpuKernels;
import io.gossgpu.model.WeightView;

/**
 * A weight read in place from the file and multiplied by the Java float kernels ({@link CpuKernels}):
 * up to {@link #FUSED_MAX_T} tokens multiply each row straight from its bytes (memory bound); more decode a
 * tile of {@link #TILE} rows once into floats and multiply it with blocks of {@link #TOKEN_BLOCK} tokens.
 * OpenAI MXFP4 rows read block-permuted activations ({@link CpuKernels#permuted}).
 */
public final class JavaMatrix extends CpuMatrix {
    static final int TILE = 16;
    static final int TOKEN_BLOCK = 32;
    static final int FUSED_MAX_T = 2;

    /** Per-worker buffers of the tiled product, grown to the widest matrix. */
    public static final class Scratch {
        private final float[][] tile, tmp, row;

        public Scratch(int threads) {
            tile = new float[threads][];
            tmp = new float[threads][TILE * TOKEN_BLOCK];
            row = new float[threads][];
        }

        void ensure(int worker, int cols) {
            if (tile[worker] == null || tile[worker].length < TILE * cols) tile[worker] = new float[TILE * cols];
            if (row[worker] == null || row[worker].length < cols) row[worker] = new float[cols];
        }
    }

    private final WeightView w;
    private final CpuKernels k;
    private final Scratch scratch;
    private final boolean permuted;

    JavaMatrix(WeightView w, CpuKernels k, Scratch scratch) {
        super(w.name(), w.experts(), w.rows(), w.cols());
        this.w = w;
        this.k = k;
        this.scratch = scratch;
        this.permuted = CpuKernels.permuted(w);
    }

    @Override
    public int rowGrain() {
        return 1;
    }

    @Override
    public MatrixInput.Form inputForm() {
        return permuted ? MatrixInput.Form.PERMUTED : MatrixInput.Form.FLOAT;
    }

    @Override
    public void gemm(
            int e,
            int r0,
            int r1,
            MatrixInput in,
            int xRow0,
            int T,
            float[] out,
            int outOff,
            int outStride,
            float[] bias,
            int biasOff,
            int worker) {
        float[] x = permuted ? in.permuted : in.x;
        int xOff = permuted ? xRow0 * cols : in.off + xRow0 * in.stride;
        int xStride = permuted ? cols : in.stride;
        scratch.ensure(worker, cols);
        if (T <= FUSED_MAX_T) {
            float[] rowScratch = scratch.row[worker];
            for (int r = r0; r < r1; r++) {
                float b = bias == null ? 0 : bias[biasOff + r];
                for (int t = 0; t < T; t++)
                    out[outOff + t * outStride + r - r0] = k.dotRow(w, e, r, x, xOff + t * xStride, rowScratch) + b;
            }
            return;
        }
        float[] tile = scratch.tile[worker];
        for (int rt = r0; rt < r1; rt += TILE) {
            int n = Math.min(TILE, r1 - rt);
            for (int i = 0; i < n; i++) k.decodeRow(w, e, rt + i, tile, i * cols);
            for (int t0 = 0; t0 < T; t0 += TOKEN_BLOCK) {
                int cnt = Math.min(TOKEN_BLOCK, T - t0);
                k.dotTile(
                        tile,
                        0,
                        n,
                        cols,
                        x,
                        xOff + t0 * xStride,
                        xStride,
                        cnt,
                        out,
                        outOff + t0 * outStride + rt - r0,
                        1,
                        outStride);
            }
            if (bias != null)
                for (int t = 0; t < T; t++)
                    for (int i = 0; i < n; i++) out[outOff + t * outStride + rt - r0 + i] += bias[biasOff + rt + i];
        }
    }
}
