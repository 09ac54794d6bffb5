package io.gossgpu.cpu;

import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOp;
import io.gossgpu.backend.Batch;
import io.gossgpu.backend.DenseKind;
import io.gossgpu.backend.DeviceRouting;
import io.gossgpu.backend.DeviceTensor;
import io.gossgpu.backend.DeviceWeights;
import io.gossgpu.backend.KvCache;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.backend.NormKind;
import io.gossgpu.backend.TemperatureDraw;
import io.gossgpu.cpu.compute.CpuKernels;
import io.gossgpu.cpu.compute.CpuPool;
import io.gossgpu.cpu.matmul.CpuMatrix;
import io.gossgpu.cpu.matmul.JavaMatrix;
import io.gossgpu.cpu.matmul.KernelSet;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.reference.HeapMemoryBackend;
import io.gossgpu.reference.ReferenceBackend;

/**
 * The {@code cpu} backend: the ops of {@link Backend} on a {@link KernelSet} (native integer kernels for
 * quantized weights where the platform has them, Java float kernels otherwise) and a {@link CpuPool} of
 * persistent threads. Activations are heap float arrays. Matrix products go through {@link MatrixJob}, the
 * MoE through {@link MoeJob}, attention through {@link AttentionJob}.
 */
public final class CpuBackend extends HeapMemoryBackend {
    private final CpuPool pool;
    private final KernelSet kernels;
    private final CpuKernels k;
    private final int threads;
    private final JavaMatrix.Scratch scratch;
    private final MatrixJob mat;
    private final MoeJob moe;
    private final AttentionJob attn;
    private final PooledDraw draw;
    private float[] routerLogits = new float[0], idLogits = new float[0];

    public CpuBackend(int threads, KernelSet kernels) {
        this.threads = threads;
        this.kernels = kernels;
        this.k = kernels.java();
        this.pool = new CpuPool(threads);
        this.scratch = new JavaMatrix.Scratch(threads);
        this.mat = new MatrixJob(pool, kernels);
        this.moe = new MoeJob(pool, kernels, threads);
        this.attn = new AttentionJob(pool, kernels, threads);
        this.draw = new PooledDraw(pool);
    }

    public KernelSet kernels() {
        return kernels;
    }

    public int threads() {
        return threads;
    }

    /** Tokens per MoE pass (tests lower it to cover chunked MoE). */
    void moeChunkTokens(int n) {
        moe.chunkTokens = n;
    }

    /** Rows per MoE work item, a multiple of 16 (tests lower it so that each expert is several items). */
    void moeTileRows(int n) {
        if (n <= 0 || n % 16 != 0)
            throw new IllegalArgumentException("MoE tile rows must be a positive multiple of 16, got " + n);
        moe.tileRows = n;
    }

    /** Whether the MoE of one token reads its row in place (tests turn it off: the rows copied per slot). */
    void moeOneTokenInPlace(boolean on) {
        moe.oneTokenInPlace = on;
    }

    /** Gate/up rows × tokens one MoE call may cover (tests set one tile: a call per work item). */
    void moeMergedRows(int n) {
        if (n <= 0) throw new IllegalArgumentException("MoE merged rows must be positive, got " + n);
        moe.mergedRows = n;
    }

    /**
     * Turns the profile of the pool's jobs on or off ({@code bench --op-times}; off by default): see {@link CpuPool#profile}.
     * Call between ops, on the thread that runs them.
     */
    public void profile(boolean on) {
        pool.profile(on);
    }

    /** The pool's job counts so far, tagged by {@link CpuJobTag} (all zero unless {@link #profile} was on). */
    public CpuPool.Stats poolStats() {
        return pool.stats();
    }

    /** Native memory {@code w} (loaded by this backend) holds for its repacked matrices, in bytes. */
    public static long repackedBytes(LoadedWeights w) {
        return ((CpuWeights) w).ownedBytes();
    }

    @Override
    public String name() {
        return CpuBackendProvider.NAME;
    }

    @Override
    public String deviceDescription() {
        return "CPU, " + threads + " thread" + (threads == 1 ? "" : "s") + " of "
                + Runtime.getRuntime().availableProcessors() + ", " + kernels.describe();
    }

    // ---- memory -------------------------------------------------------------------------------

    @Override
    public LoadedWeights loadWeights(ModelWeights weights) {
        return loadWeights(weights, MemInfo.availableBytes());
    }

    /** {@link #loadWeights(ModelWeights)} as if {@code availableBytes} were available (tests: the short-memory path). */
    LoadedWeights loadWeights(ModelWeights weights, long availableBytes) {
        CpuWeights.checkMemory(weights, kernels);
        return new CpuWeights(weights, kernels, pool, scratch, availableBytes);
    }

    /** Keys and values in Java arrays of the spec's type ({@link CpuKvCache}): F32, F16, BF16 or Q8_0. */
    @Override
    public KvCache createKvCache(KvCacheSpec spec) {
        return heapKvCache(spec, spec.type(), 16, CpuKvCache::new);
    }

