package io.gossgpu.device;

import io.gossgpu.backend.DeviceTensor;

/**
 * A {@link DeviceTensor} of a {@link DeviceBackend}: {@code rows × cols} F32 values, row-major, in one device buffer.
 * Closing releases the buffer (once).
 *
 * @param <B> the device's buffer handle
 */
public final class BufferTensor<B> implements DeviceTensor {
    private final DeviceBackend<B, ?> owner;
    private final int rows, cols;
    private B buffer;

    BufferTensor(DeviceBackend<B, ?> owner, int rows, int cols, B buffer) {
        this.owner = owner;
        this.rows = rows;
        this.cols = cols;
        this.buffer = buffer;
    }

    DeviceBackend<B, ?> owner() {
        return owner;
    }

    /** The device buffer; a {@link io.gossgpu.GossException} once closed. */
    public B buffer() {
        if (buffer == null)
            throw new io.gossgpu.GossException("a " + rows + "x" + cols + " tensor used after it was closed");
        return buffer;
    }

    /** Bytes of the values: {@code 4 · rows · cols}. */
    public long bytes() {
        return 4L * rows * cols;
    }

    @Override
    public int rows() {
        return rows;
    }

    @Override
    public int cols() {
        return cols;
    }

    @Override
    public void close() {
        if (buffer == null) return;
        B b = buffer;
        buffer = null;
        owner.release(b);
    }
}
