package io.gossgpu.cli;

import io.gossgpu.backend.Backend;
import io.gossgpu.debug.LogitsDump;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.ModelWeights;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.nio.file.Path;

/** {@code goss-gpu logits}: every position's logits of a token sequence, for comparing engines. */
@Command(name = "logits", header = "Write every position's logits of some token ids to files.",
        description = "Run token ids through a model and write every position's logits: DIR/logits.f32 (little-endian float32, positions x vocab, row-major) and DIR/logits.json (shape, tokens, backend, top-5 per position).")
final class LogitsCommand implements Runnable {
    @Mixin
    HelpOption help;

    @Mixin
    ModelOptions modelOptions;

    @Option(names = "--tokens", required = true, description = "Token ids, e.g. 1,2,3.")
    String tokens;

    @Option(names = "--out", required = true, description = "Output folder.")
    Path out;

    @Override
    public void run() {
        try (Checkpoint ckpt = Checkpoint.open(ModelLocator.require(modelOptions.model), modelOptions.loadOptions());
             Backend backend = modelOptions.openBackend(ModelWeights.of(ckpt))) {
            ModelWeights weights = ModelWeights.of(ckpt);
            int[] ids = TokenIds.parse(tokens, weights.config().vocabSize());
            LogitsDump.write(out, backend, weights, ids);
            System.err.printf("wrote %d x %d logits from %s to %s%n", ids.length, weights.config().vocabSize(), backend.name(), out);
        }
    }
}
