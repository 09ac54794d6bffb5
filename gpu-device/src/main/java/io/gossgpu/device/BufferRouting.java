package io.gossgpu.device;

import io.gossgpu.backend.DeviceRouting;

/**
 * A {@link DeviceRouting} of a {@link DeviceBackend}: per token {@code k} expert ids (int32) in one device buffer and
 * their {@code k} weights (F32) in another. Closing releases both (once).
 *
 * @param <B> the device's buffer handle
 */
public final class BufferRouting<B> implements DeviceRouting {
    private final DeviceBackend<B, ?> owner;
    private final int rows, k;
    private B ids, weights;

    BufferRouting(DeviceBackend<B, ?> owner, int rows, int k, B ids, B weights) {
        this.owner = owner;
        this.rows = rows;
        this.k = k;
        this.ids = ids;
        this.weights = weights;
    }

    DeviceBackend<B, ?> owner() {
        return owner;
    }

    /** The expert ids, {@code rows × k} int32. */
    public B ids() {
        if (ids == null) throw new io.gossgpu.GossException("a routing used after it was closed");
        return ids;
    }

    /** The expert weights, {@code rows × k} F32. */
    public B weights() {
        if (weights == null) throw new io.gossgpu.GossException("a routing used after it was closed");
        return weights;
    }

    @Override
    public int rows() {
        return rows;
    }

    @Override
    public int k() {
        return k;
    }

    @Override
    public void close() {
        if (ids == null) return;
        B i = ids, w = weights;
        ids = weights = null;
        owner.release(i);
        owner.release(w);
    }
}
