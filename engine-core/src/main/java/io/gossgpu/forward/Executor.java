package io.gossgpu.forward;

import io.gossgpu.GossException;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.Batch;
import io.gossgpu.backend.DeclinedOps;
import io.gossgpu.backend.DenseKind;
import io.gossgpu.backend.DeviceRouting;
import io.gossgpu.backend.DeviceTensor;
import io.gossgpu.backend.KvCache;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.backend.NormKind;
import io.gossgpu.backend.Routing;
import io.gossgpu.backend.TemperatureDraw;
import io.gossgpu.model.ModelConfig;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;

/**
 * Runs the model's forward pass for one step ({@link #run}: the whole model, one backend call per op); activations stay
 * in backend tensors, only the requested logits (or argmax or sampled ids) come back. A step takes the next tokens of
 * one or more sequences ({@link Request}: its tokens, its KV cache and first position, what it wants back): a prompt
 * or a chunk of one (T ≥ 1), a decoded token (T = 1), or any mix of them, as one batch of rows ({@link Batch}); the
 * dense and MoE ops read their weights once for all the rows. Each step is one backend step ({@link Backend#beginStep} …
 * {@link Backend#endStep}, the result read its last op). A sequence's results do not depend on the others in its step:
 * greedy tokens are the same, logits the same up to the backend's summation order. Activation tensors of the last few
 * batch sizes are kept and reused (so decode allocates nothing per step) until {@link #close()}.
 */
