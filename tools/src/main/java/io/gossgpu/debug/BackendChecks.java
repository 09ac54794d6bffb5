package io.gossgpu.debug;

import io.gossgpu.GossException;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.Backends;
import io.gossgpu.backend.ExpertPlacement;
import io.gossgpu.backend.KvType;
import io.gossgpu.device.PlacementPlanner;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.LoadOptions;
import io.gossgpu.model.ModelWeights;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import java.util.function.IntFunction;

/**
 * The developer commands that run a model on a backend they open themselves, beside the engine (through
 * {@link io.gossgpu.tools.BackendCheck}): {@code logits}, {@code verify} op by op, and {@code verify --kl}.
 *
 * @param model         the model file or folder
 * @param load          how to read it
 * @param backend       the backend's name
 * @param backendOptions its settings
 * @param placement     where a GPU backend runs the experts (the planner applies it, as in the engine)
 * @param prefillChunk  the planner's prefill chunk
 */
public record BackendChecks(
        Path model,
        LoadOptions load,
        String backend,
        BackendOptions backendOptions,
        ExpertPlacement placement,
        int prefillChunk) {
    private Backend open(ModelWeights weights) {
        return PlacementPlanner.open(backend, backendOptions, weights, placement, prefillChunk);
    }

    /** Writes every position's logits of {@code tokens} (given the vocabulary size) to {@code dir}; the line that says so. */
    public String writeLogits(IntFunction<int[]> tokens, Path dir) {
        try (Checkpoint ckpt = Checkpoint.open(model, load);
                Backend b = open(ModelWeights.of(ckpt))) {
            ModelWeights weights = ModelWeights.of(ckpt);
            int[] ids = tokens.apply(weights.config().vocabSize());
            LogitsDump.write(dir, b, weights, ids);
            return String.format(
                    "wrote %d x %d logits from %s to %s",
                    ids.length, weights.config().vocabSize(), b.name(), dir);
        }
    }

    /**
     * Runs {@code tokens} (given the vocabulary size; null: 24 random ids, seeded) on the backend and the reference op by
     * op, giving {@code out} what is checked, then the verdict; whether they agree.
     */
    public boolean verifyOps(IntFunction<int[]> tokens, Double tolerance, Consumer<String> out) {
        try (Checkpoint ckpt = Checkpoint.open(model, load);
                Backend b = open(ModelWeights.of(ckpt));
                Backend reference = Backends.open("reference", BackendOptions.defaults())) {
            ModelWeights weights = ModelWeights.of(ckpt);
            int vocab = weights.config().vocabSize();
            int[] ids = tokens != null
                    ? tokens.apply(vocab)
                    : new SplittableRandom(1).ints(24, 0, vocab).toArray();
            VerifyPlan plan = VerifyPlan.of(b, weights, tolerance);
            out.accept("checking " + b.name() + ": " + plan.path());
            Verifier.Result r = Verifier.compare(
                    weights, plan.referenceWeights(), b, reference, ids, plan.tolerance(), plan.tiesMayFlip());
            String worst = String.format("largest difference %.1e of the row scale, at %s", r.worst(), r.worstOp());
            if (r.tieFlip().isPresent()) {
                Verifier.Divergence f = r.tieFlip().get();
                out.accept(String.format(
                        "%s agrees with reference on every op up to %s at position %d, where the int8 rounding picked expert %d "
                                + "for the reference's %d, whose routing weights nearly tie; later ops depend on that choice and were not compared "
                                + "(tolerance %.1e; %s)",
                        b.name(), f.op(), f.position(), (int) f.actual(), (int) f.expected(), plan.tolerance(), worst));
                return true;
            }
            if (r.divergence().isPresent()) {
                out.accept(String.format(
                        "%s diverges from reference: %s (tolerance %.1e; %s)",
                        b.name(), r.divergence().get(), plan.tolerance(), worst));
                return false;
            }
            out.accept(String.format(
                    "%s agrees with reference on every op of %d layers over %d positions (tolerance %.1e; %s)",
                    b.name(), weights.config().numHiddenLayers(), ids.length, plan.tolerance(), worst));
            return true;
        }
    }

    /**
     * Measures how closely the backend's next-token distributions follow the reference's over {@code text} (chunks of
     * {@code chunk} tokens), else {@code conversations}, else the demo model's held-out set, at most {@code limit}
     * sequences; gives {@code out} the lines of the report.
     */
    public void measureKl(Path text, Path conversations, int chunk, int limit, Consumer<String> out) {
        List<LogitAgreement.Sequence> seqs;
        String what;
        try {
            if (text != null) {
                seqs = ScoredSequences.text(Files.readString(text), chunk, limit);
                what = text.toString();
            } else if (conversations != null) {
                try (var in = Files.newInputStream(conversations)) {
                    seqs = ScoredSequences.conversations(in, conversations.toString(), limit);
                }
                what = conversations.toString();
            } else {
                seqs = ScoredSequences.demoHeldOut(limit);
                what = "the demo model's held-out conversations";
            }
        } catch (java.nio.file.NoSuchFileException e) {
            throw new GossException("no such file: " + e.getFile());
        } catch (java.nio.charset.MalformedInputException e) {
            throw new GossException(text + " is not UTF-8 text");
        } catch (IOException e) {
            throw new GossException("cannot read " + (text != null ? text : conversations) + ": " + e.getMessage());
        }
        try (Checkpoint ckpt = Checkpoint.open(model, load);
                Backend b = open(ModelWeights.of(ckpt));
                Backend reference = Backends.open("reference", BackendOptions.defaults())) {
            ModelWeights weights = ModelWeights.of(ckpt);
            KvType kv = placement.kvType();
            out.accept("measuring " + b.name() + " (" + b.deviceDescription() + ", " + kv.flagName()
                    + " KV cache) against reference (f32 KV cache) on " + what);
            LogitAgreement.Stats st = LogitAgreement.measure(weights, b, kv, reference, seqs);
            out.accept(String.format(
                    "KL divergence (reference || %s, %s KV cache): mean %.3g, p99 %.3g, max %.3g nats",
                    b.name(), kv.flagName(), st.meanKl(), st.p99Kl(), st.maxKl()));
            out.accept(String.format("top-1 agreement: %.2f %%", 100 * st.top1()));
            out.accept(String.format(
                    "RMS logit error: %.3g (the reference logits' RMS: %.3g)", st.rmsError(), st.rmsReference()));
            out.accept(String.format("over %d positions of %d sequences", st.positions(), st.sequences()));
        }
    }
}
