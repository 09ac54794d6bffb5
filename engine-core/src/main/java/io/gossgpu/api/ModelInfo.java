package io.gossgpu.api;

import java.nio.file.Path;

/**
 * What an {@link Engine} loaded ({@link Engine#modelInfo()}): where from, and the model's shape as its config states it.
 *
 * @param path                 the model folder or .gguf file
 * @param format               how the checkpoint is stored, {@code original} (OpenAI's original/ folder), {@code hf} (Hugging Face layout) or {@code gguf}
 * @param layers               transformer blocks
 * @param experts              MoE experts per layer
 * @param expertsPerToken      experts each token is routed to
 * @param hiddenSize           the residual stream's width
 * @param vocabSize            rows of the embedding and unembedding (token ids the model scores)
 * @param initialContextLength the context the model was trained on before rope scaling
 * @param ropeScalingFactor    YaRN's scaling factor
 * @param maxContextLength     the longest context the model supports ({@code initialContextLength × ropeScalingFactor});
 *                             a chat's {@link ChatOptions#contextLength()} may not exceed it
 */
public record ModelInfo(
        Path path,
        String format,
        int layers,
        int experts,
        int expertsPerToken,
        int hiddenSize,
        int vocabSize,
        int initialContextLength,
        float ropeScalingFactor,
        long maxContextLength) {
    static ModelInfo of(io.gossgpu.model.Checkpoint ckpt, io.gossgpu.model.ModelConfig c) {
        return new ModelInfo(
                ckpt.path(),
                ckpt.format().name().toLowerCase(java.util.Locale.ROOT),
                c.numHiddenLayers(),
                c.numExperts(),
                c.expertsPerToken(),
                c.hiddenSize(),
                c.vocabSize(),
                c.initialContextLength(),
                c.ropeScalingFactor(),
                c.maxContextLength());
    }
}