public final class Executor implements AutoCloseable {
    /** What the LOGITS op returns to the host, per sequence. */
    public enum Output {
        /** Logits of every row: T × vocab. */
        ALL_LOGITS,
        /** Logits of the last row only: vocab. */
        LAST_LOGITS,
        /** Argmax id of the last row only (greedy decoding; no logits leave the device). */
        LAST_ARGMAX,
        /** A token id drawn from the last row by plain temperature sampling ({@link Sampling}; one int back). */
        LAST_SAMPLE,
        /** Nothing: a chunk of a prompt before its last (only the cache is wanted). */
        NONE
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
     * One sequence's part of a step: {@code tokens} at positions {@code start ..} of {@code cache}, and what comes back
     * ({@code sampling}: the draw of {@link Output#LAST_SAMPLE}, else null).
     */
    public record Request(int[] tokens, KvCache cache, int start, Output output, Sampling sampling) {
        public Request {
            if (tokens.length == 0) throw new GossException("forward needs at least one token");
            if (start < 0 || (long) start + tokens.length > cache.spec().contextLength())
                throw new GossException("positions " + start + ".." + ((long) start + tokens.length - 1)
                        + " do not fit the context of " + cache.spec().contextLength() + " tokens");
            if ((output == Output.LAST_SAMPLE) != (sampling != null))
                throw new GossException(
                        output == Output.LAST_SAMPLE
                                ? "sampling output needs a Sampling (temperature, u)"
                                : "a Sampling goes only with the LAST_SAMPLE output");
        }

        public Request(int[] tokens, KvCache cache, int start, Output output) {
            this(tokens, cache, start, output, null);
        }
    }

    /**
     * The host result of one sequence of a step, per {@link Output}: logits ({@code rows × vocab}), argmax ids, or the
     * sampled id ({@code −1} unless {@link Output#LAST_SAMPLE}); all empty for {@link Output#NONE}.
     */
    public record Result(float[] logits, int[] argmax, int sampled) {
        public Result(float[] logits, int[] argmax) {
            this(logits, argmax, -1);
        }
    }

    /**
     * What the non-finite guard found in some sequences of a step: {@code failures[i]} the error of request {@code i}
     * (null for a sequence whose numbers were finite: its {@code results[i]} stands).
     */
    public static final class StepFailure extends GossException {
        private final transient Result[] results;
        private final transient GossException[] failures;

        StepFailure(Result[] results, GossException[] failures, GossException first) {
            super(first.getMessage());
            this.results = results;
            this.failures = failures;
        }

        public Result result(int i) {
            return results[i];
        }

        /** The failure of request {@code i}, or null when its result stands. */
        public GossException failure(int i) {
            return failures[i];
        }
    }

    /** Activation sizes kept between steps (a server steps through a few batch sizes as sequences come and go). */
    private static final int KEPT_SIZES = 8;

    private final Backend backend;
    private final LoadedWeights weights;
    private OpObserver observer;
    private final LinkedHashMap<Integer, Scratch> scratches = new LinkedHashMap<>(16, 0.75f, true);

    /** The activations of one batch size, kept between calls (decode reuses them every step). */
    private static final class Scratch implements AutoCloseable {
        final DeviceTensor x, t, q, k, v, attn, o;
        final DeviceRouting routing;

        Scratch(Backend b, ModelConfig c, int T) {
            int h = c.hiddenSize();
            DeviceTensor[] made = new DeviceTensor[7];
            try {
                made[0] = b.allocate(T, h);
                made[1] = b.allocate(T, h);
                made[2] = b.allocate(T, c.qDim());
                made[3] = b.allocate(T, c.kvDim());
                made[4] = b.allocate(T, c.kvDim());
                made[5] = b.allocate(T, c.qDim());
                made[6] = b.allocate(T, h);
                routing = b.allocateRouting(T, c.expertsPerToken());
            } catch (RuntimeException | Error e) {
                for (DeviceTensor d : made) if (d != null) d.close();
                throw e;
            }
            x = made[0];
            t = made[1];
            q = made[2];
            k = made[3];
            v = made[4];
            attn = made[5];
            o = made[6];
        }

        @Override
        public void close() {
            for (DeviceTensor d : new DeviceTensor[] {x, t, q, k, v, attn, o}) d.close();
            routing.close();
        }
    }

    public Executor(Backend backend, LoadedWeights weights) {
        DeclinedOps.checkRequired(backend);
        this.backend = backend;
        this.weights = weights;
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

    /** One sequence alone: {@code tokens} at {@code start} of {@code cache}. */
    public Result forward(int[] tokens, int start, KvCache cache, Output output) {
        return one(new Request(tokens, cache, start, output));
    }

    /** {@link Output#LAST_SAMPLE} of the last token with {@code sampling}'s temperature and draw. */
    public Result forward(int[] tokens, int start, KvCache cache, Sampling sampling) {
        return one(new Request(tokens, cache, start, Output.LAST_SAMPLE, sampling));
    }

    private Result one(Request r) {
        try {
            return step(List.of(r))[0];
        } catch (StepFailure f) {
            throw f.failure(0);
        }
    }

    /**
     * One forward pass over the next tokens of every request's sequence (each cache at most once); the results in
     * request order. A sequence whose numbers come out non-finite fails alone: a {@link StepFailure} then carries every
     * request's result or failure.
     */
    public Result[] step(List<Request> requests) {
        int n = requests.size();
        if (n == 0) throw new GossException("a step needs at least one sequence");
        // Rows that want nothing back first, then those wanting their last row, so the rows whose results come back are
        // one run at the end of the batch (a result read covers rows fromRow .. T−1).
        Integer[] order = new Integer[n];
        for (int i = 0; i < n; i++) order[i] = i;
        java.util.Arrays.sort(order, java.util.Comparator.comparingInt(i -> rank(requests.get(i))));
        List<Batch.Sequence> seqs = new ArrayList<>(n);
        int T = 0;
        for (int i : order) {
            Request r = requests.get(i);
            seqs.add(new Batch.Sequence(r.cache(), r.start(), r.tokens().length));
            T = Math.addExact(T, r.tokens().length);
        }
        Batch batch = Batch.of(seqs);
        int[] tokens = new int[T];
        for (int s = 0; s < n; s++)
            System.arraycopy(requests.get(order[s]).tokens(), 0, tokens, batch.firstRow(s), batch.tokens(s));
        Scratch scratch = scratch(T);
        backend.beginStep(batch);
        Result[] inOrder;
        try {
            inOrder = run(scratch, tokens, batch, requests, order);
        } catch (RuntimeException | Error e) {
            try {
                backend.endStep();
            } catch (RuntimeException again) {
                e.addSuppressed(again);
            }
            throw e;
        }
        backend.endStep();
        Result[] results = new Result[n];
        for (int s = 0; s < n; s++) results[order[s]] = inOrder[s];
        // The guard, after the step (a read inside it would end a recorded step): each sequence's final hidden state
        // (one
        // row of H values per token, the final norm's output in t), any logits, and any argmax or sampled id
        // (NOT_FINITE where
        // the logits left on the device held NaN/Inf, e.g. from a damaged unembedding), so NaN/Inf never turns into
        // tokens.
        if (observer == null) guard(scratch, batch, requests, order, results);
        return results;
    }

    /** Where a request's rows go in the batch: nothing back (0), its last row of several (1), one row or all rows (2). */
    private static int rank(Request r) {
        if (r.output() == Output.NONE) return 0;
        return r.output() != Output.ALL_LOGITS && r.tokens().length > 1 ? 1 : 2;
    }

    private Scratch scratch(int T) {
        Scratch s = scratches.get(T);
        if (s != null) return s;
        if (scratches.size() >= KEPT_SIZES) {
            var eldest = scratches.entrySet().iterator().next();
            eldest.getValue().close();
            scratches.remove(eldest.getKey());
        }
        s = new Scratch(backend, weights.config(), T);
        scratches.put(T, s);
        return s;
    }

    private void guard(Scratch scratch, Batch batch, List<Request> requests, Integer[] order, Result[] results) {
        float[] x = backend.read(scratch.t);
        int h = weights.config().hiddenSize();
        GossException[] failures = null;
        GossException first = null;
        for (int s = 0; s < batch.size(); s++) {
            int i = order[s];
            Result r = results[i];
            boolean finite = NonFinite.none(x, batch.firstRow(s) * h, batch.tokens(s) * h)
                    && (r.logits() == null || NonFinite.none(r.logits(), 0, r.logits().length))
                    && (r.argmax() == null || NonFinite.none(r.argmax()))
                    && (requests.get(i).output() != Output.LAST_SAMPLE || r.sampled() != TemperatureDraw.NOT_FINITE);
            if (finite) continue;
            Request q = requests.get(i);
            GossException e = NonFinite.locate(
                    this,
                    q.tokens(),
                    q.start(),
                    q.cache(),
                    q.output() == Output.ALL_LOGITS ? Output.ALL_LOGITS : Output.LAST_LOGITS);
            if (failures == null) failures = new GossException[results.length];
            failures[i] = e;
            if (first == null) first = e;
        }
        if (failures != null) throw new StepFailure(results, failures, first);
    }

    /**
     * The model, one step, as the official torch/model.py reads it: the embedding; per layer an attention block and an
     * MoE block, each adding to the residual stream x what it computes from x's RMSNorm; the final norm; the result
     * read. Each op is one backend call (a residual add and the norm after it are one, {@link Backend#addRmsNorm}, run as
     * two where the backend declines it: {@link DeclinedOps}), each output handed to the observer (verify, op times) when
     * there is one.
     */
    private Result[] run(Scratch s, int[] tokens, Batch batch, List<Request> requests, Integer[] order) {
        DeviceTensor x = s.x, t = s.t, q = s.q, k = s.k, v = s.v, attn = s.attn, o = s.o;
        DeviceRouting routing = s.routing;
        backend.embed(weights, tokens, x);
        observe(OpKind.EMBED, -1, batch, x);
        backend.rmsNorm(weights, 0, NormKind.ATTN, x, t);
        observe(OpKind.ATTN_NORM, 0, batch, t);
        int layers = weights.config().numHiddenLayers();
        for (int l = 0; l < layers; l++) {
            // attention: x += W_o · attention(rope(W_qkv · norm(x))); the residual add and the MLP norm are one op
            backend.qkvRope(weights, l, t, batch, q, k, v);
            observeQkv(l, batch, q, k, v);
            backend.attention(weights, l, q, k, v, batch, attn);
            observe(OpKind.ATTENTION, l, batch, attn);
            backend.dense(weights, l, DenseKind.ATTN_OUT, attn, o);
            observe(OpKind.ATTN_OUT, l, batch, o);
            DeclinedOps.addRmsNorm(backend, weights, l, NormKind.MLP, x, o, x, t);
            observe(OpKind.ATTN_RESIDUAL, l, batch, x);
            observe(OpKind.MLP_NORM, l, batch, t);
            // mixture of experts: x += Σ_top-k weight · expert(norm(x)); the add fused with the next layer's attention
            // norm, or after the last layer with the final norm (into t, so x keeps the residual for the observer)
            backend.router(weights, l, t, routing);
            observeRouting(l, batch, routing);
            backend.moe(weights, l, t, routing, o);
            observe(OpKind.MOE, l, batch, o);
            boolean last = l == layers - 1;
            DeclinedOps.addRmsNorm(
                    backend, weights, last ? -1 : l + 1, last ? NormKind.FINAL : NormKind.ATTN, x, o, x, t);
            observe(OpKind.MOE_RESIDUAL, l, batch, x);
            if (!last) observe(OpKind.ATTN_NORM, l + 1, batch, t);
        }
        observe(OpKind.FINAL_NORM, -1, batch, t);
        return readout(t, batch, requests, order);
    }

    /**
     * The step's result read, one call for the run of rows from the first whose result is wanted: the logits when some
     * sequence wants logits (the others' ids then picked from them on the host), else the ids drawn or picked on the
     * device; nothing when no sequence wants anything.
     */
    private Result[] readout(DeviceTensor x, Batch batch, List<Request> requests, Integer[] order) {
        int n = batch.size(), vocab = weights.config().vocabSize();
        Result[] results = new Result[n];
        int from = -1;
        boolean logits = false, sample = false;
        for (int s = 0; s < n; s++) {
            Request r = requests.get(order[s]);
            if (r.output() == Output.NONE) {
                results[s] = new Result(null, null);
                continue;
            }
            int first = r.output() == Output.ALL_LOGITS ? batch.firstRow(s) : batch.firstRow(s) + batch.tokens(s) - 1;
            if (from < 0) from = first;
            logits |= r.output() == Output.ALL_LOGITS || r.output() == Output.LAST_LOGITS;
            sample |= r.output() == Output.LAST_SAMPLE;
        }
        if (from < 0) return results;
        int rows = batch.rows() - from;
        if (logits) {
            float[] all = backend.logits(weights, x, from);
            for (int s = 0; s < n; s++) {
                Request r = requests.get(order[s]);
                int last = batch.firstRow(s) + batch.tokens(s) - 1 - from, off = last * vocab;
                results[s] = switch (r.output()) {
                    case NONE -> results[s];
                    case ALL_LOGITS ->
                        new Result(
                                java.util.Arrays.copyOfRange(
                                        all, (batch.firstRow(s) - from) * vocab, (last + 1) * vocab),
                                null);
                    case LAST_LOGITS -> new Result(java.util.Arrays.copyOfRange(all, off, off + vocab), null);
                    case LAST_ARGMAX -> new Result(null, new int[] {TemperatureDraw.argmax(all, off, vocab)});
                    case LAST_SAMPLE ->
                        new Result(
                                null,
                                null,
                                TemperatureDraw.draw(
                                        all,
                                        off,
                                        vocab,
                                        r.sampling().temperature(),
                                        r.sampling().u()));
                };
            }
            observe(OpKind.LOGITS, -1, batch.position(from), rows, vocab, all::clone);
            return results;
        }
        int[] ids;
        if (sample) {
            double[] temperatures = new double[rows], draws = new double[rows];
            for (int s = 0; s < n; s++) {
                Request r = requests.get(order[s]);
                if (r.output() != Output.LAST_SAMPLE) continue;
                int row = batch.firstRow(s) + batch.tokens(s) - 1 - from;
                temperatures[row] = r.sampling().temperature();
                draws[row] = r.sampling().u();
            }
            ids = DeclinedOps.sample(backend, weights, x, from, temperatures, draws);
        } else {
            ids = backend.argmax(weights, x, from);
        }
        for (int s = 0; s < n; s++) {
            Request r = requests.get(order[s]);
            if (r.output() == Output.NONE) continue;
            int id = ids[batch.firstRow(s) + batch.tokens(s) - 1 - from];
            results[s] =
                    r.output() == Output.LAST_ARGMAX ? new Result(null, new int[] {id}) : new Result(null, null, id);
        }
        observe(OpKind.LOGITS, -1, batch.position(from), rows, 1, () -> {
            float[] f = new float[ids.length];
            for (int i = 0; i < f.length; i++) f[i] = ids[i];
            return f;
        });
        return results;
    }

    /** {@link #forward} with {@code observer} watching (the caller restores the previous one). */
    Result observed(OpObserver o, int[] tokens, int start, KvCache cache, Output output) {
        OpObserver saved = observer;
        observer = o;
        try {
            return forward(tokens, start, cache, output);
        } finally {
            observer = saved;
        }
    }

    /** Releases the scratch activations (the weights and caches belong to the caller). */
    @Override
    public void close() {
        for (Scratch s : scratches.values()) s.close();
        scratches.clear();
    }

    private void observe(
            OpKind kind, int layer, int start, int rows, int cols, java.util.function.Supplier<float[]> values) {
        if (observer != null) observer.onOp(new GraphOp(kind, layer), start, rows, cols, values);
    }

    /** An op's output tensor, read only when an observer asks. */
    private void observe(OpKind kind, int layer, Batch batch, DeviceTensor out) {
        if (observer != null) observe(kind, layer, batch.position(0), out.rows(), out.cols(), () -> backend.read(out));
    }

    /** q, k and v side by side per row. */
    private void observeQkv(int layer, Batch batch, DeviceTensor q, DeviceTensor k, DeviceTensor v) {
        if (observer != null)
            observe(
                    OpKind.QKV_ROPE,
                    layer,
                    batch.position(0),
                    q.rows(),
                    weights.config().qkvDim(),
                    () -> concatRows(backend.read(q), backend.read(k), backend.read(v), q.rows()));
    }

    /** The router's choice per row: k expert ids, then k weights. */
    private void observeRouting(int layer, Batch batch, DeviceRouting routing) {
        if (observer != null)
            observe(
                    OpKind.ROUTER,
                    layer,
                    batch.position(0),
                    routing.rows(),
                    2 * routing.k(),
                    () -> routingRows(backend.readRouting(routing)));
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
