package io.gossgpu.model.safetensors;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.FormatProbes;
import io.gossgpu.model.Json;
import io.gossgpu.model.LayerWeights;
import io.gossgpu.model.LoadOptions;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelFormat;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.model.TensorData;
import io.gossgpu.model.WeightView;
import io.gossgpu.testmodel.SafetensorsWriter;
import io.gossgpu.testmodel.TensorSpec;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SafetensorsRoundTripTest {
    static final ModelConfig TINY = TestModelPresets.tiny();
    static final long SEED = 11;

    @TempDir
    Path tmp;

    @Test
    void originalRoundTripKeepsEveryByteAndTheConfig() throws IOException {
        TestModelGenerator g = new TestModelGenerator(TINY, SEED);
        Path dir = tmp.resolve("original");
        SafetensorsWriter.writeOriginal(g, dir);
        assertEquals(ModelFormat.ORIGINAL, Checkpoint.detect(dir));
        assertFalse(FormatProbes.isHfConfig(dir.resolve("config.json")));
        try (Checkpoint ckpt = Checkpoint.open(dir, LoadOptions.defaults());
                Arena arena = Arena.ofConfined()) {
            assertEquals(ModelFormat.ORIGINAL, ckpt.format());
            assertEquals(TINY, ckpt.config());
            List<TensorSpec> specs = g.originalTensors();
            assertEquals(
                    specs.stream().map(TensorSpec::name).toList(),
                    List.copyOf(ckpt.tensors().keySet()),
                    "tensors in file order");
            for (TensorSpec s : specs) {
                TensorData t = ckpt.tensor(s.name());
                assertEquals(s.dtype(), t.dtype(), s.name());
                assertArrayEquals(s.shape(), t.shape(), s.name());
                MemorySegment expect = arena.allocate(s.byteSize());
                g.fill(s, expect);
                assertEquals(-1, expect.mismatch(t.bytes()), s.name());
                assertTrue(t.bytes().isReadOnly(), s.name());
            }
            assertEquals(96, ((Number) ckpt.metadata().get("hidden_size")).intValue());
            assertFalse(ckpt.metadata().containsKey("rms_norm_eps"));
            ModelWeights.of(ckpt);
        }
    }

    @Test
    void hfShardedRoundTripGivesTheSameCanonicalWeightsAsOriginal() throws IOException {
        TestModelGenerator g = new TestModelGenerator(TINY, SEED);
        Path orig = tmp.resolve("original"), hf = tmp.resolve("hf");
        SafetensorsWriter.writeOriginal(g, orig);
        SafetensorsWriter.writeHf(g, hf, 150_000);
        long shards;
        try (Stream<Path> s = Files.list(hf)) {
            shards = s.filter(p -> p.getFileName().toString().matches("model-\\d{5}-of-\\d{5}\\.safetensors"))
                    .count();
        }
        assertTrue(shards >= 3, "expected several shards, got " + shards);
        assertTrue(FormatProbes.isHfConfig(hf.resolve("config.json")));
        assertEquals(ModelFormat.HF, Checkpoint.detect(hf));
        try (Checkpoint a = Checkpoint.open(orig, LoadOptions.defaults());
                Checkpoint b = Checkpoint.open(hf, LoadOptions.defaults());
                Checkpoint mem = g.inMemory()) {
            assertEquals(ModelFormat.HF, b.format());
            assertEquals(TINY, b.config());
            assertEquals("gpt_oss", b.metadata().get("model_type"));
            assertEquals(Map.of("quant_method", "mxfp4"), b.metadata().get("quantization_config"));
            assertEquals(
                    TestModelPresets.tiny().numHiddenLayers(),
                    ((List<?>) b.metadata().get("layer_types")).size());
            ModelWeights wa = ModelWeights.of(a), wb = ModelWeights.of(b), wm = ModelWeights.of(mem);
            assertSameWeights(wm, wa);
            assertSameWeights(wa, wb);
            TensorData gateUp = b.tensor("model.layers.2.mlp.experts.gate_up_proj_blocks");
            assertArrayEquals(new long[] {6, 320, 3, 16}, gateUp.shape());
        }
    }

    @Test
    void singleFileHfAndNoMmapReadTheSame() {
        TestModelGenerator g = new TestModelGenerator(TINY, SEED);
        Path hf = tmp.resolve("hf1");
        SafetensorsWriter.writeHf(g, hf, Long.MAX_VALUE);
        assertTrue(Files.isRegularFile(hf.resolve("model-00001-of-00001.safetensors")));
        Path orig = tmp.resolve("original");
        SafetensorsWriter.writeOriginal(g, orig);
        try (Checkpoint a = Checkpoint.open(orig, new LoadOptions(false));
                Checkpoint b = Checkpoint.open(hf, new LoadOptions(false));
                Checkpoint c = Checkpoint.open(hf, LoadOptions.defaults())) {
            assertFalse(a.tensor("embedding.weight").bytes().isMapped());
            assertTrue(c.tensor("model.embed_tokens.weight").bytes().isMapped());
            assertSameWeights(ModelWeights.of(a), ModelWeights.of(b));
            assertSameWeights(ModelWeights.of(b), ModelWeights.of(c));
        }
    }

    @Test
    void hfWithoutIndexReadsASingleModelSafetensors() throws IOException {
        TestModelGenerator g = new TestModelGenerator(TINY, SEED);
        Path hf = tmp.resolve("hf");
        SafetensorsWriter.writeHf(g, hf, Long.MAX_VALUE);
        Files.delete(hf.resolve(ShardIndex.FILE));
        Files.move(hf.resolve("model-00001-of-00001.safetensors"), hf.resolve("model.safetensors"));
        SafetensorsWriter.writeOriginal(g, tmp.resolve("original"));
        assertEquals(ModelFormat.HF, Checkpoint.detect(hf));
        try (Checkpoint a = Checkpoint.open(tmp.resolve("original"), LoadOptions.defaults());
                Checkpoint b = Checkpoint.open(hf, LoadOptions.defaults())) {
            assertEquals(ModelFormat.HF, b.format());
            assertSameWeights(ModelWeights.of(a), ModelWeights.of(b));
        }
    }

    /** {@code g}'s original/ layout in {@code dir} without model.safetensors, and the tensors it held, to shard. */
    private static List<SafetensorsFileWriter.Tensor> originalWithoutItsTensorFile(TestModelGenerator g, Path dir)
            throws IOException {
        SafetensorsWriter.writeOriginal(g, dir);
        Files.delete(dir.resolve("model.safetensors"));
        return g.originalTensors().stream()
                .map(t -> new SafetensorsFileWriter.Tensor(t.name(), t.dtype(), t.shape(), seg -> g.fill(t, seg)))
                .toList();
    }

    @Test
    void originalSplitOverSeveralFilesIsReadInNameOrder() throws IOException {
        TestModelGenerator g = new TestModelGenerator(TINY, SEED);
        Path dir = tmp.resolve("split");
        List<SafetensorsFileWriter.Tensor> all = originalWithoutItsTensorFile(g, dir);
        SafetensorsFileWriter.write(dir.resolve("b.safetensors"), all.subList(20, all.size()), Map.of());
        SafetensorsFileWriter.write(dir.resolve("a.safetensors"), all.subList(0, 20), Map.of());
        assertEquals(ModelFormat.ORIGINAL, Checkpoint.detect(dir));
        try (Checkpoint c = Checkpoint.open(dir, LoadOptions.defaults());
                Checkpoint mem = g.inMemory()) {
            assertEquals(
                    List.copyOf(mem.tensors().keySet()), List.copyOf(c.tensors().keySet()));
            assertSameWeights(ModelWeights.of(mem), ModelWeights.of(c));
        }
        SafetensorsFileWriter.write(dir.resolve("c.safetensors"), all.subList(3, 4), Map.of());
        io.gossgpu.model.ModelFormatException e = org.junit.jupiter.api.Assertions.assertThrows(
                io.gossgpu.model.ModelFormatException.class,
                () -> SafetensorsReader.openOriginal(dir, LoadOptions.defaults()));
        assertTrue(
                e.getMessage().contains("c.safetensors") && e.getMessage().contains("also stored in a.safetensors"),
                e.getMessage());
    }

    @Test
    void originalShardedLike120bWithAnIndexIsReadAsOriginal() throws IOException {
        // gpt-oss-120b's original/ holds model--0000N-of-00007.safetensors (no model.safetensors)
        TestModelGenerator g = new TestModelGenerator(TINY, SEED);
        Path dir = tmp.resolve("original");
        List<SafetensorsFileWriter.Tensor> all = originalWithoutItsTensorFile(g, dir);
        var index = Json.MAPPER.createObjectNode();
        var map = index.putObject("weight_map");
        for (int s = 0; s < 2; s++) {
            String name = "model--0000" + (s + 1) + "-of-00002.safetensors";
            List<SafetensorsFileWriter.Tensor> part = s == 0 ? all.subList(0, 25) : all.subList(25, all.size());
            SafetensorsFileWriter.write(dir.resolve(name), part, Map.of());
            part.forEach(t -> map.put(t.name(), name));
        }
        SafetensorsWriter.writeJson(dir.resolve(ShardIndex.FILE), index);
        assertEquals(ModelFormat.ORIGINAL, Checkpoint.detect(dir));
        try (Checkpoint c = Checkpoint.open(dir, LoadOptions.defaults());
                Checkpoint mem = g.inMemory()) {
            assertEquals(ModelFormat.ORIGINAL, c.format());
            assertSameWeights(ModelWeights.of(mem), ModelWeights.of(c));
        }
        map.put("norm.scale", "model--00001-of-00002.safetensors");
        SafetensorsWriter.writeJson(dir.resolve(ShardIndex.FILE), index);
        var e = org.junit.jupiter.api.Assertions.assertThrows(
                io.gossgpu.model.ModelFormatException.class, () -> Checkpoint.open(dir, LoadOptions.defaults()));
        assertTrue(e.getMessage().contains("'norm.scale'"), e.getMessage());
    }

    @Test
    void hfFolderWithOriginalSubfolderIsReadAsHf() {
        TestModelGenerator g = new TestModelGenerator(TINY, SEED);
        Path root = tmp.resolve("download");
        SafetensorsWriter.writeHf(g, root, 400_000);
        SafetensorsWriter.writeOriginal(g, root.resolve("original"));
        assertEquals(ModelFormat.HF, Checkpoint.detect(root));
        assertEquals(ModelFormat.ORIGINAL, Checkpoint.detect(root.resolve("original")));
    }

    @Test
    void nonDefaultRmsEpsRoundTripsThroughBothConfigs() {
        ModelConfig c = new ModelConfig(2, 4, 2, 77, 64, 96, 5.5f, 8, 4, 2, 3, 2048, 10000f, 4f, 1.5f, 24f, 1e-6f);
        TestModelGenerator g = new TestModelGenerator(c, 5);
        SafetensorsWriter.writeOriginal(g, tmp.resolve("o"));
        SafetensorsWriter.writeHf(g, tmp.resolve("h"), 10_000);
        try (Checkpoint a = Checkpoint.open(tmp.resolve("o"), LoadOptions.defaults());
                Checkpoint b = Checkpoint.open(tmp.resolve("h"), LoadOptions.defaults())) {
            assertEquals(c, a.config());
            assertEquals(c, b.config());
            assertSameWeights(ModelWeights.of(a), ModelWeights.of(b));
        }
    }

    @Test
    void readsAFileWrittenByTheReferenceSafetensorsLibrary() throws Exception {
        Path dir = Path.of(SafetensorsRoundTripTest.class
                        .getResource("reference-written/config.json")
                        .toURI())
                .getParent();
        TestModelGenerator g = new TestModelGenerator(SafetensorsFuzzTest.SMALL, 1);
        assertEquals(ModelFormat.ORIGINAL, Checkpoint.detect(dir));
        for (boolean mmap : new boolean[] {true, false})
            try (Checkpoint ckpt = Checkpoint.open(dir, new LoadOptions(mmap));
                    Checkpoint mem = g.inMemory()) {
                assertEquals(SafetensorsFuzzTest.SMALL, ckpt.config());
                assertEquals(150000, ckpt.metadata().get("rope_theta"));
                assertEquals(g.originalTensors().size(), ckpt.tensors().size());
                assertEquals(
                        "block.0.attn.norm.scale",
                        ckpt.tensors().keySet().iterator().next(),
                        "data order, as the library wrote it");
                assertSameWeights(ModelWeights.of(mem), ModelWeights.of(ckpt));
            }
    }

    static void assertSameWeights(ModelWeights a, ModelWeights b) {
        assertEquals(a.config(), b.config());
        same(a.embedding(), b.embedding());
        same(a.finalNorm(), b.finalNorm());
        same(a.unembedding(), b.unembedding());
        assertEquals(a.layers().size(), b.layers().size());
        for (int l = 0; l < a.layers().size(); l++) {
            LayerWeights x = a.layers().get(l), y = b.layers().get(l);
            var cx = x.getClass().getRecordComponents();
            for (var rc : cx) {
                try {
                    same((WeightView) rc.getAccessor().invoke(x), (WeightView)
                            rc.getAccessor().invoke(y));
                } catch (ReflectiveOperationException e) {
                    throw new AssertionError(e);
                }
            }
        }
    }

    /** Bit-for-bit equality of every decoded value (so -0 and NaN patterns count). */
    static void same(WeightView x, WeightView y) {
        String what = x.name() + " vs " + y.name();
        assertEquals(x.experts(), y.experts(), what);
        assertEquals(x.rows(), y.rows(), what);
        assertEquals(x.cols(), y.cols(), what);
        float[] a = x.dequantizeAll(), b = y.dequantizeAll();
        for (int i = 0; i < a.length; i++)
            if (Float.floatToRawIntBits(a[i]) != Float.floatToRawIntBits(b[i]))
                throw new AssertionError(what + ": value " + i + " differs: " + a[i] + " vs " + b[i]);
        float[] r1 = new float[x.cols()], r2 = new float[y.cols()];
        int e = x.experts() - 1, r = x.rows() / 2;
        x.dequantizeRow(e, r, r1, 0);
        y.dequantizeRow(e, r, r2, 0);
        assertArrayEquals(r1, r2, what + " row");
    }
}
