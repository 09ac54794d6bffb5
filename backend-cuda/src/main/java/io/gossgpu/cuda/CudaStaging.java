package io.gossgpu.cuda;

import io.gossgpu.device.HostStaging;
import io.gossgpu.device.ScratchArena;
import java.lang.foreign.MemorySegment;

/**
 * Host values for CUDA's kernels: token ids by a blocking copy on the stream, a sequence's position in its slot of the
 * step buffer ({@link CudaLauncher#position}), so a recorded decode step's graph replays unchanged.
 */
final class CudaStaging implements HostStaging<Long> {
    private final CudaLauncher launch;
    private final ScratchArena<CudaBuffer> scratch;

    CudaStaging(CudaLauncher launch, ScratchArena<CudaBuffer> scratch) {
        this.launch = launch;
        this.scratch = scratch;
    }

    /**
     * A blocking copy on the stream (not the driver's write, which would end a recorded step): after every launched
     * kernel, before this step's recorded ones.
     */
    @Override
    public At<Long> ids(int[] tokens) {
        CudaBuffer ids = scratch.ensure("token ids", 4L * tokens.length);
        ids.copyFrom(MemorySegment.ofArray(tokens));
        return new At<>(ids.address(), 0);
    }

    @Override
    public At<Long> position(int sequence, int start) {
        return new At<>(launch.position(sequence, start), 0);
    }
}
