package io.gossgpu.device;

import io.gossgpu.GossException;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOp;
import io.gossgpu.backend.Batch;
import io.gossgpu.backend.DenseKind;
import io.gossgpu.backend.DeviceKvCache;
import io.gossgpu.backend.DeviceMemoryException;
import io.gossgpu.backend.DeviceRouting;
import io.gossgpu.backend.DeviceTensor;
import io.gossgpu.backend.KvCache;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.backend.NormKind;
import io.gossgpu.backend.Routing;
import io.gossgpu.backend.TemperatureDraw;
import io.gossgpu.device.OpParams.RopeParams;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import java.lang.foreign.MemorySegment;

/**
 * The device layer: the part of a GPU backend that is the same on every device, written once over the device's
 * buffer handle {@code B} (in the spirit of ggml's split between a backend's buffers and its compute). It owns
 * activations ({@link BufferTensor}), router output ({@link BufferRouting}), KV caches ({@link DeviceKvCache}), one
 * {@link ScratchArena}, the RoPE table ({@link UploadedWeights#rope}); it checks what must hold before device memory
 * is touched (token ids inside the vocabulary, positions inside the context, sizes that fit the device) and runs the
 * result pipeline: logits, their argmax or a temperature sample, read back once per step.
 *
 * <p>It runs every op through the shared pipelines. A GPU backend extends it with what differs between APIs: a
 * {@link DeviceDriver}, its {@link Pipelines} (built over its {@link Launcher} with its shapes and knobs, with its
 * {@link HostStaging}) and its weights' upload and layout ({@link UploadedWeights}).
 *
 * @param <B> the device's buffer handle
 * @param <A> the API's buffer argument (a CUDA device address; elsewhere {@code B})
 */
public abstract class DeviceBackend<B, A> implements Backend {
    /** The device. */
    protected final DeviceDriver<B> driver;
    /** Scratch buffers by name. */
    protected final ScratchArena<B> scratch;

    private final Class<? extends UploadedWeights<B, A>> weightsClass;
    private final DeviceSampling<B, A> sampling;
    /** The longest context of a KV cache created: the RoPE table is sized for it at once. */
    private int ropeHint;

    private boolean closed;

    protected DeviceBackend(DeviceDriver<B> driver, Class<? extends UploadedWeights<B, A>> weightsClass) {
        this.driver = driver;
        this.weightsClass = weightsClass;
        this.scratch = new ScratchArena<>(driver);
        this.sampling = new DeviceSampling<>(driver, scratch, this::pipelines);
    }

    /**
     * The launch knobs in effect on this device, by environment-variable name: the options' values after device
     * defaults (work-group sizes, thresholds), as the kernels are launched. From the thread that drives the backend.
     */
    public abstract java.util.SortedMap<String, Integer> knobs();

    // ---- typed handles ------------------------------------------------------------------------

    /** {@code t} as this backend's tensor; a {@link GossException} for a tensor of another backend. */
    @SuppressWarnings("unchecked")
    protected final BufferTensor<B> tensor(DeviceTensor t) {
        if (t instanceof BufferTensor<?> b && b.owner() == this) return (BufferTensor<B>) b;
        throw new GossException(
                name() + ": a tensor of another backend (" + t.getClass().getSimpleName() + ")");
    }

    /** {@code r} as this backend's routing. */
    @SuppressWarnings("unchecked")
    protected final BufferRouting<B> routing(DeviceRouting r) {
        if (r instanceof BufferRouting<?> b && b.owner() == this) return (BufferRouting<B>) b;
        throw new GossException(
                name() + ": a routing of another backend (" + r.getClass().getSimpleName() + ")");
    }

    /** {@code w} as this backend's weights. */
    protected final UploadedWeights<B, A> weights(LoadedWeights w) {
        if (weightsClass.isInstance(w)) return weightsClass.cast(w);
        throw new GossException(
                name() + ": weights loaded by another backend (" + w.getClass().getSimpleName() + ")");
    }

