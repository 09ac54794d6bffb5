package io.gossgpu.bench;

import io.gossgpu.backend.Backend;
import io.gossgpu.graph.GraphOp;
import io.gossgpu.graph.OpKind;
import io.gossgpu.graph.OpObserver;
import io.gossgpu.model.ModelWeights;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * Where a step's time goes, op kind by op kind (summed over the layers): the wall time between one op's end and the
 * next's, taken by an {@link OpObserver} on the executor. An op's time is the gap since the previous op ended, so
 * EMBED also carries what happens between two steps (the caller's loop, the step's begin and end).
 *
 * <p>A GPU backend queues its ops; with {@code synchronize} each op is waited for before it is timed, which serialises
 * what the device would overlap: the shares are right, the total is a little slower than the step unobserved.
 */
final class OpTimes implements OpObserver {
    private final Backend backend;
    private final boolean synchronize;
    private final long[] nanos = new long[OpKind.values().length];
    private long last;
    /** Tokens the timed steps processed (EMBED's rows). */
    private long tokens;

    OpTimes(Backend backend, boolean synchronize) {
        this.backend = backend;
        this.synchronize = synchronize;
    }

    /** A new, empty profile of the same backend. */
    OpTimes fresh() {
        return new OpTimes(backend, synchronize);
    }

    /** Forgets what was timed; the next op's time counts from now. */
    void reset() {
        Arrays.fill(nanos, 0);
        tokens = 0;
        last = System.nanoTime();
    }

    /** Goes on timing after a pause (other work ran since the last op): the next op's time counts from now. */
    void resume() {
        last = System.nanoTime();
    }

    @Override
    public void onOp(GraphOp op, int start, int rows, int cols, Supplier<float[]> values) {
        if (synchronize) backend.synchronize();
        long now = System.nanoTime();
        nanos[op.kind().ordinal()] += now - last;
        last = now;
        if (op.kind() == OpKind.EMBED) tokens += rows;
    }

    /**
     * Prints one line per op kind: ms per token and share of the step; for a decode run ({@code decodeFrom} ≥ 0, its
     * first position, {@code decodeTokens} long) also the bytes the op reads per token and the GB/s that makes.
     */
    void print(PrintStream log, String test, ModelWeights w, io.gossgpu.backend.LoadedWeights held, int decodeFrom, int decodeTokens) {
        long total = 0;
        for (long n : nanos) total += n;
        if (total == 0 || tokens == 0) return;
        boolean decode = decodeFrom >= 0;
        log.printf(Locale.ROOT, "%s, time per op kind over %d tokens:%n  %-13s %9s %6s%s%n", test, tokens, "op", "ms/token", "share",
                decode ? String.format(Locale.ROOT, " %10s %8s", "MB/token", "GB/s") : "");
        for (OpKind k : OpKind.values()) {
            double ms = nanos[k.ordinal()] / 1e6 / tokens;
            String traffic = "";
            if (decode) {
                double bytes = DecodeTraffic.meanBytesPerToken(w, held, decodeFrom, decodeTokens, k);
                traffic = String.format(Locale.ROOT, " %10.2f %8.1f", bytes / 1e6, ms > 0 ? bytes / (ms * 1e6) : 0);
            }
            log.printf(Locale.ROOT, "  %-13s %9.3f %5.1f%%%s%n", k.name().toLowerCase(Locale.ROOT), ms, 100.0 * nanos[k.ordinal()] / total, traffic);
        }
        log.printf(Locale.ROOT, "  %-13s %9.3f%n", "step", total / 1e6 / tokens);
    }
}
