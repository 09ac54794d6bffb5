package io.gossgpu.device;

import io.gossgpu.backend.DeviceWeights;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import java.util.ArrayList;
import java.util.List;

/**
 * A model's weights on a {@link DeviceBackend}: the device buffers its upload allocated (released on close) and the
 * RoPE table. A backend's weights extend it with its own layout of the tensors (usually a
 * {@link io.gossgpu.backend.DeviceWeights}) and say how the pipelines read it ({@link #forPipelines}).
 *
 * @param <B> the device's buffer handle
 * @param <A> the API's buffer argument
 */
public abstract class UploadedWeights<B, A> implements LoadedWeights {
    private final DeviceBackend<B, ?> backend;
    private final ModelConfig config;
    private final List<B> owned = new ArrayList<>();
    private final RopeTable<B> rope;
    private boolean closed;

    protected UploadedWeights(DeviceBackend<B, ?> backend, ModelConfig config) {
        this.backend = backend;
        this.config = config;
        this.rope = new RopeTable<>(backend, config);
    }

    /**
     * Every tensor of {@code m}, uploaded through {@code uploader} (the backend's own layout), then waited for; on a
     * failure what was uploaded is released and the exception rethrown.
     */
    protected final <V, D, M> DeviceWeights<V, D, M> uploadAll(
            ModelWeights m, DeviceWeights.Uploader<V, D, M> uploader) {
        try {
            DeviceWeights<V, D, M> tensors = new DeviceWeights<>(m, uploader);
            backend.driver.synchronize();
            return tensors;
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** A buffer of {@code bytes} that these weights own (released on close). */
    protected B allocate(long bytes, String what) {
        B b = backend.driver.allocate(bytes, what);
        owned.add(b);
        return b;
    }

    /** {@code b}, made some other way (a mapped file wrapped in place), owned by these weights from now on. */
    protected B own(B b) {
        owned.add(b);
        return b;
    }

    /** The tensors as the pipelines take them. */
    public abstract PipelineWeights<A, ?, ?> forPipelines();

    /** The RoPE table covering positions {@code 0 .. positions − 1}. */
    public B rope(int positions) {
        return rope.covering(positions, backend.ropeHint());
    }

    @Override
    public ModelConfig config() {
        return config;
    }

    /** Releases every buffer (once). */
    @Override
    public void close() {
        if (closed) return;
        closed = true;
        for (B b : owned) backend.release(b);
        owned.clear();
        rope.close();
    }
}