    /** {@code c} as a cache of this backend's buffers. */
    @SuppressWarnings("unchecked")
    protected final DeviceKvCache<B> cache(KvCache c) {
        if (c instanceof DeviceKvCache<?> d && d.allocatedBy(cacheMemory)) return (DeviceKvCache<B>) d;
        throw new GossException(
                name() + ": a KV cache of another backend (" + c.getClass().getSimpleName() + ")");
    }

    /** Releases {@code b} through the driver, unless the backend is closed (closing released the device). */
    final void release(B b) {
        if (!closed) driver.release(b);
    }

    final int ropeHint() {
        return ropeHint;
    }

    // ---- memory -------------------------------------------------------------------------------

    /** A zero-filled buffer (what the SPI promises for tensors, routing and caches). */
    private B zeroed(long bytes, String what) {
        B b = driver.allocate(bytes, what);
        driver.zero(b, bytes);
        return b;
    }

    /** The experts placed by {@link PlacementPlanner}: all on the device when they fit, else a split with the cpu. */
    @Override
    public Backend placeExperts(
            ModelWeights model,
            io.gossgpu.backend.ExpertPlacement request,
            int prefillChunk,
            java.util.function.Supplier<Backend> cpu) {
        return PlacementPlanner.place(this, model, request, prefillChunk, cpu);
    }

    @Override
    public final DeviceTensor allocate(int rows, int cols) {
        if (rows <= 0 || cols <= 0) throw new GossException("tensor shape must be positive, got " + rows + "x" + cols);
        return new BufferTensor<>(this, rows, cols, zeroed(4L * rows * cols, "a " + rows + "x" + cols + " activation"));
    }

    @Override
    public final void write(DeviceTensor dst, float[] src) {
        BufferTensor<B> t = tensor(dst);
        if (src.length != (long) t.rows() * t.cols())
            throw new GossException("write: " + src.length + " values into a " + t.rows() + "x" + t.cols() + " tensor");
        driver.write(t.buffer(), 0, MemorySegment.ofArray(src));
    }

    @Override
    public final float[] read(DeviceTensor src) {
        BufferTensor<B> t = tensor(src);
        float[] out = new float[Math.multiplyExact(t.rows(), t.cols())];
        driver.read(t.buffer(), 0, MemorySegment.ofArray(out));
        return out;
    }

    @Override
    public final DeviceRouting allocateRouting(int rows, int k) {
        if (rows <= 0 || k <= 0) throw new GossException("routing shape must be positive, got " + rows + "x" + k);
        B ids = zeroed(4L * rows * k, "router ids"), weights;
        try {
            weights = zeroed(4L * rows * k, "router weights");
        } catch (RuntimeException e) {
            driver.release(ids);
            throw e;
        }
        return new BufferRouting<>(this, rows, k, ids, weights);
    }

    @Override
    public final void writeRouting(DeviceRouting dst, Routing src) {
        BufferRouting<B> r = routing(dst);
        if (src.rows() != r.rows() || src.k() != r.k())
            throw new GossException(
                    "writeRouting: a " + src.rows() + "x" + src.k() + " routing into " + r.rows() + "x" + r.k());
        driver.write(r.ids(), 0, MemorySegment.ofArray(src.experts()));
        driver.write(r.weights(), 0, MemorySegment.ofArray(src.weights()));
    }

    @Override
    public final Routing readRouting(DeviceRouting src) {
        BufferRouting<B> r = routing(src);
        int[] ids = new int[r.rows() * r.k()];
        float[] w = new float[r.rows() * r.k()];
        driver.read(r.ids(), 0, MemorySegment.ofArray(ids));
        driver.read(r.weights(), 0, MemorySegment.ofArray(w));
        return new Routing(r.rows(), r.k(), ids, w);
    }

    /** Zero-filled cache buffers from the driver, released through it (not at all once the backend is closed). */
    private final DeviceKvCache.Memory<B> cacheMemory = new DeviceKvCache.Memory<>() {
        @Override
        public B allocate(long bytes, String what) {
            return zeroed(bytes, what);
        }

        @Override
        public void release(B buffer, long bytes) {
            DeviceBackend.this.release(buffer);
        }
    };

