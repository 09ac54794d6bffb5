package io.gossgpu.testmodel;

import io.gossgpu.model.ModelConfig;

/**
 * Shapes of generated test models. All keep gpt-oss's structure (GQA with a grouped mapping,
 * sinks, alternating sliding windows, YaRN with factor 32 over 4096) and pick sizes that are not
 * powers of two where the format allows it, with sliding windows shorter than test sequences.
 */
public final class TestModelPresets {
    private TestModelPresets() {}

    /**
     * For unit tests: 3 layers, 6 experts (top 4), hidden 96, intermediate 160, 16 query heads over
     * 2 KV heads of dim 16 (8:1 GQA; grouped and cycling mappings differ), sliding window 5, vocab 1031.
     */
    public static ModelConfig tiny() {
        return new ModelConfig(3, 6, 4, 1031, 96, 160, 7.0f, 16, 16, 2, 5, 4096, 150000f, 32f, 1f, 32f, 1e-5f);
    }

    /**
     * For quantized-GGUF tests: hidden 256, so every matrix reading the hidden state has rows of whole K-quant
     * super-blocks (256 values), while the attention output's rows (128) take llama-quantize's 32-block fallbacks;
     * 2 layers, 4 experts (top 2), intermediate 64, 2 query heads over 1 KV head of dim 64, window 4, vocab 64.
     */
    public static ModelConfig quant() {
        return new ModelConfig(2, 4, 2, 64, 256, 64, 7.0f, 64, 2, 1, 4, 4096, 150000f, 32f, 1f, 32f, 1e-5f);
    }

    /**
     * The built-in demo: the real 201088-token vocabulary (so the tokenizer's ids are all valid),
     * head_dim 64, 8:1 GQA, 4 layers and small widths: about 60 MB, loads in a blink.
     */
    public static ModelConfig demo() {
        return new ModelConfig(4, 8, 4, 201088, 128, 224, 7.0f, 64, 16, 2, 16, 4096, 150000f, 32f, 1f, 32f, 1e-5f);
    }

    /** {@link #demo()} with 2 layers: the real vocabulary, quicker to generate and run. */
    public static ModelConfig twoLayerDemo() {
        return withOverrides(demo(), 2, null, null);
    }

    /** gpt-oss-20b's exact widths with {@code layers} layers (24 is the real model). */
    public static ModelConfig gptOss20bWidths(int layers) {
        return withOverrides(ModelConfig.gptOss20b(), layers, null, null);
    }

    /** {@code base} with any non-null override of layers, experts (top-k shrinks to fit) or vocabulary size. */
    public static ModelConfig withOverrides(ModelConfig base, Integer layers, Integer experts, Integer vocab) {
        ModelConfig r = base;
        int e = experts != null ? experts : r.numExperts();
        return new ModelConfig(
                layers != null ? layers : r.numHiddenLayers(),
                e,
                Math.min(r.expertsPerToken(), e),
                vocab != null ? vocab : r.vocabSize(),
                r.hiddenSize(),
                r.intermediateSize(),
                r.swigluLimit(),
                r.headDim(),
                r.numAttentionHeads(),
                r.numKeyValueHeads(),
                r.slidingWindow(),
                r.initialContextLength(),
                r.ropeTheta(),
                r.ropeScalingFactor(),
                r.ropeNtkAlpha(),
                r.ropeNtkBeta(),
                r.rmsNormEps());
    }
}