    // ---- ops ------------------------------------------------------------------------------------

    @Override
    public void embed(LoadedWeights lw, int[] tokens, DeviceTensor out) {
        embedRows(((CpuWeights) lw).model, tokens, (Tensor) out);
    }

    @Override
    public void rmsNorm(LoadedWeights lw, int layer, NormKind which, DeviceTensor x, DeviceTensor out) {
        CpuWeights w = (CpuWeights) lw;
        float[] scale = w.m.norm(layer, which);
        Tensor in = (Tensor) x, o = (Tensor) out;
        int n = in.cols;
        double eps = w.config.rmsNormEps();
        rows(in.rows, (from, to, worker) -> {
            for (int i = from; i < to; i++) {
                double ss = k.sumSquares(in.data, i * n, n);
                float inv = (float) (1 / Math.sqrt(ss / n + eps));
                k.normScale(in.data, i * n, inv, scale, o.data, i * n, n);
            }
        });
    }

    /** Row-independent work: on the pool for a batch (so no core idles in prefill), on the caller for a few rows. */
    private void rows(int n, CpuPool.Body body) {
        if (n < PARALLEL_ROWS) body.run(0, n, 0);
        else pool.run(n, pool.grainFor(n, 4, 4), body);
    }

    /** Rows from which element-wise ops (norms, RoPE, adds) are split across threads. */
    private static final int PARALLEL_ROWS = 16;

    @Override
    public void dense(LoadedWeights lw, int layer, DenseKind which, DeviceTensor x, DeviceTensor out) {
        CpuWeights w = (CpuWeights) lw;
        Tensor in = (Tensor) x, o = (Tensor) out;
        DeviceWeights.Layer<float[], CpuMatrix, CpuMatrix> l = w.m.layer(layer);
        mat.begin(in.data, 0, in.rows, in.cols)
                .add(l.dense(which), l.bias(which), o.data, o.cols)
                .run();
    }

    @Override
    public void qkvRope(
            LoadedWeights lw, int layer, DeviceTensor x, Batch batch, DeviceTensor q, DeviceTensor kk, DeviceTensor v) {
        CpuWeights w = (CpuWeights) lw;
        DeviceWeights.Layer<float[], CpuMatrix, CpuMatrix> l = w.m.layer(layer);
        Tensor in = (Tensor) x, tq = (Tensor) q, tk = (Tensor) kk, tv = (Tensor) v;
        mat.begin(in.data, 0, in.rows, in.cols)
                .add(l.dense(DenseKind.Q), l.bias(DenseKind.Q), tq.data, tq.cols)
                .add(l.dense(DenseKind.K), l.bias(DenseKind.K), tk.data, tk.cols)
                .add(l.dense(DenseKind.V), l.bias(DenseKind.V), tv.data, tv.cols)
                .run();
        w.ensureRope(batch.endPosition());
        int hd = w.config.headDim();
        float[] table = w.rope;
        rows(in.rows, (from, to, worker) -> {
            rope(tq, hd, table, batch, from, to);
            rope(tk, hd, table, batch, from, to);
        });
    }

    /** Half-split rotation of rows {@code from .. to−1} with the table rows of their positions in {@code batch}. */
    private static void rope(Tensor t, int hd, float[] table, Batch batch, int from, int to) {
        int half = hd / 2;
        for (int i = from; i < to; i++) {
            int tb = batch.position(i) * hd;
            for (int head = 0; head < t.cols / hd; head++) {
                int base = i * t.cols + head * hd;
                for (int j = 0; j < half; j++) {
                    float cos = table[tb + 2 * j], sin = table[tb + 2 * j + 1];
                    float x1 = t.data[base + j], x2 = t.data[base + half + j];
                    t.data[base + j] = x1 * cos - x2 * sin;
                    t.data[base + half + j] = x2 * cos + x1 * sin;
                }
            }
        }
    }

    @Override
    public void attention(
            LoadedWeights lw,
            int layer,
            DeviceTensor qT,
            DeviceTensor kT,
            DeviceTensor vT,
            Batch batch,
            DeviceTensor out) {
        CpuWeights w = (CpuWeights) lw;
        attn.run(
                w.config,
                layer,
                ((Tensor) qT).data,
                ((Tensor) kT).data,
                ((Tensor) vT).data,
                batch,
                w.m.layer(layer).sinks(),
                ((Tensor) out).data);
    }

    @Override
    public void router(LoadedWeights lw, int layer, DeviceTensor x, DeviceRouting out) {
        CpuWeights w = (CpuWeights) lw;
        Tensor in = (Tensor) x;
        RoutingBuf r = (RoutingBuf) out;
        int e = w.config.numExperts();
        if (routerLogits.length < in.rows * e) routerLogits = new float[in.rows * e];
        DeviceWeights.Layer<float[], CpuMatrix, CpuMatrix> l = w.m.layer(layer);
        mat.begin(in.data, 0, in.rows, in.cols)
                .add(l.dense(DenseKind.ROUTER), l.bias(DenseKind.ROUTER), routerLogits, e)
                .run();
        for (int i = 0; i < in.rows; i++)
            ReferenceBackend.topK(routerLogits, i * e, e, r.k, r.experts, r.weights, i * r.k);
    }