    @Override
    public final KvCache createKvCache(KvCacheSpec spec) {
        if (!pipelines().attention().stores(spec.type()))
            throw new GossException("the " + name() + " backend does not store a "
                    + spec.type().flagName() + " KV cache; use --kv-type f32");
        long free = driver.freeBytes();
        if (spec.bytes() > free)
            throw new GossException(spec.describe() + " does not fit on " + driver.deviceName() + " ("
                    + KvCacheSpec.humanBytes(Math.max(0, free)) + " free); choose a shorter context");
        DeviceKvCache<B> c = new DeviceKvCache<>(spec, cacheMemory);
        ropeHint = Math.max(ropeHint, spec.contextLength());
        return c;
    }

    @Override
    public final LoadedWeights loadWeights(ModelWeights weights) {
        long need = weightBytes(weights), free = driver.freeBytes();
        if (need > free)
            throw new DeviceMemoryException(
                    "the model's weights need " + KvCacheSpec.humanBytes(need) + " on the device but "
                            + driver.deviceName() + " has " + KvCacheSpec.humanBytes(Math.max(0, free)) + " free");
        return upload(weights);
    }

    /** The device's free memory now, in bytes (a placement plan weighs what fits: io.gossgpu.device). */
    public final long freeBytes() {
        return driver.freeBytes();
    }

    /** The device bytes {@link #loadWeights} would allocate for {@code m}, without allocating any. */
    public final long deviceBytes(ModelWeights m) {
        return weightBytes(m);
    }

    /** The device's name as its driver reports it. */
    public final String deviceName() {
        return driver.deviceName();
    }

    /** The device bytes {@link #upload} will allocate for {@code m} (checked against the free memory first). */
    protected abstract long weightBytes(ModelWeights m);

    /** Uploads every weight of {@code m}; on failure releases what it allocated and rethrows. */
    protected abstract UploadedWeights<B, A> upload(ModelWeights m);

    // ---- ops: checks and typed handles, then the backend's pipelines ---------------------------

    /**
     * The backend's pipelines, its buffer arguments and its host staging: what differs between GPU APIs (made once,
     * when the backend is).
     */
    protected abstract Pipelines<B, A> pipelines();

    private A arg(B b) {
        return pipelines().arg().apply(b);
    }

    private A arg(BufferTensor<B> t) {
        return arg(t.buffer());
    }

    /** A scratch buffer as a kernel argument (the pipelines' {@link MoePipeline.Scratch}). */
    private A scratchArg(String name, long bytes) {
        return arg(scratch.ensure(name, bytes));
    }

    @Override
    public final void embed(LoadedWeights lw, int[] tokens, DeviceTensor out) {
        UploadedWeights<B, A> w = weights(lw);
        int vocab = w.config().vocabSize();
        for (int id : tokens)
            if (id < 0 || id >= vocab)
                throw new GossException("token id " + id + " is outside the vocabulary (0.." + (vocab - 1) + ")");
        BufferTensor<B> o = tensor(out);
        HostStaging.At<A> ids = pipelines().staging().ids(tokens);
        pipelines().dense().embed(w.forPipelines().embedding(), ids.buffer(), ids.offset(), tokens.length, arg(o));
    }

    @Override
    public final void rmsNorm(LoadedWeights lw, int layer, NormKind which, DeviceTensor x, DeviceTensor out) {
        UploadedWeights<B, A> w = weights(lw);
        BufferTensor<B> tx = tensor(x), to = tensor(out);
        pipelines()
                .ops()
                .rmsnorm(
                        arg(tx),
                        w.forPipelines().norm(layer, which),
                        arg(to),
                        tx.rows(),
                        tx.cols(),
                        w.config().rmsNormEps());
    }

