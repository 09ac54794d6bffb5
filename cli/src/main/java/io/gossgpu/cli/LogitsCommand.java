package io.gossgpu.cli;

import io.gossgpu.api.EngineOptions;
import io.gossgpu.backend.ExpertPlacement;
import io.gossgpu.tools.BackendCheck;
import java.nio.file.Path;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code goss-gpu logits}: every position's logits of a token sequence, for comparing engines. */
@Command(
        name = "logits",
        header = "Write every position's logits of some token ids to files.",
        description =
                "Run token ids through a model and write every position's logits: DIR/logits.f32 (little-endian float32, positions x vocab, row-major) and DIR/logits.json (shape, tokens, backend, top-5 per position).")
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
        EngineOptions options =
                modelOptions.engineOptions(ModelLocator.require(modelOptions.model), ExpertPlacement.DEFAULT_KV_TOKENS);
        System.err.println(BackendCheck.writeLogits(options, vocab -> TokenIds.parse(tokens, vocab), out));
    }
}