    @Override
    public void moe(LoadedWeights lw, int layer, DeviceTensor x, DeviceRouting routing, DeviceTensor out) {
        Tensor in = (Tensor) x;
        RoutingBuf r = (RoutingBuf) routing;
        moe.run((CpuWeights) lw, layer, in.data, in.rows, r.experts, r.weights, r.k, ((Tensor) out).data);
    }

    @Override
    public void add(DeviceTensor a, DeviceTensor b, DeviceTensor out) {
        Tensor o = (Tensor) out;
        float[] x = ((Tensor) a).data, y = ((Tensor) b).data;
        int c = o.cols;
        rows(o.rows, (from, to, worker) -> k.add(x, from * c, y, from * c, o.data, from * c, (to - from) * c));
    }

    /** Fused: each row's sum is normed while it is still in cache, one pass over the rows for both. */
    @Override
    public void addRmsNorm(
            LoadedWeights lw,
            int layer,
            NormKind which,
            DeviceTensor x,
            DeviceTensor y,
            DeviceTensor sum,
            DeviceTensor out) {
        CpuWeights w = (CpuWeights) lw;
        float[] scale = w.m.norm(layer, which);
        float[] a = ((Tensor) x).data, b = ((Tensor) y).data;
        Tensor s = (Tensor) sum, o = (Tensor) out;
        int n = s.cols;
        double eps = w.config.rmsNormEps();
        rows(s.rows, (from, to, worker) -> {
            for (int i = from; i < to; i++) {
                k.add(a, i * n, b, i * n, s.data, i * n, n);
                double ss = k.sumSquares(s.data, i * n, n);
                float inv = (float) (1 / Math.sqrt(ss / n + eps));
                k.normScale(s.data, i * n, inv, scale, o.data, i * n, n);
            }
        });
    }

    @Override
    public boolean supports(BackendOp op) {
        return op == BackendOp.ADD_RMS_NORM || super.supports(op);
    }

    private void logitsInto(CpuWeights w, Tensor in, int fromRow, float[] dst) {
        mat.begin(in.data, fromRow * in.cols, in.rows - fromRow, in.cols)
                .add(w.m.unembedding(), null, dst, w.config.vocabSize())
                .run();
    }

    @Override
    public float[] logits(LoadedWeights lw, DeviceTensor x, int fromRow) {
        CpuWeights w = (CpuWeights) lw;
        Tensor in = (Tensor) x;
        float[] out = new float[Math.multiplyExact(in.rows - fromRow, w.config.vocabSize())];
        logitsInto(w, in, fromRow, out);
        return out;
    }

    @Override
    public int[] argmax(LoadedWeights lw, DeviceTensor x, int fromRow) {
        CpuWeights w = (CpuWeights) lw;
        Tensor in = (Tensor) x;
        int vocab = w.config.vocabSize(), n = in.rows - fromRow;
        float[] l = pickLogits(w, in, fromRow);
        int[] out = new int[n];
        for (int i = 0; i < n; i++) out[i] = k.argmax(l, i * vocab, vocab);
        return out;
    }

    /**
     * The host path's ids ({@link io.gossgpu.backend.DeclinedOps}) without its copy of the logits: the argmax kernel for
     * greedy rows, the exponentials of sampled rows on the pool ({@link PooledDraw}, the same ids as
     * {@link TemperatureDraw#draw}).
     */
    @Override
    public int[] sample(LoadedWeights lw, DeviceTensor x, int fromRow, double[] temperatures, double[] draws) {
        CpuWeights w = (CpuWeights) lw;
        Tensor in = (Tensor) x;
        int vocab = w.config.vocabSize(), n = in.rows - fromRow;
        TemperatureDraw.check(n, temperatures, draws);
        float[] l = pickLogits(w, in, fromRow);
        int[] out = new int[n];
        for (int i = 0; i < n; i++)
            out[i] = temperatures[i] == 0
                    ? k.argmax(l, i * vocab, vocab)
                    : draw.draw(l, i * vocab, vocab, temperatures[i], draws[i]);
        return out;
    }

    /** The logits of rows {@code fromRow ..} into the backend's reused buffer, for ops that return only ids. */
    private float[] pickLogits(CpuWeights w, Tensor in, int fromRow) {
        int size = Math.multiplyExact(in.rows - fromRow, w.config.vocabSize());
        if (idLogits.length < size) idLogits = new float[size];
        logitsInto(w, in, fromRow, idLogits);
        return idLogits;
    }

    @Override
    public void close() {
        pool.close();
    }
}
