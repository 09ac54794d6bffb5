package io.gossgpu.opencl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.lwjgl.opencl.CL10.*;

import io.gossgpu.GossException;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.DeviceTensor;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.conformance.BackendConformanceKit;
import io.gossgpu.generate.Session;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.reference.ReferenceBackend;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.io.IOException;
import java.nio.IntBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.lwjgl.PointerBuffer;
import org.lwjgl.system.MemoryStack;

/** Device listing and selection, knob validation, wrapping an application's context/queue, and the unavailable path. */
class OpenClInfraTest {
    private static void requireDevice() {
        BackendConformanceKit.requireAvailable(new OpenClBackendProvider());
    }

    @Test
    void listsDevicesAndMarksTheSelectedOne() {
        requireDevice();
        List<String> lines = OpenCl.deviceListing(null);
        assertFalse(lines.isEmpty());
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("* [0]") || l.startsWith("* [")), lines.toString());
        List<OpenCl.DeviceInfo> devs = OpenCl.devices();
        assertEquals(devs.get(0), OpenCl.select(devs, "0"));
        OpenCl.DeviceInfo d = devs.get(devs.size() - 1);
        assertEquals(
                d,
                OpenCl.select(
                        devs,
                        d.name().substring(0, Math.min(6, d.name().length())).toUpperCase()));
        GossException e = assertThrows(GossException.class, () -> OpenCl.select(devs, "" + devs.size()));
        assertTrue(e.getMessage().contains("does not exist") && e.getMessage().contains(d.name()), e.getMessage());
        e = assertThrows(GossException.class, () -> OpenCl.select(devs, "no-such-device-xyz"));
        assertTrue(
                e.getMessage().contains("no-such-device-xyz") && e.getMessage().contains("GOSS_OPENCL_DEVICE"),
                e.getMessage());
    }

    @Test
    void invalidKnobsNameTheKnobTheValueAndTheLimit() {
        requireDevice();
        long max = OpenCl.devices().get(0).maxWorkGroupSize();
        for (String[] bad : new String[][] {
            {"GOSS_OPENCL_DENSE_WG", "3"},
            {"GOSS_OPENCL_ATTENTION_WG", "" + (4 * max)},
            {"GOSS_OPENCL_MOE_WG", "lots"},
            {"GOSS_OPENCL_DENSE_TILE_T", "0"},
            {"GOSS_OPENCL_ARGMAX_WG", "0"}
        }) {
            GossException e = assertThrows(
                    GossException.class,
                    () -> OpenClBackend.create(BackendOptions.defaults().with(bad[0], bad[1])));
            assertTrue(e.getMessage().startsWith("invalid " + bad[0] + "=" + bad[1] + ": "), e.getMessage());
            if (!bad[0].endsWith("TILE_T"))
                assertTrue(e.getMessage().contains("max work-group size is " + max), e.getMessage());
        }
    }

    /**
     * The smallest and a large work-group size and tile change nothing but speed: whole-model logits still
     * match. One backend also sends every batch through the per-slot MoE kernels (MOE_PREFILL_MIN_T huge), the other
     * even decode through the expert-grouped ones (MOE_PREFILL_MIN_T 1). Both backends are open at once, their sessions
     * interleaved: knobs are values of each backend, not process state.
     */
    @Test
    void unusualKnobValuesGiveTheSameLogits() {
        requireDevice();
        try (Checkpoint ck = new TestModelGenerator(TestModelPresets.tiny(), 41).inMemory()) {
            ModelWeights w = ModelWeights.of(ck);
            int[] toks = new int[12];
            SplittableRandom r = new SplittableRandom(3);
            for (int i = 0; i < toks.length; i++) toks[i] = r.nextInt(w.config().vocabSize());
            Backend ref = new ReferenceBackend();
            float[] want;
            try (LoadedWeights lw = ref.loadWeights(w);
                    Session s = new Session(ref, lw, 16)) {
                want = s.prefillAllLogits(toks);
            }
            long big = Math.min(256, Integer.highestOneBit((int)
                    Math.min(1 << 20, OpenCl.devices().get(0).maxWorkGroupSize())));
            BackendOptions small = knobs(1, 1, 1000000), large = knobs((int) big, 16, 1);
            try (OpenClBackend a = OpenClBackend.create(small);
                    OpenClBackend b = OpenClBackend.create(large);
                    LoadedWeights la = a.loadWeights(w);
                    LoadedWeights lb = b.loadWeights(w);
                    Session sa = new Session(a, la, 16);
                    Session sb = new Session(b, lb, 16)) {
                assertEquals(1, a.knobs().get("GOSS_OPENCL_ATTENTION_WG"));
                assertEquals((int) big, b.knobs().get("GOSS_OPENCL_ATTENTION_WG"));
                assertEquals(12, a.knobs().size());
                assertEquals(1000000, a.knobs().get("GOSS_OPENCL_MOE_PREFILL_MIN_T"));
                assertEquals(1, b.knobs().get("GOSS_OPENCL_MOE_PREFILL_MIN_T"));
                float[] gotA = new float[want.length], gotB = new float[want.length];
                int vocab = w.config().vocabSize();
                for (int i = 0; i < toks.length; i += 4) { // chunks of 4, alternating between the two backends
                    int[] chunk = java.util.Arrays.copyOfRange(toks, i, Math.min(toks.length, i + 4));
                    System.arraycopy(sa.prefillAllLogits(chunk), 0, gotA, i * vocab, chunk.length * vocab);
                    System.arraycopy(sb.prefillAllLogits(chunk), 0, gotB, i * vocab, chunk.length * vocab);
                }
                BackendConformanceKit.assertClose("logits with every WG = 1", want, gotA, toks.length, vocab, 1e-3);
                BackendConformanceKit.assertClose(
                        "logits with every WG = " + big, want, gotB, toks.length, vocab, 1e-3);
                assertEquals(1, a.knobs().get("GOSS_OPENCL_ATTENTION_WG"), "unchanged by the other backend");
            }
        }
    }

    /**
     * Weights larger than the device are refused before anything is uploaded, naming both sizes. The views are
     * gpt-oss-120b's shapes over one sparse 2 GiB file (they overlap; only shapes and formats are read).
     */
    @Test
    void weightsLargerThanTheDeviceAreAGossExceptionBeforeAnyUpload(@org.junit.jupiter.api.io.TempDir Path dir)
            throws Exception {
        requireDevice();
        io.gossgpu.model.ModelConfig c = io.gossgpu.model.ModelConfig.gptOss120b();
        Path f = dir.resolve("sparse.bin");
        try (java.io.RandomAccessFile raf = new java.io.RandomAccessFile(f.toFile(), "rw")) {
            raf.setLength(2L << 30);
        }
        try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined();
                java.nio.channels.FileChannel ch =
                        java.nio.channels.FileChannel.open(f, java.nio.file.StandardOpenOption.READ)) {
            java.lang.foreign.MemorySegment seg =
                    ch.map(java.nio.channels.FileChannel.MapMode.READ_ONLY, 0, 2L << 30, arena);
            java.util.function.BiFunction<Integer, Integer, io.gossgpu.model.WeightView> dense =
                    (rows, cols) -> new io.gossgpu.model.WeightView(
                            "w",
                            io.gossgpu.model.WeightFormat.BF16,
                            1,
                            rows,
                            cols,
                            seg,
                            0,
                            2L * rows * cols,
                            2L * cols,
                            1,
                            null,
                            0,
                            0,
                            0);
            java.util.function.BiFunction<Integer, Integer, io.gossgpu.model.WeightView> perExpert =
                    (e, n) -> new io.gossgpu.model.WeightView(
                            "b", io.gossgpu.model.WeightFormat.BF16, e, 1, n, seg, 0, 2L * n, 2L * n, 1, null, 0, 0, 0);
            int h = c.hiddenSize(), e = c.numExperts(), inter = c.intermediateSize();
            java.util.function.BiFunction<Integer, Integer, io.gossgpu.model.WeightView> mx = (rows, cols) -> {
                long rb = io.gossgpu.model.WeightFormat.MXFP4_GGML.rowBytes(cols);
                return new io.gossgpu.model.WeightView(
                        "x",
                        io.gossgpu.model.WeightFormat.MXFP4_GGML,
                        e,
                        rows,
                        cols,
                        seg,
                        0,
                        rb * rows,
                        rb,
                        1,
                        null,
                        0,
                        0,
                        0);
            };
            List<io.gossgpu.model.LayerWeights> layers = new ArrayList<>();
            for (int l = 0; l < c.numHiddenLayers(); l++)
                layers.add(new io.gossgpu.model.LayerWeights(
                        dense.apply(1, h),
                        dense.apply(c.qDim(), h),
                        dense.apply(1, c.qDim()),
                        dense.apply(c.kvDim(), h),
                        dense.apply(1, c.kvDim()),
                        dense.apply(c.kvDim(), h),
                        dense.apply(1, c.kvDim()),
                        dense.apply(1, c.numAttentionHeads()),
                        dense.apply(h, c.qDim()),
                        dense.apply(1, h),
                        dense.apply(1, h),
                        dense.apply(e, h),
                        dense.apply(1, e),
                        mx.apply(inter, h),
                        perExpert.apply(e, inter),
                        mx.apply(inter, h),
                        perExpert.apply(e, inter),
                        mx.apply(h, inter),
                        perExpert.apply(e, h)));
            ModelWeights w = new ModelWeights(
                    c, dense.apply(c.vocabSize(), h), layers, dense.apply(1, h), dense.apply(c.vocabSize(), h));
            long need = OpenClWeights.deviceBytes(w);
            assertTrue(need > 55L << 30 && need < 70L << 30, "120b needs " + need);
            OpenCl.DeviceInfo d = OpenCl.devices().get(0);
            org.junit.jupiter.api.Assumptions.assumeTrue(
                    d.globalMemBytes() < need, "this device could hold gpt-oss-120b");
            try (OpenClBackend b =
                    OpenClBackend.create(BackendOptions.defaults().with(OpenCl.DEVICE, "0"))) {
                GossException ex = assertThrows(GossException.class, () -> b.loadWeights(w));
                assertTrue(
                        ex.getMessage().contains(io.gossgpu.backend.KvCacheSpec.humanBytes(need))
                                && ex.getMessage().contains(d.name()),
                        ex.getMessage());
            }
        }
    }

    @Test
    void wrapsAnApplicationsContextAndQueue() {
        requireDevice();
        OpenCl.DeviceInfo d = OpenCl.devices().get(0);
        long ctx, q;
        try (MemoryStack stack = MemoryStack.stackPush()) {
            IntBuffer rc = stack.mallocInt(1);
            PointerBuffer props = stack.mallocPointer(3)
                    .put(CL_CONTEXT_PLATFORM)
                    .put(d.platform())
                    .put(0)
                    .flip();
            ctx = clCreateContext(props, d.device(), null, 0, rc);
            assertEquals(CL_SUCCESS, rc.get(0));
            q = clCreateCommandQueue(ctx, d.device(), 0, rc);
            assertEquals(CL_SUCCESS, rc.get(0));
        }
        try (OpenClBackend b = OpenClBackend.wrap(ctx, q, BackendOptions.defaults())) {
            assertEquals(d.name(), b.device().name());
            DeviceTensor x = b.allocate(2, 3), y = b.allocate(2, 3);
            b.write(x, new float[] {1, 2, 3, 4, 5, 6});
            b.write(y, new float[] {10, 20, 30, 40, 50, 60});
            b.add(x, y, x);
            assertArrayEquals(new float[] {11, 22, 33, 44, 55, 66}, b.read(x));
            x.close();
            y.close();
        }
        // the backend released only its own references: ours are still valid
        assertEquals(CL_SUCCESS, clFinish(q));
        assertEquals(CL_SUCCESS, clReleaseCommandQueue(q));
        assertEquals(CL_SUCCESS, clReleaseContext(ctx));
        assertThrows(GossException.class, () -> OpenClBackend.wrap(0, 0, BackendOptions.defaults()));
    }

    /** Every work-group size {@code wg}, both tiles {@code tile}, and the grouped MoE from {@code groupMin} tokens. */
    private static BackendOptions knobs(int wg, int tile, int groupMin) {
        BackendOptions o = BackendOptions.defaults();
        for (io.gossgpu.backend.Knob k : List.of(
                OpenClKnobs.DENSE_WG,
                OpenClKnobs.RMSNORM_WG,
                OpenClKnobs.ATTENTION_WG,
                OpenClKnobs.MOE_WG,
                OpenClKnobs.ARGMAX_WG)) o = o.with(k, wg);
        return o.with(OpenClKnobs.DENSE_TILE_T, tile)
                .with(OpenClKnobs.MOE_TILE_T, tile)
                .with(OpenClKnobs.MOE_PREFILL_MIN_T, groupMin);
    }

    /** A child JVM with no OpenCL platform (empty ICD directory) or no loadable libOpenCL gets one line, no exception. */
    @Test
    void noPlatformIsOneLineNotAnException() throws Exception {
        Path empty = Files.createTempDirectory("no-icd");
        try {
            Map<String, String> noIcd = Map.of("OCL_ICD_VENDORS", empty.toString(), "OCL_ICD_FILENAMES", "");
            String out = child(noIcd, List.of());
            assertTrue(out.contains("available=false"), out);
            assertTrue(out.contains("reason=" + OpenCl.NO_PLATFORM), out);
            assertTrue(out.contains("listing=OpenCL unavailable: " + OpenCl.NO_PLATFORM), out);
            String out2 = child(Map.of(), List.of("-Dgoss.opencl.library=" + empty.resolve("libOpenCL.so.1")));
            assertTrue(out2.contains("available=false") && out2.contains("reason=" + OpenCl.NO_PLATFORM), out2);
            assertFalse(out.contains("Exception") || out2.contains("Exception"), out + out2);
        } finally {
            Files.deleteIfExists(empty);
        }
    }

    private static String child(Map<String, String> env, List<String> jvmArgs)
            throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(jvmArgs);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), ProbeMain.class.getName()));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().putAll(env);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), out);
        return out;
    }
}
