package io.gossgpu.testmodel;

import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.DType;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelFormat;
import io.gossgpu.model.TensorData;
import io.gossgpu.quant.Bf16;
import io.gossgpu.quant.LE;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Random weights of the exact gpt-oss architecture, described in OpenAI's original/ layout (the
 * tensor names, BF16 dense tensors, MXFP4 experts as U8 .blocks/.scales). Each tensor's bytes depend
 * only on the seed and the tensor's name, so writers can produce tensors in any order, one at a
 * time, straight into their output; every file format written from one generator holds the same
 * numbers.
 *
 * <p>Magnitudes are chosen so activations stay O(1) through many layers: matrices ~ N(0, 1/fan_in),
 * norm scales near 1, MXFP4 scales near 2^-log2(sqrt(fan_in)) with every FP4 code (−0 included)
 * equally likely.
 */
public final class TestModelGenerator {
    private final ModelConfig config;
    private final long seed;

    public TestModelGenerator(ModelConfig config, long seed) {
        this.config = config.validate("test model");
        this.seed = seed;
    }

    public ModelConfig config() {
        return config;
    }

    public long seed() {
        return seed;
    }

    /** Every tensor of the original/ layout, in the order OpenAI's checkpoint lists them. */
    public List<TensorSpec> originalTensors() {
        ModelConfig c = config;
        long h = c.hiddenSize(), e = c.numExperts(), i = c.intermediateSize();
        List<TensorSpec> out = new ArrayList<>();
        out.add(new TensorSpec("embedding.weight", DType.BF16, new long[] {c.vocabSize(), h}));
        for (int n = 0; n < c.numHiddenLayers(); n++) {
            String p = "block." + n + ".";
            out.add(new TensorSpec(p + "attn.norm.scale", DType.BF16, new long[] {h}));
            out.add(new TensorSpec(p + "attn.qkv.weight", DType.BF16, new long[] {c.qkvDim(), h}));
            out.add(new TensorSpec(p + "attn.qkv.bias", DType.BF16, new long[] {c.qkvDim()}));
            out.add(new TensorSpec(p + "attn.sinks", DType.BF16, new long[] {c.numAttentionHeads()}));
            out.add(new TensorSpec(p + "attn.out.weight", DType.BF16, new long[] {h, c.qDim()}));
            out.add(new TensorSpec(p + "attn.out.bias", DType.BF16, new long[] {h}));
            out.add(new TensorSpec(p + "mlp.norm.scale", DType.BF16, new long[] {h}));
            out.add(new TensorSpec(p + "mlp.gate.weight", DType.BF16, new long[] {e, h}));
            out.add(new TensorSpec(p + "mlp.gate.bias", DType.BF16, new long[] {e}));
            out.add(new TensorSpec(p + "mlp.mlp1_weight.blocks", DType.U8, new long[] {e, 2 * i, h / 32, 16}));
            out.add(new TensorSpec(p + "mlp.mlp1_weight.scales", DType.U8, new long[] {e, 2 * i, h / 32}));
            out.add(new TensorSpec(p + "mlp.mlp1_bias", DType.BF16, new long[] {e, 2 * i}));
            out.add(new TensorSpec(p + "mlp.mlp2_weight.blocks", DType.U8, new long[] {e, h, i / 32, 16}));
            out.add(new TensorSpec(p + "mlp.mlp2_weight.scales", DType.U8, new long[] {e, h, i / 32}));
            out.add(new TensorSpec(p + "mlp.mlp2_bias", DType.BF16, new long[] {e, h}));
        }
        out.add(new TensorSpec("norm.scale", DType.BF16, new long[] {h}));
        out.add(new TensorSpec("unembedding.weight", DType.BF16, new long[] {c.vocabSize(), h}));
        return out;
    }

    /** Writes {@code t}'s bytes (little-endian) into {@code dst}, which must hold {@link TensorSpec#byteSize()}. */
    public void fill(TensorSpec t, MemorySegment dst) {
        SplittableRandom rnd =
                new SplittableRandom(seed * 0x9E3779B97F4A7C15L ^ t.name().hashCode() * 0xC2B2AE3D27D4EB4FL);
        String name = t.name();
        long n = t.elements();
        if (name.endsWith(".blocks")) {
            // Uniform random codes: every FP4 value, -0 included, appears.
            long off = 0;
            for (; off + 8 <= n; off += 8) dst.set(LE.I64, off, rnd.nextLong());
            for (; off < n; off++) dst.set(LE.U8, off, (byte) rnd.nextInt(256));
        } else if (name.endsWith(".scales")) {
            long fanIn = name.contains("mlp1") ? config.hiddenSize() : config.intermediateSize();
            // FP4 codes have RMS ~3.2; aim the product at 1/sqrt(fan_in), with a spread of ±1 octave.
            int center = 127 + (int) Math.round(-0.5 * log2(fanIn) - log2(3.2));
            for (long off = 0; off < n; off++) dst.set(LE.U8, off, (byte) (center + rnd.nextInt(3) - 1));
        } else {
            double mean = 0, std;
            if (name.endsWith("norm.scale")) {
                mean = 1;
                std = 0.1;
            } else if (name.endsWith("sinks")) {
                std = 1;
            } else if (name.equals("embedding.weight")) {
                std = 1;
            } else if (name.endsWith(".bias") || name.endsWith("_bias")) {
                std = 0.1;
            } else { // dense matrices: N(0, 1/fan_in), fan_in = last dimension
                std = 1 / Math.sqrt(t.shape()[t.shape().length - 1]);
                if (name.endsWith("mlp.gate.weight")) std *= 4; // decisive routing
            }
            for (long k = 0; k < n; k++)
                dst.set(LE.I16, 2 * k, Bf16.fromFloat((float) (mean + std * rnd.nextGaussian())));
        }
    }

    /** The whole model in memory, as an original/-layout checkpoint (path is a label, nothing is on disk). */
    public Checkpoint inMemory() {
        Arena arena = Arena.ofShared();
        Path label = Path.of("<generated seed " + seed + ">");
        Map<String, TensorData> tensors = new LinkedHashMap<>();
        for (TensorSpec t : originalTensors()) {
            MemorySegment seg = arena.allocate(t.byteSize(), 64);
            fill(t, seg);
            tensors.put(t.name(), new TensorData(t.name(), t.dtype(), t.shape(), seg, label));
        }
        return new Checkpoint(label, ModelFormat.ORIGINAL, config, tensors, Map.of(), arena);
    }

    private static double log2(double x) {
        return Math.log(x) / Math.log(2);
    }
}
