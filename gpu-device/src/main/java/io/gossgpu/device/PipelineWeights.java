package io.gossgpu.device;

import io.gossgpu.backend.DenseKind;
import io.gossgpu.backend.DeviceWeights;
import io.gossgpu.backend.NormKind;
import io.gossgpu.device.DensePipeline.Matrix;
import java.util.function.Function;

/**
 * A backend's uploaded tensors ({@link DeviceWeights} of its own handle types) as the pipelines take them. A backend
 * that uploads Q, K and V as one matrix overrides {@link #qkv}.
 *
 * @param <A> the API's buffer argument
 * @param <D> the backend's dense matrix
 * @param <M> the backend's MXFP4 experts
 */
public class PipelineWeights<A, D, M> {
    private final DeviceWeights<A, D, M> tensors;
    private final Function<D, Matrix<A>> matrix;
    private final Function<M, A> codes, scales;

    /**
     * @param matrix a dense matrix as {@link DensePipeline} reads it
     * @param codes  the MXFP4 codes of experts, {@code scales} their scales (OpenAI's layout)
     */
    public PipelineWeights(
            DeviceWeights<A, D, M> tensors,
            Function<D, Matrix<A>> matrix,
            Function<M, A> codes,
            Function<M, A> scales) {
        this.tensors = tensors;
        this.matrix = matrix;
        this.codes = codes;
        this.scales = scales;
    }

    /** The tensors in the backend's own types. */
    protected final DeviceWeights<A, D, M> tensors() {
        return tensors;
    }

    public Matrix<A> embedding() {
        return matrix.apply(tensors.embedding());
    }

    public Matrix<A> unembedding() {
        return matrix.apply(tensors.unembedding());
    }

    public A norm(int layer, NormKind which) {
        return tensors.norm(layer, which);
    }

    public Matrix<A> dense(int layer, DenseKind which) {
        return matrix.apply(tensors.layer(layer).dense(which));
    }

    /** The bias of a dense layer; null for none. */
    public A bias(int layer, DenseKind which) {
        return tensors.layer(layer).bias(which);
    }

    /** Q, K and V of {@code layer} as one matrix, its bias {@code bias(layer, Q)}; null where they are apart. */
    public Matrix<A> qkv(int layer) {
        return null;
    }

    public A sinks(int layer) {
        return tensors.layer(layer).sinks();
    }

    public MoePipeline.Experts<A> experts(int layer) {
        DeviceWeights.Layer<A, D, M> l = tensors.layer(layer);
        return new MoePipeline.Experts<>(
                codes.apply(l.gate()),
                scales.apply(l.gate()),
                codes.apply(l.up()),
                scales.apply(l.up()),
                l.gateBias(),
                l.upBias(),
                codes.apply(l.down()),
                scales.apply(l.down()),
                l.downBias());
    }
}
