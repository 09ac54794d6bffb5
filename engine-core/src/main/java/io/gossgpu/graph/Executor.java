package io.gossgpu.graph;

import io.gossgpu.GossException;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.DenseKind;
import io.gossgpu.backend.DeviceRouting;
import io.gossgpu.backend.DeviceTensor;
import io.gossgpu.backend.KvCache;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.backend.NormKind;
import io.gossgpu.backend.Routing;
import io.gossgpu.model.ModelConfig;

/**
 * Walks a {@link ModelGraph} for a batch of T tokens at positions {@code start .. start+T−1}, calling the
 * backend for each op; activations stay in backend tensors, only the requested logits (or argmax ids)
 * come back. Prefill passes the prompt (T ≥ 1); decode passes one token. Each forward pass is one backend
 * step ({@link Backend#beginStep} … {@link Backend#endStep}, the result read its last op). Activation tensors
 * for the last batch size are kept and reused (so decode allocates nothing per step) until {@link #close()}.
 */
public final class Executor implements AutoCloseable {
    /** What the LOGITS op returns to the host. */
    public enum Output {
        /** Logits of every row: T × vocab. */
        ALL_LOGITS,
        /** Logits of the last row only: vocab. */
        LAST_LOGITS,
        /** Argmax id of the last row only (greedy decoding; no logits leave the device). */
        LAST_ARGMAX,
        /** A token id drawn from the last row by plain temperature sampling ({@link Sampling}; one int back). */
        LAST_SAMPLE
    }

    /** The draw of {@link Output#LAST_SAMPLE}: {@link Backend#sample}'s temperature ({@code > 0}) and {@code u ∈ [0, 1)}. */
    public record Sampling(double temperature, double u) {
        public Sampling {
            if (!(temperature > 0) || !Double.isFinite(temperature))
                throw new GossException("sampling temperature must be finite and > 0, got " + temperature);
            if (!(u >= 0 && u < 1)) throw new GossException("sampling draw u must be in [0, 1), got " + u);
        }
    }

    /**
     * The host result of one forward pass, per {@link Output}: logits ({@code rows × vocab}), argmax ids, or the
     * sampled id ({@code −1} unless {@link Output#LAST_SAMPLE}).
     */
    public record Result(float[] logits, int[] argmax, int sampled) {
        public Result(float[] logits, int[] argmax) {
            this(logits, argmax, -1);
        }
    }

    private final Backend backend;
    private final LoadedWeights weights;
    private final ModelGraph graph;
    private OpObserver observer;
    private Scratch scratch;

    /** The activations of one batch size, kept between calls (decode reuses them every step). */
    private static final class Scratch implements AutoCloseable {
        final int rows;
        final DeviceTensor x, t, q, k, v, attn, o;
        final DeviceRouting routing;

        Scratch(Backend b, ModelConfig c, int T) {
            rows = T;
            int h = c.hiddenSize();
            x = b.allocate(T, h);
            t = b.allocate(T, h);
            q = b.allocate(T, c.qDim());
            k = b.allocate(T, c.kvDim());
            v = b.allocate(T, c.kvDim());
            attn = b.allocate(T, c.qDim());
            o = b.allocate(T, h);
            routing = b.allocateRouting(T, c.expertsPerToken());
        }

        @Override
        public void close() {
            for (DeviceTensor d : new DeviceTensor[]{x, t, q, k, v, attn, o}) d.close();
            routing.close();
        }
    }

    public Executor(Backend backend, LoadedWeights weights) {
        this.backend = backend;
        this.weights = weights;
        this.graph = ModelGraph.build(weights.config());
    }

    public ModelGraph graph() {
        return graph;
    }

    public Backend backend() {
        return backend;
    }

    public LoadedWeights weights() {
        return weights;
    }

    /** Sets (or clears, with null) the per-op observer. */
    public Executor observer(OpObserver o) {
        this.observer = o;
        return this;
    }

    public Result forward(int[] tokens, int start, KvCache cache, Output output) {
        if (output == Output.LAST_SAMPLE) throw new GossException("sampling output needs a Sampling (temperature, u)");
        return forward(tokens, start, cache, output, null);
    }

    /** {@link Output#LAST_SAMPLE} of the last token with {@code sampling}'s temperature and draw. */
    public Result forward(int[] tokens, int start, KvCache cache, Sampling sampling) {
        return forward(tokens, start, cache, Output.LAST_SAMPLE, sampling);
    }

    private Result forward(int[] tokens, int start, KvCache cache, Output output, Sampling sampling) {
        ModelConfig c = weights.config();
        int T = tokens.length;
        if (T == 0) throw new GossException("forward needs at least one token");
        if (start < 0 || start + T > cache.spec().contextLength())
            throw new GossException("positions " + start + ".." + (start + T - 1) + " do not fit the context of "
                    + cache.spec().contextLength() + " tokens");
        if (scratch == null || scratch.rows != T) {
            if (scratch != null) scratch.close();
            scratch = null;
            scratch = new Scratch(backend, c, T);
        }
        backend.beginStep(start, T);
        Result result;
        try {
            result = run(tokens, start, cache, output, sampling);
        } catch (RuntimeException | Error e) {
            try {
                backend.endStep();
            } catch (RuntimeException again) {
                e.addSuppressed(again);
            }
            throw e;
        }
        backend.endStep();
        // The guard, after the step (a read inside it would end a recorded step): the final hidden state (one row of
        // H values per token) and any logits, so NaN/Inf never turns into tokens.
        if (observer == null && (!NonFinite.none(backend.read(scratch.x)) || result.logits() != null && !NonFinite.none(result.logits())))
            throw NonFinite.locate(this, tokens, start, cache, output == Output.ALL_LOGITS ? output : Output.LAST_LOGITS);
        return result;
    }

