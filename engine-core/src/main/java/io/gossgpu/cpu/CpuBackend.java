package io.gossgpu.cpu;

import io.gossgpu.GossException;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.DenseKind;
import io.gossgpu.backend.DeviceRouting;
import io.gossgpu.backend.DeviceTensor;
import io.gossgpu.backend.DeviceWeights;
import io.gossgpu.backend.KvCache;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.backend.NormKind;
import io.gossgpu.backend.Rope;
import io.gossgpu.model.LayerWeights;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.model.WeightView;

import java.util.Arrays;

/**
 * The {@code cpu} backend: the ops of {@link Backend} on {@link CpuKernels} (Vector API) and a
 * {@link CpuPool} of persistent threads. Weights are read in place from the mapped checkpoint; only
 * vectors (norm scales, biases, sinks) are decoded at load. Activations are heap float arrays.
 *
 * <p>Matrix products: decode (T ≤ {@link #FUSED_MAX_T}) multiplies each weight row straight from its
 * bytes (fused decode × dot, memory bound); prefill decodes a tile of {@link #TILE} rows once into
 * floats and multiplies it with blocks of {@link #TOKEN_BLOCK} tokens, 4 tokens per pass (compute
 * bound). Rows are split across threads. MoE groups the batch's tokens by expert: phase 1 computes
 * gate/up + SwiGLU for every (expert, row) tile, phase 2 the down projection per output row over all
 * active experts (each thread owns its output rows, so no reduction). Attention splits (token, KV head)
 * pairs across threads; each query head's scores live in a per-thread buffer.
 */
public final class CpuBackend extends HeapMemoryBackend {
    static final int TILE = 16;
    static final int TOKEN_BLOCK = 32;
    static final int FUSED_MAX_T = 2;
    /** Tokens per panel of a long prefill's dense products (64 × 2880 floats = 737 KB, L2-sized). */
    static final int PANEL = 64;

    private final CpuPool pool;
    private final CpuKernels k;
    private final int threads;

    // per-worker scratch, grown as needed (never per token once sized)
    private float[][] tileA, tileB, tmpA, tmpB, rowScratch, scores, slotScores, actTmp, batchScores;
    /** The current attention batch's keys in 16-position transposed blocks (the cache's key layout). */
    private float[] kBatchT = new float[0];
    private int scratchCols;

    // MoE staging (caller thread)
    private int[] moeOrder = new int[0];
    private int[] groupStartBuf = new int[0];
    private int[] active = new int[0];
    private float[] moeX = new float[0], moeH = new float[0];
    private float[] routerLogits = new float[0], argmaxLogits = new float[0];

    private final MatJob mat = new MatJob();
    private final MoeUpJob moeUp = new MoeUpJob();
    private final MoeDownJob moeDown = new MoeDownJob();
    private final MoeSumJob moeSum = new MoeSumJob();
    private float[] moeY = new float[0];
    private int[] moeSlotRow = new int[0];
    private final AttnJob attn = new AttnJob();

    public CpuBackend(int threads, CpuKernels kernels) {
        this.threads = threads;
        this.k = kernels;
        this.pool = new CpuPool(threads);
        ensureScratch(64, 64);
    }

    public CpuKernels kernels() {
        return k;
    }

    public int threads() {
        return threads;
    }

    @Override
    public String name() {
        return CpuBackendProvider.NAME;
    }

    @Override
    public String deviceDescription() {
        return "CPU, " + threads + " thread" + (threads == 1 ? "" : "s") + " of " + Runtime.getRuntime().availableProcessors()
                + ", " + k.describe();
    }

    private void ensureScratch(int cols, int ctx) {
        if (tileA == null || cols > scratchCols) {
            scratchCols = Math.max(cols, scratchCols);
            tileA = new float[threads][TILE * scratchCols];
            tileB = new float[threads][TILE * scratchCols];
            rowScratch = new float[threads][scratchCols];
            tmpA = new float[threads][TILE * TOKEN_BLOCK];
            tmpB = new float[threads][TILE * TOKEN_BLOCK];
            actTmp = new float[threads][TILE];
        }
        if (scores == null || scores[0].length < ctx) {
            int n = Math.max(ctx, scores == null ? 0 : scores[0].length);
            scores = new float[threads][n];
            slotScores = new float[threads][(n + 15) & ~15];
        }
    }

