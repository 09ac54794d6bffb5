package io.gossgpu.cpu.matmul;

import io.gossgpu.cpu.compute.CpuKernels;
import io.gossgpu.cpu.compute.CpuPool;

/**
 * The activation rows of one op's matrix products: {@code rows × cols} floats at {@code x[off + i·stride]},
 * plus the forms some matrices read instead, each made once per op by {@link #prepare} on the calling
 * thread before the work is split: block-permuted floats (OpenAI MXFP4 on the Java kernels, see
 * {@link CpuKernels}) and q8 rows (int8 blocks of 32 with a scale and a sum, for the native integer kernels).
 * Buffers grow and are reused: nothing is allocated per token once sized.
 */
public final class MatrixInput {
    /** What a matrix reads. */
    public enum Form {
        FLOAT,
        PERMUTED,
        Q8
    }

    float[] x;
    int off, stride, rows, cols;

    float[] permuted = new float[0];
    byte[] q = new byte[0];
    float[] d = new float[0];
    int[] s = new int[0];
    private boolean hasPermuted, hasQ8;

    /** Points at new rows; forms made for the previous rows are dropped. */
    public MatrixInput set(float[] x, int off, int stride, int rows, int cols) {
        this.x = x;
        this.off = off;
        this.stride = stride;
        this.rows = rows;
        this.cols = cols;
        hasPermuted = hasQ8 = false;
        return this;
    }

    public int rows() {
        return rows;
    }

    public int cols() {
        return cols;
    }

    /** Makes {@code form} available (a no-op for floats or when already made for these rows); long inputs on {@code pool}. */
    public void prepare(Form form, KernelSet kernels, CpuPool pool) {
        switch (form) {
            case FLOAT -> {}
            case PERMUTED -> {
                if (hasPermuted) return;
                if (permuted.length < rows * cols) permuted = new float[rows * cols];
                for (int i = 0; i < rows; i++) CpuKernels.permute(x, off + i * stride, permuted, i * cols, cols);
                hasPermuted = true;
            }
            case Q8 -> {
                if (hasQ8) return;
                int blocks = cols / 32;
                if (q.length < rows * cols) q = new byte[rows * cols];
                if (d.length < rows * blocks) {
                    d = new float[rows * blocks];
                    s = new int[rows * blocks];
                }
                if (rows < 16) kernels.quantizeQ8(x, off, stride, 0, rows, cols, q, d, s);
                else
                    pool.run(
                            rows,
                            pool.grainFor(rows, 4, 4),
                            (from, to, worker) -> kernels.quantizeQ8(x, off, stride, from, to - from, cols, q, d, s));
                hasQ8 = true;
            }
        }
    }
}
