package io.gossgpu.device;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * What a GPU backend's device does for the device layer ({@link DeviceBackend}), over its buffer handle {@code B}
 * (a {@code CUdeviceptr} wrapper, a {@code cl_mem}, an {@code MTLBuffer}): allocate, release, copy, wait, and the
 * facts the memory checks need. Launching kernels is the backend's own business (its launchers).
 *
 * @param <B> a device buffer handle
 */
public interface DeviceDriver<B> {
    /**
     * A buffer of {@code bytes} (at least 4; its contents undefined); a {@link io.gossgpu.GossException} naming
     * {@code what}, the size and what is free when the device cannot hold it.
     */
    B allocate(long bytes, String what);

    /** Queues filling the first {@code bytes} of {@code buffer} with zeros. */
    void zero(B buffer, long bytes);

    /** Releases {@code buffer} once the queued work that uses it is done (the driver waits or defers, as its API needs). */
    void release(B buffer);

    /**
     * Host → device: {@code src} (native memory, or a whole {@code float[]}/{@code int[]} as a heap segment) to byte
     * {@code offset} of {@code dst}, after the queued work; {@code src} may be reused when this returns.
     */
    void write(B dst, long offset, MemorySegment src);

    /**
     * Queues writing the 32-bit {@code value} at byte {@code offset} (a multiple of 4) of {@code dst}, in order with
     * the launches: a value the kernels read from memory (a position, a sampling draw). A driver that can do it without
     * waiting, and without ending a deferred step, does (a memset or fill on its queue); the default is {@link #write}.
     */
    default void writeWord(B dst, long offset, int value) {
        write(dst, offset, MemorySegment.ofArray(new int[] {value}));
    }

    /** Device → host: {@code dst.byteSize()} bytes from byte {@code offset} of {@code src}, once the queued work is done. */
    void read(B src, long offset, MemorySegment dst);

    /**
     * Submits what the current step deferred, as a whole (a CUDA graph): called just before the step's result is read.
     * Nothing for a driver that submits every launch as it comes.
     */
    default void submit() {}

    // ---- a host crossing inside a step (HostCrossing: a split model's CPU experts) ------------------

    /**
     * {@code bytes} of host memory for the copies of a {@link HostCrossing}, freed when {@code arena} closes: page-locked
     * where the device has it (so that its copies are DMA and can be queued), else plain native memory (the default).
     */
    default MemorySegment allocateHost(long bytes, Arena arena) {
        return arena.allocate(bytes, 64);
    }

    /**
     * Queues device → host: {@code dst.byteSize()} bytes from byte {@code offset} of {@code src} into {@code dst} (memory
     * from {@link #allocateHost}), after the work queued before. A driver that defers a step's work submits what it
     * deferred so far as one piece (CUDA: a graph of the launches since the step or its last crossing began) and goes on
     * deferring the rest of the step. {@code dst} holds the data after {@link #awaitCopies}. The default: {@link #read}.
     */
    default void readQueued(B src, long offset, MemorySegment dst) {
        read(src, offset, dst);
    }

    /**
     * Queues host → device from {@code src} (memory from {@link #allocateHost}) to byte {@code offset} of {@code dst},
     * ordered before the work queued after it, as {@link #readQueued} without waiting; {@code src} must stay unchanged
     * until {@link #awaitCopies} or {@link #synchronize}. The default: {@link #write}.
     */
    default void writeQueued(B dst, long offset, MemorySegment src) {
        write(dst, offset, src);
    }

    /** Waits for the copies {@link #readQueued} and {@link #writeQueued} queued, without ending a deferred step. */
    default void awaitCopies() {}

    /** Waits until every queued launch and copy is done. */
    void synchronize();

    /** Bytes the device can still allocate: the weights and KV cache are checked against it before anything is allocated. */
    long freeBytes();

    /** The device's name, for messages. */
    String deviceName();
}