    // ---- memory -------------------------------------------------------------------------------

    static final class Cache implements KvCache {
        final KvCacheSpec spec;
        /**
         * Keys in blocks of 16 slots, transposed within a block so that one vector holds 16 positions of one
         * channel: key {@code c} of slot {@code s} at {@code ((s >> 4)·kvDim + c)·16 + (s & 15)}. Values row-major:
         * {@code [slot·kvDim + c]}.
         */
        final float[][] keys, values;

        Cache(KvCacheSpec spec) {
            this.spec = spec;
            int layers = spec.config().numHiddenLayers();
            keys = new float[layers][];
            values = new float[layers][];
            for (int l = 0; l < layers; l++) {
                int slots = spec.slots(l);
                keys[l] = new float[Math.multiplyExact((slots + 15) & ~15, spec.config().kvDim())];
                values[l] = new float[Math.multiplyExact(slots, spec.config().kvDim())];
            }
        }

        @Override public KvCacheSpec spec() { return spec; }
        @Override public void close() {}
    }

    static final class Weights implements LoadedWeights {
        final ModelWeights model;
        final ModelConfig config;
        final LayerWeights[] layers;
        /** Vectors (norms, biases, sinks; expert biases expert-major) decoded to float[]; matrices stay views of the file. */
        final DeviceWeights<float[], WeightView, WeightView> onHeap;
        float[] rope = new float[0]; // cos/sin table rows for positions [0, ropePositions)
        int ropePositions;

        Weights(ModelWeights m) {
            model = m;
            config = m.config();
            layers = m.layers().toArray(new LayerWeights[0]);
            onHeap = new DeviceWeights<>(m, new DeviceWeights.Uploader<>() {
                @Override
                public float[] vector(WeightView v) {
                    return v.dequantizeAll();
                }

                @Override
                public WeightView dense(WeightView v) {
                    return v;
                }

                @Override
                public WeightView experts(WeightView v) {
                    return v;
                }
            });
        }

        /** Makes the RoPE table cover positions {@code < end} (grows by doubling; amortized, not per token). */
        void ensureRope(int end) {
            if (end <= ropePositions) return;
            int n = Math.max(end, Math.max(64, ropePositions * 2));
            int hd = config.headDim();
            float[] more = Rope.cosSinTable(config, ropePositions, n - ropePositions);
            float[] t = Arrays.copyOf(rope, n * hd);
            System.arraycopy(more, 0, t, ropePositions * hd, more.length);
            rope = t;
            ropePositions = n;
        }

        @Override public ModelConfig config() { return config; }
        @Override public void close() {}
    }

    @Override
    public LoadedWeights loadWeights(ModelWeights weights) {
        Weights w = new Weights(weights);
        ModelConfig c = w.config;
        ensureScratch(Math.max(Math.max(c.hiddenSize(), c.qDim()), Math.max(c.intermediateSize(), c.numExperts())), 64);
        return w;
    }

    @Override
    public KvCache createKvCache(KvCacheSpec spec) {
        Runtime rt = Runtime.getRuntime();
        long free = rt.maxMemory() - (rt.totalMemory() - rt.freeMemory());
        if (spec.bytes() > free)
            throw new GossException(spec.describe() + " does not fit in the Java heap (" + KvCacheSpec.humanBytes(free)
                    + " free); choose a shorter context or raise -Xmx");
        for (int l = 0; l < spec.config().numHiddenLayers(); l++)
            if ((long) (spec.slots(l) + 16) * spec.config().kvDim() > Integer.MAX_VALUE - 8)
                throw new GossException(spec.describe() + ": a layer exceeds the cpu backend's 2^31-float arrays");
        try {
            Cache c = new Cache(spec);
            ensureScratch(scratchCols, spec.contextLength());
            return c;
        } catch (OutOfMemoryError e) {
            throw new GossException(spec.describe() + " could not be allocated in the Java heap; choose a shorter context or raise -Xmx");
        }
    }

    // ---- dense products ---------------------------------------------------------------------------

