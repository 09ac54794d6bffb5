package io.gossgpu.cpu.compute;

import io.gossgpu.model.WeightFormat;
import io.gossgpu.model.WeightView;

/**
 * The inner loops of the {@code cpu} backend: row × activation dot products read straight from a
 * {@link WeightView}'s bytes, row decoding for blocked (prefill) products, and the float kernels of
 * attention and norms. Two implementations: {@link VectorKernels} (jdk.incubator.vector) and
 * {@link ScalarKernels} (plain Java, used when the Vector API module is not in the boot layer).
 *
 * <p><b>Block-permuted order.</b> For {@link WeightFormat#MXFP4_OPENAI} rows, whose bytes hold even
 * elements in low nibbles and odd elements in high nibbles, every method here works on vectors in
 * <em>block-permuted</em> order: within each block of 32, natural element {@code 2j + s} sits at index
 * {@code 16·s + j} ({@link #permutedIndex}). Callers permute the activation once per token
 * ({@link #permute}) instead of shuffling every weight block; then both MXFP4 layouts decode with the
 * same nibble split (low nibbles = first 16, high = last 16). Other formats use natural order.
 *
 * <p>All methods are thread-safe (stateless); {@code scratch} arrays belong to the calling worker.
 */
public interface CpuKernels {
    /** One line: which implementation, vector width. */
    String describe();

    /** {@code Σ_c W[e, r, c] · x[xOff + c]} over the row's {@code cols}; {@code scratch} holds ≥ cols floats. */
    float dotRow(WeightView w, int e, int r, float[] x, int xOff, float[] scratch);

    /** Decodes row {@code r} of expert {@code e} into {@code dst[dOff .. dOff + cols)} (block-permuted for OpenAI MXFP4). */
    void decodeRow(WeightView w, int e, int r, float[] dst, int dOff);

    /**
     * {@code out[outOff + t·outStride] = Σ_c row[rowOff + c] · x[xOff + t·xStride + c]} for {@code t < count}:
     * one decoded weight row against several tokens (the prefill inner loop).
     */
    void dotMany(
            float[] row,
            int rowOff,
            int n,
            float[] x,
            int xOff,
            int xStride,
            int count,
            float[] out,
            int outOff,
            int outStride);

    /**
     * A tile of decoded rows against a block of tokens: for {@code r < rows}, {@code t < count},
     * {@code out[outOff + r·outRowStride + t·outTokStride] = Σ_c w[wOff + r·n + c] · x[xOff + t·xStride + c]}.
     * The default loops over {@link #dotMany}; implementations block registers over rows and tokens.
     */
    default void dotTile(
            float[] w,
            int wOff,
            int rows,
            int n,
            float[] x,
            int xOff,
            int xStride,
            int count,
            float[] out,
            int outOff,
            int outRowStride,
            int outTokStride) {
        for (int r = 0; r < rows; r++)
            dotMany(w, wOff + r * n, n, x, xOff, xStride, count, out, outOff + r * outRowStride, outTokStride);
    }

    /** {@code Σ a[aOff + i]·b[bOff + i]}, {@code i < n}. */
    float dot(float[] a, int aOff, float[] b, int bOff, int n);

    /** {@code y[yOff + i] += a · x[xOff + i]}. */
    void axpy(float a, float[] x, int xOff, float[] y, int yOff, int n);

    /** {@code y[yOff + i] *= a}. */
    void scale(float a, float[] y, int yOff, int n);

    /** {@code s[off + i] = exp(s[off + i] − max)}; returns their sum. */
    float expSub(float[] s, int off, int n, float max);

    /** {@code Σ x[off + i]²}. */
    double sumSquares(float[] x, int off, int n);

    /** {@code out[i] = x[i]·inv·scale[i]}. */
    void normScale(float[] x, int xOff, float inv, float[] scale, float[] out, int oOff, int n);

    /**
     * gpt-oss's SwiGLU over {@code n} values of the gate {@code a} and the linear part {@code b} (biases already
     * added): {@code g = min(a, L)}, {@code l = clamp(b, −L, L)}, {@code out[oOff+i] = g·σ(1.702·g)·(l + 1)}.
     */
    default void swiglu(float[] a, int aOff, float[] b, int bOff, float limit, float[] out, int oOff, int n) {
        for (int i = 0; i < n; i++) {
            float g = Math.min(a[aOff + i], limit);
            float l = Math.max(-limit, Math.min(b[bOff + i], limit));
            out[oOff + i] = g / (ExpF.exp(g * -1.702f) + 1f) * (l + 1f);
        }
    }

    /**
     * Attention scores against cached keys stored in blocks of 16 transposed slots (see the cpu backend's
     * cache): for slots {@code s ∈ [from, to)}, {@code bySlot[s] = Σ_d q[qOff + d] · K[s][chan + d]}, {@code d < hd},
     * where {@code K[s][c] = kt[((s >> 4)·kvDim + c)·16 + (s & 15)]}. May also write other slots of the
     * touched 16-slot blocks.
     */
    default void keyScores(
            float[] q, int qOff, int hd, float[] kt, int kvDim, int chan, int from, int to, float[] bySlot) {
        for (int s = from; s < to; s++) {
            int base = (s >> 4) * kvDim * 16 + (s & 15);
            float acc = 0;
            for (int d = 0; d < hd; d++) acc += q[qOff + d] * kt[base + (chan + d) * 16];
            bySlot[s] = acc;
        }
    }

