package io.gossgpu.cpu.matmul;

/**
 * One weight matrix (all its experts), held in the form its kernels multiply fastest, with the product
 *
 * <pre>  out[outOff + t·outStride + (r − r0)] = Σ_c W[e, r, c] · x[xRow0 + t, c]  (+ bias[biasOff + r])</pre>
 *
 * for rows {@code r0 ≤ r < r1} and tokens {@code t < T}. {@code r0} must be a multiple of {@link #rowGrain()}
 * (the row tiling of the stored form); {@code r1} is any row up to {@link #rows()}. Thread-safe: different
 * workers may multiply different row ranges at once (each passes its own {@code worker} index, 0 = the
 * calling thread). The input must have been {@linkplain MatrixInput#prepare prepared} for {@link #inputForm()}.
 */
public abstract class CpuMatrix implements AutoCloseable {
    protected final String name;
    protected final int experts, rows, cols;

    protected CpuMatrix(String name, int experts, int rows, int cols) {
        this.name = name;
        this.experts = experts;
        this.rows = rows;
        this.cols = cols;
    }

    public final String name() {
        return name;
    }

    public final int experts() {
        return experts;
    }

    public final int rows() {
        return rows;
    }

    public final int cols() {
        return cols;
    }

    /** Row ranges start at multiples of this. */
    public abstract int rowGrain();

    public abstract MatrixInput.Form inputForm();

    public abstract void gemm(
            int expert,
            int r0,
            int r1,
            MatrixInput x,
            int xRow0,
            int T,
            float[] out,
            int outOff,
            int outStride,
            float[] bias,
            int biasOff,
            int worker);

    /** Native memory this matrix owns, in bytes (0 when it reads the file in place). */
    public long ownedBytes() {
        return 0;
    }

    /** Releases what this matrix owns; a no-op when it reads the file in place. */
    @Override
    public void close() {}
}