    /**
     * {@code out_p[t, r] = Σ_c W_p[r, c]·x[t, c] + b_p[r]} for up to three matrices {@code p} sharing one
     * input, their rows concatenated into one index range split across threads.
     */
    private final class MatJob implements CpuPool.Body {
        final WeightView[] views = new WeightView[3];
        final float[][] biases = new float[3][];
        final float[][] outs = new float[3][];
        final int[] outStride = new int[3], outRow0 = new int[3];
        final int[] starts = new int[4];
        int parts, T, xCols, xOff;
        float[] x;

        void reset(float[] x, int xOff, int T, int xCols) {
            this.x = x;
            this.xOff = xOff;
            this.T = T;
            this.xCols = xCols;
            parts = 0;
            starts[0] = 0;
        }

        /** Adds a matrix; its rows write {@code out[outRow0 + t·stride + r]}. */
        void add(WeightView v, float[] bias, float[] out, int outRow0, int stride) {
            views[parts] = v;
            biases[parts] = bias;
            outs[parts] = out;
            this.outRow0[parts] = outRow0;
            outStride[parts] = stride;
            starts[parts + 1] = starts[parts] + v.rows();
            parts++;
        }

        /**
         * Runs every row over the batch. Long batches go in panels of {@link #PANEL} tokens, so that a
         * panel's activations stay in L2 while every row tile streams past them (weights are decoded
         * once per panel, a few % of the work).
         */
        void runAll() {
            int total = starts[parts];
            if (T <= FUSED_MAX_T) {
                pool.run(total, pool.grainFor(total, 8, 8), this);
                return;
            }
            int allT = T, x0 = xOff;
            int[] o0 = {outRow0[0], outRow0[1], outRow0[2]};
            for (int p0 = 0; p0 < allT; p0 += PANEL) {
                T = Math.min(PANEL, allT - p0);
                xOff = x0 + p0 * xCols;
                for (int p = 0; p < parts; p++) outRow0[p] = o0[p] + p0 * outStride[p];
                pool.run(total, TILE, this);
            }
            T = allT;
            xOff = x0;
            for (int p = 0; p < parts; p++) outRow0[p] = o0[p];
        }

        @Override
        public void run(int from, int to, int worker) {
            while (from < to) {
                int p = 0;
                while (starts[p + 1] <= from) p++;
                int end = Math.min(to, starts[p + 1]);
                rows(p, from - starts[p], end - starts[p], worker);
                from = end;
            }
        }

        private void rows(int p, int r0, int r1, int worker) {
            WeightView v = views[p];
            float[] b = biases[p], out = outs[p];
            int os = outStride[p], o0 = outRow0[p];
            int cols = v.cols();
            if (T <= FUSED_MAX_T) {
                float[] scratch = rowScratch[worker];
                for (int r = r0; r < r1; r++) {
                    float bias = b == null ? 0 : b[r];
                    for (int t = 0; t < T; t++) out[o0 + t * os + r] = k.dotRow(v, 0, r, x, xOff + t * xCols, scratch) + bias;
                }
                return;
            }
            float[] tile = tileA[worker];
            for (int rt = r0; rt < r1; rt += TILE) {
                int n = Math.min(TILE, r1 - rt);
                for (int i = 0; i < n; i++) k.decodeRow(v, 0, rt + i, tile, i * cols);
                for (int t0 = 0; t0 < T; t0 += TOKEN_BLOCK) {
                    int cnt = Math.min(TOKEN_BLOCK, T - t0);
                    k.dotTile(tile, 0, n, cols, x, xOff + t0 * xCols, xCols, cnt, out, o0 + t0 * os + rt, 1, os);
                }
                if (b != null)
                    for (int t = 0; t < T; t++)
                        for (int i = 0; i < n; i++) out[o0 + t * os + rt + i] += b[rt + i];
            }
        }
    }


    @Override
    public void linear(LoadedWeights lw, int layer, DenseKind which, DeviceTensor x, DeviceTensor out) {
        Weights w = (Weights) lw;
        Tensor in = (Tensor) x, o = (Tensor) out;
        mat.reset(in.data, 0, in.rows, in.cols);
        mat.add(w.onHeap.layer(layer).dense(which), w.onHeap.layer(layer).bias(which), o.data, 0, o.cols);
        mat.runAll();
    }

