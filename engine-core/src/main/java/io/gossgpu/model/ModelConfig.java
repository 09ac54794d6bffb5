package io.gossgpu.model;

import io.gossgpu.GossException;

/**
 * The shape and hyper-parameters of a gpt-oss model, whatever file it came from. Field names follow
 * the official reference's {@code ModelConfig} (original/config.json).
 *
 * <p>Layer {@code l} uses the sliding window when {@code l} is even ({@code layer_idx % 2 == 0} in the
 * reference); odd layers attend to the whole context.
 */
public record ModelConfig(
        int numHiddenLayers,
        int numExperts,
        int expertsPerToken,
        int vocabSize,
        int hiddenSize,
        int intermediateSize,
        float swigluLimit,
        int headDim,
        int numAttentionHeads,
        int numKeyValueHeads,
        int slidingWindow,
        int initialContextLength,
        float ropeTheta,
        float ropeScalingFactor,
        float ropeNtkAlpha,
        float ropeNtkBeta,
        float rmsNormEps) {

    /** MXFP4 packs 32 values per block: every dimension an expert matrix is quantized along must divide. */
    public static final int MXFP4_BLOCK = 32;

    /** gpt-oss-20b as published. */
    public static ModelConfig gptOss20b() {
        return new ModelConfig(24, 32, 4, 201088, 2880, 2880, 7.0f, 64, 64, 8, 128, 4096, 150000f, 32f, 1f, 32f, 1e-5f);
    }

    /** gpt-oss-120b as published. */
    public static ModelConfig gptOss120b() {
        return new ModelConfig(
                36, 128, 4, 201088, 2880, 2880, 7.0f, 64, 64, 8, 128, 4096, 150000f, 32f, 1f, 32f, 1e-5f);
    }

    public int qDim() {
        return numAttentionHeads * headDim;
    }

    public int kvDim() {
        return numKeyValueHeads * headDim;
    }

    /** Rows of the fused QKV projection: query heads, then key heads, then value heads. */
    public int qkvDim() {
        return qDim() + 2 * kvDim();
    }

    /** Query heads per KV head; query head h reads KV head {@code h / queriesPerKvHead()}. */
    public int queriesPerKvHead() {
        return numAttentionHeads / numKeyValueHeads;
    }

    /**
     * The longest context the model was trained for: YaRN stretches the {@code initial_context_length} RoPE was
     * trained on by {@code rope_scaling_factor} (gpt-oss: 4096 × 32 = 131072, the published maximum).
     */
    public long maxContextLength() {
        return (long) Math.floor((double) initialContextLength * ropeScalingFactor);
    }

    public boolean isSlidingLayer(int layer) {
        return slidingWindow > 0 && layer % 2 == 0;
    }

    /** Throws a one-line error naming {@code source} when the numbers cannot describe a gpt-oss model. */
    public ModelConfig validate(String source) {
        positive(source, "num_hidden_layers", numHiddenLayers);
        positive(source, "num_experts", numExperts);
        positive(source, "experts_per_token", expertsPerToken);
        positive(source, "vocab_size", vocabSize);
        positive(source, "hidden_size", hiddenSize);
        positive(source, "intermediate_size", intermediateSize);
        positive(source, "head_dim", headDim);
        positive(source, "num_attention_heads", numAttentionHeads);
        positive(source, "num_key_value_heads", numKeyValueHeads);
        positive(source, "initial_context_length", initialContextLength);
        if (expertsPerToken > numExperts)
            fail(source, "experts_per_token " + expertsPerToken + " exceeds num_experts " + numExperts);
        if (numAttentionHeads % numKeyValueHeads != 0)
            fail(
                    source,
                    "num_attention_heads " + numAttentionHeads + " is not a multiple of num_key_value_heads "
                            + numKeyValueHeads);
        if (headDim % 2 != 0) fail(source, "head_dim " + headDim + " must be even (RoPE rotates pairs of halves)");
        if (hiddenSize % MXFP4_BLOCK != 0)
            fail(source, "hidden_size " + hiddenSize + " must be a multiple of " + MXFP4_BLOCK + " (MXFP4 blocks)");
        if (intermediateSize % MXFP4_BLOCK != 0)
            fail(
                    source,
                    "intermediate_size " + intermediateSize + " must be a multiple of " + MXFP4_BLOCK
                            + " (MXFP4 blocks)");
        if (slidingWindow < 0) fail(source, "sliding_window must be >= 0, got " + slidingWindow);
        if (!(ropeTheta > 1f) || !Float.isFinite(ropeTheta)) fail(source, "rope_theta must be > 1, got " + ropeTheta);
        if (!(ropeScalingFactor >= 1f) || !Float.isFinite(ropeScalingFactor))
            fail(source, "rope_scaling_factor must be >= 1, got " + ropeScalingFactor);
        if (!(rmsNormEps > 0f) || !Float.isFinite(rmsNormEps))
            fail(source, "rms_norm_eps must be > 0, got " + rmsNormEps);
        if (!(swigluLimit > 0f) || !Float.isFinite(swigluLimit))
            fail(source, "swiglu_limit must be > 0, got " + swigluLimit);
        if (!Float.isFinite(ropeNtkAlpha)
                || !Float.isFinite(ropeNtkBeta)
                || !(ropeNtkAlpha > 0)
                || !(ropeNtkBeta > ropeNtkAlpha))
            fail(source, "rope ntk alpha/beta must satisfy 0 < alpha < beta, got " + ropeNtkAlpha + "/" + ropeNtkBeta);
        return this;
    }

    private static void positive(String source, String key, int value) {
        if (value <= 0) fail(source, key + " must be positive, got " + value);
    }

    private static void fail(String source, String message) {
        throw new GossException(source + ": config: " + message);
    }
}
