package io.gossgpu.tools;

import io.gossgpu.model.ModelConfig;
import io.gossgpu.testmodel.GgufWriter;
import io.gossgpu.testmodel.SafetensorsWriter;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import io.gossgpu.tokenizer.GgufVocabCheck;
import io.gossgpu.tokenizer.O200kHarmony;
import java.nio.file.Path;

/**
 * A developer facility (what {@code goss-gpu make-test-model} writes): a model of the exact gpt-oss architecture with
 * random weights, for tests, demos and benchmarks. The same preset, overrides and seed give the same numbers in every
 * format.
 *
 * @param preset  the widths to start from
 * @param seed    the random seed of the weights
 * @param layers  overrides the preset's layer count; null keeps it
 * @param experts overrides the preset's expert count (experts per token shrink to fit); null keeps it
 * @param vocab   overrides the preset's vocabulary size; null keeps it
 */
public record TestModel(Preset preset, long seed, Integer layers, Integer experts, Integer vocab) {
    /** The widths a test model starts from. */
    public enum Preset {
        /** For unit tests: 3 layers, 6 experts, hidden 96, vocabulary 1031. */
        tiny,
        /** The demo model's shape: the real 201088-token vocabulary, 4 layers, small widths (~100 MB). */
        demo,
        /** Hidden 256, so rows are whole K-quant super-blocks: 2 layers, 4 experts, vocabulary 64. */
        quant,
        /** gpt-oss-20b's widths and 24 layers (~12 GB). */
        gpt_oss_20b
    }

    /** The layouts a test model is written in (those the engine reads). */
    public enum Format {
        /** OpenAI's original/ folder. */
        ORIGINAL,
        /** A Hugging Face transformers folder. */
        HF,
        /** A .gguf file in llama.cpp's gpt-oss layout. */
        GGUF,
        /** A .gguf file in Ollama's first gptoss layout. */
        OLLAMA
    }

    /** The type of a GGUF's 2-D dense weights. */
    public enum DenseType {
        /** Bit-identical to the generated BF16 values. */
        BF16,
        F32,
        /** As in the ggml-org release: embedding, output and attention Q8_0; the router stays F32. */
        Q8_0
    }

    public TestModel {
        if (preset == null) throw new NullPointerException("preset");
    }

    private ModelConfig config() {
        ModelConfig base = switch (preset) {
            case tiny -> TestModelPresets.tiny();
            case demo -> TestModelPresets.demo();
            case quant -> TestModelPresets.quant();
            case gpt_oss_20b -> TestModelPresets.gptOss20bWidths(24);
        };
        return TestModelPresets.withOverrides(base, layers, experts, vocab);
    }

    /** The layer count written (the preset's unless overridden). */
    public int layerCount() {
        return config().numHiddenLayers();
    }

    /** The expert count written. */
    public int expertCount() {
        return config().numExperts();
    }

    /** The vocabulary size written. */
    public int vocabSize() {
        return config().vocabSize();
    }

    /**
     * Writes the model to {@code out} (a folder for ORIGINAL and HF, a file for GGUF and OLLAMA). {@code shardBytes}
     * (the largest shard) and {@code bf16Experts} (experts stored as a BF16 fine-tune stores them) apply to HF only;
     * {@code dense} and {@code withVocab} (the o200k_harmony vocabulary embedded as tokenizer.ggml.tokens, which needs
     * the full {@link Tokens#VOCAB_SIZE}-token vocabulary) to GGUF only.
     *
     * @throws IllegalArgumentException with {@code withVocab} on a smaller vocabulary
     */
    public void write(
            Format format, Path out, DenseType dense, boolean withVocab, boolean bf16Experts, long shardBytes) {
        ModelConfig c = config();
        TestModelGenerator g = new TestModelGenerator(c, seed);
        switch (format) {
            case ORIGINAL -> SafetensorsWriter.writeOriginal(g, out);
            case HF -> SafetensorsWriter.writeHf(g, out, shardBytes, bf16Experts);
            case OLLAMA ->
                GgufWriter.write(g, out, GgufWriter.Options.defaults().withLayout(GgufWriter.Layout.OLLAMA));
            case GGUF -> {
                GgufWriter.Options o =
                        GgufWriter.Options.defaults().withDense(GgufWriter.DenseType.valueOf(dense.name()));
                if (withVocab) {
                    if (c.vocabSize() != O200kHarmony.VOCAB_SIZE)
                        throw new IllegalArgumentException("the o200k_harmony vocabulary needs "
                                + O200kHarmony.VOCAB_SIZE + " tokens, not " + c.vocabSize());
                    o = o.withTokens(GgufVocabCheck.ggufTokenList(O200kHarmony.get()));
                }
                GgufWriter.write(g, out, o);
            }
        }
    }

    /** {@link #write} in the original layout: what the demo's and the tuning's generated models use. */
    public void writeOriginal(Path dir) {
        write(Format.ORIGINAL, dir, DenseType.BF16, false, false, Long.MAX_VALUE);
    }
}
