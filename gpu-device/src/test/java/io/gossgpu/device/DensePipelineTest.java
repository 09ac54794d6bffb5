package io.gossgpu.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.gossgpu.GossException;
import io.gossgpu.device.DensePipeline.Matrix;
import io.gossgpu.device.DensePipeline.Path;
import io.gossgpu.device.DenseShapes.Shape;
import io.gossgpu.device.OpParams.DenseParams;
import io.gossgpu.device.OpParams.EmbedParams;
import io.gossgpu.model.WeightFormat;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;

/**
 * The dense op's choices, made once for every API ({@link DensePipeline}), over a launcher that records its launches:
 * the matvec below the prefill threshold, the GEMM from it, the tensor-core GEMM for a format that has one; the buffers
 * in the kernels' order (scales and three outputs only where the API's kernels take them, the matrix in place of a
 * missing bias); the params as each API's kernels read them; a shape mismatch as one line. Needs no device.
 */
class DensePipelineTest {
    /** One launch: the kernel, its buffers ("name@offset"), group memory, params and grid. */
    record Launched(String kernel, List<String> buffers, List<Long> locals, KernelParams params, Grid grid) {}

    /** A launcher whose buffers are names and whose kernels are any name asked for. */
    static final class Recorder implements Launcher<String> {
        final List<String> looked = new ArrayList<>();
        final List<Launched> launched = new ArrayList<>();

        @Override
        public DeviceKernel kernel(String name) {
            looked.add(name);
            return new DeviceKernel() {
                public String name() {
                    return name;
                }

                public int maxThreads() {
                    return 1024;
                }
            };
        }

        @Override
        public KernelLaunch<String> launch(DeviceKernel kernel) {
            List<String> buffers = new ArrayList<>();
            List<Long> locals = new ArrayList<>();
            return new KernelLaunch<>() {
                public KernelLaunch<String> buffer(String b, long offset) {
                    buffers.add(b + "@" + offset);
                    return this;
                }

                public KernelLaunch<String> local(long bytes) {
                    locals.add(bytes);
                    return this;
                }

                public void run(KernelParams p, Grid g) {
                    launched.add(new Launched(kernel.name(), buffers, locals, p, g));
                }
            };
        }

        Launched last() {
            return launched.getLast();
        }
    }

    private static String lower(WeightFormat f) {
        return f.name().toLowerCase(Locale.ROOT);
    }

    /** Like CUDA: entry points per format, scales, three outputs, a GEMM from 9 tokens, BF16 on tensor cores, a split matvec. */
    static DenseShapes perFormat() {
        return new DenseShapes(
                List.of(WeightFormat.F32, WeightFormat.BF16),
                f -> "embed_" + lower(f),
                f -> "dense_matvec_" + lower(f),
                f -> "dense_gemm_" + lower(f) + "_64x64",
                f -> f == WeightFormat.BF16 ? "dense_gemm_mma_bf16" : null,
                9,
                true,
                true,
                0,
                (cols, tokens) -> Shape.of(Grid.of(tokens, 256)),
                (rows, tokens) -> new Shape(Grid.of(rows, 256), List.of(), rows < 8 ? 4 : 1),
                (rows, tokens) -> Shape.of(Grid.of(rows, tokens, 256)),
                (rows, tokens) -> Shape.of(Grid.of(rows, tokens, 128)));
    }

    /** Like OpenCL: one kernel for every format and batch, group memory, the vector switch. */
    static DenseShapes oneKernel() {
        return new DenseShapes(
                List.of(),
                f -> "embed",
                f -> "dense",
                null,
                null,
                1,
                false,
                false,
                1,
                (cols, tokens) -> Shape.of(Grid.items(cols, tokens)),
                (rows, tokens) -> Shape.of(Grid.of(rows, tokens, 64), 256L),
                null,
                null);
    }

    @Test
    void theMatvecBelowThePrefillThresholdTheGemmFromItTensorCoresWhereTheFormatHasThem() {
        Recorder r = new Recorder();
        DensePipeline<String> p = new DensePipeline<>(r, perFormat());
        assertEquals(
                List.of(
                        "embed_f32",
                        "dense_matvec_f32",
                        "dense_gemm_f32_64x64",
                        "embed_bf16",
                        "dense_matvec_bf16",
                        "dense_gemm_bf16_64x64",
                        "dense_gemm_mma_bf16"),
                r.looked,
                "every kernel looked up when the pipeline is made");
        Matrix<String> f32 = new Matrix<>("w", 0, "s", WeightFormat.F32, 0, 0, 16, 32),
                bf16 = new Matrix<>("w", 0, "s", WeightFormat.BF16, 0, 0, 16, 32);
        for (int t : new int[] {1, 8, 9, 100}) {
            p.run(f32, null, "x", 0, t, "out");
            assertEquals(
                    t < 9 ? "dense_matvec_f32" : "dense_gemm_f32_64x64",
                    r.last().kernel(),
                    "F32, T=" + t);
            p.run(bf16, "b", "x", 0, t, "out");
            assertEquals(
                    t < 9 ? "dense_matvec_bf16" : "dense_gemm_mma_bf16",
                    r.last().kernel(),
                    "BF16, T=" + t);
            assertEquals(t < 9 ? Path.MATVEC : Path.MMA, p.path(WeightFormat.BF16, 16, t));
        }
        assertEquals(
                List.of("dense_gemm_mma_bf16"),
                p.kernels(Path.MMA).stream().map(DeviceKernel::name).toList());
        assertThrows(
                GossException.class,
                () -> p.run(new Matrix<>("w", 0, "s", WeightFormat.Q8_0, 0, 0, 4, 32), null, "x", 0, 1, "out"));
    }

