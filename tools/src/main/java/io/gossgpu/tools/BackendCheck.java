package io.gossgpu.tools;

import io.gossgpu.api.EngineOptions;
import io.gossgpu.debug.BackendChecks;
import java.nio.file.Path;
import java.util.function.Consumer;
import java.util.function.IntFunction;

/**
 * A developer facility: a backend checked against the reference backend, or its logits written for other engines to
 * compare ({@code goss-gpu verify}, {@code goss-gpu logits}). Each call opens {@link EngineOptions#model()} as the
 * options say and the backend {@link EngineOptions#backend()} itself, with the experts placed as
 * {@link EngineOptions#placement()} asks; token ids are asked of {@code tokens} once the vocabulary size is known (it
 * may refuse them with a {@link io.gossgpu.GossException}).
 */
public final class BackendCheck {
    private BackendCheck() {}

    private static BackendChecks of(EngineOptions o) {
        return new BackendChecks(
                o.model(),
                Loading.of(o),
                o.backend(),
                o.backendOptions(),
                o.placement().withKvType(o.kvType()),
                o.prefillChunk());
    }

    /**
     * Writes every position's logits of one prefill of the tokens: {@code dir/logits.f32} (little-endian float32,
     * positions × vocabulary, row-major) and {@code dir/logits.json} (shape, tokens, backend, top 5 per position).
     *
     * @return the line that says what was written
     */
    public static String writeLogits(EngineOptions options, IntFunction<int[]> tokens, Path dir) {
        return of(options).writeLogits(tokens, dir);
    }

    /**
     * Runs the tokens (null: 24 random ids, seeded) on the backend and the reference op by op, and gives {@code out}
     * which arithmetic is checked, then the first op, layer and position where they differ beyond {@code tolerance}
     * (null: the one the backend's arithmetic is stated to hold), or that they agree.
     *
     * @return whether they agree
     */
    public static boolean verifyOps(
            EngineOptions options, IntFunction<int[]> tokens, Double tolerance, Consumer<String> out) {
        return of(options).verifyOps(tokens, tolerance, out);
    }

    /**
     * Measures the backend's next-token distributions against the reference's (KL divergence, top-1 agreement, RMS
     * logit error) over the UTF-8 {@code text} cut into chunks of {@code chunk} tokens, else the JSON-lines
     * {@code conversations}, else (both null) the demo model's held-out conversations, at most {@code limit}
     * sequences; gives {@code out} the report's lines.
     */
    public static void measureKl(
            EngineOptions options, Path text, Path conversations, int chunk, int limit, Consumer<String> out) {
        of(options).measureKl(text, conversations, chunk, limit, out);
    }
}
