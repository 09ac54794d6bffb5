package io.gossgpu.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.GossException;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.DeviceTensor;
import io.gossgpu.conformance.BackendConformanceKit;
import io.gossgpu.conformance.RequiredBackends;
import io.gossgpu.device.BufferTensor;
import io.gossgpu.device.DenseShapes;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.model.WeightFormat;
import io.gossgpu.model.WeightView;
import io.gossgpu.quant.Bf16;
import io.gossgpu.quant.F16;
import io.gossgpu.quant.LE;
import io.gossgpu.quant.Q8_0;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The dense.cu kernels where the conformance kit does not reach: every device format (BF16, F16, F32, Q8_0),
 * widths that take the 16-byte loads and widths that do not (odd, 4 mod 8), token counts around the matvec
 * chunk (8) and the GEMM tiles (32, 64), every GEMM tile, and the matvec over several chunks. The oracle is the engine's own decode ({@link WeightView#dequantizeRow}, what the reference backend
 * uses) with sums in double, at the kit's per-op tolerance; the embedding lookup must be bit-exact. Skipped
 * without a CUDA device (runs under the fake driver's emulator).
 */
class CudaDenseTest {
    /**
     * rows × cols: 16-byte loads for every format, none (odd), F32 only (4 mod 8), partial tiles of every size,
     * and gpt-oss-20b's width (2880: 360 loads of 8 BF16 per row, a partial last round of the 32 lanes); on the
     * fake driver's 4 multiprocessors the matvec splits rows wide enough for every warp of the split to have a
     * share: 5 and 6 rows over 8 warps, 20 over 2. Q8_0 rounds cols up to whole 32-value blocks.
     */
    static final int[][] SHAPES = {
        {130, 72}, {67, 61}, {5, 8}, {33, 100}, {70, 96}, {40, 2880}, {5, 2880}, {20, 1000}, {6, 1001}
    };

    static final int[] TOKENS = {1, 7, 8, 9, 31, 32, 33, 63, 64, 65, 131};

    /**
     * Knob settings, each a backend: the default split (matvec below 9 tokens, then BF16 on tensor cores on the fake
     * driver's compute capability 9.0), BF16 on tensor cores from 2 tokens (dense_gemm_mma_bf16: tiles of 32 tokens ×
     * 128 rows, steps of 64 columns, so every shape here has partial tiles and steps), every FP32 GEMM tile, the matvec
     * up to 33 tokens.
     */
    static final Map<String, BackendOptions> SETTINGS = Map.of(
            "default", BackendOptions.defaults(),
            "mma", gemm(32, 64).with(CudaKnobs.DENSE_MMA, 1),
            "gemm32x64", gemm(32, 64),
            "gemm32x128", gemm(32, 128),
            "gemm64x128", gemm(64, 128),
            "matvec",
                    BackendOptions.defaults()
                            .with(CudaKnobs.DENSE_PREFILL_MIN_T, 34)
                            .with(CudaKnobs.DENSE, 96));

    /** The FP32 GEMM from 2 tokens on with a tile of {@code t} tokens × {@code r} rows (BF16 too: not on tensor cores). */
    private static BackendOptions gemm(int t, int r) {
        return BackendOptions.defaults()
                .with(CudaKnobs.DENSE_PREFILL_MIN_T, 2)
                .with(CudaKnobs.DENSE_TILE_T, t)
                .with(CudaKnobs.DENSE_TILE_R, r)
                .with(CudaKnobs.DENSE_MMA, 0);
    }

    static void requireDevice() {
        RequiredBackends.requireAvailable(new CudaBackendProvider());
    }

    static CudaBackend backend(BackendOptions knobs) {
        requireDevice();
        return CudaBackend.create(knobs);
    }

    /** A rows × cols matrix of random values in {@code f}, rows 6 bytes apart (a gather at upload). */
    static WeightView matrix(Arena arena, WeightFormat f, int rows, int cols, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        float[] v = new float[cols];
        long rowBytes = f.rowBytes(cols), stride = rowBytes + 6;
        MemorySegment m = arena.allocate(stride * rows, 8);
        for (int i = 0; i < rows; i++) {
            for (int c = 0; c < cols; c++) {
                v[c] = (float) r.nextGaussian();
            }
            long at = i * stride;
            switch (f) {
                case F32 -> {
                    for (int c = 0; c < cols; c++) m.set(LE.F32, at + 4L * c, v[c]);
                }
                case BF16 -> {
                    for (int c = 0; c < cols; c++)
                        m.set(LE.I16, at + 2L * c, c == 3 ? (short) 0x8003 : Bf16.fromFloat(v[c])); // a subnormal
                }
                case F16 -> {
                    for (int c = 0; c < cols; c++)
                        m.set(LE.I16, at + 2L * c, c == 3 ? (short) 0x83ff : F16.fromFloat(v[c])); // a subnormal
                }
                case Q8_0 ->
                    MemorySegment.copy(MemorySegment.ofArray(Q8_0.quantizeRow(v, 0, cols)), 0, m, at, rowBytes);
                default -> throw new IllegalArgumentException(f.toString());
            }
        }
        return new WeightView("test " + f, f, 1, rows, cols, m, 0, 0, stride, 1, null, 0, 0, 0);
    }

    /** {@code parts} as one dense matrix on {@code b}'s device (freed with the context). */
    static CudaWeights.Dense upload(CudaBackend b, WeightView... parts) {
        return CudaWeights.uploadDense(b.device::allocate, parts);
    }

    /** {@code t} as a tensor of device buffers (what {@link CudaBackend#allocate} makes). */
    @SuppressWarnings("unchecked")
    static BufferTensor<CudaBuffer> buffers(DeviceTensor t) {
        return (BufferTensor<CudaBuffer>) t;
    }

    static long at(DeviceTensor t) {
        return buffers(t).buffer().address();
    }

    /** {@code out = x·Wᵀ} (+ {@code bias}: a tensor of {@code d.rows()} values, or null) through the device layer's dense pipeline. */
    static void linear(CudaBackend b, CudaWeights.Dense d, DeviceTensor bias, DeviceTensor x, DeviceTensor out) {
        b.dense.pipeline.dense(
                d.matrix(), bias == null ? null : at(bias), at(x), x.rows(), x.cols(), at(out), out.rows(), out.cols());
    }

    static DeviceTensor tensor(CudaBackend b, int rows, int cols, float[] values) {
        DeviceTensor t = b.allocate(rows, cols);
        if (values != null) {
            b.write(t, values);
        }
        return t;
    }

    @ParameterizedTest
    @ValueSource(strings = {"default", "mma", "gemm32x64", "gemm32x128", "gemm64x128", "matvec"})
    void linearMatchesTheExactDecodeInEveryFormat(String setting) {
        try (CudaBackend b = backend(SETTINGS.get(setting));
                Arena arena = Arena.ofConfined()) {
            assertEquals(
                    !setting.startsWith("gemm"),
                    b.dense.mma(),
                    setting + ": BF16 GEMMs on tensor cores (compute capability 9.0)");
            for (WeightFormat f :
                    new WeightFormat[] {WeightFormat.BF16, WeightFormat.F16, WeightFormat.F32, WeightFormat.Q8_0}) {
                for (int[] shape : SHAPES) {
                    int rows = shape[0], cols = f == WeightFormat.Q8_0 ? (shape[1] + 31) / 32 * 32 : shape[1];
                    WeightView w = matrix(arena, f, rows, cols, 31L * rows + cols);
                    CudaWeights.Dense d = upload(b, w);
                    assertEquals(f, d.format(), "device format of " + f);
                    float[][] wr = new float[rows][cols];
                    for (int i = 0; i < rows; i++) {
                        w.dequantizeRow(0, i, wr[i], 0);
                    }
                    SplittableRandom r = new SplittableRandom(rows * 7L + cols);
                    float[] bias = new float[rows];
                    for (int i = 0; i < rows; i++) {
                        bias[i] = (float) r.nextGaussian();
                    }
                    for (int T : TOKENS) {
                        float[] x = new float[T * cols];
                        for (int i = 0; i < x.length; i++) {
                            x[i] = (float) r.nextGaussian();
                        }
                        boolean withBias = T % 2 == 1;
                        float[] want = new float[T * rows];
                        for (int t = 0; t < T; t++) {
                            for (int i = 0; i < rows; i++) {
                                double s = withBias ? bias[i] : 0;
                                for (int c = 0; c < cols; c++) {
                                    s += (double) wr[i][c] * x[t * cols + c];
                                }
                                want[t * rows + i] = (float) s;
                            }
                        }
                        try (DeviceTensor xt = tensor(b, T, cols, x);
                                DeviceTensor out = tensor(b, T, rows, null);
                                DeviceTensor bt = tensor(b, 1, rows, bias)) {
                            linear(b, d, withBias ? bt : null, xt, out);
                            BackendConformanceKit.assertClose(
                                    setting + " " + f + " " + rows + "x" + cols + " T=" + T,
                                    want,
                                    b.read(out),
                                    T,
                                    rows,
                                    1e-4);
                        }
                    }
                }
            }
        }
    }

    /** {@code want[t, r] = Σ_c wr[r][c] · x[t, c] (+ bias[r])} in double. */
    static float[] exact(float[][] wr, float[] bias, float[] x, int T) {
        int rows = wr.length, cols = wr[0].length;
        float[] want = new float[T * rows];
        for (int t = 0; t < T; t++) {
            for (int i = 0; i < rows; i++) {
                double s = bias != null ? bias[i] : 0;
                for (int c = 0; c < cols; c++) {
                    s += (double) wr[i][c] * x[t * cols + c];
                }
                want[t * rows + i] = (float) s;
            }
        }
        return want;
    }

    static float[] gaussian(SplittableRandom r, int n) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) v[i] = (float) r.nextGaussian();
        return v;
    }

    /**
     * rows × cols of the Q8_0 decode matvec (dense.cu's matvec_q8_t1 at T = 1; on the fake driver's 4 multiprocessors
     * with 8-warp blocks it aims at 96 warps): 5 × 2880 splits a row over 8 warps (one step, lanes with no chunk), 20 × 96
     * over 4 (6 chunks for 128 lanes), 37 × 4096 over 2 (rows not a multiple of the block's 4, one whole step of 4
     * chunks a lane), 300 × 2880 one warp a row, 38 row groups over 12 blocks (the blocks loop) and two steps, the second
     * partial, 131 × 8192 the widest staged (four steps), 9 × 8224 wider (matvec&lt;Q8&gt; at T = 1).
     */
    static final int[][] Q8_SHAPES = {{5, 2880}, {20, 96}, {37, 4096}, {300, 2880}, {131, 8192}, {9, 8224}};

    /**
     * The Q8_0 matvec at 1 to 8 tokens (T = 1 the decode path, 2 .. 8 the tokens-per-load one) against the exact decode
     * with double sums at 1e-4 of each token's largest output, with 8-warp blocks, 3-warp ones (no split; its 300 rows
     * loop over 32 blocks of 3) and 16-warp ones (one block a multiprocessor: split rows loop too, 5 × 2880 over 16
     * warps in 4 blocks), a bias at odd T; and a fused three-output matrix reading x from row 2 (QKV, the last rows'
     * logits).
     */
    @ParameterizedTest
    @ValueSource(ints = {256, 96, 512})
    void q8MatvecMatchesTheExactDecodeOnEveryPath(int block) {
        try (CudaBackend b = backend(BackendOptions.defaults().with(CudaKnobs.DENSE, block));
                Arena arena = Arena.ofConfined()) {
            for (int[] shape : Q8_SHAPES) {
                int rows = shape[0], cols = shape[1];
                assertEquals(
                        cols <= DenseLauncher.Q8_DECODE_MAX_COLS, DenseLauncher.q8Decode(WeightFormat.Q8_0, cols, 1));
                WeightView w = matrix(arena, WeightFormat.Q8_0, rows, cols, 13L * rows + cols);
                CudaWeights.Dense d = upload(b, w);
                float[][] wr = new float[rows][cols];
                for (int i = 0; i < rows; i++) w.dequantizeRow(0, i, wr[i], 0);
                SplittableRandom r = new SplittableRandom(rows * 5L + cols);
                float[] bias = gaussian(r, rows);
                for (int T = 1; T <= DenseLauncher.MATVEC_MAXT; T++) {
                    float[] x = gaussian(r, T * cols);
                    boolean withBias = T % 2 == 1;
                    try (DeviceTensor xt = tensor(b, T, cols, x);
                            DeviceTensor out = tensor(b, T, rows, null);
                            DeviceTensor bt = tensor(b, 1, rows, bias)) {
                        linear(b, d, withBias ? bt : null, xt, out);
                        BackendConformanceKit.assertClose(
                                "block " + block + " Q8_0 " + rows + "x" + cols + " T=" + T,
                                exact(wr, withBias ? bias : null, x, T),
                                b.read(out),
                                T,
                                rows,
                                1e-4);
                    }
                }
                // three outputs (rows n0 | n1 | the rest), x from its row 2: one token
                int n0 = rows / 2, n1 = (rows - n0) / 2, n2 = rows - n0 - n1;
                float[] x = gaussian(r, 3 * cols);
                float[] want = exact(wr, bias, java.util.Arrays.copyOfRange(x, 2 * cols, 3 * cols), 1);
                try (DeviceTensor xt = tensor(b, 3, cols, x);
                        DeviceTensor o0 = tensor(b, 1, Math.max(1, n0), null);
                        DeviceTensor o1 = tensor(b, 1, Math.max(1, n1), null);
                        DeviceTensor o2 = tensor(b, 1, n2, null);
                        DeviceTensor bt = tensor(b, 1, rows, bias)) {
                    b.dense.pipeline.run(d.matrix(), at(bt), at(xt), 2, 1, at(o0), n0, at(o1), n1, at(o2));
                    float[] got = new float[rows];
                    System.arraycopy(b.read(o0), 0, got, 0, n0);
                    System.arraycopy(b.read(o1), 0, got, n0, n1);
                    System.arraycopy(b.read(o2), 0, got, n0 + n1, n2);
                    BackendConformanceKit.assertClose(
                            "block " + block + " Q8_0 " + rows + "x" + cols + " three outputs, x row 2",
                            want,
                            got,
                            1,
                            rows,
                            1e-4);
                }
            }
        }
    }

    /**
     * The decode path's byte loads: a Q8_0 matrix whose codes start one byte past a 16-byte boundary (never from
     * {@link CudaWeights}' upload; the kernel gathers such codes byte by byte): the uploaded codes read from byte 1 as
     * rows − 1 rows, against the exact decode of the same bytes.
     */
    @Test
    void q8DecodeReadsUnalignedCodes() {
        try (CudaBackend b = backend(BackendOptions.defaults());
                Arena arena = Arena.ofConfined()) {
            int rows = 41, cols = 2880;
            WeightView w = matrix(arena, WeightFormat.Q8_0, rows, cols, 99);
            CudaWeights.Dense d = upload(b, w);
            byte[] codes = new byte[rows * cols];
            float[][] scale = new float[rows][cols / 32];
            for (int i = 0; i < rows; i++) {
                MemorySegment row = w.data().asSlice(i * w.rowStride(), WeightFormat.Q8_0.rowBytes(cols));
                for (int g = 0; g < cols / 32; g++) {
                    scale[i][g] = F16.toFloat(row.get(LE.I16, (long) g * Q8_0.BLOCK_BYTES));
                    for (int k = 0; k < 32; k++)
                        codes[i * cols + 32 * g + k] =
                                row.get(java.lang.foreign.ValueLayout.JAVA_BYTE, (long) g * Q8_0.BLOCK_BYTES + 2 + k);
                }
            }
            float[][] wr = new float[rows - 1][cols];
            for (int i = 0; i < rows - 1; i++)
                for (int c = 0; c < cols; c++) wr[i][c] = scale[i][c / 32] * codes[i * cols + c + 1];
            CudaWeights.Dense shifted =
                    new CudaWeights.Dense(d.ptr() + 1, d.scales(), rows - 1, cols, WeightFormat.Q8_0);
            float[] x = gaussian(new SplittableRandom(100), cols);
            try (DeviceTensor xt = tensor(b, 1, cols, x);
                    DeviceTensor out = tensor(b, 1, rows - 1, null)) {
                linear(b, shifted, null, xt, out);
                BackendConformanceKit.assertClose(
                        "Q8_0 codes from byte 1", exact(wr, null, x, 1), b.read(out), 1, rows - 1, 1e-4);
            }
        }
    }

    @Test
    void embeddingRowsDecodeBitExactly() {
        try (CudaBackend b = backend(BackendOptions.defaults());
                Arena arena = Arena.ofConfined()) {
            for (WeightFormat f :
                    new WeightFormat[] {WeightFormat.BF16, WeightFormat.F16, WeightFormat.F32, WeightFormat.Q8_0}) {
                int rows = 37, cols = f == WeightFormat.Q8_0 ? 64 : 61;
                WeightView w = matrix(arena, f, rows, cols, 5);
                CudaWeights.Dense d = upload(b, w);
                int[] tokens = {36, 0, 3, 36, 17};
                float[] want = new float[tokens.length * cols];
                for (int t = 0; t < tokens.length; t++) {
                    w.dequantizeRow(0, tokens[t], want, t * cols);
                }
                CudaBuffer ids = b.device.allocate(4L * tokens.length, "test ids");
                try (DeviceTensor out = tensor(b, tokens.length, cols, null)) {
                    ids.copyFrom(MemorySegment.ofArray(tokens));
                    b.dense.pipeline.embed(d.matrix(), ids.address(), 0, tokens.length, at(out));
                    float[] got = b.read(out);
                    for (int i = 0; i < want.length; i++) {
                        assertEquals(
                                Float.floatToRawIntBits(want[i]), Float.floatToRawIntBits(got[i]), f + " value " + i);
                    }
                }
            }
        }
    }

    @Test
    void aLinearOfTheWrongShapeIsAGossException() {
        try (CudaBackend b = backend(BackendOptions.defaults());
                Arena arena = Arena.ofConfined()) {
            CudaWeights.Dense d = upload(b, matrix(arena, WeightFormat.BF16, 4, 8, 1));
            try (DeviceTensor x = tensor(b, 2, 9, null);
                    DeviceTensor out = tensor(b, 2, 4, null)) {
                GossException e = assertThrows(GossException.class, () -> linear(b, d, null, x, out));
                assertEquals("dense: 2x9 times a 4x8 matrix into 2x4", e.getMessage());
            }
        }
    }

    /**
     * gpt-oss's router at prefill: 32 rows, fewer than {@link DenseLauncher#GEMM_MIN_ROWS}, take the matvec at 512 tokens
     * with a block row per 8 tokens (64), one warp per row; the output against the exact decode at 1e-4.
     */
    @Test
    void aRouterOfFewRowsTakesTheMatvecOverATokenGridAtPrefill() {
        try (CudaBackend b = backend(BackendOptions.defaults());
                Arena arena = Arena.ofConfined()) {
            int rows = 32, cols = 2880, T = 512;
            WeightView w = matrix(arena, WeightFormat.F32, rows, cols, 77);
            CudaWeights.Dense d = upload(b, w);
            assertEquals(io.gossgpu.device.DensePipeline.Path.MATVEC, b.dense.pipeline.path(WeightFormat.F32, rows, T));
            assertEquals(
                    io.gossgpu.device.DensePipeline.Path.GEMM,
                    b.dense.pipeline.path(WeightFormat.F32, DenseLauncher.GEMM_MIN_ROWS, T));
            float[][] wr = new float[rows][cols];
            for (int i = 0; i < rows; i++) {
                w.dequantizeRow(0, i, wr[i], 0);
            }
            SplittableRandom r = new SplittableRandom(78);
            float[] x = new float[T * cols];
            for (int i = 0; i < x.length; i++) {
                x[i] = (float) r.nextGaussian();
            }
            float[] want = new float[T * rows];
            for (int t = 0; t < T; t++) {
                for (int i = 0; i < rows; i++) {
                    double s = 0;
                    for (int c = 0; c < cols; c++) {
                        s += (double) wr[i][c] * x[t * cols + c];
                    }
                    want[t * rows + i] = (float) s;
                }
            }
            try (DeviceTensor xt = tensor(b, T, cols, x);
                    DeviceTensor out = tensor(b, T, rows, null)) {
                linear(b, d, null, xt, out);
                BackendConformanceKit.assertClose("router 32x2880, T=512", want, b.read(out), T, rows, 1e-4);
            }
        }
    }

    /** The Q8_0 decode launch: warps per row, blocks (at most 3 of 8 warps per multiprocessor), shared memory. */
    @Test
    void q8DecodeSplitsFewRowsAndCapsItsGrid() {
        assertEquals(
                new DenseShapes.Shape(io.gossgpu.device.Grid.of(360, 1, 256), List.of(4L * 2880 + 32), 1),
                DenseLauncher.q8DecodeShape(
                        2880, 2880, 8, 132)); // gpt-oss-20b's attention output on an H200: 2880 warps of 3168
        assertEquals(
                new DenseShapes.Shape(io.gossgpu.device.Grid.of(396, 1, 256), List.of(4L * 2880 + 32), 1),
                DenseLauncher.q8DecodeShape(5120, 2880, 8, 132)); // QKV: 640 groups over the 396 resident blocks
        assertEquals(
                new DenseShapes.Shape(io.gossgpu.device.Grid.of(396, 1, 256), List.of(4L * 2880 + 32), 1),
                DenseLauncher.q8DecodeShape(201088, 2880, 8, 132)); // logits
        assertEquals(
                new DenseShapes.Shape(io.gossgpu.device.Grid.of(250, 1, 256), List.of(4L * 4096 + 32), 2),
                DenseLauncher.q8DecodeShape(1000, 4096, 8, 132));
        assertEquals(
                new DenseShapes.Shape(io.gossgpu.device.Grid.of(5, 1, 256), List.of(4L * 2880 + 32), 8),
                DenseLauncher.q8DecodeShape(5, 2880, 8, 4));
        assertEquals(
                new DenseShapes.Shape(io.gossgpu.device.Grid.of(32, 1, 96), List.of(4L * 2880 + 16), 1),
                DenseLauncher.q8DecodeShape(300, 2880, 3, 4));
        assertTrue(DenseLauncher.q8Decode(WeightFormat.Q8_0, 8192, 1));
        assertTrue(!DenseLauncher.q8Decode(WeightFormat.Q8_0, 8224, 1)
                && !DenseLauncher.q8Decode(WeightFormat.Q8_0, 2880, 2)
                && !DenseLauncher.q8Decode(WeightFormat.BF16, 2880, 1));
    }

    /** The {@code #define} NAME's integer value in backend-cuda/kernels. */
    static int define(String sources, String name) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^#define " + name + " +(\\d+)")
                .matcher(sources);
        assertTrue(m.find(), name + " in backend-cuda/kernels");
        return Integer.parseInt(m.group(1));
    }

    /**
     * DenseLauncher's copies of dense.cu's numbers: the widest staged x (the kernel and the launch must pick the same
     * path), tokens per weight load, and the warps an SM keeps of dense_matvec_q8_0 at its register cap (three blocks
     * of 8 warps: 65536 registers / (DENSE_Q8_REGS · 256)).
     */
    @Test
    void theLauncherMirrorsDenseCu() throws java.io.IOException {
        String cu = CudaKernelSignaturesTest.sources();
        assertEquals(define(cu, "DENSE_Q8_T1_MAXK"), DenseLauncher.Q8_DECODE_MAX_COLS);
        assertEquals(define(cu, "DENSE_MATVEC_MAXT"), DenseLauncher.MATVEC_MAXT);
        assertEquals(8 * (65536 / (define(cu, "DENSE_Q8_REGS") * 256)), DenseLauncher.Q8_DECODE_WARPS_PER_SM);
    }

    @Test
    void fewRowsAreSplitOverTheWarpsOfABlock() {
        assertEquals(8, DenseLauncher.matvecSplit(32, 8, 132)); // gpt-oss-20b's router on an H100
        assertEquals(1, DenseLauncher.matvecSplit(2880, 8, 132));
        assertEquals(1, DenseLauncher.matvecSplit(5120, 8, 132));
        assertEquals(1, DenseLauncher.matvecSplit(5, 3, 4)); // 3 warps: no power of two above 1 divides them
        assertEquals(2, DenseLauncher.matvecSplit(20, 8, 4));
        assertEquals(8, DenseLauncher.matvecSplit(5, 8, 4));
        assertEquals(1, DenseLauncher.matvecSplit(33, 8, 4));
        assertEquals(
                1,
                DenseLauncher.matvecSplit(32L * 64, 8, 132)); // the router over 512 tokens: 64 block rows of 8 tokens
    }

    @Test
    void denseKnobsAreValidated() {
        assertEquals("goss.cuda.dense.prefill.min.t", CudaKnobs.DENSE_PREFILL_MIN_T.propertyName());
        assertEquals("GOSS_CUDA_DENSE_TILE_T", CudaKnobs.DENSE_TILE_T.envName());
        assertEquals(9, CudaKnobs.DENSE_PREFILL_MIN_T.defaultValue());
        assertEquals(128, CudaKnobs.DENSE_TILE_R.parse("128", Integer.MAX_VALUE, null));
        Object[][] bad = {
            {CudaKnobs.DENSE_TILE_T, "48", "one of 32, 64"},
            {CudaKnobs.DENSE_TILE_T, "128", "one of 32, 64"},
            {CudaKnobs.DENSE_TILE_R, "32", "one of 64, 128"},
            {CudaKnobs.DENSE_PREFILL_MIN_T, "0", "an integer of at least 1"},
            {CudaKnobs.DENSE_PREFILL_MIN_T, "x", "an integer of at least 1"}
        };
        for (Object[] k : bad) {
            io.gossgpu.backend.Knob knob = (io.gossgpu.backend.Knob) k[0];
            GossException e =
                    assertThrows(GossException.class, () -> knob.parse((String) k[1], Integer.MAX_VALUE, null));
            assertTrue(
                    e.getMessage().startsWith("invalid " + knob.envName() + "=" + k[1] + ": ")
                            && e.getMessage().endsWith(" must be " + k[2]),
                    e.getMessage());
        }
        assertTrue(CudaKnobs.ALL.containsAll(
                java.util.List.of(CudaKnobs.DENSE_PREFILL_MIN_T, CudaKnobs.DENSE_TILE_T, CudaKnobs.DENSE_TILE_R)));
    }

    @Test
    void deviceBytesCountsDenseMatricesAsStored() {
        ModelConfig c = TestModelPresets.tiny();
        try (Checkpoint ck = new TestModelGenerator(c, 1).inMemory()) {
            long h = c.hiddenSize(), q = c.qDim(), kv = c.kvDim(), e = c.numExperts(), i = c.intermediateSize();
            long dense =
                    2 * (2L * c.vocabSize() * h + c.numHiddenLayers() * ((q + 2 * kv) * h + h * q + e * h)); // BF16
            long vectors = 4
                    * (h
                            + c.numHiddenLayers()
                                    * (2 * h + c.numAttentionHeads() + q + 2 * kv + h + e + e * 2 * i + e * h));
            long experts = c.numHiddenLayers()
                    * e
                    * (2 * i * h / 2 + 2 * i * h / 32 + h * i / 2 + h * i / 32); // codes + scales
            assertEquals(dense + vectors + experts, CudaWeights.deviceBytes(ModelWeights.of(ck)));
        }
    }
}