    /** Like CUDA with its GEMM-tile threshold: a matrix of fewer than 64 rows (the router) takes the matvec at every T. */
    @Test
    void matricesOfFewerRowsThanGemmMinRowsTakeTheMatvecAtEveryBatch() {
        Recorder r = new Recorder();
        DenseShapes d = perFormat();
        DensePipeline<String> p = new DensePipeline<>(
                r,
                new DenseShapes(
                        d.formats(),
                        d.embed(),
                        d.matvec(),
                        d.gemm(),
                        d.mma(),
                        9,
                        64,
                        true,
                        true,
                        0,
                        d.embedShape(),
                        (rows, tokens) -> Shape.of(Grid.of(rows, (tokens + 7) / 8, 256)),
                        d.gemmShape(),
                        d.mmaShape()));
        for (WeightFormat f : new WeightFormat[] {WeightFormat.F32, WeightFormat.BF16}) {
            String name = f.name().toLowerCase(java.util.Locale.ROOT);
            p.run(new Matrix<>("w", 0, "s", f, 0, 0, 32, 64), null, "x", 0, 512, "out");
            assertEquals("dense_matvec_" + name, r.last().kernel(), "32 rows, " + f);
            assertEquals(Grid.of(32, 64, 256), r.last().grid(), "the matvec's grid for 512 tokens");
            assertEquals(Path.MATVEC, p.path(f, 63, 512));
            p.run(new Matrix<>("w", 0, "s", f, 0, 0, 64, 64), null, "x", 0, 512, "out");
            assertEquals(
                    f == WeightFormat.BF16 ? "dense_gemm_mma_bf16" : "dense_gemm_f32_64x64",
                    r.last().kernel(),
                    "64 rows, " + f);
        }
        assertThrows(
                IllegalArgumentException.class,
                () -> new DenseShapes(
                        d.formats(),
                        d.embed(),
                        d.matvec(),
                        d.gemm(),
                        d.mma(),
                        9,
                        -1,
                        true,
                        true,
                        0,
                        d.embedShape(),
                        d.matvecShape(),
                        d.gemmShape(),
                        d.mmaShape()));
    }

    @Test
    void buffersAndParamsAreWhatEachApisKernelsTake() {
        Recorder r = new Recorder();
        DensePipeline<String> cuda = new DensePipeline<>(r, perFormat());
        Matrix<String> qkv = new Matrix<>("w", 0, "s", WeightFormat.F32, 0, 0, 6, 32);
        cuda.run(qkv, null, "x", 0, 2, "q", 2, "k", 2, "v"); // a fused QKV of few rows: the matvec split 4 ways
        Launched l = r.last();
        assertEquals(
                List.of("w@0", "s@0", "w@0", "x@0", "q@0", "k@0", "v@0"),
                l.buffers(),
                "the matrix again for the missing bias");
        assertEquals(new DenseParams(0, 0, 2, 32, 6, 0, 2, 2, 4, 0, 0), l.params());
        assertEquals(Grid.of(6, 256), l.grid());

        DensePipeline<String> ocl = new DensePipeline<>(r, oneKernel());
        Matrix<String> unembedding = new Matrix<>("u", 0, null, null, 3, 66, 50, 32);
        ocl.run(unembedding, null, "x", 5, 3, "logits"); // the logits of rows 5.. of x
        l = r.last();
        assertEquals("dense", l.kernel());
        assertEquals(List.of("u@0", "u@0", "x@0", "logits@0"), l.buffers());
        assertEquals(List.of(256L), l.locals());
        assertEquals(new DenseParams(3, 0, 3, 32, 50, 5, 50, 0, 1, 1, 66), l.params());
        assertEquals(Path.MATVEC, ocl.path(null, 50, 1000), "no GEMM: the one kernel takes every batch");
        assertThrows(
                IllegalArgumentException.class, () -> ocl.run(unembedding, null, "x", 0, 1, "a", 10, "b", 10, "c"));

        ocl.embed(new Matrix<>("table", 16, null, null, 2, 64, 100, 32), "ids", 8, 4, "out");
        l = r.last();
        assertEquals(List.of("table@16", "ids@8", "out@0"), l.buffers());
        assertEquals(new EmbedParams(4, 32, 2), l.params());
        assertEquals(Grid.items(32, 4), l.grid());
        cuda.embed(new Matrix<>("table", 0, "sc", WeightFormat.BF16, 0, 0, 100, 32), "ids", 0, 4, "out");
        assertEquals("embed_bf16", r.last().kernel());
        assertEquals(List.of("table@0", "sc@0", "ids@0", "out@0"), r.last().buffers());
    }

    @Test
    void aDenseLayerOfTheWrongShapeIsOneLine() {
        DensePipeline<String> p = new DensePipeline<>(new Recorder(), oneKernel());
        Matrix<String> m = new Matrix<>("w", 0, null, null, 0, 16, 4, 8);
        GossException e = assertThrows(GossException.class, () -> p.dense(m, null, "x", 2, 9, "out", 2, 4));
        assertEquals("dense: 2x9 times a 4x8 matrix into 2x4", e.getMessage());
    }
}
