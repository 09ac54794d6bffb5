package io.gossgpu.backend;

import io.gossgpu.model.LayerWeights;
import io.gossgpu.model.WeightView;

/** The dense (BF16/F16/F32) matrices of a layer, each with its bias, for {@link Backend#dense}. */
public enum DenseKind {
    /** {@code [heads·hd, H]} query projection. */
    Q,
    /** {@code [kv·hd, H]} key projection. */
    K,
    /** {@code [kv·hd, H]} value projection. */
    V,
    /** {@code [H, heads·hd]} attention output projection. */
    ATTN_OUT,
    /** {@code [E, H]} MoE router (gate). */
    ROUTER;

    /** This matrix among a layer's canonical weights. */
    public WeightView weight(LayerWeights l) {
        return switch (this) {
            case Q -> l.q();
            case K -> l.k();
            case V -> l.v();
            case ATTN_OUT -> l.out();
            case ROUTER -> l.router();
        };
    }

    /** This matrix's bias among a layer's canonical weights. */
    public WeightView bias(LayerWeights l) {
        return switch (this) {
            case Q -> l.qBias();
            case K -> l.kBias();
            case V -> l.vBias();
            case ATTN_OUT -> l.outBias();
            case ROUTER -> l.routerBias();
        };
    }

    /** Output features of this matrix under {@code c}. */
    public int rows(io.gossgpu.model.ModelConfig c) {
        return switch (this) {
            case Q -> c.qDim();
            case K, V -> c.kvDim();
            case ATTN_OUT -> c.hiddenSize();
            case ROUTER -> c.numExperts();
        };
    }

    /** Input features. */
    public int cols(io.gossgpu.model.ModelConfig c) {
        return this == ATTN_OUT ? c.qDim() : c.hiddenSize();
    }
}
