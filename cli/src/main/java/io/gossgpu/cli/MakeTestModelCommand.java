package io.gossgpu.cli;

import io.gossgpu.GossException;
import io.gossgpu.api.Tokens;
import io.gossgpu.tools.TestModel;
import java.nio.file.Path;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code goss-gpu make-test-model}: writes a random-weight gpt-oss model in any of the three layouts. */
@Command(
        name = "make-test-model",
        header = "Write a random-weight model of the gpt-oss architecture.",
        sortOptions = false,
        description =
                "Write a random-weight model of the exact gpt-oss architecture (for tests, demos and benchmarks). The same seed gives the same numbers in every format.")
final class MakeTestModelCommand implements Runnable {
    @Mixin
    HelpOption help;

    @Option(
            names = "--format",
            required = true,
            description = "original | hf | gguf | ollama (Ollama's first gptoss GGUF layout)")
    TestModel.Format format;

    @Option(names = "--out", required = true, description = "Output folder (original, hf) or .gguf file.")
    Path out;

    @Option(names = "--seed", defaultValue = "1", description = "Random seed (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(
            names = "--preset",
            defaultValue = "tiny",
            description =
                    "tiny (unit tests), demo (real vocabulary, ~100 MB), quant (hidden 256: K-quant-sized rows), gpt_oss_20b (gpt-oss-20b widths, 24 layers, ~12 GB). Default: ${DEFAULT-VALUE}.")
    TestModel.Preset preset;

    @Option(names = "--layers", description = "Override the number of layers (e.g. 4 with gpt_oss_20b: ~2.8 GB).")
    Integer layers;

    @Option(names = "--experts", description = "Override the number of experts.")
    Integer experts;

    @Option(names = "--vocab", description = "Override the vocabulary size.")
    Integer vocab;

    @Option(
            names = "--dense-type",
            defaultValue = "BF16",
            description =
                    "GGUF: type of the 2-D dense weights: BF16 (exact), F32, Q8_0 (as in the ggml-org release). Default: ${DEFAULT-VALUE}.")
    TestModel.DenseType denseType;

    @Option(
            names = "--with-vocab",
            description =
                    "GGUF: embed the o200k_harmony vocabulary as tokenizer.ggml.tokens (needs the full 201088-token vocabulary).")
    boolean withVocab;

    @Option(
            names = "--bf16-experts",
            description =
                    "HF: store the experts as a BF16 fine-tune does (gate_up_proj, down_proj; no quantization_config).")
    boolean bf16Experts;

    @Option(
            names = "--shard-bytes",
            defaultValue = "5000000000",
            description = "HF: largest shard size in bytes (default: ${DEFAULT-VALUE}).")
    long shardBytes;

    @Override
    public void run() {
        TestModel m = new TestModel(preset, seed, layers, experts, vocab);
        if (withVocab && format == TestModel.Format.GGUF && m.vocabSize() != Tokens.VOCAB_SIZE)
            throw new GossException(
                    "--with-vocab needs the full vocabulary of " + Tokens.VOCAB_SIZE + " tokens, not " + m.vocabSize());
        long t0 = System.nanoTime();
        m.write(format, out, denseType, withVocab, bf16Experts, shardBytes);
        System.err.printf(
                "wrote a %s model with random weights (%s preset, seed %d, %d layers, %d experts, vocab %d) to %s in %.1f s%n",
                format,
                preset,
                seed,
                m.layerCount(),
                m.expertCount(),
                m.vocabSize(),
                out,
                (System.nanoTime() - t0) / 1e9);
    }
}