    /** Every GPU backend runs the fused add + RMSNorm ({@link SmallOps#addRmsnorm}); samples where it has a sampler. */
    @Override
    public boolean supports(BackendOp op) {
        if (op == BackendOp.SAMPLE) return pipelines().sampler() != null;
        return op == BackendOp.ADD_RMS_NORM || Backend.super.supports(op);
    }

    @Override
    public final void addRmsNorm(
            LoadedWeights lw,
            int layer,
            NormKind which,
            DeviceTensor x,
            DeviceTensor y,
            DeviceTensor sum,
            DeviceTensor out) {
        BufferTensor<B> tx = tensor(x), ty = tensor(y), ts = tensor(sum), to = tensor(out);
        for (BufferTensor<B> t : java.util.List.of(ty, ts, to))
            if (t.rows() != tx.rows() || t.cols() != tx.cols())
                throw new GossException("addRmsNorm: a " + t.rows() + "x" + t.cols() + " tensor beside a " + tx.rows()
                        + "x" + tx.cols() + " one");
        UploadedWeights<B, A> w = weights(lw);
        pipelines()
                .ops()
                .addRmsnorm(
                        arg(tx),
                        arg(ty),
                        w.forPipelines().norm(layer, which),
                        arg(ts),
                        arg(to),
                        tx.rows(),
                        tx.cols(),
                        w.config().rmsNormEps());
    }

    @Override
    public final void dense(LoadedWeights lw, int layer, DenseKind which, DeviceTensor x, DeviceTensor out) {
        UploadedWeights<B, A> w = weights(lw);
        runDense(w.forPipelines(), layer, which, tensor(x), tensor(out));
    }

    private void runDense(
            PipelineWeights<A, ?, ?> w, int layer, DenseKind which, BufferTensor<B> x, BufferTensor<B> out) {
        pipelines()
                .dense()
                .dense(
                        w.dense(layer, which),
                        w.bias(layer, which),
                        arg(x),
                        x.rows(),
                        x.cols(),
                        arg(out),
                        out.rows(),
                        out.cols());
    }

    /**
     * Q, K and V (one launch where the weights hold them as one matrix), then RoPE on q and k, one launch per sequence:
     * row {@code i} at {@code batch.position(i)}; sequence {@code s}'s rows are one run of positions.
     */
    @Override
    public final void qkvRope(
            LoadedWeights lw, int layer, DeviceTensor x, Batch batch, DeviceTensor q, DeviceTensor k, DeviceTensor v) {
        UploadedWeights<B, A> w = weights(lw);
        BufferTensor<B> tx = tensor(x), tq = tensor(q), tk = tensor(k), tv = tensor(v);
        ModelConfig c = w.config();
        PipelineWeights<A, ?, ?> pw = w.forPipelines();
        Pipelines<B, A> p = pipelines();
        A table = arg(w.rope(batch.endPosition())); // a new table is written by the driver: before this op's launches
        DensePipeline.Matrix<A> qkv = pw.qkv(layer);
        if (qkv != null) {
            p.dense()
                    .run(
                            qkv,
                            pw.bias(layer, DenseKind.Q),
                            arg(tx),
                            0,
                            tx.rows(),
                            arg(tq),
                            c.qDim(),
                            arg(tk),
                            c.kvDim(),
                            arg(tv));
        } else {
            runDense(pw, layer, DenseKind.Q, tx, tq);
            runDense(pw, layer, DenseKind.K, tx, tk);
            runDense(pw, layer, DenseKind.V, tx, tv);
        }
        for (int s = 0; s < batch.size(); s++) {
            HostStaging.At<A> pos = p.staging().position(s, batch.start(s));
            p.rope()
                    .run(
                            arg(tq),
                            arg(tk),
                            table,
                            pos.buffer(),
                            pos.offset(),
                            new RopeParams(
                                    batch.tokens(s),
                                    c.numAttentionHeads(),
                                    c.numKeyValueHeads(),
                                    c.headDim(),
                                    batch.firstRow(s)));
        }
    }

