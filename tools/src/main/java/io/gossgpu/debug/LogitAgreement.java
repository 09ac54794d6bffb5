package io.gossgpu.debug;

import io.gossgpu.GossException;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.KvCache;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.backend.KvType;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.forward.Executor;
import io.gossgpu.model.ModelWeights;
import java.util.Arrays;
import java.util.List;

/**
 * How closely a backend's next-token distributions follow the reference's over a set of token sequences, measured as
 * llama.cpp's {@code llama-perplexity --kl-divergence} does: both run each sequence in one prefill with every
 * position's logits, and each scored position gives the KL divergence KL(reference ‖ backend) of the two softmaxes over
 * the full vocabulary (in nats), whether the two argmaxes agree, and the squared logit differences.
 */
public final class LogitAgreement {
    private LogitAgreement() {}

    /** A token sequence whose positions {@code from ..< tokens.length} are scored (a conversation: its completion). */
    public record Sequence(int[] tokens, int from) {
        public Sequence {
            if (tokens.length == 0 || from < 0 || from >= tokens.length)
                throw new GossException(
                        "a scored sequence needs at least one token and a first scored position inside it");
        }
    }

    /**
     * The figures: {@code positions} scored; mean, 99th percentile and largest KL divergence (nats); the share of
     * positions whose argmax agrees; the RMS of the logit differences, and the RMS of the reference's logits (for scale).
     */
    public record Stats(
            int sequences,
            int positions,
            double meanKl,
            double p99Kl,
            double maxKl,
            double top1,
            double rmsError,
            double rmsReference) {
        @Override
        public String toString() {
            return String.format(
                    "KL mean %.3g, p99 %.3g, max %.3g nats; top-1 agreement %.2f %%; RMS logit error %.3g (reference logits' RMS %.3g) over %d positions of %d sequences",
                    meanKl, p99Kl, maxKl, 100 * top1, rmsError, rmsReference, positions, sequences);
        }
    }

    /** Runs every sequence through both backends (each loads {@code weights} once) and compares their logits. */
    public static Stats measure(ModelWeights weights, Backend backend, Backend reference, List<Sequence> sequences) {
        return measure(weights, backend, KvType.F32, reference, sequences);
    }

    /**
     * As above with {@code backend}'s KV caches stored as {@code kv} (the reference's stay F32, the exact path): the
     * cost of the cache type, as the field states it, on top of the backend's own.
     */
    public static Stats measure(
            ModelWeights weights, Backend backend, KvType kv, Backend reference, List<Sequence> sequences) {
        if (sequences.isEmpty()) throw new GossException("no sequences to score");
        int vocab = weights.config().vocabSize();
        for (Sequence s : sequences)
            for (int t : s.tokens())
                if (t >= vocab)
                    throw new GossException("token " + t + " is outside this model's vocabulary of " + vocab
                            + " tokens: conversations and texts are tokenized with o200k_harmony (201088 tokens)");
        Accumulator acc = new Accumulator(vocab);
        try (LoadedWeights wb = backend.loadWeights(weights);
                LoadedWeights wr = reference.loadWeights(weights)) {
            for (Sequence s : sequences) {
                float[] got = logits(backend, wb, s.tokens(), kv), want = logits(reference, wr, s.tokens(), KvType.F32);
                for (int p = s.from(); p < s.tokens().length; p++) acc.add(want, got, p * vocab);
            }
        }
        return acc.stats(sequences.size());
    }

    private static float[] logits(Backend b, LoadedWeights w, int[] tokens, KvType kv) {
        try (KvCache cache = b.createKvCache(new KvCacheSpec(w.config(), tokens.length, 0, kv));
                Executor ex = new Executor(b, w)) {
            return ex.forward(tokens, 0, cache, Executor.Output.ALL_LOGITS).logits();
        }
    }

    /** The per-position sums, in double. */
    static final class Accumulator {
        private final int vocab;
        private double[] kl = new double[64];
        private int n, agree;
        private double sq, sqRef;

        Accumulator(int vocab) {
            this.vocab = vocab;
        }

        /** One position: the reference's row {@code want[off ..]} and the backend's {@code got[off ..]}. */
        void add(float[] want, float[] got, int off) {
            double mw = Double.NEGATIVE_INFINITY, mg = Double.NEGATIVE_INFINITY;
            int aw = 0, ag = 0;
            for (int v = 0; v < vocab; v++) {
                float w = want[off + v], g = got[off + v];
                if (w > mw) {
                    mw = w;
                    aw = v;
                }
                if (g > mg) {
                    mg = g;
                    ag = v;
                }
                double d = (double) w - g;
                sq += d * d;
                sqRef += (double) w * w;
            }
            double zw = 0, zg = 0;
            for (int v = 0; v < vocab; v++) {
                zw += Math.exp(want[off + v] - mw);
                zg += Math.exp(got[off + v] - mg);
            }
            double lzw = mw + Math.log(zw), lzg = mg + Math.log(zg), k = 0;
            // KL(P‖Q) = Σ p (log p − log q), log p = w − log Zw, log q = g − log Zg
            for (int v = 0; v < vocab; v++) {
                double lp = want[off + v] - lzw;
                k += Math.exp(lp) * (lp - (got[off + v] - lzg));
            }
            if (n == kl.length) kl = Arrays.copyOf(kl, 2 * n);
            kl[n++] = Math.max(0, k); // rounding may leave −1e-17 where the two agree
            if (aw == ag) agree++;
        }

        Stats stats(int sequences) {
            double[] sorted = Arrays.copyOf(kl, n);
            Arrays.sort(sorted);
            double sum = 0;
            for (double k : sorted) sum += k;
            // the nearest-rank 99th percentile: the smallest value with at least 99 % of the positions at or below it
            double p99 = sorted[Math.max(0, (int) Math.ceil(0.99 * n) - 1)];
            double values = (double) n * vocab;
            return new Stats(
                    sequences,
                    n,
                    sum / n,
                    p99,
                    sorted[n - 1],
                    (double) agree / n,
                    Math.sqrt(sq / values),
                    Math.sqrt(sqRef / values));
        }
    }
}
