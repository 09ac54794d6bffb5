package io.gossgpu.backend;

/**
 * A backend-owned key/value cache laid out by {@link KvCacheSpec}: per layer, keys and values of
 * {@code kv_dim} floats for {@link KvCacheSpec#slots(int)} positions. Position {@code p} lives in slot
 * {@code p % slots(layer)} (a ring buffer for sliding-window layers, the plain position otherwise).
 * The cache does not track a length: the caller passes the position of the first token of each batch.
 */
public interface KvCache extends AutoCloseable {
    KvCacheSpec spec();

    @Override
    void close();
}
