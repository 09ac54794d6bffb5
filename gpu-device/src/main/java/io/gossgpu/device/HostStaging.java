package io.gossgpu.device;

/**
 * How host values reach the kernels launched next, without waiting for the device: each API's own way (a write
 * queued in order, a staging ring, a slot of a CUDA graph's step buffer).
 *
 * @param <A> the API's buffer argument
 */
public interface HostStaging<A> {
    /** A buffer argument from byte {@code offset}. */
    record At<A>(A buffer, long offset) {}

    /** Where the kernels launched next read {@code tokens}. */
    At<A> ids(int[] tokens);

    /** Where the kernels launched next for the step's {@code sequence}-th sequence read its first position. */
    At<A> position(int sequence, int start);
}
