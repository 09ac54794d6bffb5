package io.gossgpu.device;

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

    /** Device → host: {@code dst.byteSize()} bytes from byte {@code offset} of {@code src}, once the queued work is done. */
    void read(B src, long offset, MemorySegment dst);

    /**
     * Submits what the current step deferred, as a whole (a CUDA graph): called just before the step's result is read.
     * Nothing for a driver that submits every launch as it comes.
     */
    default void submit() {}

    /** Waits until every queued launch and copy is done. */
    void synchronize();

    /** Bytes the device can still allocate: the weights and KV cache are checked against it before anything is allocated. */
    long freeBytes();

    /** The device's name, for messages. */
    String deviceName();
}
