package io.gossgpu.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.debug.LogitsDump;
import io.gossgpu.quant.Mxfp4;
import io.gossgpu.reference.ReferenceBackend;
import io.gossgpu.testmodel.GgufWriter;
import io.gossgpu.testmodel.SafetensorsWriter;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Ollama's first gptoss GGUF and BF16-expert fine-tunes load to the weights of the MXFP4 original. */
class LoadTimeConversionTest {
    @TempDir
    Path dir;

    private final TestModelGenerator g = new TestModelGenerator(TestModelPresets.tiny(), 5);

    @Test
    void ollamaLayoutRoundTripsToTheOriginalsWeights() {
        SafetensorsWriter.writeOriginal(g, dir.resolve("original"));
        GgufWriter.write(
                g, dir.resolve("blob.gguf"), GgufWriter.Options.defaults().withLayout(GgufWriter.Layout.OLLAMA));
        try (Checkpoint o = Checkpoint.open(dir.resolve("original"), LoadOptions.defaults());
                Checkpoint b = Checkpoint.open(dir.resolve("blob.gguf"), LoadOptions.defaults())) {
            assertEquals(ModelFormat.OLLAMA, b.format());
            assertEquals(
                    DType.MXFP4_OLLAMA,
                    b.tensor("blk.0.ffn_gate_up_exps.weight").dtype());
            assertEquals(o.config(), b.config());
            ModelWeights wb = ModelWeights.of(b);
            assertEquals(WeightFormat.MXFP4_GGML, wb.layers().get(0).gate().format(), "repacked into ggml's layout");
            assertBitIdentical(ModelWeights.of(o), wb);
            assertEquals(List.of("6 MXFP4_OLLAMA → MXFP4"), b.conversions().summary());
        }
    }

    /** A hand-made type-4 block: scale 128 (×2), codes 0..15 in OpenAI's order (byte j = element 2j | 2j+1 << 4). */
    @Test
    void ollamaBlockDecodesByItsDefinition() {
        byte[] block = new byte[17];
        block[0] = (byte) 128;
        for (int j = 0; j < 16; j++) block[1 + j] = (byte) ((2 * j) % 16 | ((2 * j + 1) % 16) << 4);
        float[] got = new float[32];
        Mxfp4.decodeOllamaRow(MemorySegment.ofArray(block), 0, 32, got, 0);
        float[] fp4 = {0, .5f, 1, 1.5f, 2, 3, 4, 6, -0f, -.5f, -1, -1.5f, -2, -3, -4, -6};
        for (int e = 0; e < 32; e++) assertEquals(2 * fp4[e % 16], got[e], "element " + e);
        MemorySegment ggml = MemorySegment.ofArray(new byte[17]);
        Mxfp4.ollamaToGgml(MemorySegment.ofArray(block), 0, ggml, 0, 1);
        float[] again = new float[32];
        Mxfp4.decodeGgmlRow(ggml, 0, 32, again, 0);
        assertArrayEquals(got, again);
    }

    /** A fine-tune's BF16 experts holding MXFP4 values exactly quantize back to exactly those values. */
    @Test
    void bf16ExpertsOfMxfp4ValuesQuantizeBackExactly() {
        SafetensorsWriter.writeOriginal(g, dir.resolve("original"));
        SafetensorsWriter.writeHf(g, dir.resolve("bf16"), 200_000, true);
        try (Checkpoint o = Checkpoint.open(dir.resolve("original"), LoadOptions.defaults());
                Checkpoint q = Checkpoint.open(dir.resolve("bf16"), LoadOptions.defaults());
                Checkpoint f = Checkpoint.open(
                        dir.resolve("bf16"), LoadOptions.defaults().withFloatExperts(true))) {
            assertEquals(
                    DType.BF16,
                    q.tensor("model.layers.0.mlp.experts.gate_up_proj").dtype());
            assertEquals(3, q.tensor("model.layers.0.mlp.experts.gate_up_proj").rank());
            ModelWeights wo = ModelWeights.of(o), wq = ModelWeights.of(q), wf = ModelWeights.of(f);
            assertEquals(WeightFormat.MXFP4_GGML, wq.layers().get(0).down().format());
            assertEquals(WeightFormat.BF16, wf.layers().get(0).down().format());
            assertBitIdentical(wo, wq);
            assertBitIdentical(wo, wf);
            assertTrue(
                    q.conversions().quantizationNote().contains("relative RMS error 0.00%"),
                    q.conversions().quantizationNote());
            assertNull(f.conversions().quantizationNote());
            float[] lo = LogitsDump.write(dir.resolve("lo"), new ReferenceBackend(), wo, new int[] {3, 1, 4, 1, 5});
            assertArrayEquals(
                    lo, LogitsDump.write(dir.resolve("lq"), new ReferenceBackend(), wq, new int[] {3, 1, 4, 1, 5}));
            assertArrayEquals(
                    lo, LogitsDump.write(dir.resolve("lf"), new ReferenceBackend(), wf, new int[] {3, 1, 4, 1, 5}));
        }
    }

    /**
     * Weights off MXFP4's grid (Gaussian, as a fine-tune leaves them): each value is the nearest FP4 value of one of
     * the two scales tried, and the relative RMS error is what MXFP4 costs such weights (measured: ~10%).
     */
    @Test
    void quantizingGaussianWeightsCostsMxfp4sUsualError() {
        SplittableRandom rnd = new SplittableRandom(3);
        float[] x = new float[32 * 4096];
        for (int i = 0; i < x.length; i++) x[i] = (float) (rnd.nextGaussian() * 0.02);
        byte[] codes = new byte[32];
        double sse = 0, ssq = 0;
        for (int b = 0; b < x.length / 32; b++) {
            int scale = Mxfp4.quantizeBlock(x, 32 * b, codes);
            for (int i = 0; i < 32; i++) {
                float v = x[32 * b + i], q = Mxfp4.value(codes[i], scale);
                // nearest of the 16 codes at this scale (saturation aside)
                float best = Float.MAX_VALUE;
                for (int c = 0; c < 16; c++) best = Math.min(best, Math.abs(v - Mxfp4.value(c, scale)));
                assertEquals(best, Math.abs(v - q), 1e-12f, "block " + b + " value " + i);
                sse += (v - q) * (double) (v - q);
                ssq += v * (double) v;
            }
        }
        double rel = Math.sqrt(sse / ssq);
        System.out.printf("MXFP4 on N(0, 0.02) weights: relative RMS error %.2f%%%n", 100 * rel);
        assertTrue(rel > 0.05 && rel < 0.15, "relative RMS error " + rel);
    }

    private static void assertBitIdentical(ModelWeights a, ModelWeights b) {
        List<WeightView> wa = ThreeFormatsTest.all(a), wb = ThreeFormatsTest.all(b);
        assertEquals(wa.size(), wb.size());
        for (int i = 0; i < wa.size(); i++) {
            float[] x = wa.get(i).dequantizeAll(), y = wb.get(i).dequantizeAll();
            assertNotNull(y);
            assertEquals(x.length, y.length, wa.get(i).name());
            for (int k = 0; k < x.length; k++)
                assertEquals(
                        Float.floatToRawIntBits(x[k]),
                        Float.floatToRawIntBits(y[k]),
                        wa.get(i).name() + " vs " + wb.get(i).name() + " at " + k);
        }
    }
}
