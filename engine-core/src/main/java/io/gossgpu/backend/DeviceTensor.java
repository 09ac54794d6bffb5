package io.gossgpu.backend;

/**
 * A backend-owned F32 activation of shape {@code rows × cols}, row-major (row = token position within
 * the batch). Host code never touches its memory: use {@link Backend#write} / {@link Backend#read}.
 * Closing releases device memory; a closed tensor must not be used.
 */
public interface DeviceTensor extends AutoCloseable {
    int rows();

    int cols();

    @Override
    void close();
}
