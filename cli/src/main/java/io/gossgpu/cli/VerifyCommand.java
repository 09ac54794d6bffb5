package io.gossgpu.cli;

import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.Backends;
import io.gossgpu.GossException;
import io.gossgpu.debug.LogitAgreement;
import io.gossgpu.debug.ScoredSequences;
import io.gossgpu.debug.Verifier;
import io.gossgpu.debug.VerifyPlan;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.ModelWeights;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;

/** {@code goss-gpu verify}: runs a backend beside the reference op by op and names the first divergence. */
@Command(name = "verify", header = "Compare a backend with the reference (op by op, or KL).",
        description = {"Run a backend and the reference side by side, op by op, and report the first op, layer and position where they differ.",
                "The first line says which arithmetic is checked. The cpu backend's native kernels (int8 activations, float dense weights "
                        + "quantized to Q8_0 at load) are compared with the reference on those same Q8_0 weights, within the int8 "
                        + "tolerance; GOSS_CPU_DENSE=float or GOSS_CPU_KERNELS=java check other paths.",
                "With --kl, measure instead how closely the backend's next-token distributions follow the reference's on the "
                        + "file's weights, as llama-perplexity --kl-divergence does: mean and 99th-percentile KL divergence "
                        + "KL(reference || backend) over the full vocabulary's softmax, top-1 agreement and RMS logit error, over "
                        + "conversations (default: the demo model's held-out set, each scored over its assistant turn) or a text."})
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

    @Option(names = "--kl", description = "Measure output quality against the reference (KL divergence, top-1 agreement, RMS logit error) instead of comparing op by op.")
    boolean kl;

    @Option(names = "--conversations", paramLabel = "FILE", description = "With --kl: JSON lines, each a conversation ending with an assistant "
            + "turn ({\"messages\": [...]}, as render reads) or a held-out item with \"references\" (default: the demo model's held-out conversations).")
    Path conversations;

    @Option(names = "--text", paramLabel = "FILE", description = "With --kl: a UTF-8 text, cut into chunks of --chunk tokens, each scored over its second half.")
    Path text;

    @Option(names = "--chunk", defaultValue = "512", description = "With --text: tokens per chunk (default: ${DEFAULT-VALUE}).")
    int chunk;

    @Option(names = "--limit", description = "With --kl: score at most this many conversations (spread evenly over the set) or chunks (default: all).")
    Integer limit;

    @Override
    public Integer call() {
        if (!kl && (conversations != null || text != null || limit != null))
            throw new GossException("--conversations, --text and --limit go with --kl");
        if (kl && (tokens != null || tolerance != null)) throw new GossException("--tokens and --tolerance compare op by op: they do not go with --kl");
        if (conversations != null && text != null) throw new GossException("give --conversations or --text, not both");
        if (limit != null && limit < 1) throw new GossException("--limit must be at least 1, got " + limit);
        if (kl) return measure();
        try (Checkpoint ckpt = Checkpoint.open(DemoModel.resolve(modelOptions.model), modelOptions.loadOptions());
             Backend backend = modelOptions.openBackend(ModelWeights.of(ckpt));
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

    private int measure() {
        int max = limit != null ? limit : Integer.MAX_VALUE;
        List<LogitAgreement.Sequence> seqs;
        String what;
        try {
            if (text != null) {
                seqs = ScoredSequences.text(Files.readString(text), chunk, max);
                what = text.toString();
            } else if (conversations != null) {
                try (var in = Files.newInputStream(conversations)) {
                    seqs = ScoredSequences.conversations(in, conversations.toString(), max);
                }
                what = conversations.toString();
            } else {
                seqs = ScoredSequences.demoHeldOut(max);
                what = "the demo model's held-out conversations";
            }
        } catch (java.nio.file.NoSuchFileException e) {
            throw new GossException("no such file: " + e.getFile());
        } catch (java.nio.charset.MalformedInputException e) {
            throw new GossException(text + " is not UTF-8 text");
        } catch (IOException e) {
            throw new GossException("cannot read " + (text != null ? text : conversations) + ": " + e.getMessage());
        }
        try (Checkpoint ckpt = Checkpoint.open(DemoModel.resolve(modelOptions.model), modelOptions.loadOptions());
             Backend backend = modelOptions.openBackend(ModelWeights.of(ckpt));
             Backend reference = Backends.open("reference", BackendOptions.defaults())) {
            ModelWeights weights = ModelWeights.of(ckpt);
            System.out.println("measuring " + backend.name() + " (" + backend.deviceDescription() + ") against reference on " + what);
            LogitAgreement.Stats st = LogitAgreement.measure(weights, backend, reference, seqs);
            System.out.printf("KL divergence (reference || %s): mean %.3g, p99 %.3g, max %.3g nats%n", backend.name(), st.meanKl(), st.p99Kl(), st.maxKl());
            System.out.printf("top-1 agreement: %.2f %%%n", 100 * st.top1());
            System.out.printf("RMS logit error: %.3g (the reference logits' RMS: %.3g)%n", st.rmsError(), st.rmsReference());
            System.out.printf("over %d positions of %d sequences%n", st.positions(), st.sequences());
            return 0;
        }
    }
}
