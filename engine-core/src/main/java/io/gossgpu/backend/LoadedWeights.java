package io.gossgpu.backend;

import io.gossgpu.model.ModelConfig;

/**
 * A model's weights as one backend holds them (uploaded, mapped or repacked at load; opaque to the
 * engine). Ops name the weight they need by layer and kind ({@link NormKind}, {@link DenseKind}); the
 * backend resolves it inside its own representation. Closing releases device copies; the
 * {@link io.gossgpu.model.ModelWeights} (and its checkpoint) must outlive it if the backend maps them.
 */
public interface LoadedWeights extends AutoCloseable {
    ModelConfig config();

    @Override
    void close();
}
