package io.gossgpu.forward;

import java.util.function.Supplier;

/**
 * Called by the {@link Executor} after every op (debugging, {@link io.gossgpu.debug.Verifier}). Reading the
 * output copies it to the host, so it costs nothing unless {@code values.get()} is called.
 */
@FunctionalInterface
public interface OpObserver {
    /**
     * @param op     the op just run
     * @param start  position of the batch's first row
     * @param rows   rows of the output (tokens in the batch; for LOGITS, the rows whose logits were asked for)
     * @param cols   values per row
     * @param values the output, row-major, copied to the host on demand
     */
    void onOp(GraphOp op, int start, int rows, int cols, Supplier<float[]> values);
}
