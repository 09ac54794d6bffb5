package io.gossgpu.cuda;

import io.gossgpu.device.Grid;
import io.gossgpu.device.KernelParams;

import java.util.List;

import static io.gossgpu.device.Grid.ceilDiv;

/** RoPE (rope.cu), moved unchanged out of the attention launcher when attention went to the device layer. */
final class RopeLauncher {
    /** rope.cu's scalars. */
    record RopeParams(int tokens, int cols, int headDim) implements KernelParams {}

    static final CudaEntry ROPE = new CudaEntry("rope", "rope", 3, RopeParams.class);
    static final List<CudaEntry> ENTRIES = List.of(ROPE);

    private final CudaLauncher launch;
    private final CudaKernel kRope;

    RopeLauncher(CudaLauncher launch) {
        this.launch = launch;
        kRope = launch.kernel(ROPE.name());
    }

    /**
     * RoPE on every head of {@code T} rows of {@code width} values at {@code x} (the rows of the step's sequence
     * {@code seq}), positions {@code start ..} from its slot of the step buffer.
     */
    void rope(long x, int T, int width, int heads, int hd, long table, int seq, int start) {
        long pos = launch.position(seq, start);
        int block = Math.max(32, Math.min(1024, ceilDiv(hd / 2, 32) * 32));
        launch.launch(kRope).buffer(x).buffer(table).buffer(pos).run(new RopeParams(T, width, hd), Grid.of(heads, T, block));
    }
}
