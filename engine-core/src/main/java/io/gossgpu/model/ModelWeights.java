package io.gossgpu.model;

import java.util.List;

/**
 * A model's weights in canonical form ({@link LayerWeights} per block), built from any checkpoint
 * layout by {@link TensorNames}. Views read the checkpoint's bytes in place; the checkpoint must
 * stay open while the weights are used.
 */
public record ModelWeights(
        ModelConfig config,
        WeightView embedding,
        List<LayerWeights> layers,
        WeightView finalNorm,
        WeightView unembedding) {

    /**
     * Maps {@code checkpoint}'s tensors to canonical weights; every file tensor's shape is checked against the config
     * as it is looked up ({@link ExpectedShape}), before any view of it is made.
     */
    public static ModelWeights of(Checkpoint checkpoint) {
        return TensorNames.forFormat(checkpoint.format()).map(checkpoint);
    }
}