    @Override
    public void embed(LoadedWeights lw, int[] tokens, DeviceTensor out) {
        embedRows(((Weights) lw).model, tokens, (Tensor) out);
    }

    @Override
    public void rmsNorm(LoadedWeights lw, int layer, NormKind which, DeviceTensor x, DeviceTensor out) {
        Weights w = (Weights) lw;
        float[] scale = w.onHeap.norm(layer, which);
        Tensor in = (Tensor) x, o = (Tensor) out;
        int n = in.cols;
        for (int i = 0; i < in.rows; i++) {
            double ss = k.sumSquares(in.data, i * n, n);
            float inv = (float) (1 / Math.sqrt(ss / n + w.config.rmsNormEps()));
            k.normScale(in.data, i * n, inv, scale, o.data, i * n, n);
        }
    }

    @Override
    public void qkvRope(LoadedWeights lw, int layer, DeviceTensor x, int start, DeviceTensor q, DeviceTensor kk, DeviceTensor v) {
        Weights w = (Weights) lw;
        LayerWeights l = w.layers[layer];
        Tensor in = (Tensor) x, tq = (Tensor) q, tk = (Tensor) kk, tv = (Tensor) v;
        mat.reset(in.data, 0, in.rows, in.cols);
        mat.add(l.q(), w.onHeap.layer(layer).bias(DenseKind.Q), tq.data, 0, tq.cols);
        mat.add(l.k(), w.onHeap.layer(layer).bias(DenseKind.K), tk.data, 0, tk.cols);
        mat.add(l.v(), w.onHeap.layer(layer).bias(DenseKind.V), tv.data, 0, tv.cols);
        mat.runAll();
        w.ensureRope(start + in.rows);
        int hd = w.config.headDim();
        rope(tq, hd, w.rope, start);
        rope(tk, hd, w.rope, start);
    }

