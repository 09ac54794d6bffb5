package io.gossgpu.cuda;

import io.gossgpu.GossException;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.device.Grid;
import io.gossgpu.device.KernelParams;
import io.gossgpu.device.OpParams.ArgmaxParams;

import java.util.List;

import static io.gossgpu.cuda.CudaLauncher.checkBlock;

/**
 * What a step hands back: the argmax of logits rows (argmax.cu) and plain temperature sampling (sample.cu:
 * chunk maxima, chunk sums of {@code e_j} in double, then the crossing id). Both are part of a recorded decode step;
 * the temperature and the draw go to the step buffer by value on the stream ({@link #SAMPLING_OFFSET}), not as kernel
 * parameters, so the step's graph replays unchanged.
 */
final class SampleLauncher {
    /** The scalars of sample.cu's three kernels (sample_max and sample_sums do not read chunks). */
    record SampleParams(int vocab, int chunk, int chunks) implements KernelParams {}

    static final CudaEntry ARGMAX = new CudaEntry("argmax", "argmax", 3, ArgmaxParams.class),
            MAX = new CudaEntry("sample", "sample_max", 2, SampleParams.class),
            SUMS = new CudaEntry("sample", "sample_sums", 4, SampleParams.class),
            PICK = new CudaEntry("sample", "sample_pick", 5, SampleParams.class);
    static final List<CudaEntry> ENTRIES = List.of(ARGMAX, MAX, SUMS, PICK);
    /**
     * Blocks per row of argmax.cu (its grid's x): 201088 logits are 64 chunks of 3142, about three 16-byte loads per
     * thread of a 256-thread block, so the row is read by 64 SMs at once instead of one.
     */
    static final int ARGMAX_CHUNKS = 64;

    /** Bytes of argmax.cu's work buffer for {@code rows} rows: per row a counter (and a spare word), then each chunk's pick. */
    static long argmaxWorkBytes(int rows) {
        return 4L * rows * (2 + 2 * ARGMAX_CHUNKS);
    }

    /** Threads per block of the sampling kernels (SAMPLE_THREADS in sample.cu). */
    static final int SAMPLE_THREADS = 256;
    /** Where the sampling temperatures and draws (two doubles per sampled row) sit in the step buffer, after the positions. */
    static final int SAMPLING_OFFSET = 4 * CudaBackend.STEP_SEQUENCES;

    private final CudaLauncher launch;
    private final CudaBuffer step;
    private final CudaKernel kMax, kSums, kPick;
    final int argmaxBlock;

    SampleLauncher(CudaLauncher launch, CudaBuffer step, BackendOptions o) {
        this.launch = launch;
        this.step = step;
        argmaxBlock = CudaKnobs.ARGMAX.value(o);
        kMax = launch.kernel(MAX.name());
        kSums = launch.kernel(SUMS.name());
        kPick = launch.kernel(PICK.name());
        for (CudaKernel k : new CudaKernel[]{kMax, kSums, kPick})
            if (k.maxThreadsPerBlock() < SAMPLE_THREADS)
                throw new GossException("kernel " + k.name() + " cannot run " + SAMPLE_THREADS + " threads per block on this device");
    }

    /**
     * The draw from the {@code vocab} logits of row {@code row} of {@code logits} into {@code work}: {@code chunks} double
     * sums, float maxima, then the id. {@code index}: the step's {@code index}-th sampled row, whose temperature and draw
     * take their own place in the step buffer.
     */
    void sample(CudaBuffer logits, int row, int vocab, int chunks, double temperature, double u, CudaBuffer work, int index) {
        if (index < 0 || index >= CudaBackend.STEP_SAMPLED)
            throw new GossException("cuda: a step samples at most " + CudaBackend.STEP_SAMPLED + " rows on the device");
        int chunk = Grid.ceilDiv(vocab, chunks);
        long l = logits.address() + 4L * row * vocab;
        long sums = work.address(), maxes = sums + 8L * chunks, id = maxes + 4L * chunks;
        int at = SAMPLING_OFFSET + 16 * index;
        long params = launch.stepAddress() + at;
        setDouble(at, temperature);
        setDouble(at + 8, u);
        SampleParams p = new SampleParams(vocab, chunk, chunks);
        launch.launch(kMax).buffer(l).buffer(maxes).run(p, Grid.of(chunks, SAMPLE_THREADS));
        launch.launch(kSums).buffer(l).buffer(maxes).buffer(params).buffer(sums).run(p, Grid.of(chunks, SAMPLE_THREADS));
        launch.launch(kPick).buffer(l).buffer(maxes).buffer(sums).buffer(params).buffer(id).run(p, Grid.of(1, SAMPLE_THREADS));
    }

    /** Queues writing {@code v} into the step buffer on the stream (two 32-bit words, little-endian). */
    private void setDouble(long offset, double v) {
        long bits = Double.doubleToRawLongBits(v);
        step.set32(offset, (int) bits);
        step.set32(offset + 4, (int) (bits >>> 32));
    }
}
