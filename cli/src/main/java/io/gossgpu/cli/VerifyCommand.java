package io.gossgpu.cli;

import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.Backends;
import io.gossgpu.debug.Verifier;
import io.gossgpu.debug.VerifyPlan;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.ModelWeights;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.util.SplittableRandom;

/** {@code goss-gpu verify}: runs a backend beside the reference op by op and names the first divergence. */
@Command(name = "verify", header = "Compare a backend with the reference op by op.",
        description = {"Run a backend and the reference side by side, op by op, and report the first op, layer and position where they differ.",
                "The first line says which arithmetic is checked. The cpu backend's native kernels (int8 activations, float dense weights "
                        + "quantized to Q8_0 at load) are compared with the reference on those same Q8_0 weights, within the int8 "
                        + "tolerance; GOSS_CPU_DENSE=float or GOSS_CPU_KERNELS=java check other paths."})
final class VerifyCommand implements java.util.concurrent.Callable<Integer> {
    @Mixin
    HelpOption help;

    @Mixin
    ModelOptions modelOptions;

    @Option(names = "--tokens", description = "Token ids (default: 24 random ids, seeded).")
    String tokens;

    @Option(names = "--tolerance", description = "Allowed difference relative to each row's largest value (default: the one the backend's "
            + "arithmetic is stated to hold: 1e-4 for float32 backends, 1e-1 for the cpu backend's int8 kernels).")
    Double tolerance;

    @Override
    public Integer call() {
        try (Checkpoint ckpt = Checkpoint.open(DemoModel.resolve(modelOptions.model), modelOptions.loadOptions());
             Backend backend = Backends.open(modelOptions.backend, modelOptions.backendOptions());
             Backend reference = Backends.open("reference", BackendOptions.defaults())) {
            ModelWeights weights = ModelWeights.of(ckpt);
            int vocab = weights.config().vocabSize();
            int[] ids = tokens != null ? TokenIds.parse(tokens, vocab) : new SplittableRandom(1).ints(24, 0, vocab).toArray();
            VerifyPlan plan = VerifyPlan.of(backend, weights, tolerance);
            System.out.println("checking " + backend.name() + ": " + plan.path());
            Verifier.Result r = Verifier.compare(weights, plan.referenceWeights(), backend, reference, ids, plan.tolerance(), plan.tiesMayFlip());
            String worst = String.format("largest difference %.1e of the row scale, at %s", r.worst(), r.worstOp());
            if (r.tieFlip().isPresent()) {
                Verifier.Divergence f = r.tieFlip().get();
                System.out.printf("%s agrees with reference on every op up to %s at position %d, where the int8 rounding picked expert %d "
                                + "for the reference's %d, whose routing weights nearly tie; later ops depend on that choice and were not compared "
                                + "(tolerance %.1e; %s)%n", backend.name(), f.op(), f.position(), (int) f.actual(), (int) f.expected(), plan.tolerance(), worst);
                return 0;
            }
            if (r.divergence().isPresent()) {
                System.out.printf("%s diverges from reference: %s (tolerance %.1e; %s)%n", backend.name(), r.divergence().get(), plan.tolerance(), worst);
                return 1;
            }
            System.out.printf("%s agrees with reference on every op of %d layers over %d positions (tolerance %.1e; %s)%n",
                    backend.name(), weights.config().numHiddenLayers(), ids.length, plan.tolerance(), worst);
            return 0;
        }
    }
}
