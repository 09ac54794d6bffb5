package io.gossgpu.cpu.compute;

import io.gossgpu.model.WeightFormat;
import io.gossgpu.model.WeightView;
import io.gossgpu.quant.LE;
import java.lang.foreign.MemorySegment;

/**
 * Plain-Java {@link CpuKernels}: the fallback when jdk.incubator.vector is not available at run time.
 * Same contracts (block-permuted order for OpenAI MXFP4), float accumulation.
 */
public final class ScalarKernels implements CpuKernels {
    private final String why;

    public ScalarKernels(String why) {
        this.why = why;
    }

    @Override
    public String describe() {
        return "scalar kernels (" + why + ")";
    }

    @Override
    public float dotRow(WeightView w, int e, int r, float[] x, int xOff, float[] scratch) {
        decodeRow(w, e, r, scratch, 0);
        return dot(scratch, 0, x, xOff, w.cols());
    }

    @Override
    public void decodeRow(WeightView w, int e, int r, float[] dst, int dOff) {
        int n = w.cols();
        if (w.format() == WeightFormat.MXFP4_OPENAI) {
            MemorySegment codes = w.data(), scales = w.scales();
            long c0 = w.rowOffset(e, r), s0 = w.scaleRowOffset(e, r);
            for (int b = 0; b < n / 32; b++) {
                float s = HALF_E8M0[scales.get(LE.U8, s0 + b) & 0xff];
                for (int j = 0; j < 16; j++) {
                    int q = codes.get(LE.U8, c0 + 16L * b + j);
                    dst[dOff + 32 * b + j] = FP4_X2[q & 0xf] * s;
                    dst[dOff + 32 * b + 16 + j] = FP4_X2[(q >>> 4) & 0xf] * s;
                }
            }
        } else if (w.format() == WeightFormat.MXFP4_GGML) {
            MemorySegment d = w.data();
            long o = w.rowOffset(e, r);
            for (int b = 0; b < n / 32; b++) {
                long blk = o + 17L * b;
                float s = HALF_E8M0[d.get(LE.U8, blk) & 0xff];
                for (int j = 0; j < 16; j++) {
                    int q = d.get(LE.U8, blk + 1 + j);
                    dst[dOff + 32 * b + j] = FP4_X2[q & 0xf] * s;
                    dst[dOff + 32 * b + 16 + j] = FP4_X2[(q >>> 4) & 0xf] * s;
                }
            }
        } else {
            w.dequantizeRow(e, r, dst, dOff);
        }
    }

    @Override
    public void dotMany(
            float[] row,
            int rowOff,
            int n,
            float[] x,
            int xOff,
            int xStride,
            int count,
            float[] out,
            int outOff,
            int outStride) {
        for (int t = 0; t < count; t++) out[outOff + t * outStride] = dot(row, rowOff, x, xOff + t * xStride, n);
    }

    @Override
    public float dot(float[] a, int aOff, float[] b, int bOff, int n) {
        float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        int i = 0;
        for (; i + 4 <= n; i += 4) {
            s0 += a[aOff + i] * b[bOff + i];
            s1 += a[aOff + i + 1] * b[bOff + i + 1];
            s2 += a[aOff + i + 2] * b[bOff + i + 2];
            s3 += a[aOff + i + 3] * b[bOff + i + 3];
        }
        for (; i < n; i++) s0 += a[aOff + i] * b[bOff + i];
        return (s0 + s1) + (s2 + s3);
    }

    @Override
    public void axpy(float a, float[] x, int xOff, float[] y, int yOff, int n) {
        for (int i = 0; i < n; i++) y[yOff + i] += a * x[xOff + i];
    }

    @Override
    public void scale(float a, float[] y, int yOff, int n) {
        for (int i = 0; i < n; i++) y[yOff + i] *= a;
    }

    @Override
    public float expSub(float[] s, int off, int n, float max) {
        float z = 0;
        for (int i = 0; i < n; i++) {
            float v = ExpF.exp(s[off + i] - max);
            s[off + i] = v;
            z += v;
        }
        return z;
    }

    @Override
    public double sumSquares(float[] x, int off, int n) {
        double s = 0;
        for (int i = 0; i < n; i++) s += (double) x[off + i] * x[off + i];
        return s;
    }

    @Override
    public void normScale(float[] x, int xOff, float inv, float[] scale, float[] out, int oOff, int n) {
        for (int i = 0; i < n; i++) out[oOff + i] = x[xOff + i] * inv * scale[i];
    }

    @Override
    public void add(float[] a, int aOff, float[] b, int bOff, float[] out, int oOff, int n) {
        for (int i = 0; i < n; i++) out[oOff + i] = a[aOff + i] + b[bOff + i];
    }
}
