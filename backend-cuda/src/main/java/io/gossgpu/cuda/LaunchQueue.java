package io.gossgpu.cuda;

import io.gossgpu.cuda.CudaKernel.Dim3;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Where {@link CudaBackend}'s kernel launches go: straight to the stream, or, during a recorded step
 * ({@link #beginStep}: the backend's decode steps), into a list that {@link #endStep} replays as a CUDA graph. A decode step is
 * 200+ launches of a few microseconds each; as one {@code cuGraphLaunch} the host work between them
 * disappears.
 *
 * <p>A step's launches are compared with the cached graphs' (kernel, grid, block, shared memory and
 * parameter bytes): an equal one is relaunched, otherwise the step is captured (stream capture),
 * instantiated and cached (a few, most recently used first): one graph per batch shape (the sequences of a step,
 * their caches and the rows they take). So anything that changes between tokens must not be a kernel parameter:
 * each sequence's position is read by the kernels from its slot of the step buffer ({@link #position}), the token
 * ids from the backend's token buffer. A buffer that moves (a scratch buffer grown) only changes the parameters and
 * costs one capture.
 *
 * <p>Any other reason to wait for the stream (a read, a copy, a buffer freed) must call {@link #flush}
 * first: it launches what is pending one by one, and the step is no longer recorded. A host crossing inside a step (a
 * split model's CPU experts, io.gossgpu.device) calls {@link #endSegment} instead: what is recorded so far runs as one
 * graph and the step goes on recording, so a step split by {@code n} crossings is {@code n + 1} graphs, each cached
 * under its place in the step (the launches of a segment differ from layer to layer).
 */
final class LaunchQueue implements AutoCloseable {
    /**
     * Graphs kept per segment of a step: decode steps of the batch shapes in use (1, 2, … sequences; argmax, sampling or
     * logits output).
     */
    static final int MAX_GRAPHS = 16;

    /** One recorded launch; {@code params} are the arguments of {@link KernelArgs} (their 8-byte slots, a struct's several). */
    record Launch(CudaKernel kernel, Dim3 grid, Dim3 block, int shared, KernelArgs.Saved params) {
        boolean same(Launch o) {
            return kernel == o.kernel
                    && grid.equals(o.grid)
                    && block.equals(o.block)
                    && shared == o.shared
                    && params.equals(o.params);
        }
    }

    private record Cached(List<Launch> launches, CudaGraph graph) {}

    private final CudaStream stream;
    private final boolean graphs;
    private final CudaBuffer step;
    private final KernelArgs replayArgs = new KernelArgs();
    private final List<Launch> pending = new ArrayList<>();
    /** Cached graphs by segment of the step (0: the step up to its first crossing, or the whole step), most recent first. */
    private final List<List<Cached>> cache = new ArrayList<>();

    private boolean recording;
    /** Which segment of the recorded step the pending launches are. */
    private int segment;
    /** Per position slot: the value the kernels will read once the queued work gets there (−1: unknown). */
    private final int[] queued;
    /** Per position slot: the value the recorded launches need (−1: none yet). */
    private final int[] recorded;

    private long captures, graphLaunches, kernelLaunches;

    /** {@code step}: a device buffer whose first {@code slots} ints are the positions the kernels read. */
    LaunchQueue(CudaStream stream, CudaBuffer step, int slots, boolean graphs) {
        this.stream = stream;
        this.step = step;
        this.graphs = graphs;
        queued = new int[slots];
        recorded = new int[slots];
        Arrays.fill(queued, -1);
        Arrays.fill(recorded, -1);
    }

    /** Position slots of the step buffer (sequences a step may hold). */
    int slots() {
        return queued.length;
    }

    boolean graphsEnabled() {
        return graphs;
    }

    /** The step buffer's device address (kernel parameter {@code pos} of the step's first sequence; slot {@code s} at {@code + 4s}). */
    long stepAddress() {
        return step.address();
    }

    /** Queues (or records) one launch; {@code args} may be refilled as soon as this returns. */
    void launch(CudaKernel k, Dim3 grid, Dim3 block, int shared, KernelArgs args) {
        if (recording) {
            pending.add(new Launch(k, grid, block, shared, args.save()));
        } else {
            k.launch(stream, grid, block, shared, args);
            kernelLaunches++;
        }
    }

    /**
     * Makes the kernels launched next read {@code start} from position slot {@code slot} of the step buffer. While
     * recording, the value is written just before the step's launches at {@link #endStep}; otherwise now, on the stream.
     */
    void position(int slot, int start) {
        if (recording) {
            if (recorded[slot] < 0 || recorded[slot] == start) {
                recorded[slot] = start;
                return;
            }
            flush(); // two positions of one sequence in one step: not a decode step after all
        }
        write(slot, start);
    }

    private void write(int slot, int start) {
        if (start != queued[slot]) {
            step.set32(4L * slot, start);
            queued[slot] = start;
        }
    }

    /** Writes the recorded positions (before the recorded launches go out) and forgets them. */
    private void writeRecorded() {
        for (int s = 0; s < recorded.length; s++)
            if (recorded[s] >= 0) {
                write(s, recorded[s]);
                recorded[s] = -1;
            }
    }

    /**
     * Starts a step: what is recorded from before is launched, and the step's launches are recorded when
     * {@code record} and graphs are on (they wait for {@link #endStep} or {@link #flush}), else go straight out.
     */
    void beginStep(boolean record) {
        flush();
        recording = graphs && record;
        segment = 0;
    }

    /**
     * Launches what the step recorded so far as one graph (cached or captured now) and goes on recording: the launches
     * and copies queued next are ordered after it. Nothing when the step is not recorded or nothing is pending.
     */
    void endSegment() {
        if (!recording || pending.isEmpty()) {
            return;
        }
        launchPending();
        segment++;
    }

    /** Launches the recorded step as a graph (cached or captured now); then launches go straight to the stream again. */
    void endStep() {
        if (!recording) {
            return;
        }
        recording = false;
        if (pending.isEmpty()) {
            return;
        }
        launchPending();
    }

    /** Writes the recorded positions, then launches the pending launches as the current segment's graph. */
    private void launchPending() {
        writeRecorded();
        List<Launch> launches = List.copyOf(pending);
        pending.clear();
        while (cache.size() <= segment) {
            cache.add(new ArrayList<>());
        }
        List<Cached> graphs = cache.get(segment);
        CudaGraph g = cached(graphs, launches);
        if (g == null) {
            g = CudaGraph.capture(stream, () -> launches.forEach(this::replay));
            captures++;
            graphs.addFirst(new Cached(launches, g));
            if (graphs.size() > MAX_GRAPHS) {
                graphs.removeLast().graph().close();
            }
        }
        g.launch(stream);
        graphLaunches++;
    }

    private static CudaGraph cached(List<Cached> graphs, List<Launch> launches) {
        for (int i = 0; i < graphs.size(); i++) {
            Cached c = graphs.get(i);
            if (same(c.launches(), launches)) {
                graphs.addFirst(graphs.remove(i));
                return c.graph();
            }
        }
        return null;
    }

    private static boolean same(List<Launch> a, List<Launch> b) {
        if (a.size() != b.size()) {
            return false;
        }
        for (int i = 0; i < a.size(); i++) {
            if (!a.get(i).same(b.get(i))) {
                return false;
            }
        }
        return true;
    }

    /** Launches whatever is recorded, one by one, and stops recording: call before any host wait, copy or free. */
    void flush() {
        boolean wasRecording = recording;
        recording = false;
        if (!wasRecording || pending.isEmpty()) {
            pending.clear();
            Arrays.fill(recorded, -1);
            return;
        }
        writeRecorded();
        try {
            for (Launch l : pending) {
                replay(l);
                kernelLaunches++;
            }
        } finally {
            pending.clear();
        }
    }

    private void replay(Launch l) {
        l.kernel().launch(stream, l.grid(), l.block(), l.shared(), replayArgs.restore(l.params()));
    }

    /** How launches went so far: graphs captured, graphs launched, kernels launched one by one (not in a graph). */
    void count(Map<String, Long> counters) {
        counters.put("graph_captures", captures);
        counters.put("graph_launches", graphLaunches);
        counters.put("kernel_launches", kernelLaunches);
    }

    /** Drops the cached graphs (their kernels' parameters point at buffers that may be freed next). */
    @Override
    public void close() {
        flush();
        for (List<Cached> graphs : cache) {
            for (Cached c : graphs) {
                c.graph().close();
            }
        }
        cache.clear();
    }
}