    /** The graph's ops, in order, for one step; the LOGITS op's host result. */
    private Result run(int[] tokens, int start, KvCache cache, Output output, Sampling sampling) {
        ModelConfig c = weights.config();
        int T = tokens.length;
        DeviceTensor x = scratch.x, t = scratch.t, q = scratch.q, k = scratch.k, v = scratch.v, attn = scratch.attn, o = scratch.o;
        DeviceRouting routing = scratch.routing;
        Result result = null;
        for (GraphOp op : graph.ops()) {
            int l = op.layer();
            DeviceTensor observed;
            switch (op.kind()) {
                case EMBED -> { backend.embed(weights, tokens, x); observed = x; }
                case ATTN_NORM -> { backend.rmsNorm(weights, l, NormKind.ATTN, x, t); observed = t; }
                case QKV_ROPE -> {
                    backend.qkvRope(weights, l, t, start, q, k, v);
                    observe(op, start, T, c.qkvDim(), () -> concatRows(backend.read(q), backend.read(k), backend.read(v), T));
                    continue;
                }
                case ATTENTION -> { backend.attention(weights, l, q, k, v, cache, start, attn); observed = attn; }
                case ATTN_OUT -> { backend.linear(weights, l, DenseKind.ATTN_OUT, attn, o); observed = o; }
                case ATTN_RESIDUAL, MOE_RESIDUAL -> { backend.add(x, o, x); observed = x; }
                case MLP_NORM -> { backend.rmsNorm(weights, l, NormKind.MLP, x, t); observed = t; }
                case ROUTER -> {
                    backend.router(weights, l, t, routing);
                    observe(op, start, T, 2 * c.expertsPerToken(), () -> routingRows(backend.readRouting(routing)));
                    continue;
                }
                case MOE -> { backend.moe(weights, l, t, routing, o); observed = o; }
                case FINAL_NORM -> { backend.rmsNorm(weights, -1, NormKind.FINAL, x, x); observed = x; }
                case LOGITS -> {
                    int from = output == Output.ALL_LOGITS ? 0 : T - 1;
                    if (output == Output.LAST_SAMPLE) {
                        int id = backend.sample(weights, x, sampling.temperature(), sampling.u());
                        result = new Result(null, null, id);
                        observe(op, start + from, 1, 1, () -> new float[]{id});
                    } else if (output == Output.LAST_ARGMAX) {
                        int[] ids = backend.argmax(weights, x, from);
                        result = new Result(null, ids);
                        observe(op, start + from, ids.length, 1, () -> { float[] f = new float[ids.length]; for (int i = 0; i < f.length; i++) f[i] = ids[i]; return f; });
                    } else {
                        float[] logits = backend.logits(weights, x, from);
                        result = new Result(logits, null);
                        observe(op, start + from, T - from, c.vocabSize(), () -> logits.clone());
                    }
                    continue;
                }
                default -> throw new IllegalStateException(op.toString());
            }
            DeviceTensor out = observed;
            observe(op, start, out.rows(), out.cols(), () -> backend.read(out));
        }
        return result;
    }

    /** {@link #forward} with {@code observer} watching (the caller restores the previous one). */
    Result observed(OpObserver o, int[] tokens, int start, KvCache cache, Output output) {
        OpObserver saved = observer;
        observer = o;
        try {
            return forward(tokens, start, cache, output, null);
        } finally {
            observer = saved;
        }
    }

    /** Releases the scratch activations (the weights and cache belong to the caller). */
    @Override
    public void close() {
        if (scratch != null) scratch.close();
        scratch = null;
    }

    private void observe(GraphOp op, int start, int rows, int cols, java.util.function.Supplier<float[]> values) {
        if (observer != null) observer.onOp(op, start, rows, cols, values);
    }

    private static float[] concatRows(float[] a, float[] b, float[] c, int rows) {
        int na = a.length / rows, nb = b.length / rows, nc = c.length / rows, n = na + nb + nc;
        float[] out = new float[rows * n];
        for (int i = 0; i < rows; i++) {
            System.arraycopy(a, i * na, out, i * n, na);
            System.arraycopy(b, i * nb, out, i * n + na, nb);
            System.arraycopy(c, i * nc, out, i * n + na + nb, nc);
        }
        return out;
    }

    /** Routing as rows of k expert ids (as floats, exact below 2^24) followed by k weights. */
    static float[] routingRows(Routing r) {
        float[] out = new float[r.rows() * 2 * r.k()];
        for (int i = 0; i < r.rows(); i++)
            for (int j = 0; j < r.k(); j++) {
                out[i * 2 * r.k() + j] = r.experts()[i * r.k() + j];
                out[i * 2 * r.k() + r.k() + j] = r.weights()[i * r.k() + j];
            }
        return out;
    }
}
