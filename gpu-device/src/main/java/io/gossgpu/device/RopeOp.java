package io.gossgpu.device;

import io.gossgpu.device.OpParams.RopeParams;
import java.util.function.Function;

/**
 * RoPE of one sequence's query and key rows, in one launch per sequence for every GPU API: {@code rope}
 * (backend-cuda/kernels/rope.cu, backend-opencl/kernels/rope.cl, backend-metal/kernels/rope.metal) takes the query rows {@code q} and the key
 * rows {@code k} (both rotated in place), the cos/sin {@code table} ({@link RopeTable}) and {@code pos}, whose first int
 * is the position of row {@link RopeParams#row0} (read from device memory on every API, as the attention kernels read
 * it, so a CUDA graph of a decode step replays unchanged), then {@link RopeParams}. The grid spans the query heads and
 * then the key heads; how each API spreads heads, pairs and rows over groups comes in as a grid.
 *
 * @param <B> the API's buffer argument
 */
public final class RopeOp<B> {
    public static final String ROPE = "rope";

    private final Launcher<B> launcher;
    private final Function<RopeParams, Grid> grid;
    private final DeviceKernel rope;

    /** The kernel looked up now, so a missing one fails when the backend is made. */
    public RopeOp(Launcher<B> launcher, Function<RopeParams, Grid> grid) {
        this.launcher = launcher;
        this.grid = grid;
        rope = launcher.kernel(ROPE);
    }

    /** The kernel (for a backend's check of its group size). */
    public DeviceKernel kernel() {
        return rope;
    }

    /**
     * Queues RoPE on rows {@code p.row0() ..} of {@code q} and {@code k}, at positions from {@code pos[0]} (read at byte
     * {@code posOffset}) on.
     */
    public void run(B q, B k, B table, B pos, long posOffset, RopeParams p) {
        launcher.launch(rope)
                .buffer(q)
                .buffer(k)
                .buffer(table)
                .buffer(pos, posOffset)
                .run(p, grid.apply(p));
    }
}
