package io.gossgpu.cpu.matmul;

import io.gossgpu.cpu.CpuKernels;
import io.gossgpu.cpu.CpuPool;
import io.gossgpu.model.WeightFormat;
import io.gossgpu.model.WeightView;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The native matrix kernels (kernels/cpu) of each instruction set this CPU runs, against sums in double:
 * <ul>
 *   <li>activation quantization: {@code d = max|x|/127}, {@code |d·q − x| ≤ d/2}, {@code s = Σq};</li>
 *   <li>MXFP4 (both layouts) and Q8_0 tiles: {@code out = Σ W·(d·q) + bias} with the file's weights decoded by
 *       {@link WeightView#dequantizeRow} and the kernel's own quantized activations, to 1e-5 of {@code Σ|terms|}
 *       (the integer sums are exact; what is left is float rounding of the block scaling);</li>
 *   <li>F32/F16/BF16 rows in place: {@code out = Σ W·x + bias}, to 1e-5 of {@code Σ|terms|}.</li>
 * </ul>
 * Shapes: 3 experts of 37 rows (not a multiple of the 16-row tiles) and 160 columns, row ranges starting on
 * tile boundaries, batches of 1 to 19 tokens (the kernels take 8 or 4 at a time), an output offset, and a bias.
 * Skipped, with the reason, where the library or the instructions are missing.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class NativeKernelsTest {
    private static final int E = 3, ROWS = 37;
    private CpuPool pool;
    private Arena arena;

    @BeforeAll
    void setUp() {
        pool = new CpuPool(2);
        arena = Arena.ofShared();
    }

    @AfterAll
    void tearDown() {
        pool.close();
        arena.close();
    }

    static Stream<Arguments> cases() {
        List<Arguments> out = new ArrayList<>();
        for (KernelSet.Isa isa : new KernelSet.Isa[]{KernelSet.Isa.AVX2, KernelSet.Isa.AVXVNNI, KernelSet.Isa.AVX512})
            for (WeightFormat f : WeightFormat.values())
                // (tokens, columns): rows of 3, 5, 6 and 7 blocks, in decode (T = 1) and in prefill
                for (int[] tc : new int[][]{{1, 160}, {1, 192}, {1, 224}, {3, 96}, {8, 224}, {9, 192}, {19, 160}})
                    out.add(Arguments.of(isa, f, tc[0], tc[1]));
        return out.stream();
    }

    private static KernelSet kernels(KernelSet.Isa isa) {
        Assumptions.assumeTrue(NativeCpu.supports(isa), () -> "native " + isa.knobValue() + " kernels cannot run here: "
                + (NativeCpu.unavailableReason() != null ? NativeCpu.unavailableReason() : "this CPU lacks the instructions"));
        return KernelSet.of(isa, CpuKernels.best());
    }

    /** A random weight of {@code format}: scale bytes 120..134 (and 0, 1, 255 in some blocks), codes and values uniform. */
    private WeightView weight(WeightFormat f, SplittableRandom r, int cols) {
        long rowBytes = f.rowBytes(cols), n = (long) E * ROWS * rowBytes;
        MemorySegment data = arena.allocate(n, 64), scales = null;
        for (long i = 0; i < n; i++) data.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) r.nextInt(256));
        int blocks = cols / 32;
        switch (f) {
            case MXFP4_GGML -> {
                for (long row = 0; row < (long) E * ROWS; row++)
                    for (int b = 0; b < blocks; b++) data.set(java.lang.foreign.ValueLayout.JAVA_BYTE, row * rowBytes + 17L * b, scaleByte(r));
            }
            case MXFP4_OPENAI -> {
                scales = arena.allocate((long) E * ROWS * blocks);
                for (long i = 0; i < scales.byteSize(); i++) scales.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, scaleByte(r));
                return new WeightView("w", f, E, ROWS, cols, data, 0, ROWS * rowBytes, rowBytes, 1,
                        scales, 0, (long) ROWS * blocks, blocks);
            }
            case Q8_0 -> {
                for (long row = 0; row < (long) E * ROWS; row++)
                    for (int b = 0; b < blocks; b++)
                        data.set(java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN),
                                row * rowBytes + 34L * b, Float.floatToFloat16((float) (r.nextDouble() * 0.02 + 1e-4)));
            }
            case F32 -> {
                for (long i = 0; i < n / 4; i++)
                    data.set(java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 4 * i, (float) r.nextGaussian());
            }
            case F16 -> {
                for (long i = 0; i < n / 2; i++)
                    data.set(java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 2 * i,
                            Float.floatToFloat16((float) r.nextGaussian()));
            }
            case BF16 -> {
                for (long i = 0; i < n / 2; i++)
                    data.set(java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 2 * i,
                            (short) (Float.floatToRawIntBits((float) r.nextGaussian()) >>> 16));
            }
        }
        return new WeightView("w", f, E, ROWS, cols, data, 0, ROWS * rowBytes, rowBytes, 1, null, 0, 0, 0);
    }

    private static byte scaleByte(SplittableRandom r) {
        int p = r.nextInt(40);
        return (byte) (p == 0 ? 0 : p == 1 ? 1 : p == 2 ? 255 : 120 + r.nextInt(15));
    }

    @ParameterizedTest(name = "{0} {1} T={2} K={3}")
    @MethodSource("cases")
    void productsEqualDoubleSumsOfTheQuantizedActivations(KernelSet.Isa isa, WeightFormat f, int T, int cols) {
        KernelSet k = kernels(isa);
        SplittableRandom r = new SplittableRandom(f.ordinal() * 100 + T);
        WeightView w = weight(f, r, cols);
        CpuMatrix m = k.pack(w, pool, arena, new JavaMatrix.Scratch(2));
        assertEquals(f.isDense() ? MatrixInput.Form.FLOAT : MatrixInput.Form.Q8, m.inputForm());
        int xRow0 = 2, xOff = 5;
        float[] x = new float[xOff + (xRow0 + T) * cols];
        for (int i = 0; i < x.length; i++) x[i] = (float) (r.nextGaussian() * (i % 11 == 0 ? 8 : 1));
        MatrixInput in = new MatrixInput().set(x, xOff, cols, xRow0 + T, cols);
        in.prepare(m.inputForm(), k, pool);
        float[] bias = new float[E * ROWS + 4];
        for (int i = 0; i < bias.length; i++) bias[i] = (float) r.nextGaussian();
        float[] act = new float[cols], wrow = new float[cols];
        for (int e = 0; e < E; e++) {
            int outOff = 3, outStride = ROWS + 1;
            float[] out = new float[outOff + T * outStride];
            int r0 = 16; // a tile boundary; rows 16..36 span a full and a partial tile
            m.gemm(e, r0, ROWS, in, xRow0, T, out, outOff, outStride, bias, e * ROWS, 0);
            for (int t = 0; t < T; t++) {
                for (int c = 0; c < cols; c++)
                    act[c] = f.isDense() ? x[xOff + (xRow0 + t) * cols + c]
                            : in.d[(xRow0 + t) * (cols / 32) + c / 32] * in.q[(xRow0 + t) * cols + c];
                for (int row = r0; row < ROWS; row++) {
                    w.dequantizeRow(e, row, wrow, 0);
                    double sum = bias[e * ROWS + row], mag = Math.abs(sum);
                    for (int c = 0; c < cols; c++) {
                        sum += (double) wrow[c] * act[c];
                        mag += Math.abs((double) wrow[c] * act[c]);
                    }
                    float got = out[outOff + t * outStride + row - r0];
                    if (Double.isNaN(sum)) { // a block with scale byte 255
                        assertTrue(Float.isNaN(got), isa + " " + f + " row " + row + ": NaN block gave " + got);
                        continue;
                    }
                    if (!(Math.abs(got - sum) <= 1e-5 * mag + 1e-30))
                        fail(isa + " " + f + " expert " + e + " row " + row + " token " + t + ": " + got + " vs " + sum + " (Σ|terms| " + mag + ")");
                }
            }
            for (int i = 0; i < outOff; i++) assertEquals(0f, out[i], "nothing written before the output offset");
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("isas")
    void quantizationFollowsItsFormula(KernelSet.Isa isa) {
        KernelSet k = kernels(isa);
        SplittableRandom r = new SplittableRandom(3);
        int rows = 21, cols = 96, nb = cols / 32;
        float[] x = new float[rows * cols];
        for (int i = 0; i < x.length; i++) x[i] = (float) (r.nextGaussian() * Math.pow(10, r.nextInt(7) - 3));
        for (int c = 32; c < 64; c++) x[5 * cols + c] = 0; // an all-zero block
        MatrixInput in = new MatrixInput().set(x, 0, cols, rows, cols);
        in.prepare(MatrixInput.Form.Q8, k, pool); // 21 rows: split over the pool
        for (int i = 0; i < rows; i++)
            for (int b = 0; b < nb; b++) {
                float amax = 0;
                int sum = 0;
                for (int c = 32 * b; c < 32 * b + 32; c++) amax = Math.max(amax, Math.abs(x[i * cols + c]));
                float d = in.d[i * nb + b];
                assertEquals(amax / 127f, d, 0f, "scale of row " + i + " block " + b);
                for (int c = 32 * b; c < 32 * b + 32; c++) {
                    int q = in.q[i * cols + c];
                    assertTrue(Math.abs(q) <= 127);
                    assertTrue(Math.abs(d * q - x[i * cols + c]) <= d * 0.5001f, "value " + c + " of row " + i);
                    sum += q;
                }
                assertEquals(sum, in.s[i * nb + b], "block sum");
            }
    }

    static Stream<KernelSet.Isa> isas() {
        return Stream.of(KernelSet.Isa.AVX2, KernelSet.Isa.AVXVNNI, KernelSet.Isa.AVX512);
    }
}