    /** Half-split rotation with the table rows of positions {@code start + i}. */
    private static void rope(Tensor t, int hd, float[] table, int start) {
        int half = hd / 2;
        for (int i = 0; i < t.rows; i++) {
            int tb = (start + i) * hd;
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

    // ---- attention ----------------------------------------------------------------------------------

    private final class AttnJob implements CpuPool.Body {
        float[] q, kIn, vIn, out, ck, cv, sinks;
        int start, slots, kvDim, qDim, hd, group, kvHeads, window;
        boolean sliding;
        float scale;

        @Override
        public void run(int from, int to, int worker) {
            float[] s = scores[worker], bySlot = slotScores[worker];
            for (int item = from; item < to; item++) {
                int i = item / kvHeads, g = item % kvHeads;
                int p = start + i;
                int lo = sliding ? Math.max(0, p - window + 1) : 0;
                int n = p - lo + 1;
                int cachedEnd = Math.min(p + 1, start); // positions lo .. cachedEnd-1 come from the cache
                for (int h = g * group; h < (g + 1) * group; h++) {
                    int qo = i * qDim + h * hd;
                    float max = sinks[h];
                    if (lo < cachedEnd) {
                        // cached positions: at most two runs of consecutive slots (the ring may wrap)
                        int sA = lo % slots, count = cachedEnd - lo;
                        int first = Math.min(count, slots - sA);
                        k.keyScores(q, qo, hd, ck, kvDim, g * hd, sA, sA + first, bySlot);
                        if (first < count) k.keyScores(q, qo, hd, ck, kvDim, g * hd, 0, count - first, bySlot);
                        max = Math.max(max, k.scaleCopyMax(bySlot, sA, s, 0, first, scale));
                        if (first < count) max = Math.max(max, k.scaleCopyMax(bySlot, 0, s, first, count - first, scale));
                    }
                    int jb0 = Math.max(lo, start);
                    if (jb0 <= p) {
                        // the batch's own keys, transposed into 16-position blocks once per call (see attention())
                        k.keyScores(q, qo, hd, kBatchT, kvDim, g * hd, jb0 - start, i + 1, batchScores[worker]);
                        max = Math.max(max, k.scaleCopyMax(batchScores[worker], jb0 - start, s, jb0 - lo, p - jb0 + 1, scale));
                    }
                    float z = k.expSub(s, 0, n, max) + (float) Math.exp(sinks[h] - max);
                    java.util.Arrays.fill(out, qo, qo + hd, 0f);
                    if (lo < cachedEnd) {
                        int sA = lo % slots, count = cachedEnd - lo;
                        int first = Math.min(count, slots - sA);
                        k.weightedRows(s, 0, first, cv, sA * kvDim + g * hd, kvDim, out, qo, hd);
                        if (first < count) k.weightedRows(s, first, count - first, cv, g * hd, kvDim, out, qo, hd);
                    }
                    int b0 = Math.max(lo, start);
                    if (b0 <= p) k.weightedRows(s, b0 - lo, p - b0 + 1, vIn, (b0 - start) * kvDim + g * hd, kvDim, out, qo, hd);
                    k.scale(1 / z, out, qo, hd);
                }
            }
        }
    }

    @Override
    public void attention(LoadedWeights lw, int layer, DeviceTensor qT, DeviceTensor kT, DeviceTensor vT, KvCache kv,
                          int start, DeviceTensor out) {
        Weights w = (Weights) lw;
        ModelConfig c = w.config;
        Tensor q = (Tensor) qT, kt = (Tensor) kT, v = (Tensor) vT, o = (Tensor) out;
        Cache cache = (Cache) kv;
        int T = q.rows;
        if (start < 0 || start + T > cache.spec.contextLength())
            throw new GossException("positions " + start + ".." + (start + T - 1) + " exceed the context length " + cache.spec.contextLength());
        ensureScratch(scratchCols, start + T);
        int kvd = c.kvDim(), tRound = (T + 15) & ~15;
        if (kBatchT.length < tRound * kvd) kBatchT = new float[tRound * kvd];
        if (batchScores == null || batchScores[0].length < tRound) batchScores = new float[threads][tRound];
        for (int i = 0; i < T; i++) {
            int kb = (i >> 4) * kvd * 16 + (i & 15);
            for (int ch = 0; ch < kvd; ch++) kBatchT[kb + ch * 16] = kt.data[i * kvd + ch];
        }
        AttnJob a = attn;
        a.q = q.data;
        a.kIn = kt.data;
        a.vIn = v.data;
        a.out = o.data;
        a.ck = cache.keys[layer];
        a.cv = cache.values[layer];
        a.sinks = w.onHeap.layer(layer).sinks();
        a.start = start;
        a.slots = cache.spec.slots(layer);
        a.kvDim = c.kvDim();
        a.qDim = c.qDim();
        a.hd = c.headDim();
        a.group = c.queriesPerKvHead();
        a.kvHeads = c.numKeyValueHeads();
        a.sliding = c.isSlidingLayer(layer);
        a.window = c.slidingWindow();
        a.scale = (float) (1 / Math.sqrt(c.headDim()));
        pool.run(T * a.kvHeads, 1, a);
        int kvDim = c.kvDim(), slots = a.slots;
        for (int i = Math.max(0, T - slots); i < T; i++) {
            int slot = (start + i) % slots;
            int kb = (slot >> 4) * kvDim * 16 + (slot & 15);
            for (int ch = 0; ch < kvDim; ch++) a.ck[kb + ch * 16] = kt.data[i * kvDim + ch];
            System.arraycopy(v.data, i * kvDim, a.cv, slot * kvDim, kvDim);
        }
        a.q = a.kIn = a.vIn = a.out = a.ck = a.cv = null;
    }

    // ---- router and MoE -------------------------------------------------------------------------------

    @Override
    public void router(LoadedWeights lw, int layer, DeviceTensor x, DeviceRouting out) {
        Weights w = (Weights) lw;
        Tensor in = (Tensor) x;
        RoutingBuf r = (RoutingBuf) out;
        int e = w.config.numExperts(), kk = r.k;
        if (routerLogits.length < in.rows * e) routerLogits = new float[in.rows * e];
        mat.reset(in.data, 0, in.rows, in.cols);
        mat.add(w.layers[layer].router(), w.onHeap.layer(layer).bias(DenseKind.ROUTER), routerLogits, 0, e);
        mat.runAll();
        for (int i = 0; i < in.rows; i++) topK(routerLogits, i * e, e, kk, r.experts, r.weights, i * kk);
    }

    /** Top-k sorted descending, ties to the lower index; softmax over the k selected. No allocation. */
    static void topK(float[] logits, int off, int n, int k, int[] ids, float[] weights, int outOff) {
        for (int j = 0; j < k; j++) {
            int best = -1;
            for (int x = 0; x < n; x++) {
                boolean taken = false;
                for (int m = 0; m < j; m++) if (ids[outOff + m] == x) { taken = true; break; }
                if (!taken && (best < 0 || logits[off + x] > logits[off + best])) best = x;
            }
            ids[outOff + j] = best;
        }
        double max = logits[off + ids[outOff]], z = 0;
        for (int j = 0; j < k; j++) z += Math.exp(logits[off + ids[outOff + j]] - max);
        for (int j = 0; j < k; j++) weights[outOff + j] = (float) (Math.exp(logits[off + ids[outOff + j]] - max) / z);
    }

    /** Shared state of the two MoE phases. Rows of {@code moeX}/{@code moeH} follow {@code moeOrder} (grouped by expert). */
    private int moeActive, moeH_, moeI, moeTok0, moeK;
    private LayerWeights moeL;
    private Weights moeW;
    private int moeLayer;
    private boolean downPermuted;
    private float[] moeOut, moeWeights;
    private float limit;

    /** Phase 1: for (active expert, tile of intermediate rows): gate/up products and SwiGLU into moeH. */
    private final class MoeUpJob implements CpuPool.Body {
        int tilesPerExpert;

        @Override
        public void run(int from, int to, int worker) {
            for (int item = from; item < to; item++) {
                int ai = item / tilesPerExpert, tileNo = item % tilesPerExpert;
                int e = active[ai];
                int g0 = groupStartBuf[e], n = groupStartBuf[e + 1] - g0;
                int u0 = tileNo * TILE, u1 = Math.min(moeI, u0 + TILE);
                WeightView gate = moeL.gate(), up = moeL.up();
                float[] gb = moeW.onHeap.layer(moeLayer).gateBias(), ub = moeW.onHeap.layer(moeLayer).upBias();
                int H = moeH_, I = moeI;
                if (n <= FUSED_MAX_T) {
                    float[] scratch = rowScratch[worker];
                    for (int u = u0; u < u1; u++) {
                        int hu = downPermuted ? CpuKernels.permutedIndex(u) : u;
                        for (int t = 0; t < n; t++) {
                            int row = g0 + t;
                            float a = k.dotRow(gate, e, u, moeX, row * H, scratch) + gb[e * I + u];
                            float b = k.dotRow(up, e, u, moeX, row * H, scratch) + ub[e * I + u];
                            moeH[row * I + hu] = swiglu(a, b, limit);
                        }
                    }
                    continue;
                }
                int rows = u1 - u0;
                float[] ta = tileA[worker], tb = tileB[worker], oa = tmpA[worker], ob = tmpB[worker];
                for (int i = 0; i < rows; i++) {
                    k.decodeRow(gate, e, u0 + i, ta, i * H);
                    k.decodeRow(up, e, u0 + i, tb, i * H);
                }
                for (int t0 = 0; t0 < n; t0 += TOKEN_BLOCK) {
                    int cnt = Math.min(TOKEN_BLOCK, n - t0);
                    k.dotTile(ta, 0, rows, H, moeX, (g0 + t0) * H, H, cnt, oa, 0, 1, TILE);
                    k.dotTile(tb, 0, rows, H, moeX, (g0 + t0) * H, H, cnt, ob, 0, 1, TILE);
                    float[] act = actTmp[worker];
                    for (int t = 0; t < cnt; t++) {
                        int row = g0 + t0 + t;
                        if (!downPermuted) {
                            k.swiglu(oa, t * TILE, gb, e * I + u0, ob, t * TILE, ub, e * I + u0, limit, moeH, row * I + u0, rows);
                            continue;
                        }
                        k.swiglu(oa, t * TILE, gb, e * I + u0, ob, t * TILE, ub, e * I + u0, limit, act, 0, rows);
                        for (int i = 0; i < rows; i++) moeH[row * I + CpuKernels.permutedIndex(u0 + i)] = act[i];
                    }
                }
            }
        }
    }

    /**
     * Phase 2: for (active expert, tile of output rows d): down rows × the expert's tokens' h into
     * {@code moeY} (one row per (token, slot), so no two items write the same place).
     */
    private final class MoeDownJob implements CpuPool.Body {
        int tilesPerExpert;

        @Override
        public void run(int from, int to, int worker) {
            WeightView down = moeL.down();
            float[] db = moeW.onHeap.layer(moeLayer).downBias();
            int H = moeH_, I = moeI;
            for (int item = from; item < to; item++) {
                int ai = item / tilesPerExpert, tileNo = item % tilesPerExpert;
                int e = active[ai];
                int g0 = groupStartBuf[e], n = groupStartBuf[e + 1] - g0;
                int d0 = tileNo * TILE, d1 = Math.min(H, d0 + TILE), rows = d1 - d0;
                if (n <= FUSED_MAX_T) {
                    float[] scratch = rowScratch[worker];
                    for (int d = d0; d < d1; d++)
                        for (int t = 0; t < n; t++) {
                            int row = g0 + t;
                            moeY[row * H + d] = k.dotRow(down, e, d, moeH, row * I, scratch) + db[e * H + d];
                        }
                    continue;
                }
                float[] ta = tileA[worker], oa = tmpA[worker];
                for (int i = 0; i < rows; i++) k.decodeRow(down, e, d0 + i, ta, i * I);
                for (int t0 = 0; t0 < n; t0 += TOKEN_BLOCK) {
                    int cnt = Math.min(TOKEN_BLOCK, n - t0);
                    k.dotTile(ta, 0, rows, I, moeH, (g0 + t0) * I, I, cnt, oa, 0, 1, TILE);
                    for (int t = 0; t < cnt; t++) {
                        int yo = (g0 + t0 + t) * H;
                        for (int i = 0; i < rows; i++) moeY[yo + d0 + i] = oa[t * TILE + i] + db[e * H + d0 + i];
                    }
                }
            }
        }
    }

    /** Phase 3: {@code out[t] = Σ_j ω_{t,j} · y[row of (t, j)]}, in slot order, per token. */
    private final class MoeSumJob implements CpuPool.Body {
        @Override
        public void run(int from, int to, int worker) {
            int H = moeH_, K = moeK;
            for (int t = from; t < to; t++) {
                int o = (moeTok0 + t) * H;
                java.util.Arrays.fill(moeOut, o, o + H, 0f);
                for (int j = 0; j < K; j++)
                    k.axpy(moeWeights[(moeTok0 + t) * K + j], moeY, moeSlotRow[t * K + j] * H, moeOut, o, H);
            }
        }
    }

    /** gpt-oss's SwiGLU: a = min(a, L); b = clamp(b, −L, L); a·σ(1.702·a)·(b + 1). */
    static float swiglu(float a, float b, float limit) {
        float ac = Math.min(a, limit);
        float bc = Math.max(-limit, Math.min(b, limit));
        return (float) (ac / (1 + Math.exp(-1.702 * ac))) * (bc + 1);
    }

    @Override
    public void moe(LoadedWeights lw, int layer, DeviceTensor x, DeviceRouting routing, DeviceTensor out) {
        Weights w = (Weights) lw;
        Tensor in = (Tensor) x, o = (Tensor) out;
        RoutingBuf r = (RoutingBuf) routing;
        for (int t0 = 0; t0 < in.rows; t0 += moeChunkTokens) moeChunk(w, layer, in, o, r, t0, Math.min(moeChunkTokens, in.rows - t0));
    }

    /** Tokens per MoE pass: bounds the staging buffers (3 × chunk × k × hidden floats) on long prompts. */
    int moeChunkTokens = 512;

    /** The MoE of tokens {@code t0 .. t0+T−1}. */
    private void moeChunk(Weights w, int layer, Tensor in, Tensor o, RoutingBuf r, int t0, int T) {
        ModelConfig c = w.config;
        LayerWeights l = w.layers[layer];
        int K = r.k, E = c.numExperts(), H = c.hiddenSize(), I = c.intermediateSize();
        int n = T * K, s0 = t0 * K;
        if (moeOrder.length < n) moeOrder = new int[n];
        if (groupStartBuf.length < E + 2) groupStartBuf = new int[E + 2];
        if (active.length < E) active = new int[E];
        if (moeX.length < n * H) moeX = new float[n * H];
        if (moeH.length < n * I) moeH = new float[n * I];
        if (moeY.length < n * H) moeY = new float[n * H];
        if (moeSlotRow.length < n) moeSlotRow = new int[n];
        // counting sort of (token, slot) pairs by expert
        int[] gs = groupStartBuf;
        Arrays.fill(gs, 0, E + 2, 0);
        for (int s = 0; s < n; s++) gs[r.experts[s0 + s] + 2]++;
        for (int e = 0; e < E; e++) gs[e + 2] += gs[e + 1];
        for (int s = 0; s < n; s++) moeOrder[gs[r.experts[s0 + s] + 1]++] = s;
        // now gs[e + 1] = end of e = start of e + 1; shift so gs[e] = start of e
        // (after the loop gs[e+1] holds the end of group e, and gs[0] = 0 is the start of group 0)
        int na = 0;
        for (int e = 0; e < E; e++) if (gs[e + 1] > gs[e]) active[na++] = e;
        boolean gatePermuted = CpuKernels.permuted(l.gate());
        for (int row = 0; row < n; row++) moeSlotRow[moeOrder[row]] = row;
        for (int row = 0; row < n; row++) {
            int token = t0 + moeOrder[row] / K;
            if (gatePermuted) CpuKernels.permute(in.data, token * H, moeX, row * H, H);
            else System.arraycopy(in.data, token * H, moeX, row * H, H);
        }
        moeActive = na;
        moeH_ = H;
        moeI = I;
        moeTok0 = t0;
        moeK = K;
        moeL = l;
        moeW = w;
        moeLayer = layer;
        downPermuted = CpuKernels.permuted(l.down());
        moeOut = o.data;
        moeWeights = r.weights;
        limit = c.swigluLimit();
        moeUp.tilesPerExpert = (I + TILE - 1) / TILE;
        pool.run(na * moeUp.tilesPerExpert, 1, moeUp);
        moeDown.tilesPerExpert = (H + TILE - 1) / TILE;
        pool.run(na * moeDown.tilesPerExpert, 1, moeDown);
        pool.run(T, Math.max(1, pool.grainFor(T, 2, 1)), moeSum);
        moeL = null;
        moeW = null;
        moeOut = null;
        moeWeights = null;
    }

    // ---- the rest ------------------------------------------------------------------------------------

    @Override
    public void add(DeviceTensor a, DeviceTensor b, DeviceTensor out) {
        Tensor o = (Tensor) out;
        k.add(((Tensor) a).data, ((Tensor) b).data, o.data, o.data.length);
    }

    private void logitsInto(Weights w, Tensor in, int fromRow, float[] dst) {
        int vocab = w.config.vocabSize();
        mat.reset(in.data, fromRow * in.cols, in.rows - fromRow, in.cols);
        mat.add(w.model.unembedding(), null, dst, 0, vocab);
        mat.runAll();
    }

    @Override
    public float[] logits(LoadedWeights lw, DeviceTensor x, int fromRow) {
        Weights w = (Weights) lw;
        Tensor in = (Tensor) x;
        float[] out = new float[Math.multiplyExact(in.rows - fromRow, w.config.vocabSize())];
        logitsInto(w, in, fromRow, out);
        return out;
    }

    @Override
    public int[] argmax(LoadedWeights lw, DeviceTensor x, int fromRow) {
        Weights w = (Weights) lw;
        Tensor in = (Tensor) x;
        int vocab = w.config.vocabSize(), n = in.rows - fromRow;
        if (argmaxLogits.length < n * vocab) argmaxLogits = new float[n * vocab];
        logitsInto(w, in, fromRow, argmaxLogits);
        int[] out = new int[n];
        for (int i = 0; i < n; i++) {
            int best = 0, base = i * vocab;
            for (int r = 1; r < vocab; r++) if (argmaxLogits[base + r] > argmaxLogits[base + best]) best = r;
            out[i] = best;
        }
        return out;
    }

    @Override
    public void close() {
        pool.close();
    }
}
