package io.gossgpu.backend;

import io.gossgpu.model.LayerWeights;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.model.WeightView;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.ToLongFunction;

/**
 * A model's weights as one backend's device handles, laid out the way the ops look them up: the
 * embedding, unembedding and final norm, and per layer the norms, sinks, dense matrices with their
 * biases (by {@link DenseKind}) and the MoE experts with their biases.
 *
 * <p>A backend says how one tensor becomes a device handle ({@link Uploader}: vectors, dense matrices,
 * MXFP4 experts); this class walks the model once, in one fixed order, so every GPU backend uploads the
 * same tensors and none forgets one. Ownership stays with the backend: when an upload throws, the
 * exception propagates and the backend releases what it had already uploaded.
 *
 * @param <V> a vector on the device (norm scales, biases, sinks)
 * @param <D> a dense matrix on the device
 * @param <M> MXFP4 expert matrices on the device
 */
public final class DeviceWeights<V, D, M> {

    /** How one backend uploads each kind of tensor. */
    public interface Uploader<V, D, M> {
        V vector(WeightView v);

        D dense(WeightView v);

        M experts(WeightView v);

        /**
         * A layer's Q, K and V matrices, in that order: by default each uploaded on its own; a backend that runs the three
         * as one matrix overrides this to upload them as one and return its three row ranges.
         */
        default List<D> qkv(WeightView q, WeightView k, WeightView v) {
            return java.util.Arrays.asList(
                    dense(q), dense(k), dense(v)); // handles may be null (bytes() walks with Void)
        }

        /** The biases of {@link #qkv}, in the same way. */
        default List<V> qkvBias(WeightView q, WeightView k, WeightView v) {
            return java.util.Arrays.asList(vector(q), vector(k), vector(v));
        }
    }

    /** One layer's handles. {@code dense} and {@code bias} are indexed by {@link DenseKind#ordinal()}. */
    public record Layer<V, D, M>(
            V attnNorm,
            V mlpNorm,
            V sinks,
            List<D> dense,
            List<V> bias,
            M gate,
            M up,
            M down,
            V gateBias,
            V upBias,
            V downBias) {
        public D dense(DenseKind k) {
            return dense.get(k.ordinal());
        }

        public V bias(DenseKind k) {
            return bias.get(k.ordinal());
        }
    }

    private final D embedding, unembedding;
    private final V finalNorm;
    private final List<Layer<V, D, M>> layers;

    /**
     * Uploads every tensor of {@code m} through {@code up}, in model order. A tensor that is null in {@code m} is not
     * uploaded and its handle is null: a split model ({@link io.gossgpu.device.SplitModel}) leaves out the experts
     * another backend runs, or everything but them.
     */
    public DeviceWeights(ModelWeights m, Uploader<V, D, M> up) {
        embedding = dense(up, m.embedding());
        unembedding = dense(up, m.unembedding());
        finalNorm = vector(up, m.finalNorm());
        List<Layer<V, D, M>> ls = new ArrayList<>(m.layers().size());
        for (LayerWeights w : m.layers()) {
            V attnNorm = vector(up, w.attnNorm()), mlpNorm = vector(up, w.mlpNorm()), sinks = vector(up, w.sinks());
            boolean qkv = w.q() != null;
            List<D> dense =
                    new ArrayList<>(qkv ? up.qkv(w.q(), w.k(), w.v()) : java.util.Arrays.asList(null, null, null));
            List<V> bias = new ArrayList<>(
                    qkv ? up.qkvBias(w.qBias(), w.kBias(), w.vBias()) : java.util.Arrays.asList(null, null, null));
            for (DenseKind k : DenseKind.values()) {
                if (k == DenseKind.Q || k == DenseKind.K || k == DenseKind.V) continue; // above, in this order
                dense.add(dense(up, k.weight(w)));
                bias.add(vector(up, k.bias(w)));
            }
            M gate = experts(up, w.gate()), upM = experts(up, w.up()), down = experts(up, w.down());
            ls.add(new Layer<>(
                    attnNorm,
                    mlpNorm,
                    sinks,
                    Collections.unmodifiableList(dense),
                    Collections.unmodifiableList(bias),
                    gate,
                    upM,
                    down,
                    vector(up, w.gateBias()),
                    vector(up, w.upBias()),
                    vector(up, w.downBias())));
        }
        layers = Collections.unmodifiableList(ls); // handles may be null (bytes() walks with Void)
    }

    private static <V> V vector(Uploader<V, ?, ?> up, WeightView v) {
        return v == null ? null : up.vector(v);
    }

    private static <D> D dense(Uploader<?, D, ?> up, WeightView v) {
        return v == null ? null : up.dense(v);
    }

    private static <M> M experts(Uploader<?, ?, M> up, WeightView v) {
        return v == null ? null : up.experts(v);
    }

    public D embedding() {
        return embedding;
    }

    public D unembedding() {
        return unembedding;
    }

    public V finalNorm() {
        return finalNorm;
    }

    public Layer<V, D, M> layer(int l) {
        return layers.get(l);
    }

    /** The scale of norm {@code which}; {@code layer} is ignored for {@link NormKind#FINAL}. */
    public V norm(int layer, NormKind which) {
        return switch (which) {
            case ATTN -> layers.get(layer).attnNorm();
            case MLP -> layers.get(layer).mlpNorm();
            case FINAL -> finalNorm;
        };
    }

    /**
     * The device bytes the same walk would allocate, before anything is uploaded: {@code vector},
     * {@code dense} and {@code experts} give one tensor's size in the backend's layout.
     */
    public static long bytes(
            ModelWeights m,
            ToLongFunction<WeightView> vector,
            ToLongFunction<WeightView> dense,
            ToLongFunction<WeightView> experts) {
        long[] total = {0};
        new DeviceWeights<>(m, new Uploader<Void, Void, Void>() {
            @Override
            public Void vector(WeightView v) {
                total[0] += vector.applyAsLong(v);
                return null;
            }

            @Override
            public Void dense(WeightView v) {
                total[0] += dense.applyAsLong(v);
                return null;
            }

            @Override
            public Void experts(WeightView v) {
                total[0] += experts.applyAsLong(v);
                return null;
            }
        });
        return total[0];
    }

    /** F32 bytes of every value of {@code v} (how vectors are kept on every device); 0 for a tensor left out (null). */
    public static long f32Bytes(WeightView v) {
        if (v == null) return 0; // left out of a split model
        return 4L * v.experts() * v.rows() * v.cols();
    }
}
