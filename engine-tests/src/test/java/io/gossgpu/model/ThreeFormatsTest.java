package io.gossgpu.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gossgpu.testmodel.GgufWriter;
import io.gossgpu.testmodel.SafetensorsWriter;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** One seed written as original/, HF and GGUF (BF16) loads to bit-identical canonical weights in all three. */
public class ThreeFormatsTest {
    @TempDir
    Path dir;

    @Test
    void everyWeightDequantizesToIdenticalFloats() {
        TestModelGenerator g = new TestModelGenerator(TestModelPresets.tiny(), 11);
        SafetensorsWriter.writeOriginal(g, dir.resolve("original"));
        SafetensorsWriter.writeHf(g, dir.resolve("hf"), 200_000);
        GgufWriter.write(g, dir.resolve("m.gguf"), GgufWriter.Options.defaults());
        try (Checkpoint o = Checkpoint.open(dir.resolve("original"), LoadOptions.defaults());
                Checkpoint h = Checkpoint.open(dir.resolve("hf"), LoadOptions.defaults());
                Checkpoint q = Checkpoint.open(dir.resolve("m.gguf"), LoadOptions.defaults())) {
            assertEquals(ModelFormat.ORIGINAL, o.format());
            assertEquals(ModelFormat.HF, h.format());
            assertEquals(ModelFormat.GGUF, q.format());
            assertEquals(o.config(), h.config());
            assertEquals(o.config(), q.config());
            List<WeightView> wo = all(ModelWeights.of(o)), wh = all(ModelWeights.of(h)), wq = all(ModelWeights.of(q));
            assertEquals(wo.size(), wh.size());
            for (int i = 0; i < wo.size(); i++) {
                int[] a = bits(wo.get(i).dequantizeAll());
                assertArrayEquals(
                        a,
                        bits(wh.get(i).dequantizeAll()),
                        wo.get(i).name() + " vs " + wh.get(i).name());
                assertArrayEquals(
                        a,
                        bits(wq.get(i).dequantizeAll()),
                        wo.get(i).name() + " vs " + wq.get(i).name());
            }
        }
    }

    /** Every canonical weight of {@code w}, in a fixed order. */
    public static List<WeightView> all(ModelWeights w) {
        List<WeightView> out = new ArrayList<>(List.of(w.embedding(), w.finalNorm(), w.unembedding()));
        for (LayerWeights l : w.layers())
            out.addAll(List.of(
                    l.attnNorm(),
                    l.q(),
                    l.qBias(),
                    l.k(),
                    l.kBias(),
                    l.v(),
                    l.vBias(),
                    l.sinks(),
                    l.out(),
                    l.outBias(),
                    l.mlpNorm(),
                    l.router(),
                    l.routerBias(),
                    l.gate(),
                    l.gateBias(),
                    l.up(),
                    l.upBias(),
                    l.down(),
                    l.downBias()));
        return out;
    }

    private static int[] bits(float[] f) {
        int[] b = new int[f.length];
        for (int i = 0; i < f.length; i++) b[i] = Float.floatToRawIntBits(f[i]);
        return b;
    }
}
