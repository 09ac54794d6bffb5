package io.gossgpu.cli;

import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.Backends;
import io.gossgpu.debug.Verifier;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.ModelWeights;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.util.Optional;
import java.util.SplittableRandom;

/** {@code goss-gpu verify}: runs a backend beside the reference op by op and names the first divergence. */
@Command(name = "verify", header = "Compare a backend with the reference op by op.",
        description = "Run a backend and the reference side by side, op by op, and report the first op, layer and position where they differ.")
final class VerifyCommand implements java.util.concurrent.Callable<Integer> {
    @Mixin
    HelpOption help;

    @Mixin
    ModelOptions modelOptions;

    @Option(names = "--tokens", description = "Token ids (default: 24 random ids, seeded).")
    String tokens;

    @Option(names = "--tolerance", defaultValue = "1e-4", description = "Allowed difference relative to each row's largest value (default: ${DEFAULT-VALUE}).")
    double tolerance;

    @Override
    public Integer call() {
        try (Checkpoint ckpt = Checkpoint.open(DemoModel.resolve(modelOptions.model), modelOptions.loadOptions());
             Backend backend = Backends.open(modelOptions.backend, modelOptions.backendOptions());
             Backend reference = Backends.open("reference", BackendOptions.defaults())) {
            ModelWeights weights = ModelWeights.of(ckpt);
            int vocab = weights.config().vocabSize();
            int[] ids = tokens != null ? TokenIds.parse(tokens, vocab) : new SplittableRandom(1).ints(24, 0, vocab).toArray();
            Optional<Verifier.Divergence> d = Verifier.compare(weights, backend, reference, ids, tolerance);
            if (d.isPresent()) {
                System.out.println(backend.name() + " diverges from reference: " + d.get());
                return 1;
            }
            System.out.printf("%s agrees with reference on every op of %d layers over %d positions (tolerance %.1e)%n",
                    backend.name(), weights.config().numHiddenLayers(), ids.length, tolerance);
            return 0;
        }
    }
}
