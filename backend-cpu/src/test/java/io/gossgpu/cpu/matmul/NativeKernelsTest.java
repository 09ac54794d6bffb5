package io.gossgpu.cpu.matmul;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.gossgpu.cpu.bindings.goss_cpu_h;
import io.gossgpu.cpu.compute.CpuKernels;
import io.gossgpu.cpu.compute.CpuPool;
import io.gossgpu.model.WeightFormat;
import io.gossgpu.model.WeightView;
import io.gossgpu.quant.Q8_0;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The native matrix kernels (backend-cpu/kernels) of each instruction set this CPU runs, against sums in double:
 * <ul>
 *   <li>activation quantization: {@code d = max|x|/127}, {@code |d·q − x| ≤ d/2}, {@code s = Σq};</li>
 *   <li>MXFP4 (both layouts) and Q8_0 tiles: {@code out = Σ W·(d·q) + bias} with the file's weights decoded by
 *       {@link WeightView#dequantizeRow} and the kernel's own quantized activations, to 1e-5 of {@code Σ|terms|}
 *       (the integer sums are exact; what is left is float rounding of the block scaling);</li>
 *   <li>F32/F16/BF16 rows in place ({@code quantizingDense(false)}): {@code out = Σ W·x + bias}, to 1e-5 of
 *       {@code Σ|terms|};</li>
 *   <li>F32/F16/BF16 rows quantized at load (the default): the same bytes as the file's Q8_0 of those rows, written
 *       by {@link Q8_0#quantizeRow} and repacked, so the Q8_0 products above cover them.</li>
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
        for (KernelSet.Isa isa : new KernelSet.Isa[] {KernelSet.Isa.AVX2, KernelSet.Isa.AVXVNNI, KernelSet.Isa.AVX512})
            for (WeightFormat f : WeightFormat.values())
                // (tokens, columns): rows of 3, 5, 6 and 7 blocks, in decode (T = 1) and in prefill
                for (int[] tc : new int[][] {{1, 160}, {1, 192}, {1, 224}, {3, 96}, {8, 224}, {9, 192}, {19, 160}})
                    out.add(Arguments.of(isa, f, tc[0], tc[1]));
        return out.stream();
    }

    private static KernelSet kernels(KernelSet.Isa isa) {
        Assumptions.assumeTrue(
                NativeCpu.supports(isa),
                () -> "native " + isa.knobValue() + " kernels cannot run here: "
                        + (NativeCpu.unavailableReason() != null
                                ? NativeCpu.unavailableReason()
                                : "this CPU lacks the instructions"));
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
                    for (int b = 0; b < blocks; b++)
                        data.set(java.lang.foreign.ValueLayout.JAVA_BYTE, row * rowBytes + 17L * b, scaleByte(r));
            }
            case MXFP4_OPENAI -> {
                scales = arena.allocate((long) E * ROWS * blocks);
                for (long i = 0; i < scales.byteSize(); i++)
                    scales.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, scaleByte(r));
                return new WeightView(
                        "w",
                        f,
                        E,
                        ROWS,
                        cols,
                        data,
                        0,
                        ROWS * rowBytes,
                        rowBytes,
                        1,
                        scales,
                        0,
                        (long) ROWS * blocks,
                        blocks);
            }
            case Q8_0 -> {
                for (long row = 0; row < (long) E * ROWS; row++)
                    for (int b = 0; b < blocks; b++)
                        data.set(
                                java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN),
                                row * rowBytes + 34L * b,
                                Float.floatToFloat16((float) (r.nextDouble() * 0.02 + 1e-4)));
            }
            case F32 -> {
                for (long i = 0; i < n / 4; i++)
                    data.set(
                            java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN),
                            4 * i,
                            (float) r.nextGaussian());
            }
            case F16 -> {
                for (long i = 0; i < n / 2; i++)
                    data.set(
                            java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN),
                            2 * i,
                            Float.floatToFloat16((float) r.nextGaussian()));
            }
            case BF16 -> {
                for (long i = 0; i < n / 2; i++)
                    data.set(
                            java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN),
                            2 * i,
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
        CpuMatrix m = k.quantizingDense(false).pack(w, pool, arena, new JavaMatrix.Scratch(2));
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
                    act[c] = f.isDense()
                            ? x[xOff + (xRow0 + t) * cols + c]
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
                        fail(isa + " " + f + " expert " + e + " row " + row + " token " + t + ": " + got + " vs " + sum
                                + " (Σ|terms| " + mag + ")");
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
        // non-finite values, each alone in its block, at positions a max-reduction could drop
        int[][] bad = {{7, 3}, {8, 32 + 17}, {9, 64 + 31}, {10, 0}};
        float[] badValues = {Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.NaN};
        for (int j = 0; j < bad.length; j++) x[bad[j][0] * cols + bad[j][1]] = badValues[j];
        MatrixInput in = new MatrixInput().set(x, 0, cols, rows, cols);
        in.prepare(MatrixInput.Form.Q8, k, pool); // 21 rows: split over the pool
        for (int[] at : bad)
            assertTrue(
                    Float.isNaN(in.d[at[0] * nb + at[1] / 32]),
                    "a block holding a non-finite value has scale NaN, so its products are NaN");
        for (int i = 0; i < rows; i++)
            for (int b = 0; b < nb; b++) {
                int row = i, block = b;
                if (java.util.Arrays.stream(bad).anyMatch(at -> at[0] == row && at[1] / 32 == block)) continue;
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

    static Stream<WeightFormat> floatFormats() {
        return Stream.of(WeightFormat.F32, WeightFormat.F16, WeightFormat.BF16);
    }

    /**
     * Float rows become, bit for bit, the tiles of their Q8_0 quantization (ggml's rule, as {@link Q8_0#quantizeRow}
     * writes a GGUF): random rows, plus blocks that test the edges: all zeros (d = 0), values so small that d is an F16
     * subnormal, and halves (d = 1, x = ±0.5, ±2.5), which round up as Java's {@code Math.round} does; and NaN and
     * ±Inf, which must come out as a NaN or infinite scale (what the non-finite guard relies on).
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("floatFormats")
    void floatRowsBecomeTheTilesOfTheirQ8_0(WeightFormat f) {
        kernels(KernelSet.Isa.AVX2);
        SplittableRandom r = new SplittableRandom(11);
        int cols = 160, blocks = cols / 32, groups = (ROWS + 15) / 16;
        WeightView w = weight(f, r, cols);
        float[] row = new float[cols];
        java.util.function.BiConsumer<Integer, float[]> put = (i, v) -> {
            for (int c = 0; c < cols; c++)
                switch (f) {
                    case F32 ->
                        w.data()
                                .set(
                                        java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(
                                                ByteOrder.LITTLE_ENDIAN),
                                        i * w.rowBytes() + 4L * c,
                                        v[c]);
                    case F16 ->
                        w.data()
                                .set(
                                        java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(
                                                ByteOrder.LITTLE_ENDIAN),
                                        i * w.rowBytes() + 2L * c,
                                        Float.floatToFloat16(v[c]));
                    default ->
                        w.data()
                                .set(
                                        java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(
                                                ByteOrder.LITTLE_ENDIAN),
                                        i * w.rowBytes() + 2L * c,
                                        (short) (Float.floatToRawIntBits(v[c]) >>> 16));
                }
        };
        float[] edge = new float[cols];
        for (int c = 32; c < 64; c++) edge[c] = (float) (r.nextGaussian() * 1e-4); // block 1: F16-subnormal scale
        float[] halves = {0.5f, -0.5f, 2.5f, -2.5f, 126.5f, -126.5f, 127f, 1.5f};
        for (int c = 64; c < 96; c++) edge[c] = halves[c % halves.length]; // block 2: d = 1, ties; block 0 stays zero
        for (int c = 96; c < cols; c++) edge[c] = (float) r.nextGaussian();
        put.accept(5, edge);
        put.accept(ROWS + 20, edge);
        // non-finite weights: NaN in block 0, +Inf in block 1, −Inf and NaN in block 2 must stay non-finite
        float[] bad = new float[cols];
        for (int c = 0; c < cols; c++) bad[c] = (float) r.nextGaussian();
        bad[3] = Float.NaN;
        bad[40] = Float.POSITIVE_INFINITY;
        bad[70] = Float.NEGATIVE_INFINITY;
        bad[90] = Float.NaN;
        put.accept(7, bad);
        MemorySegment q8 = arena.allocate((long) ROWS * blocks * Q8_0.BLOCK_BYTES);
        for (int e = 0; e < E; e++) {
            for (int i = 0; i < ROWS; i++) {
                w.dequantizeRow(e, i, row, 0);
                MemorySegment.copy(
                        MemorySegment.ofArray(Q8_0.quantizeRow(row, 0, cols)),
                        0,
                        q8,
                        (long) i * blocks * Q8_0.BLOCK_BYTES,
                        (long) blocks * Q8_0.BLOCK_BYTES);
            }
            long qBytes = (long) groups * blocks * 512, sBytes = (long) groups * blocks * 32;
            MemorySegment wantQ = arena.allocate(qBytes),
                    wantS = arena.allocate(sBytes),
                    gotQ = arena.allocate(qBytes),
                    gotS = arena.allocate(sBytes);
            goss_cpu_h.goss_cpu_repack_q8_0(
                    q8, (long) blocks * Q8_0.BLOCK_BYTES, ROWS, blocks, 0, groups, wantQ, wantS);
            goss_cpu_h.goss_cpu_repack_float_q8(
                    DenseMatrix.formatCode(f),
                    w.data().asSlice(w.rowOffset(e, 0)),
                    w.rowStride(),
                    ROWS,
                    blocks,
                    0,
                    groups,
                    gotQ,
                    gotS);
            assertEquals(-1, wantQ.mismatch(gotQ), f + " expert " + e + ": q8 codes differ from Q8_0.quantizeRow's");
            assertEquals(-1, wantS.mismatch(gotS), f + " expert " + e + ": scales differ from Q8_0.quantizeRow's");
            if (e == 0) { // row 7 (group 0, lane 7): blocks 0 and 2 hold NaN, block 1 +Inf at column 40 (its column
                // 8: tile byte 512 + 64·2 + 4·7)
                java.util.function.IntFunction<Float> scale = b -> Float.float16ToFloat(
                        gotS.get(java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED, 2L * (b * 16 + 7)));
                assertTrue(
                        Float.isNaN(scale.apply(0)) && Float.isNaN(scale.apply(2)),
                        f + ": a NaN weight must make its block's scale NaN");
                assertEquals(
                        Float.POSITIVE_INFINITY,
                        scale.apply(1),
                        f + ": an infinite weight must make its block's scale infinite");
                assertEquals(
                        127,
                        gotQ.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 512L + 64 * 2 + 4 * 7),
                        f + ": +Inf's code");
            }
        }
    }

    static Stream<KernelSet.Isa> isas() {
        return Stream.of(KernelSet.Isa.AVX2, KernelSet.Isa.AVXVNNI, KernelSet.Isa.AVX512);
    }
}
