package io.gossgpu.model.gguf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.LoadOptions;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelFormat;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.model.WeightFormat;
import io.gossgpu.model.WeightView;
import io.gossgpu.testmodel.GgufWriter;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GgufRoundTripTest {
    @TempDir
    Path dir;

    private static final long SEED = 11;

    @Test
    void bf16GgufHoldsBitIdenticalWeights() {
        roundTrip(GgufWriter.DenseType.BF16, true);
    }

    @Test
    void f32GgufHoldsBitIdenticalWeightsWithoutMmap() {
        roundTrip(GgufWriter.DenseType.F32, false);
    }

    @Test
    void q8GgufIsWithinQ8Tolerance() {
        roundTrip(GgufWriter.DenseType.Q8_0, true);
    }

    private void roundTrip(GgufWriter.DenseType dense, boolean mmap) {
        ModelConfig c = TestModelPresets.tiny();
        TestModelGenerator g = new TestModelGenerator(c, SEED);
        Path file = dir.resolve("tiny-" + dense + ".gguf");
        GgufWriter.write(g, file, GgufWriter.Options.defaults().withDense(dense));
        assertEquals(ModelFormat.GGUF, Checkpoint.detect(file));
        try (Checkpoint gguf = Checkpoint.open(file, new LoadOptions(mmap));
                Checkpoint orig = g.inMemory()) {
            assertEquals(c, gguf.config());
            assertEquals("gpt-oss", gguf.metadata().get("general.architecture"));
            Map<String, WeightView> got = CanonicalWeights.of(ModelWeights.of(gguf));
            Map<String, WeightView> want = CanonicalWeights.of(ModelWeights.of(orig));
            assertEquals(want.keySet(), got.keySet());
            for (String k : want.keySet()) {
                WeightView w = want.get(k), v = got.get(k);
                assertEquals(List.of(w.experts(), w.rows(), w.cols()), List.of(v.experts(), v.rows(), v.cols()), k);
                float[] a = w.dequantizeAll(), b = v.dequantizeAll();
                if (v.format() == WeightFormat.Q8_0) assertQ8Close(k, a, b);
                else
                    for (int i = 0; i < a.length; i++)
                        if (Float.floatToRawIntBits(a[i]) != Float.floatToRawIntBits(b[i]))
                            fail(k + "[" + i + "]: expected " + a[i] + " got " + b[i] + " (" + dense + ")");
            }
            if (dense == GgufWriter.DenseType.Q8_0) {
                assertEquals(
                        io.gossgpu.model.DType.Q8_0,
                        gguf.tensor("blk.0.attn_q.weight").dtype());
                assertEquals(
                        io.gossgpu.model.DType.F32,
                        gguf.tensor("blk.0.ffn_gate_inp.weight").dtype());
            }
        }
    }

    /**
     * Q8_0 stores d = f16(max|x|/127) and q = round(x/d'): per block |x − q·d| ≤ d'/2 + 127·|d − d'|
     * where d' = max|x|/127 before f16 rounding (rounding d moves every value by at most 127 × that).
     */
    private static void assertQ8Close(String name, float[] want, float[] got) {
        for (int b = 0; b < want.length / 32; b++) {
            float amax = 0;
            for (int j = 0; j < 32; j++) amax = Math.max(amax, Math.abs(want[b * 32 + j]));
            float d = amax / 127f;
            float dh = io.gossgpu.quant.F16.toFloat(io.gossgpu.quant.F16.fromFloat(d));
            double tol = d / 2 + 127 * Math.abs(d - dh) + 1e-7;
            for (int j = 0; j < 32; j++) {
                int i = b * 32 + j;
                assertTrue(
                        Math.abs(want[i] - got[i]) <= tol,
                        name + "[" + i + "]: " + want[i] + " vs " + got[i] + " exceeds Q8_0 tolerance " + tol);
            }
        }
    }

    @Test
    void tokenizerVocabularyAndMetadataAreExposed() {
        ModelConfig c = TestModelPresets.tiny();
        List<String> tokens = new java.util.ArrayList<>();
        for (int i = 0; i < c.vocabSize(); i++) tokens.add("tok" + i + (i % 7 == 0 ? "é✓" : ""));
        Path file = dir.resolve("tok.gguf");
        GgufWriter.write(
                new TestModelGenerator(c, 2),
                file,
                GgufWriter.Options.defaults().withTokens(tokens));
        try (Checkpoint ckpt = Checkpoint.open(file, LoadOptions.defaults())) {
            assertEquals(tokens, ckpt.metadata().get("tokenizer.ggml.tokens"));
            assertEquals(32L, ckpt.metadata().get("general.alignment"));
            assertEquals((long) c.numHiddenLayers(), ckpt.metadata().get("gpt-oss.block_count"));
            assertEquals(32f, ckpt.metadata().get("gpt-oss.rope.scaling.factor"));
            // GGUF lists ne[0] first; the reader turns shapes outermost-first. MXFP4 rows of 96 values
            // are 96/32*17 = 51 bytes: not a multiple of 4, so nothing may assume aligned rows.
            io.gossgpu.model.TensorData gate = ckpt.tensor("blk.1.ffn_gate_exps.weight");
            assertEquals(
                    List.of((long) c.numExperts(), (long) c.intermediateSize(), (long) c.hiddenSize()),
                    java.util.Arrays.stream(gate.shape()).boxed().toList());
            assertEquals(
                    (long) c.numExperts() * c.intermediateSize() * 51,
                    gate.bytes().byteSize());
            assertEquals(
                    List.of((long) c.numExperts(), (long) c.intermediateSize()),
                    java.util.Arrays.stream(
                                    ckpt.tensor("blk.1.ffn_up_exps.bias").shape())
                            .boxed()
                            .toList());
        }
    }
}
