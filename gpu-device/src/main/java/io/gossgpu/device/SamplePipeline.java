package io.gossgpu.device;

import io.gossgpu.GossException;
import java.util.List;

/**
 * Plain temperature sampling of one logits row on the device, written once over a {@link Launcher} for every API that
 * has the sampling kernels (backend-cuda/kernels/sample.cu, backend-opencl/kernels/sample.cl; Metal declines
 * {@link io.gossgpu.backend.BackendOp#SAMPLE} and the host samples). With {@code G} chunks of the row:
 * {@code sample_max} (G groups: each chunk's max), {@code sample_sums} (G groups: each chunk's sum of
 * {@code exp((l − max)/T)} in double), {@code sample_pick} (one group: the crossing chunk, piece and id). Each takes the
 * buffers listed at its launch below, in that order, then {@link SampleParams}:
 * <ul>
 *   <li>{@code logits}: rows of {@code vocab} floats, {@link SampleParams#row} sampled;</li>
 *   <li>{@code draws}: pairs of doubles (temperature, draw in [0, 1)), {@link SampleParams#draw} this row's, written on
 *       the queue before the launches (so the launches of a decode step are the same from token to token: a CUDA
 *       graph replays them);</li>
 *   <li>{@code work}: G double sums, then G float maxima, then the id (int32) at byte {@link #idOffset}.</li>
 * </ul>
 * How many threads a group has, and whether the kernels take their group memory as arguments (OpenCL's
 * {@code __local} arguments; CUDA's kernels declare theirs), come in as {@link Shapes}.
 *
 * @param <B> the API's buffer argument
 */
public final class SamplePipeline<B> {
    public static final String MAX = "sample_max", SUMS = "sample_sums", PICK = "sample_pick";
    /** The kernels, by name. */
    public static final List<String> KERNELS = List.of(MAX, SUMS, PICK);
    /** Buffers each kernel takes before its {@link SampleParams}, in {@link #KERNELS}' order. */
    public static final List<Integer> BUFFERS = List.of(2, 3, 3);

    /**
     * How an API runs the kernels.
     *
     * @param threads     threads per group, a power of two: with {@code localMemory} the most (the pipeline takes the
     *                    largest power of two up to it that every kernel runs on the device), else exactly this (the
     *                    kernels' own group memory is sized for it: the pipeline fails when a kernel cannot run it)
     * @param localMemory whether the kernels take their group memory as arguments after the buffers: sample_max a
     *                    float per thread; sample_sums a float and a double per thread; sample_pick those, then two
     *                    doubles and two ints
     */
    public record Shapes(int threads, boolean localMemory) {
        public Shapes {
            if (threads <= 0 || Integer.bitCount(threads) != 1)
                throw new IllegalArgumentException("threads per group must be a power of two, got " + threads);
        }
    }

    private final Launcher<B> launcher;
    private final boolean localMemory;
    private final int threads;
    private final DeviceKernel max, sums, pick;

    /** The kernels looked up now, so a missing one (or one that cannot run the group) fails when the backend is made. */
    public SamplePipeline(Launcher<B> launcher, Shapes shapes) {
        this.launcher = launcher;
        localMemory = shapes.localMemory();
        max = launcher.kernel(MAX);
        sums = launcher.kernel(SUMS);
        pick = launcher.kernel(PICK);
        int n = shapes.threads();
        for (DeviceKernel k : List.of(max, sums, pick)) {
            if (k.maxThreads() >= n) continue;
            if (!localMemory)
                throw new GossException(
                        "kernel " + k.name() + " cannot run " + n + " threads per group on this device");
            n = Integer.highestOneBit(Math.max(1, k.maxThreads()));
        }
        threads = n;
    }

    /** Threads per group. */
    public int threads() {
        return threads;
    }

    /** Bytes of a row's work buffer. */
    public static long workBytes(int chunks) {
        return 12L * chunks + 4;
    }

    /** Where the drawn id (int32) sits in the work buffer. */
    public static long idOffset(int chunks) {
        return 12L * chunks;
    }

    /** The params of row {@code row} of {@code vocab} logits in {@code chunks} chunks, its temperature and draw at pair {@code draw}. */
    public static SampleParams params(int row, int vocab, int chunks, int draw) {
        return new SampleParams(row, vocab, Grid.ceilDiv(vocab, chunks), chunks, draw);
    }

    /** Queues the draw from row {@code p.row()} of {@code logits} into {@code work} (its id at {@link #idOffset}). */
    public void run(B logits, B draws, B work, SampleParams p) {
        int n = threads;
        KernelLaunch<B> l = launcher.launch(max).buffer(logits).buffer(work);
        if (localMemory) l.local(4L * n);
        l.run(p, Grid.of(p.chunks(), n));
        l = launcher.launch(sums).buffer(logits).buffer(draws).buffer(work);
        if (localMemory) l.local(4L * n).local(8L * n);
        l.run(p, Grid.of(p.chunks(), n));
        l = launcher.launch(pick).buffer(logits).buffer(draws).buffer(work);
        if (localMemory) l.local(4L * n).local(8L * n).local(16).local(8);
        l.run(p, Grid.of(1, n));
    }
}
