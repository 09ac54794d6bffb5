package io.gossgpu.device;

import io.gossgpu.GossException;
import io.gossgpu.backend.DeviceRouting;
import io.gossgpu.backend.DeviceTensor;
import io.gossgpu.backend.Routing;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The host round trip of a split model's offloaded MoE inside a step ({@code io.gossgpu.device.SplitBackend}): the
 * GPU's input rows and routing copied out in one wait ({@link #toHost}), the CPU's result copied back without one
 * ({@link #fromHost}). The copies go through staging memory from the device ({@link DeviceDriver#allocateHost}: pinned on
 * CUDA, a host-mapped buffer on OpenCL), owned by one shared arena, grown to the largest batch seen and freed by
 * {@link #close} (from any thread: an engine closed from another). On CUDA the copies are queued on the stream behind
 * the graph of the step's work so far ({@link DeviceDriver#readQueued}), so a decode step stays graphs, one per GPU
 * segment; the copy back is queued with the next segment's work behind it while the host records that segment.
 *
 * <p>The staging holds the result rows at its start, then, at offsets set by the batch's size, the input rows and the
 * routing's ids and weights. A region is rewritten only after the copies that use it were waited for, or behind them on the device's
 * in-order queue.
 */
public final class HostCrossing<B> implements AutoCloseable {
    /** The smallest staging allocated: a few decode rows without growing. */
    private static final long MIN_BYTES = 64 << 10;

    private final DeviceBackend<B, ?> gpu;
    private Arena arena;
    private MemorySegment staging;
    private long allocated;

    private HostCrossing(DeviceBackend<B, ?> gpu) {
        this.gpu = gpu;
    }

    /** The crossing of {@code gpu}'s tensors and routing; staging is allocated at first use. */
    public static <B> HostCrossing<B> of(DeviceBackend<B, ?> gpu) {
        return new HostCrossing<>(gpu);
    }

    /**
     * Copies the rows of {@code x} into {@code xOut} ({@code rows·cols} values) and returns {@code routing}'s ids and
     * weights, with one wait for the three copies (and for the device's work before them).
     */
    public Routing toHost(DeviceTensor x, DeviceRouting routing, float[] xOut) {
        BufferTensor<B> t = gpu.tensor(x);
        BufferRouting<B> r = gpu.routing(routing);
        int n = Math.multiplyExact(t.rows(), t.cols()), nr = Math.multiplyExact(r.rows(), r.k());
        if (xOut.length != n)
            throw new GossException(
                    "crossing: " + xOut.length + " values for a " + t.rows() + "x" + t.cols() + " tensor");
        MemorySegment s = staging(n, nr);
        long xb = 4L * n, rb = 4L * nr;
        MemorySegment in = s.asSlice(xb, xb), ids = s.asSlice(2 * xb, rb), weights = s.asSlice(2 * xb + rb, rb);
        DeviceDriver<B> d = gpu.driver;
        d.readQueued(t.buffer(), 0, in);
        d.readQueued(r.ids(), 0, ids);
        d.readQueued(r.weights(), 0, weights);
        d.awaitCopies();
        MemorySegment.copy(in, ValueLayout.JAVA_FLOAT, 0, xOut, 0, n);
        return new Routing(r.rows(), r.k(), ids.toArray(ValueLayout.JAVA_INT), weights.toArray(ValueLayout.JAVA_FLOAT));
    }

    /**
     * Queues writing {@code values} ({@code rows·cols}) into {@code out}, ahead of the device's work queued after it; the
     * staging keeps the values until the device has them.
     */
    public void fromHost(float[] values, DeviceTensor out) {
        BufferTensor<B> t = gpu.tensor(out);
        int n = Math.multiplyExact(t.rows(), t.cols());
        if (values.length != n)
            throw new GossException(
                    "crossing: " + values.length + " values into a " + t.rows() + "x" + t.cols() + " tensor");
        MemorySegment result = staging(n, 0).asSlice(0, 4L * n);
        MemorySegment.copy(values, 0, result, ValueLayout.JAVA_FLOAT, 0, n);
        gpu.driver.writeQueued(t.buffer(), 0, result);
    }

    /** Staging for {@code n} rows' values twice and {@code nr} routing entries twice, grown (to a power of two) when short. */
    private MemorySegment staging(int n, int nr) {
        long need = 8L * n + 8L * nr;
        if (staging != null && need <= allocated) return staging;
        long bytes = Math.max(MIN_BYTES, Long.highestOneBit(need - 1) << 1);
        release();
        Arena a = Arena.ofShared();
        try {
            staging = gpu.driver.allocateHost(bytes, a);
        } catch (RuntimeException | Error e) {
            a.close();
            throw e;
        }
        arena = a;
        allocated = bytes;
        return staging;
    }

    /** Waits for the copies that may still use the staging, then frees it. */
    private void release() {
        if (arena == null) return;
        Arena a = arena;
        arena = null;
        staging = null;
        allocated = 0;
        try {
            gpu.driver.awaitCopies();
        } finally {
            a.close();
        }
    }

    /** Frees the staging (after the copies queued from it); call before the GPU backend closes. Twice is fine. */
    @Override
    public void close() {
        release();
    }
}
