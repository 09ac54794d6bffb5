package io.gossgpu.debug;

import io.gossgpu.backend.Backend;
import io.gossgpu.backend.KvCache;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.graph.Executor;
import io.gossgpu.graph.GraphOp;
import io.gossgpu.graph.OpKind;
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
            return op + " at position " + position + ", value " + index + ": reference " + expected + ", backend " + actual
                    + " (|diff| " + Math.abs(expected - actual) + ", row scale " + rowScale + ")";
        }
    }

    private record Observed(GraphOp op, int start, int rows, int cols, float[] values) {}

    /**
     * @param tolerance relative to each reference row's largest |value| (1e-4 suits float32 backends; see the conformance kit)
     * @return the first divergence, or empty when every op agrees
     */
    public static Optional<Divergence> compare(ModelWeights weights, Backend backend, Backend reference, int[] tokens, double tolerance) {
        List<Observed> mine = run(weights, backend, tokens);
        List<Observed> ref = run(weights, reference, tokens);
        for (int n = 0; n < ref.size(); n++) {
            Observed r = ref.get(n), m = mine.get(n);
            int k = weights.config().expertsPerToken();
            for (int i = 0; i < r.rows; i++) {
                double scale = 1e-30;
                int from = r.op.kind() == OpKind.ROUTER ? k : 0; // router rows: k ids (exact), then k weights
                for (int c = from; c < r.cols; c++) scale = Math.max(scale, Math.abs(r.values[i * r.cols + c]));
                for (int c = 0; c < r.cols; c++) {
                    float e = r.values[i * r.cols + c], a = m.values[i * r.cols + c];
                    boolean exact = c < from;
                    if (exact ? e != a : !(Math.abs(e - a) <= tolerance * scale))
                        return Optional.of(new Divergence(r.op, r.start + i, c, e, a, scale));
                }
            }
        }
        return Optional.empty();
    }

    private static List<Observed> run(ModelWeights weights, Backend backend, int[] tokens) {
        List<Observed> out = new ArrayList<>();
        try (LoadedWeights w = backend.loadWeights(weights);
             KvCache cache = backend.createKvCache(new KvCacheSpec(weights.config(), tokens.length));
             Executor ex = new Executor(backend, w)) {
            ex
                    .observer((op, start, rows, cols, values) -> out.add(new Observed(op, start, rows, cols, values.get())))
                    .forward(tokens, 0, cache, Executor.Output.ALL_LOGITS);
        }
        return out;
    }
}
