package io.gossgpu.backend;

import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.WeightView;

/**
 * A model's weights as one backend holds them (uploaded, mapped or repacked at load; opaque to the
 * engine). Ops name the weight they need by layer and kind ({@link NormKind}, {@link DenseKind}); the
 * backend resolves it inside its own representation. Closing releases device copies; the
 * {@link io.gossgpu.model.ModelWeights} (and its checkpoint) must outlive it if the backend maps them.
 */
public interface LoadedWeights extends AutoCloseable {
    ModelConfig config();

    /**
     * Bytes one row of {@code v} takes as this backend reads it: the file's ({@link WeightView#rowBytes()}) unless the
     * backend converted the weight at load (the cpu backend's float dense weights as Q8_0). Decode traffic is counted
     * with it ({@link io.gossgpu.bench.DecodeTraffic}).
     */
    default long rowBytes(WeightView v) {
        return v.rowBytes();
    }

    @Override
    void close();
}