    /**
     * Attention of each sequence of the batch over its cache, then its rows stored there; positions were checked
     * against each context when the batch was made.
     */
    @Override
    public final void attention(
            LoadedWeights lw,
            int layer,
            DeviceTensor q,
            DeviceTensor k,
            DeviceTensor v,
            Batch batch,
            DeviceTensor out) {
        for (int s = 0; s < batch.size(); s++)
            cache(batch.cache(s)); // every cache this backend's, before anything runs
        UploadedWeights<B, A> w = weights(lw);
        BufferTensor<B> tq = tensor(q), tk = tensor(k), tv = tensor(v), to = tensor(out);
        Pipelines<B, A> p = pipelines();
        A sinks = w.forPipelines().sinks(layer);
        for (int s = 0; s < batch.size(); s++) {
            DeviceKvCache<B> cache = cache(batch.cache(s));
            int start = batch.start(s);
            HostStaging.At<A> pos = p.staging().position(s, start);
            AttentionParams params = AttentionParams.of(
                    w.config(),
                    layer,
                    cache.spec().slots(layer),
                    batch.tokens(s),
                    batch.firstRow(s),
                    cache.spec().type());
            var buffers = new AttentionPipeline.Buffers<>(
                    arg(tq), arg(tk), arg(tv), arg(cache.keys(layer)), arg(cache.values(layer)), sinks, arg(to));
            p.attention().run(buffers, params, start, pos.buffer(), pos.offset(), this::scratchArg);
        }
    }

    @Override
    public final void router(LoadedWeights lw, int layer, DeviceTensor x, DeviceRouting out) {
        UploadedWeights<B, A> w = weights(lw);
        BufferRouting<B> r = routing(out);
        int e = w.config().numExperts();
        if (r.k() > 32 || r.k() > e)
            throw new GossException("router: top-" + r.k() + " of " + e + " experts is not supported (k ≤ 32)");
        BufferTensor<B> tx = tensor(x);
        PipelineWeights<A, ?, ?> pw = w.forPipelines();
        int T = tx.rows();
        A logits = scratchArg("router logits", 4L * T * e);
        pipelines()
                .dense()
                .run(pw.dense(layer, DenseKind.ROUTER), pw.bias(layer, DenseKind.ROUTER), arg(tx), 0, T, logits);
        pipelines().ops().topk(logits, arg(r.ids()), arg(r.weights()), T, e, r.k());
    }

    @Override
    public final void moe(LoadedWeights lw, int layer, DeviceTensor x, DeviceRouting routing, DeviceTensor out) {
        UploadedWeights<B, A> w = weights(lw);
        BufferTensor<B> tx = tensor(x);
        BufferRouting<B> r = routing(routing);
        BufferTensor<B> to = tensor(out);
        ModelConfig c = w.config();
        MoeParams p =
                new MoeParams(tx.rows(), r.k(), c.hiddenSize(), c.intermediateSize(), c.numExperts(), c.swigluLimit());
        pipelines()
                .moe()
                .run(
                        w.forPipelines().experts(layer),
                        p,
                        arg(tx),
                        arg(r.ids()),
                        arg(r.weights()),
                        arg(to),
                        this::scratchArg);
    }

    @Override
    public final void add(DeviceTensor a, DeviceTensor b, DeviceTensor out) {
        BufferTensor<B> ta = tensor(a), tb = tensor(b), to = tensor(out);
        pipelines().ops().add(arg(ta), arg(tb), arg(to), (long) ta.rows() * ta.cols());
    }

    // ---- the result of a step -----------------------------------------------------------------

    /** Queues the logits of rows {@code fromRow ..} of {@code x} into the "logits" scratch buffer; returns that buffer. */
    private B logitsOnDevice(UploadedWeights<B, A> w, BufferTensor<B> x, int fromRow) {
        int n = x.rows() - fromRow;
        if (fromRow < 0 || n <= 0) throw new GossException("logits: from row " + fromRow + " of " + x.rows() + " rows");
        B out = scratch.ensure("logits", 4L * n * w.config().vocabSize());
        pipelines().dense().run(w.forPipelines().unembedding(), null, arg(x), fromRow, n, arg(out));
        return out;
    }

