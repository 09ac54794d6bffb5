package io.gossgpu.backend;

/**
 * Backend-owned router output for {@code rows} tokens: {@code k} expert ids (int) and {@code k} weights
 * (F32) per token, kept on the device between the router and MoE ops.
 */
public interface DeviceRouting extends AutoCloseable {
    int rows();

    int k();

    @Override
    void close();
}
