package io.gossgpu.cuda;

import io.gossgpu.backend.BackendOptions;
import io.gossgpu.device.OpParams.ArgmaxParams;
import io.gossgpu.device.SampleParams;
import io.gossgpu.device.SamplePipeline;
import java.util.List;

/**
 * What a step hands back: the argmax of logits rows (argmax.cu) and plain temperature sampling (sample.cu, run by the
 * device layer's {@link SamplePipeline}: 256 threads per block, shared memory declared by the kernels). Both are part of
 * a recorded decode step; the temperature and the draw are read from the device layer's draws buffer, written on the
 * stream, so the step's graph replays unchanged.
 */
final class SampleLauncher {
    /** The entry points: argmax.cu's, then sample.cu's. */
    static final CudaEntry ARGMAX = new CudaEntry("argmax", "argmax", 3, ArgmaxParams.class),
            MAX = new CudaEntry("sample", SamplePipeline.MAX, 2, SampleParams.class),
            SUMS = new CudaEntry("sample", SamplePipeline.SUMS, 3, SampleParams.class),
            PICK = new CudaEntry("sample", SamplePipeline.PICK, 3, SampleParams.class);

    static final List<CudaEntry> ENTRIES = List.of(ARGMAX, MAX, SUMS, PICK);
    /**
     * Blocks per row of argmax.cu (its grid's x): 201088 logits are 64 chunks of 3142, about three 16-byte loads per
     * thread of a 256-thread block, so the row is read by 64 SMs at once instead of one.
     */
    static final int ARGMAX_CHUNKS = 64;

    /** Bytes of argmax.cu's work buffer for {@code rows} rows: per row a counter and a non-finite flag, then each chunk's pick. */
    static long argmaxWorkBytes(int rows) {
        return 4L * rows * (2 + 2 * ARGMAX_CHUNKS);
    }

    /** Threads per block of the sampling kernels (SAMPLE_THREADS in sample.cu). */
    static final int SAMPLE_THREADS = 256;

    final SamplePipeline<Long> pipeline;
    final int argmaxBlock;

    SampleLauncher(CudaLauncher launch, BackendOptions o) {
        argmaxBlock = CudaKnobs.ARGMAX.value(o);
        pipeline = new SamplePipeline<>(launch, new SamplePipeline.Shapes(SAMPLE_THREADS, false));
    }
}
