package io.gossgpu.debug;

import io.gossgpu.backend.Backend;
import io.gossgpu.backend.KvCache;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.forward.Executor;
import io.gossgpu.forward.GraphOp;
import io.gossgpu.forward.OpKind;
import io.gossgpu.model.ModelWeights;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Runs a backend and the reference over the same tokens (one prefill batch) and compares every op's output
 * through the executor's observer hook, in graph order. The first op whose output differs by more than
 * {@code tolerance × max|reference row|} names the culprit: everything before it agreed.
 */
public final class Verifier {
    private Verifier() {}

    /** Where two backends first disagree. {@code position} is the token position, {@code index} the value within the row. */
    public record Divergence(GraphOp op, int position, int index, float expected, float actual, double rowScale) {
        @Override
        public String toString() {
            return op + " at position " + position + ", value " + index + ": reference " + expected + ", backend "
                    + actual + " (|diff| " + Math.abs(expected - actual) + ", row scale " + rowScale + ")";
        }
    }

    private record Observed(GraphOp op, int start, int rows, int cols, float[] values) {}

    /**
     * What a comparison found: the first divergence (empty when every op agrees); the largest difference over the ops
     * compared, relative to its reference row's largest value, and the op where it was (what the tolerance left unused);
     * and, where near ties may flip ({@link #compare(ModelWeights, ModelWeights, Backend, Backend, int[], double, boolean)}),
     * the router row where the two picked different experts of nearly equal weight, after which nothing is compared.
     */
    public record Result(
            Optional<Divergence> divergence, double worst, GraphOp worstOp, Optional<Divergence> tieFlip) {}

    /**
     * @param tolerance relative to each reference row's largest |value| (1e-4 suits float32 backends; see the conformance kit)
     * @return the first divergence, or empty when every op agrees
     */
    public static Optional<Divergence> compare(
            ModelWeights weights, Backend backend, Backend reference, int[] tokens, double tolerance) {
        return compare(weights, weights, backend, reference, tokens, tolerance, false)
                .divergence();
    }

    /**
     * Compares {@code backend} on {@code weights} with {@code reference} on {@code referenceWeights} (the weights the
     * backend really multiplies, {@link VerifyPlan}), op by op up to the first divergence. With {@code tiesMayFlip}
     * (a backend that rounds its activations: {@link VerifyPlan#tiesMayFlip}), a router row whose expert ids differ
     * only where the two sides' routing weights agree within the tolerance is a near tie that the rounding flipped,
     * not an error: the comparison stops there (every later op depends on that choice) and reports it.
     */
    public static Result compare(
            ModelWeights weights,
            ModelWeights referenceWeights,
            Backend backend,
            Backend reference,
            int[] tokens,
            double tolerance,
            boolean tiesMayFlip) {
        List<Observed> mine = run(weights, backend, tokens);
        List<Observed> ref = run(referenceWeights, reference, tokens);
        int k = weights.config().expertsPerToken();
        double worst = 0;
        GraphOp worstOp = null;
        for (int n = 0; n < ref.size(); n++) {
            Observed r = ref.get(n), m = mine.get(n);
            for (int i = 0; i < r.rows; i++) {
                double scale = 1e-30;
                int from = r.op.kind() == OpKind.ROUTER ? k : 0; // router rows: k ids (exact), then k weights
                for (int c = from; c < r.cols; c++) scale = Math.max(scale, Math.abs(r.values[i * r.cols + c]));
                boolean flip = false;
                for (int c = 0; c < from; c++) {
                    float e = r.values[i * r.cols + c], a = m.values[i * r.cols + c];
                    if (e == a) continue;
                    float we = r.values[i * r.cols + k + c], wa = m.values[i * r.cols + k + c];
                    if (!tiesMayFlip || !(Math.abs(we - wa) <= tolerance * scale))
                        return new Result(
                                Optional.of(new Divergence(r.op, r.start + i, c, e, a, scale)),
                                Double.POSITIVE_INFINITY,
                                r.op,
                                Optional.empty());
                    flip = true;
                }
                if (flip) {
                    int c = 0;
                    while (r.values[i * r.cols + c] == m.values[i * r.cols + c]) c++;
                    return new Result(
                            Optional.empty(),
                            worst,
                            worstOp,
                            Optional.of(new Divergence(
                                    r.op, r.start + i, c, r.values[i * r.cols + c], m.values[i * r.cols + c], scale)));
                }
                for (int c = from; c < r.cols; c++) {
                    float e = r.values[i * r.cols + c], a = m.values[i * r.cols + c];
                    double rel = Math.abs(e - a) / scale;
                    if (!(rel <= tolerance))
                        return new Result(
                                Optional.of(new Divergence(r.op, r.start + i, c, e, a, scale)),
                                Double.isNaN(rel) ? Double.POSITIVE_INFINITY : rel,
                                r.op,
                                Optional.empty());
                    if (rel > worst) {
                        worst = rel;
                        worstOp = r.op;
                    }
                }
            }
        }
        return new Result(Optional.empty(), worst, worstOp, Optional.empty());
    }

    private static List<Observed> run(ModelWeights weights, Backend backend, int[] tokens) {
        List<Observed> out = new ArrayList<>();
        try (LoadedWeights w = backend.loadWeights(weights);
                KvCache cache = backend.createKvCache(new KvCacheSpec(weights.config(), tokens.length));
                Executor ex = new Executor(backend, w)) {
            ex.observer((op, start, rows, cols, values) -> out.add(new Observed(op, start, rows, cols, values.get())))
                    .forward(tokens, 0, cache, Executor.Output.ALL_LOGITS);
        }
        return out;
    }
}