    /** {@code out[oOff + d] += Σ_{j<n} w[wOff + j] · src[srcOff + j·stride + d]} for {@code d < hd}. */
    default void weightedRows(
            float[] w, int wOff, int n, float[] src, int srcOff, int stride, float[] out, int oOff, int hd) {
        for (int j = 0; j < n; j++) axpy(w[wOff + j], src, srcOff + j * stride, out, oOff, hd);
    }

    /** {@code dst[dOff + i] = src[sOff + i]·scale} for {@code i < n}; returns their maximum (−∞ when n = 0). */
    default float scaleCopyMax(float[] src, int sOff, float[] dst, int dOff, int n, float scale) {
        float max = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < n; i++) {
            float v = src[sOff + i] * scale;
            dst[dOff + i] = v;
            if (v > max) max = v;
        }
        return max;
    }

    /** BF16 bits to floats (a KV cache's numbers): {@code dst[dOff + i] = float(bits[sOff + i] << 16)}, {@code i < n}. */
    default void bf16ToFloat(short[] bits, int sOff, float[] dst, int dOff, int n) {
        for (int i = 0; i < n; i++) dst[dOff + i] = Float.intBitsToFloat(bits[sOff + i] << 16);
    }

    /**
     * Q8_0 quants times their scales (a KV cache's numbers), exact in float: {@code dst[dOff + i] = q[qOff + i] ·
     * scale[i & 15]} for {@code i < n}, a multiple of 16 (keys: 16 slots of a channel, one scale each), or with
     * {@code scale.length == 1} the same scale for every {@code i} and any {@code n} (a run of a value row).
     */
    default void q8ToFloat(byte[] q, int qOff, float[] scale, float[] dst, int dOff, int n) {
        int mask = scale.length == 1 ? 0 : 15;
        for (int i = 0; i < n; i++) dst[dOff + i] = q[qOff + i] * scale[i & mask];
    }

    /**
     * The id of the largest of {@code x[off .. off+n−1]}, ties to the lower id, or
     * {@link io.gossgpu.backend.TemperatureDraw#NOT_FINITE} when one of them is NaN or infinite: exactly
     * {@link io.gossgpu.backend.TemperatureDraw#argmax}, the reference this default runs.
     */
    default int argmax(float[] x, int off, int n) {
        return io.gossgpu.backend.TemperatureDraw.argmax(x, off, n);
    }

    /** {@code out[i] = a[i] + b[i]}. */
    void add(float[] a, int aOff, float[] b, int bOff, float[] out, int oOff, int n);

    /** Natural index {@code i} of a block-permuted vector: where element {@code i} lives. */
    static int permutedIndex(int i) {
        return (i & ~31) | ((i & 1) << 4) | ((i & 31) >>> 1);
    }

    /** Copies {@code n} (a multiple of 32) values from natural into block-permuted order. */
    static void permute(float[] src, int sOff, float[] dst, int dOff, int n) {
        for (int b = 0; b < n; b += 32)
            for (int j = 0; j < 16; j++) {
                dst[dOff + b + j] = src[sOff + b + 2 * j];
                dst[dOff + b + 16 + j] = src[sOff + b + 2 * j + 1];
            }
    }

    /** Whether vectors multiplied with {@code w} must be block-permuted. */
    static boolean permuted(WeightView w) {
        return w.format() == WeightFormat.MXFP4_OPENAI;
    }

    /** The E8M0 scale of MXFP4 halved: {@code 2^(e − 128)}, exact (the FP4 table used is doubled); NaN for byte 255. */
    float[] HALF_E8M0 = halfE8m0();

    private static float[] halfE8m0() {
        float[] t = new float[256];
        for (int e = 0; e < 256; e++)
            t[e] = e == io.gossgpu.quant.Mxfp4.NAN_SCALE ? Float.NaN : Math.scalb(1f, e - 128);
        return t;
    }

    /** FP4 (E2M1) values doubled, so they are integers: code → 2·FP4. */
    byte[] FP4_X2 = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

    /** The best implementation this JVM can run: Vector API when its module is present, else scalar. */
    static CpuKernels best() {
        if (vectorApiPresent()) {
            try {
                // by name: a class literal would link VectorKernels (and jdk.incubator.vector) into this interface
                String vector = CpuKernels.class.getPackageName() + ".VectorKernels";
                return (CpuKernels)
                        Class.forName(vector).getDeclaredConstructor().newInstance();
            } catch (ReflectiveOperationException | LinkageError e) {
                return new ScalarKernels("Vector API failed to load (" + e + ")");
            }
        }
        return new ScalarKernels(
                "jdk.incubator.vector is not in the boot layer; run java with --add-modules jdk.incubator.vector");
    }

    static boolean vectorApiPresent() {
        return ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent();
    }
}
