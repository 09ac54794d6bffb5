package io.gossgpu.backend;

import java.util.ArrayList;
import java.util.List;

/**
 * A KV cache in device memory laid out as its {@link KvCacheSpec} says: per layer one key and one value
 * buffer of {@code slots(layer)} rows of {@code kv_dim} numbers stored as {@link KvCacheSpec#type()} says (the
 * layout of {@link KvType}), position {@code p} in slot {@code p % slots}.
 * The GPU backends differ only in how a buffer is allocated and released ({@link Memory}).
 *
 * @param <B> a device buffer handle
 */
public final class DeviceKvCache<B> implements KvCache {

    /** How one backend allocates (zero-filled) and releases device buffers. */
    public interface Memory<B> {
        /** A zero-filled buffer of {@code bytes}; throws a GossException naming {@code what} when it cannot. */
        B allocate(long bytes, String what);

        void release(B buffer, long bytes);
    }

    private final KvCacheSpec spec;
    private final Memory<B> memory;
    private final List<B> keys = new ArrayList<>(), values = new ArrayList<>();
    private boolean closed;

    /** Allocates every layer's buffers; on failure releases those already allocated and rethrows. */
    public DeviceKvCache(KvCacheSpec spec, Memory<B> memory) {
        this.spec = spec;
        this.memory = memory;
        try {
            for (int l = 0; l < spec.config().numHiddenLayers(); l++) {
                keys.add(memory.allocate(bytes(l), spec.describe() + ", layer " + l + " keys,"));
                values.add(memory.allocate(bytes(l), spec.describe() + ", layer " + l + " values,"));
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** Bytes of one of layer {@code l}'s two buffers. */
    public long bytes(int l) {
        return spec.layerBytes(l);
    }

    /** Whether {@code m} allocated this cache (a backend recognises its own caches by their memory). */
    public boolean allocatedBy(Memory<?> m) {
        return memory == m;
    }

    public B keys(int layer) {
        return keys.get(layer);
    }

    public B values(int layer) {
        return values.get(layer);
    }

    @Override
    public KvCacheSpec spec() {
        return spec;
    }

    /** Releases every buffer once (later calls do nothing). */
    @Override
    public void close() {
        if (closed) return;
        closed = true;
        for (int l = 0; l < keys.size(); l++) memory.release(keys.get(l), bytes(l));
        for (int l = 0; l < values.size(); l++) memory.release(values.get(l), bytes(l));
    }
}
