package io.gossgpu.forward;

import io.gossgpu.GossException;
import io.gossgpu.backend.KvCache;
import io.gossgpu.backend.TemperatureDraw;

/**
 * The runtime guard against NaN and infinity: the {@link Executor} checks the final hidden state (and any logits
 * or argmax ids it returns) of every forward pass, and when a value is not finite it runs the pass again with an observer on
 * every op, as {@code goss-gpu verify} does, to name the op, layer and position where the first one appeared.
 * Generation then stops with that one line instead of printing tokens chosen from NaN.
 */
final class NonFinite {
    private NonFinite() {}

    /** Whether {@code values[from .. from+n−1]} are all finite. */
    static boolean none(float[] values, int from, int n) {
        for (int i = from; i < from + n; i++) if (!Float.isFinite(values[i])) return false;
        return true;
    }

    /** Whether no id of an argmax is {@link TemperatureDraw#NOT_FINITE} (the backend saw NaN/Inf in logits it kept). */
    static boolean none(int[] argmax) {
        for (int id : argmax) if (id == TemperatureDraw.NOT_FINITE) return false;
        return true;
    }

    /** Reruns {@code tokens} at {@code start} (same positions, so the cache holds the same values again) watching every op. */
    static GossException locate(Executor ex, int[] tokens, int start, KvCache cache, Executor.Output output) {
        String[] first = new String[1];
        ex.observed(
                (op, from, rows, cols, values) -> {
                    if (first[0] != null) return;
                    float[] v = values.get();
                    for (int i = 0; i < v.length; i++)
                        if (!Float.isFinite(v[i])) {
                            first[0] = v[i] + " first appears in the output of " + op + " at position "
                                    + (from + i / cols) + " (value " + (i % cols) + ")";
                            return;
                        }
                },
                tokens,
                start,
                cache,
                output);
        return new GossException(
                "the model computed non-finite numbers: " + (first[0] != null ? first[0] : "in its final hidden state")
                        + "; generation stopped. The weights are likely damaged (--check-tensors scans them for NaN, infinity and bad MXFP4 scales)");
    }
}