    @Override
    public final float[] logits(LoadedWeights lw, DeviceTensor x, int fromRow) {
        UploadedWeights<B, A> w = weights(lw);
        BufferTensor<B> in = tensor(x);
        B logits = logitsOnDevice(w, in, fromRow);
        float[] out =
                new float[Math.multiplyExact(in.rows() - fromRow, w.config().vocabSize())];
        driver.submit();
        driver.read(logits, 0, MemorySegment.ofArray(out));
        return out;
    }

    @Override
    public final int[] argmax(LoadedWeights lw, DeviceTensor x, int fromRow) {
        UploadedWeights<B, A> w = weights(lw);
        BufferTensor<B> in = tensor(x);
        B logits = logitsOnDevice(w, in, fromRow);
        int n = in.rows() - fromRow;
        B ids = scratch.ensure("argmax ids", 4L * n);
        queueArgmax(logits, n, w.config().vocabSize(), ids);
        int[] out = new int[n];
        driver.submit();
        driver.read(ids, 0, MemorySegment.ofArray(out));
        return out;
    }

    /** Queues {@code ids[i] = argmax_j logits[i, j]} for {@code i < n}, ties to the lower id. */
    protected final void queueArgmax(B logits, int n, int vocab, B ids) {
        sampling.argmax(logits, n, vocab, ids);
    }

    /**
     * Argmax and temperature sampling on the device ({@link DeviceSampling}) when the backend
     * {@link #supports} {@link BackendOp#SAMPLE}: only the ids come back; otherwise the host picks from the logits
     * ({@link Backend#sample}'s default, the fallback of {@link io.gossgpu.backend.DeclinedOps}).
     */
    @Override
    public final int[] sample(LoadedWeights lw, DeviceTensor x, int fromRow, double[] temperatures, double[] draws) {
        BufferTensor<B> in = tensor(x);
        int n = in.rows() - fromRow;
        TemperatureDraw.check(n, temperatures, draws);
        if (!supports(BackendOp.SAMPLE)) return Backend.super.sample(lw, x, fromRow, temperatures, draws);
        UploadedWeights<B, A> w = weights(lw);
        B logits = logitsOnDevice(w, in, fromRow);
        return sampling.pick(logits, n, w.config().vocabSize(), temperatures, draws);
    }

    /**
     * An id drawn at {@code temperature} with draw {@code u} from one row of logits already on this device, by the
     * device's sampling kernels (as {@link #sample} draws from the logits it computes); −1 when this device samples on
     * the host (it declines {@link BackendOp#SAMPLE}). For an application that makes its own logits, and for the kernels' tests.
     */
    public final int sampleRow(DeviceTensor logits, double temperature, double u) {
        if (!supports(BackendOp.SAMPLE)) return -1;
        if (logits.rows() != 1) throw new GossException("sampleRow takes one row, got " + logits.rows());
        return sampling.draw(tensor(logits).buffer(), logits.cols(), temperature, u);
    }

    /** Chunks of the sampling kernels: about 2048 ids each, at most 1024 (the pick adds them up on one thread). */
    public static int sampleChunks(int vocab) {
        return Math.max(1, Math.min(1024, (vocab + 2047) / 2048));
    }

    // ---- lifetime -----------------------------------------------------------------------------

    @Override
    public void synchronize() {
        driver.synchronize();
    }

    /** Waits for the device, releases the scratch arena, then the device ({@link #closeDevice}); once. */
    @Override
    public final void close() {
        if (closed) return;
        try {
            driver.synchronize();
            scratch.close();
        } finally {
            closed = true;
            closeDevice();
        }
    }

    /** Releases the kernels, queues and context (and whatever buffers are still open, where the API needs that). */
    protected abstract void closeDevice();

    /** Whether {@link #close} ran. */
    protected final boolean closed() {
        return closed;
    }
}
