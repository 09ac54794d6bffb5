package io.gossgpu.cpu.compute;

import io.gossgpu.model.WeightView;
import io.gossgpu.quant.LE;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * {@link CpuKernels} on the Vector API. MXFP4: 16 code bytes are split into low and high nibbles, each
 * looked up in a 16-entry byte table of doubled FP4 values ({@code selectFrom}, a byte shuffle), widened
 * to floats and multiplied with the activation; the block's sum is scaled once by its halved E8M0 scale.
 * Q8_0: int8 widened to float, block sum scaled by the F16 scale. BF16: shorts widened to ints and
 * shifted into float bits. Everything reads the mapped weight bytes in place.
 *
 * <p>Loaded only through {@link CpuKernels#best()} after checking that the module is present, so a JVM
 * without {@code --add-modules jdk.incubator.vector} never links this class.
 */
final class VectorKernels implements CpuKernels {
    private static final VectorSpecies<Float> F =
            FloatVector.SPECIES_PREFERRED.length() <= 16 ? FloatVector.SPECIES_PREFERRED : FloatVector.SPECIES_512;
    private static final int L = F.length();
    private static final VectorSpecies<Integer> I = VectorSpecies.of(int.class, F.vectorShape());
    private static final VectorSpecies<Short> S = VectorSpecies.of(short.class, VectorShape.forBitSize(L * 16));
    private static final VectorSpecies<Byte> B16 = ByteVector.SPECIES_128;
    private static final ByteOrder LEO = ByteOrder.LITTLE_ENDIAN;
    private static final ByteVector TABLE = ByteVector.fromArray(B16, FP4_X2, 0);
    private static final int PARTS = 16 / L; // float vectors per 16 bytes

    /** Lane i ↔ lane i ^ k for k = L/2, L/4, …, 1: the steps of {@link #sum}. */
    @SuppressWarnings("unchecked")
    private static final VectorShuffle<Float>[] BUTTERFLY = butterfly();

    @SuppressWarnings("unchecked")
    private static VectorShuffle<Float>[] butterfly() {
        int steps = Integer.numberOfTrailingZeros(L);
        VectorShuffle<Float>[] s = new VectorShuffle[steps];
        for (int i = 0; i < steps; i++) {
            int k = L >> (i + 1);
            s[i] = VectorShuffle.fromOp(F, lane -> lane ^ k);
        }
        return s;
    }

    /**
     * The sum of the lanes in one fixed order (a butterfly: lanes L/2 apart first). {@code reduceLanes(ADD)} is
     * not used: the JIT's intrinsic adds in another order than the interpreter, so results would depend on
     * which tier ran.
     */
    static float sum(FloatVector v) {
        for (VectorShuffle<Float> s : BUTTERFLY) v = v.add(v.rearrange(s));
        return v.lane(0);
    }

    /** e^x lane by lane, by {@link ExpF}'s polynomial in exact lanewise operations (the same bits in every tier). */
    static FloatVector exp(FloatVector x) {
        VectorMask<Float> under = x.lt(ExpF.LO), over = x.compare(VectorOperators.GT, ExpF.HI);
        FloatVector n = x.mul(ExpF.LOG2E).add(ExpF.ROUND).sub(ExpF.ROUND);
        FloatVector r = n.fma(FloatVector.broadcast(F, -ExpF.LN2_HI), x);
        r = n.fma(FloatVector.broadcast(F, -ExpF.LN2_LO), r);
        FloatVector p = FloatVector.broadcast(F, ExpF.P0);
        p = p.fma(r, FloatVector.broadcast(F, ExpF.P1));
        p = p.fma(r, FloatVector.broadcast(F, ExpF.P2));
        p = p.fma(r, FloatVector.broadcast(F, ExpF.P3));
        p = p.fma(r, FloatVector.broadcast(F, ExpF.P4));
        p = p.fma(r, FloatVector.broadcast(F, ExpF.P5));
        p = p.fma(r.mul(r), r.add(1f));
        IntVector e = ((IntVector) n.convert(VectorOperators.F2I, 0)).add(127).lanewise(VectorOperators.LSHL, 23);
        FloatVector y = p.mul(e.reinterpretAsFloats());
        return y.blend(0f, under).blend(Float.POSITIVE_INFINITY, over);
    }

    @Override
    public String describe() {
        return "Vector API kernels (" + L * 32 + "-bit float vectors)";
    }

    // ---- fused decode × dot ----------------------------------------------------------------------

    @Override
    public float dotRow(WeightView w, int e, int r, float[] x, int xOff, float[] scratch) {
        switch (w.format()) {
            case MXFP4_OPENAI:
                return mxfp4Dot(
                        w.data(), w.rowOffset(e, r), 16, w.scales(), w.scaleRowOffset(e, r), 1, w.cols() / 32, x, xOff);
            case MXFP4_GGML: {
                long o = w.rowOffset(e, r);
                return mxfp4Dot(w.data(), o + 1, 17, w.data(), o, 17, w.cols() / 32, x, xOff);
            }
            case Q8_0:
                return q8Dot(w.data(), w.rowOffset(e, r), w.cols() / 32, x, xOff);
            case BF16:
                if (w.colStride() == 1) return bf16Dot(w.data(), w.rowOffset(e, r), w.cols(), x, xOff);
                break;
            case F32:
                if (w.colStride() == 1) return f32Dot(w.data(), w.rowOffset(e, r), w.cols(), x, xOff);
                break;
            default:
                break;
        }
        w.dequantizeRow(e, r, scratch, 0);
        return dot(scratch, 0, x, xOff, w.cols());
    }

    private static float mxfp4Dot(
            MemorySegment codes,
            long cOff,
            int cStride,
            MemorySegment scales,
            long sOff,
            int sStride,
            int blocks,
            float[] x,
            int xOff) {
        FloatVector acc = FloatVector.zero(F), acc2 = FloatVector.zero(F);
        for (int b = 0; b < blocks; b++) {
            ByteVector q = ByteVector.fromMemorySegment(B16, codes, cOff + (long) b * cStride, LEO);
            ByteVector lo = q.and((byte) 0x0f).selectFrom(TABLE);
            ByteVector hi = q.lanewise(VectorOperators.LSHR, 4).and((byte) 0x0f).selectFrom(TABLE);
            float s = HALF_E8M0[scales.get(LE.U8, sOff + (long) b * sStride) & 0xff];
            int xo = xOff + 32 * b;
            FloatVector bs = FloatVector.zero(F);
            for (int p = 0; p < PARTS; p++) {
                FloatVector fl = (FloatVector) lo.convertShape(VectorOperators.B2F, F, p);
                FloatVector fh = (FloatVector) hi.convertShape(VectorOperators.B2F, F, p);
                bs = fl.fma(FloatVector.fromArray(F, x, xo + p * L), bs);
                bs = fh.fma(FloatVector.fromArray(F, x, xo + 16 + p * L), bs);
            }
            if ((b & 1) == 0) acc = bs.fma(FloatVector.broadcast(F, s), acc);
            else acc2 = bs.fma(FloatVector.broadcast(F, s), acc2);
        }
        return sum(acc.add(acc2));
    }

    private static float q8Dot(MemorySegment d, long off, int blocks, float[] x, int xOff) {
        FloatVector acc = FloatVector.zero(F), acc2 = FloatVector.zero(F);
        for (int b = 0; b < blocks; b++) {
            long blk = off + 34L * b;
            float s = Float.float16ToFloat(d.get(LE.I16, blk));
            ByteVector q0 = ByteVector.fromMemorySegment(B16, d, blk + 2, LEO);
            ByteVector q1 = ByteVector.fromMemorySegment(B16, d, blk + 18, LEO);
            int xo = xOff + 32 * b;
            FloatVector bs = FloatVector.zero(F);
            for (int p = 0; p < PARTS; p++) {
                bs = ((FloatVector) q0.convertShape(VectorOperators.B2F, F, p))
                        .fma(FloatVector.fromArray(F, x, xo + p * L), bs);
                bs = ((FloatVector) q1.convertShape(VectorOperators.B2F, F, p))
                        .fma(FloatVector.fromArray(F, x, xo + 16 + p * L), bs);
            }
            if ((b & 1) == 0) acc = bs.fma(FloatVector.broadcast(F, s), acc);
            else acc2 = bs.fma(FloatVector.broadcast(F, s), acc2);
        }
        return sum(acc.add(acc2));
    }

    private static FloatVector bf16(MemorySegment d, long off) {
        return ((IntVector) ShortVector.fromMemorySegment(S, d, off, LEO).convertShape(VectorOperators.S2I, I, 0))
                .lanewise(VectorOperators.LSHL, 16)
                .reinterpretAsFloats();
    }

    private static float bf16Dot(MemorySegment d, long off, int n, float[] x, int xOff) {
        FloatVector acc = FloatVector.zero(F), acc2 = FloatVector.zero(F);
        int c = 0;
        for (; c + 2 * L <= n; c += 2 * L) {
            acc = bf16(d, off + 2L * c).fma(FloatVector.fromArray(F, x, xOff + c), acc);
            acc2 = bf16(d, off + 2L * (c + L)).fma(FloatVector.fromArray(F, x, xOff + c + L), acc2);
        }
        for (; c + L <= n; c += L) acc = bf16(d, off + 2L * c).fma(FloatVector.fromArray(F, x, xOff + c), acc);
        float s = sum(acc.add(acc2));
        for (; c < n; c++) s += Float.intBitsToFloat((d.get(LE.I16, off + 2L * c) & 0xffff) << 16) * x[xOff + c];
        return s;
    }

    private static float f32Dot(MemorySegment d, long off, int n, float[] x, int xOff) {
        FloatVector acc = FloatVector.zero(F);
        int c = 0;
        for (; c + L <= n; c += L)
            acc = FloatVector.fromMemorySegment(F, d, off + 4L * c, LEO)
                    .fma(FloatVector.fromArray(F, x, xOff + c), acc);
        float s = sum(acc);
        for (; c < n; c++) s += d.get(LE.F32, off + 4L * c) * x[xOff + c];
        return s;
    }

    // ---- decode ---------------------------------------------------------------------------------

    @Override
    public void decodeRow(WeightView w, int e, int r, float[] dst, int dOff) {
        int n = w.cols();
        switch (w.format()) {
            case MXFP4_OPENAI ->
                mxfp4Decode(w.data(), w.rowOffset(e, r), 16, w.scales(), w.scaleRowOffset(e, r), 1, n / 32, dst, dOff);
            case MXFP4_GGML -> {
                long o = w.rowOffset(e, r);
                mxfp4Decode(w.data(), o + 1, 17, w.data(), o, 17, n / 32, dst, dOff);
            }
            case Q8_0 -> {
                MemorySegment d = w.data();
                long off = w.rowOffset(e, r);
                for (int b = 0; b < n / 32; b++) {
                    long blk = off + 34L * b;
                    float s = Float.float16ToFloat(d.get(LE.I16, blk));
                    ByteVector q0 = ByteVector.fromMemorySegment(B16, d, blk + 2, LEO);
                    ByteVector q1 = ByteVector.fromMemorySegment(B16, d, blk + 18, LEO);
                    for (int p = 0; p < PARTS; p++) {
                        ((FloatVector) q0.convertShape(VectorOperators.B2F, F, p))
                                .mul(s)
                                .intoArray(dst, dOff + 32 * b + p * L);
                        ((FloatVector) q1.convertShape(VectorOperators.B2F, F, p))
                                .mul(s)
                                .intoArray(dst, dOff + 32 * b + 16 + p * L);
                    }
                }
            }
            case BF16 -> {
                if (w.colStride() != 1) {
                    w.dequantizeRow(e, r, dst, dOff);
                    return;
                }
                MemorySegment d = w.data();
                long off = w.rowOffset(e, r);
                int c = 0;
                for (; c + L <= n; c += L) bf16(d, off + 2L * c).intoArray(dst, dOff + c);
                for (; c < n; c++) dst[dOff + c] = Float.intBitsToFloat((d.get(LE.I16, off + 2L * c) & 0xffff) << 16);
            }
            default -> w.dequantizeRow(e, r, dst, dOff);
        }
    }

    private static void mxfp4Decode(
            MemorySegment codes,
            long cOff,
            int cStride,
            MemorySegment scales,
            long sOff,
            int sStride,
            int blocks,
            float[] dst,
            int dOff) {
        for (int b = 0; b < blocks; b++) {
            ByteVector q = ByteVector.fromMemorySegment(B16, codes, cOff + (long) b * cStride, LEO);
            ByteVector lo = q.and((byte) 0x0f).selectFrom(TABLE);
            ByteVector hi = q.lanewise(VectorOperators.LSHR, 4).and((byte) 0x0f).selectFrom(TABLE);
            float s = HALF_E8M0[scales.get(LE.U8, sOff + (long) b * sStride) & 0xff];
            for (int p = 0; p < PARTS; p++) {
                ((FloatVector) lo.convertShape(VectorOperators.B2F, F, p))
                        .mul(s)
                        .intoArray(dst, dOff + 32 * b + p * L);
                ((FloatVector) hi.convertShape(VectorOperators.B2F, F, p))
                        .mul(s)
                        .intoArray(dst, dOff + 32 * b + 16 + p * L);
            }
        }
    }

    // ---- float kernels --------------------------------------------------------------------------

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
        int t = 0;
        int vn = n - n % L;
        for (; t + 4 <= count; t += 4) {
            int x0 = xOff + t * xStride, x1 = x0 + xStride, x2 = x1 + xStride, x3 = x2 + xStride;
            FloatVector a0 = FloatVector.zero(F),
                    a1 = FloatVector.zero(F),
                    a2 = FloatVector.zero(F),
                    a3 = FloatVector.zero(F);
            for (int c = 0; c < vn; c += L) {
                FloatVector rv = FloatVector.fromArray(F, row, rowOff + c);
                a0 = rv.fma(FloatVector.fromArray(F, x, x0 + c), a0);
                a1 = rv.fma(FloatVector.fromArray(F, x, x1 + c), a1);
                a2 = rv.fma(FloatVector.fromArray(F, x, x2 + c), a2);
                a3 = rv.fma(FloatVector.fromArray(F, x, x3 + c), a3);
            }
            float s0 = sum(a0), s1 = sum(a1);
            float s2 = sum(a2), s3 = sum(a3);
            for (int c = vn; c < n; c++) {
                float rv = row[rowOff + c];
                s0 += rv * x[x0 + c];
                s1 += rv * x[x1 + c];
                s2 += rv * x[x2 + c];
                s3 += rv * x[x3 + c];
            }
            int o = outOff + t * outStride;
            out[o] = s0;
            out[o + outStride] = s1;
            out[o + 2 * outStride] = s2;
            out[o + 3 * outStride] = s3;
        }
        for (; t < count; t++) out[outOff + t * outStride] = dot(row, rowOff, x, xOff + t * xStride, n);
    }

    @Override
    public void dotTile(
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
        int vn = n - n % L;
        int r = 0;
        for (; r + 4 <= rows; r += 4) {
            int w0 = wOff + r * n, w1 = w0 + n, w2 = w1 + n, w3 = w2 + n;
            int t = 0;
            for (; t + 4 <= count; t += 4) {
                int x0 = xOff + t * xStride, x1 = x0 + xStride, x2 = x1 + xStride, x3 = x2 + xStride;
                FloatVector a00 = FloatVector.zero(F), a01 = a00, a02 = a00, a03 = a00;
                FloatVector a10 = a00, a11 = a00, a12 = a00, a13 = a00;
                FloatVector a20 = a00, a21 = a00, a22 = a00, a23 = a00;
                FloatVector a30 = a00, a31 = a00, a32 = a00, a33 = a00;
                for (int c = 0; c < vn; c += L) {
                    FloatVector v0 = FloatVector.fromArray(F, x, x0 + c), v1 = FloatVector.fromArray(F, x, x1 + c);
                    FloatVector v2 = FloatVector.fromArray(F, x, x2 + c), v3 = FloatVector.fromArray(F, x, x3 + c);
                    FloatVector r0 = FloatVector.fromArray(F, w, w0 + c);
                    a00 = r0.fma(v0, a00);
                    a01 = r0.fma(v1, a01);
                    a02 = r0.fma(v2, a02);
                    a03 = r0.fma(v3, a03);
                    FloatVector r1 = FloatVector.fromArray(F, w, w1 + c);
                    a10 = r1.fma(v0, a10);
                    a11 = r1.fma(v1, a11);
                    a12 = r1.fma(v2, a12);
                    a13 = r1.fma(v3, a13);
                    FloatVector r2 = FloatVector.fromArray(F, w, w2 + c);
                    a20 = r2.fma(v0, a20);
                    a21 = r2.fma(v1, a21);
                    a22 = r2.fma(v2, a22);
                    a23 = r2.fma(v3, a23);
                    FloatVector r3 = FloatVector.fromArray(F, w, w3 + c);
                    a30 = r3.fma(v0, a30);
                    a31 = r3.fma(v1, a31);
                    a32 = r3.fma(v2, a32);
                    a33 = r3.fma(v3, a33);
                }
                int o = outOff + r * outRowStride + t * outTokStride;
                store(out, o, outTokStride, a00, a01, a02, a03, w, w0, x, x0, xStride, vn, n);
                store(out, o + outRowStride, outTokStride, a10, a11, a12, a13, w, w1, x, x0, xStride, vn, n);
                store(out, o + 2 * outRowStride, outTokStride, a20, a21, a22, a23, w, w2, x, x0, xStride, vn, n);
                store(out, o + 3 * outRowStride, outTokStride, a30, a31, a32, a33, w, w3, x, x0, xStride, vn, n);
            }
            if (t < count)
                for (int i = 0; i < 4; i++)
                    dotMany(
                            w,
                            wOff + (r + i) * n,
                            n,
                            x,
                            xOff + t * xStride,
                            xStride,
                            count - t,
                            out,
                            outOff + (r + i) * outRowStride + t * outTokStride,
                            outTokStride);
        }
        for (; r < rows; r++)
            dotMany(w, wOff + r * n, n, x, xOff, xStride, count, out, outOff + r * outRowStride, outTokStride);
    }

    /** Reduces four token accumulators of one row, adds the scalar tail, stores them. */
    private static void store(
            float[] out,
            int o,
            int tokStride,
            FloatVector a0,
            FloatVector a1,
            FloatVector a2,
            FloatVector a3,
            float[] w,
            int wr,
            float[] x,
            int x0,
            int xStride,
            int vn,
            int n) {
        float s0 = sum(a0), s1 = sum(a1);
        float s2 = sum(a2), s3 = sum(a3);
        for (int c = vn; c < n; c++) {
            float rv = w[wr + c];
            s0 += rv * x[x0 + c];
            s1 += rv * x[x0 + xStride + c];
            s2 += rv * x[x0 + 2 * xStride + c];
            s3 += rv * x[x0 + 3 * xStride + c];
        }
        out[o] = s0;
        out[o + tokStride] = s1;
        out[o + 2 * tokStride] = s2;
        out[o + 3 * tokStride] = s3;
    }

    @Override
    public float dot(float[] a, int aOff, float[] b, int bOff, int n) {
        FloatVector acc = FloatVector.zero(F);
        int i = 0;
        for (; i + L <= n; i += L)
            acc = FloatVector.fromArray(F, a, aOff + i).fma(FloatVector.fromArray(F, b, bOff + i), acc);
        float s = sum(acc);
        for (; i < n; i++) s += a[aOff + i] * b[bOff + i];
        return s;
    }

    @Override
    public void axpy(float a, float[] x, int xOff, float[] y, int yOff, int n) {
        int i = 0;
        for (; i + L <= n; i += L)
            FloatVector.fromArray(F, x, xOff + i)
                    .fma(FloatVector.broadcast(F, a), FloatVector.fromArray(F, y, yOff + i))
                    .intoArray(y, yOff + i);
        for (; i < n; i++) y[yOff + i] += a * x[xOff + i];
    }

    @Override
    public void scale(float a, float[] y, int yOff, int n) {
        int i = 0;
        for (; i + L <= n; i += L) FloatVector.fromArray(F, y, yOff + i).mul(a).intoArray(y, yOff + i);
        for (; i < n; i++) y[yOff + i] *= a;
    }

    @Override
    public float expSub(float[] s, int off, int n, float max) {
        FloatVector acc = FloatVector.zero(F);
        int i = 0;
        for (; i + L <= n; i += L) {
            FloatVector v = exp(FloatVector.fromArray(F, s, off + i).sub(max));
            v.intoArray(s, off + i);
            acc = acc.add(v);
        }
        float z = sum(acc);
        for (; i < n; i++) {
            float v = ExpF.exp(s[off + i] - max);
            s[off + i] = v;
            z += v;
        }
        return z;
    }

    @Override
    public void keyScores(
            float[] q, int qOff, int hd, float[] kt, int kvDim, int chan, int from, int to, float[] bySlot) {
        if (L != 16) {
            CpuKernels.super.keyScores(q, qOff, hd, kt, kvDim, chan, from, to, bySlot);
            return;
        }
        for (int b = from >> 4; b <= (to - 1) >> 4; b++) {
            int base = (b * kvDim + chan) * 16;
            FloatVector a0 = FloatVector.zero(F), a1 = a0;
            int d = 0;
            for (; d + 2 <= hd; d += 2) {
                a0 = FloatVector.fromArray(F, kt, base + d * 16).fma(FloatVector.broadcast(F, q[qOff + d]), a0);
                a1 = FloatVector.fromArray(F, kt, base + (d + 1) * 16)
                        .fma(FloatVector.broadcast(F, q[qOff + d + 1]), a1);
            }
            if (d < hd) a0 = FloatVector.fromArray(F, kt, base + d * 16).fma(FloatVector.broadcast(F, q[qOff + d]), a0);
            a0.add(a1).intoArray(bySlot, b * 16);
        }
    }

    @Override
    public void weightedRows(
            float[] w, int wOff, int n, float[] src, int srcOff, int stride, float[] out, int oOff, int hd) {
        if (hd != 4 * L) {
            CpuKernels.super.weightedRows(w, wOff, n, src, srcOff, stride, out, oOff, hd);
            return;
        }
        FloatVector a0 = FloatVector.fromArray(F, out, oOff), a1 = FloatVector.fromArray(F, out, oOff + L);
        FloatVector a2 = FloatVector.fromArray(F, out, oOff + 2 * L), a3 = FloatVector.fromArray(F, out, oOff + 3 * L);
        for (int j = 0; j < n; j++) {
            FloatVector p = FloatVector.broadcast(F, w[wOff + j]);
            int o = srcOff + j * stride;
            a0 = FloatVector.fromArray(F, src, o).fma(p, a0);
            a1 = FloatVector.fromArray(F, src, o + L).fma(p, a1);
            a2 = FloatVector.fromArray(F, src, o + 2 * L).fma(p, a2);
            a3 = FloatVector.fromArray(F, src, o + 3 * L).fma(p, a3);
        }
        a0.intoArray(out, oOff);
        a1.intoArray(out, oOff + L);
        a2.intoArray(out, oOff + 2 * L);
        a3.intoArray(out, oOff + 3 * L);
    }

    /** Bytes of at least 64 bits holding {@link #L} or more lanes, and float vectors per byte vector. */
    private static final VectorSpecies<Byte> BL =
            VectorSpecies.of(byte.class, VectorShape.forBitSize(Math.max(64, 8 * L)));

    private static final int BL_PARTS = BL.length() / L;

    @Override
    public void bf16ToFloat(short[] bits, int sOff, float[] dst, int dOff, int n) {
        int i = 0;
        for (; i + L <= n; i += L)
            ((IntVector) ShortVector.fromArray(S, bits, sOff + i).convertShape(VectorOperators.S2I, I, 0))
                    .lanewise(VectorOperators.LSHL, 16)
                    .reinterpretAsFloats()
                    .intoArray(dst, dOff + i);
        for (; i < n; i++) dst[dOff + i] = Float.intBitsToFloat(bits[sOff + i] << 16);
    }

    @Override
    public void q8ToFloat(byte[] q, int qOff, float[] scale, float[] dst, int dOff, int n) {
        boolean one = scale.length == 1;
        FloatVector s1 = FloatVector.broadcast(F, scale[0]);
        int i = 0;
        for (; i + BL.length() <= n; i += BL.length()) {
            ByteVector b = ByteVector.fromArray(BL, q, qOff + i);
            for (int p = 0; p < BL_PARTS; p++) {
                int at = i + p * L; // L divides 16: the lanes' scales are scale[at & 15 ..]
                FloatVector f = one ? s1 : FloatVector.fromArray(F, scale, at & 15);
                ((FloatVector) b.convertShape(VectorOperators.B2F, F, p)).mul(f).intoArray(dst, dOff + at);
            }
        }
        int mask = one ? 0 : 15;
        for (; i < n; i++) dst[dOff + i] = q[qOff + i] * scale[i & mask];
    }

    @Override
    public float scaleCopyMax(float[] src, int sOff, float[] dst, int dOff, int n, float scale) {
        FloatVector m = FloatVector.broadcast(F, Float.NEGATIVE_INFINITY);
        int i = 0;
        for (; i + L <= n; i += L) {
            FloatVector v = FloatVector.fromArray(F, src, sOff + i).mul(scale);
            v.intoArray(dst, dOff + i);
            m = m.max(v);
        }
        float max = m.reduceLanes(VectorOperators.MAX);
        for (; i < n; i++) {
            float v = src[sOff + i] * scale;
            dst[dOff + i] = v;
            if (v > max) max = v;
        }
        return max;
    }

    /** Elements per block of {@link #argmax}: a block's maximum is kept, so only the winning block is read twice. */
    static final int ARGMAX_BLOCK = 2048;

    /**
     * One pass keeps each block's maximum (four lane-wise max accumulators) and {@code Σ x·0}, which turns NaN (and stays NaN) at the
     * first NaN or ±∞; the first block whose maximum beats all earlier ones (strictly, so ties stay with the lower id)
     * is then searched for the first element equal to the maximum: the same id as the scalar loop, because that loop
     * moves only on a strictly greater value. ±0 compare equal in both.
     */
    @Override
    public int argmax(float[] x, int off, int n) {
        if (n <= 0) return 0;
        FloatVector lowest = FloatVector.broadcast(F, Float.NEGATIVE_INFINITY);
        FloatVector bad0 = FloatVector.zero(F), bad1 = bad0;
        float best = Float.NEGATIVE_INFINITY;
        int bestFrom = off, end = off + n;
        for (int b = off; b < end; b += ARGMAX_BLOCK) {
            int e = Math.min(end, b + ARGMAX_BLOCK), i = b;
            FloatVector m0 = lowest, m1 = lowest, m2 = lowest, m3 = lowest;
            for (; i + 4 * L <= e; i += 4 * L) {
                FloatVector v0 = FloatVector.fromArray(F, x, i), v1 = FloatVector.fromArray(F, x, i + L);
                FloatVector v2 = FloatVector.fromArray(F, x, i + 2 * L), v3 = FloatVector.fromArray(F, x, i + 3 * L);
                m0 = m0.max(v0);
                m1 = m1.max(v1);
                m2 = m2.max(v2);
                m3 = m3.max(v3);
                bad0 = bad0.add(v0.mul(0f).add(v1.mul(0f)));
                bad1 = bad1.add(v2.mul(0f).add(v3.mul(0f)));
            }
            for (; i + L <= e; i += L) {
                FloatVector v = FloatVector.fromArray(F, x, i);
                m0 = m0.max(v);
                bad0 = bad0.add(v.mul(0f));
            }
            float bm = m0.max(m1).max(m2.max(m3)).reduceLanes(VectorOperators.MAX);
            for (; i < e; i++) {
                float v = x[i];
                if (!Float.isFinite(v)) return io.gossgpu.backend.TemperatureDraw.NOT_FINITE;
                if (v > bm) bm = v;
            }
            if (bm > best) {
                best = bm;
                bestFrom = b;
            }
        }
        if (Float.isNaN(sum(bad0.add(bad1)))) return io.gossgpu.backend.TemperatureDraw.NOT_FINITE;
        int e = Math.min(end, bestFrom + ARGMAX_BLOCK), i = bestFrom;
        for (; i + L <= e; i += L) {
            VectorMask<Float> hit = FloatVector.fromArray(F, x, i).eq(best);
            if (hit.anyTrue()) return i + hit.firstTrue() - off;
        }
        for (; i < e; i++) if (x[i] == best) return i - off;
        throw new IllegalStateException("argmax: the maximum " + best + " is not in its block"); // unreachable
    }

    @Override
    public void swiglu(float[] a, int aOff, float[] b, int bOff, float limit, float[] out, int oOff, int n) {
        int i = 0;
        for (; i + L <= n; i += L) {
            FloatVector g = FloatVector.fromArray(F, a, aOff + i).min(limit);
            FloatVector l = FloatVector.fromArray(F, b, bOff + i).min(limit).max(-limit);
            FloatVector sig = exp(g.mul(-1.702f)).add(1f);
            g.div(sig).mul(l.add(1f)).intoArray(out, oOff + i);
        }
        for (; i < n; i++) {
            float g = Math.min(a[aOff + i], limit);
            float l = Math.max(-limit, Math.min(b[bOff + i], limit));
            out[oOff + i] = g / (ExpF.exp(g * -1.702f) + 1f) * (l + 1f);
        }
    }

    @Override
    public double sumSquares(float[] x, int off, int n) {
        FloatVector acc = FloatVector.zero(F);
        int i = 0;
        for (; i + L <= n; i += L) {
            FloatVector v = FloatVector.fromArray(F, x, off + i);
            acc = v.fma(v, acc);
        }
        double s = sum(acc);
        for (; i < n; i++) s += (double) x[off + i] * x[off + i];
        return s;
    }

    @Override
    public void normScale(float[] x, int xOff, float inv, float[] scale, float[] out, int oOff, int n) {
        int i = 0;
        for (; i + L <= n; i += L)
            FloatVector.fromArray(F, x, xOff + i)
                    .mul(inv)
                    .mul(FloatVector.fromArray(F, scale, i))
                    .intoArray(out, oOff + i);
        for (; i < n; i++) out[oOff + i] = x[xOff + i] * inv * scale[i];
    }

    @Override
    public void add(float[] a, int aOff, float[] b, int bOff, float[] out, int oOff, int n) {
        int i = 0;
        for (; i + L <= n; i += L)
            FloatVector.fromArray(F, a, aOff + i)
                    .add(FloatVector.fromArray(F, b, bOff + i))
                    .intoArray(out, oOff + i);
        for (; i < n; i++) out[oOff + i] = a[aOff + i] + b[bOff + i];
    }
}
