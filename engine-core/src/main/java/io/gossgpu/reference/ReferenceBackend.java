package io.gossgpu.reference;

import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOp;
import io.gossgpu.backend.Batch;
import io.gossgpu.backend.DenseKind;
import io.gossgpu.backend.DeviceRouting;
import io.gossgpu.backend.DeviceTensor;
import io.gossgpu.backend.KvCache;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.backend.KvType;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.backend.NormKind;
import io.gossgpu.backend.Rope;
import io.gossgpu.backend.TemperatureDraw;
import io.gossgpu.model.LayerWeights;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.model.WeightView;

/**
 * The {@code reference} backend: plain Java, one obvious loop per formula, float32 storage and double
 * accumulators for every dot product, norm and softmax sum. Never fast; exactly what the
 * {@link Backend} Javadoc says. Other backends are tested against it.
 *
 * <p>Weights are read in place through their {@link WeightView}s: a matrix row is decoded to float32
 * when it is used (so even gpt-oss-120b "loads" instantly, and runs very slowly). Small vectors
 * (norm scales, biases, sinks) are decoded once at load.
 */
public final class ReferenceBackend extends HeapMemoryBackend {
    public static final String NAME = "reference";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String deviceDescription() {
        return "Java heap, plain loops (" + Runtime.getRuntime().availableProcessors() + " CPUs, used: 1)";
    }

    // ---- memory -------------------------------------------------------------------------------

    /** Keys and values as floats, whatever the spec's type: each number already rounded to it (the oracle per type). */
    static final class Cache implements KvCache {
        final KvCacheSpec spec;
        final float[][] keys, values; // [layer][slot * kvDim + c]

        Cache(KvCacheSpec spec) {
            this.spec = spec;
            int layers = spec.config().numHiddenLayers();
            keys = new float[layers][];
            values = new float[layers][];
            for (int l = 0; l < layers; l++) {
                keys[l] = new float
                        [Math.multiplyExact(spec.slots(l), spec.config().kvDim())];
                values[l] = new float[keys[l].length];
            }
        }

        @Override
        public KvCacheSpec spec() {
            return spec;
        }

        @Override
        public void close() {}
    }

    static final class Weights implements LoadedWeights {
        final ModelWeights model;
        final ModelConfig config;
        final float[][] attnNorm, mlpNorm, qBias, kBias, vBias, outBias, routerBias, sinks;
        final float[] finalNorm;
        final float[][][] gateBias, upBias, downBias; // [layer][expert][]

        Weights(ModelWeights m) {
            model = m;
            config = m.config();
            int n = config.numHiddenLayers();
            attnNorm = new float[n][];
            mlpNorm = new float[n][];
            qBias = new float[n][];
            kBias = new float[n][];
            vBias = new float[n][];
            outBias = new float[n][];
            routerBias = new float[n][];
            sinks = new float[n][];
            gateBias = new float[n][][];
            upBias = new float[n][][];
            downBias = new float[n][][];
            for (int l = 0; l < n; l++) {
                LayerWeights lw = m.layers().get(l);
                attnNorm[l] = lw.attnNorm().dequantizeAll();
                mlpNorm[l] = lw.mlpNorm().dequantizeAll();
                qBias[l] = lw.qBias().dequantizeAll();
                kBias[l] = lw.kBias().dequantizeAll();
                vBias[l] = lw.vBias().dequantizeAll();
                outBias[l] = lw.outBias().dequantizeAll();
                routerBias[l] = lw.routerBias().dequantizeAll();
                sinks[l] = lw.sinks().dequantizeAll();
                gateBias[l] = perExpert(lw.gateBias());
                upBias[l] = perExpert(lw.upBias());
                downBias[l] = perExpert(lw.downBias());
            }
            finalNorm = m.finalNorm().dequantizeAll();
        }

        private static float[][] perExpert(WeightView v) {
            float[][] out = new float[v.experts()][v.cols()];
            for (int e = 0; e < v.experts(); e++) v.dequantizeRow(e, 0, out[e], 0);
            return out;
        }

        LayerWeights layer(int l) {
            return model.layers().get(l);
        }

        @Override
        public ModelConfig config() {
            return config;
        }

        @Override
        public void close() {}
    }

    @Override
    public LoadedWeights loadWeights(ModelWeights weights) {
        return new Weights(weights);
    }

    @Override
    public KvCache createKvCache(KvCacheSpec spec) {
        return heapKvCache(spec, KvType.F32, 0, Cache::new);
    }

    // ---- ops ----------------------------------------------------------------------------------

    private static double dot(float[] a, int aOff, float[] b, int bOff, int n) {
        double s = 0;
        for (int i = 0; i < n; i++) s += (double) a[aOff + i] * b[bOff + i];
        return s;
    }

    @Override
    public void embed(LoadedWeights lw, int[] tokens, DeviceTensor out) {
        embedRows(((Weights) lw).model, tokens, (Tensor) out);
    }

    @Override
    public void rmsNorm(LoadedWeights lw, int layer, NormKind which, DeviceTensor x, DeviceTensor out) {
        Weights w = (Weights) lw;
        float[] scale = switch (which) {
            case ATTN -> w.attnNorm[layer];
            case MLP -> w.mlpNorm[layer];
            case FINAL -> w.finalNorm;
        };
        Tensor in = (Tensor) x, o = (Tensor) out;
        int n = in.cols;
        for (int i = 0; i < in.rows; i++) {
            double ss = 0;
            for (int c = 0; c < n; c++) ss += (double) in.data[i * n + c] * in.data[i * n + c];
            double inv = 1 / Math.sqrt(ss / n + w.config.rmsNormEps());
            for (int c = 0; c < n; c++) o.data[i * n + c] = (float) (in.data[i * n + c] * inv * scale[c]);
        }
    }

    private static float[] bias(Weights w, int layer, DenseKind which) {
        return switch (which) {
            case Q -> w.qBias[layer];
            case K -> w.kBias[layer];
            case V -> w.vBias[layer];
            case ATTN_OUT -> w.outBias[layer];
            case ROUTER -> w.routerBias[layer];
        };
    }

    /** out[i, r] = Σ_c W[e, r, c]·x[i, c] + bias[r] for all rows i; each weight row is decoded once. */
    private static void matmul(WeightView wv, int expert, float[] bias, float[] x, int rows, int xCols, float[] out) {
        float[] row = new float[wv.cols()];
        int outCols = wv.rows();
        for (int r = 0; r < outCols; r++) {
            wv.dequantizeRow(expert, r, row, 0);
            for (int i = 0; i < rows; i++)
                out[i * outCols + r] = (float) (dot(row, 0, x, i * xCols, xCols) + (bias == null ? 0 : bias[r]));
        }
    }

    @Override
    public void dense(LoadedWeights lw, int layer, DenseKind which, DeviceTensor x, DeviceTensor out) {
        Weights w = (Weights) lw;
        Tensor in = (Tensor) x, o = (Tensor) out;
        matmul(which.weight(w.layer(layer)), 0, bias(w, layer, which), in.data, in.rows, in.cols, o.data);
    }

    @Override
    public void qkvRope(
            LoadedWeights lw, int layer, DeviceTensor x, Batch batch, DeviceTensor q, DeviceTensor k, DeviceTensor v) {
        dense(lw, layer, DenseKind.Q, x, q);
        dense(lw, layer, DenseKind.K, x, k);
        dense(lw, layer, DenseKind.V, x, v);
        ModelConfig c = lw.config();
        for (int s = 0; s < batch.size(); s++) {
            float[] table = Rope.cosSinTable(c, batch.start(s), batch.tokens(s));
            rope((Tensor) q, c.headDim(), table, batch.firstRow(s), batch.tokens(s));
            rope((Tensor) k, c.headDim(), table, batch.firstRow(s), batch.tokens(s));
        }
    }

    /**
     * Half-split rotation of every head of rows {@code row0 + i} ({@code i < n}) with the cos/sin of
     * {@link Rope#cosSinTable} row i: (x1, x2) → (x1·cos − x2·sin, x2·cos + x1·sin), x1 = head[0..hd/2), x2 = head[hd/2..hd).
     */
    static void rope(Tensor t, int hd, float[] table, int row0, int n) {
        int half = hd / 2;
        for (int i = 0; i < n; i++) {
            for (int head = 0; head < t.cols / hd; head++) {
                int base = (row0 + i) * t.cols + head * hd;
                for (int j = 0; j < half; j++) {
                    float cos = table[i * hd + 2 * j], sin = table[i * hd + 2 * j + 1];
                    float x1 = t.data[base + j], x2 = t.data[base + half + j];
                    t.data[base + j] = (float) ((double) x1 * cos - (double) x2 * sin);
                    t.data[base + half + j] = (float) ((double) x2 * cos + (double) x1 * sin);
                }
            }
        }
    }

    @Override
    public void attention(
            LoadedWeights lw,
            int layer,
            DeviceTensor q,
            DeviceTensor k,
            DeviceTensor v,
            Batch batch,
            DeviceTensor out) {
        for (int s = 0; s < batch.size(); s++)
            attention(
                    (Weights) lw,
                    layer,
                    (Tensor) q,
                    (Tensor) k,
                    (Tensor) v,
                    (Cache) batch.cache(s),
                    batch.start(s),
                    batch.firstRow(s),
                    batch.tokens(s),
                    (Tensor) out);
    }

    /** Attention of one sequence: its {@code T} rows from {@code row0} at positions {@code start ..}, then its cache store. */
    private static void attention(
            Weights w, int layer, Tensor q, Tensor k, Tensor v, Cache cache, int start, int row0, int T, Tensor o) {
        ModelConfig c = w.config;
        int hd = c.headDim(), heads = c.numAttentionHeads(), kvDim = c.kvDim(), qDim = c.qDim();
        int group = c.queriesPerKvHead();
        int slots = cache.spec.slots(layer);
        boolean sliding = c.isSlidingLayer(layer);
        double scale = 1 / Math.sqrt(hd);
        float[] sinks = w.sinks[layer];
        float[] ck = cache.keys[layer], cv = cache.values[layer];
        cache.spec.type().round(k.data, row0 * kvDim, T, kvDim); // the cache holds rounded numbers: so do its new rows
        cache.spec.type().round(v.data, row0 * kvDim, T, kvDim);
        double[] scores = new double[start + T];
        for (int i = 0; i < T; i++) {
            int p = start + i;
            int lo = sliding ? Math.max(0, p - c.slidingWindow() + 1) : 0;
            for (int h = 0; h < heads; h++) {
                int g = h / group;
                double max = sinks[h];
                for (int j = lo; j <= p; j++) {
                    float[] ks = j < start ? ck : k.data;
                    int kOff = j < start ? (j % slots) * kvDim : (row0 + j - start) * kvDim;
                    scores[j] = dot(q.data, (row0 + i) * qDim + h * hd, ks, kOff + g * hd, hd) * scale;
                    max = Math.max(max, scores[j]);
                }
                double z = Math.exp(sinks[h] - max);
                for (int j = lo; j <= p; j++) {
                    scores[j] = Math.exp(scores[j] - max);
                    z += scores[j];
                }
                for (int d = 0; d < hd; d++) {
                    double acc = 0;
                    for (int j = lo; j <= p; j++) {
                        float vj = j < start
                                ? cv[(j % slots) * kvDim + g * hd + d]
                                : v.data[(row0 + j - start) * kvDim + g * hd + d];
                        acc += scores[j] * vj;
                    }
                    o.data[(row0 + i) * qDim + h * hd + d] = (float) (acc / z);
                }
            }
        }
        for (int i = Math.max(0, T - slots); i < T; i++) {
            int slot = (start + i) % slots;
            System.arraycopy(k.data, (row0 + i) * kvDim, ck, slot * kvDim, kvDim);
            System.arraycopy(v.data, (row0 + i) * kvDim, cv, slot * kvDim, kvDim);
        }
    }

    @Override
    public void router(LoadedWeights lw, int layer, DeviceTensor x, DeviceRouting out) {
        Weights w = (Weights) lw;
        Tensor in = (Tensor) x;
        RoutingBuf r = (RoutingBuf) out;
        int e = w.config.numExperts(), k = r.k;
        float[] g = new float[in.rows * e];
        matmul(w.layer(layer).router(), 0, w.routerBias[layer], in.data, in.rows, in.cols, g);
        for (int i = 0; i < in.rows; i++) topK(g, i * e, e, k, r.experts, r.weights, i * k);
    }

    /**
     * Top-k of {@code logits[off .. off+n)}: ids sorted by value descending, ties to the lower index, into
     * {@code ids[outOff ..]}; their softmax (over the k selected values only) into {@code weights[outOff ..]}.
     * Allocates nothing (the cpu backend calls it per token and layer). StrictMath: a pure-Java exp whose bits
     * never depend on the JIT tier, so both backends route alike in every run.
     */
    public static void topK(float[] logits, int off, int n, int k, int[] ids, float[] weights, int outOff) {
        for (int j = 0; j < k; j++) {
            int best = -1;
            for (int x = 0; x < n; x++) {
                boolean taken = false;
                for (int m = 0; m < j; m++)
                    if (ids[outOff + m] == x) {
                        taken = true;
                        break;
                    }
                if (!taken && (best < 0 || logits[off + x] > logits[off + best]))
                    best = x; // strict >: ties keep the lower index
            }
            ids[outOff + j] = best;
        }
        double max = logits[off + ids[outOff]], z = 0;
        for (int j = 0; j < k; j++) z += StrictMath.exp(logits[off + ids[outOff + j]] - max);
        for (int j = 0; j < k; j++)
            weights[outOff + j] = (float) (StrictMath.exp(logits[off + ids[outOff + j]] - max) / z);
    }

    @Override
    public void moe(LoadedWeights lw, int layer, DeviceTensor x, DeviceRouting routing, DeviceTensor out) {
        Weights w = (Weights) lw;
        ModelConfig c = w.config;
        Tensor in = (Tensor) x, o = (Tensor) out;
        RoutingBuf r = (RoutingBuf) routing;
        LayerWeights l = w.layer(layer);
        int hDim = c.hiddenSize(), inter = c.intermediateSize();
        float limit = c.swigluLimit();
        float[] row = new float[Math.max(hDim, inter)];
        float[] act = new float[inter];
        double[] acc = new double[hDim];
        for (int i = 0; i < in.rows; i++) {
            java.util.Arrays.fill(acc, 0);
            for (int j = 0; j < r.k; j++) {
                int e = r.experts[i * r.k + j];
                float weight = r.weights[i * r.k + j];
                for (int u = 0; u < inter; u++) {
                    l.gate().dequantizeRow(e, u, row, 0);
                    float a = (float) (dot(row, 0, in.data, i * hDim, hDim) + w.gateBias[layer][e][u]);
                    l.up().dequantizeRow(e, u, row, 0);
                    float b = (float) (dot(row, 0, in.data, i * hDim, hDim) + w.upBias[layer][e][u]);
                    act[u] = swiglu(a, b, limit);
                }
                for (int d = 0; d < hDim; d++) {
                    l.down().dequantizeRow(e, d, row, 0);
                    float y = (float) (dot(row, 0, act, 0, inter) + w.downBias[layer][e][d]);
                    acc[d] += (double) weight * y;
                }
            }
            for (int d = 0; d < hDim; d++) o.data[i * hDim + d] = (float) acc[d];
        }
    }

    /** gpt-oss's SwiGLU: a = min(a, L); b = clamp(b, −L, L); a·σ(1.702·a)·(b + 1). */
    public static float swiglu(float a, float b, float limit) {
        double ac = Math.min(a, limit);
        double bc = Math.max(-limit, Math.min(b, limit));
        return (float) (ac / (1 + Math.exp(-1.702 * ac)) * (bc + 1));
    }

    @Override
    public void add(DeviceTensor a, DeviceTensor b, DeviceTensor out) {
        float[] x = ((Tensor) a).data, y = ((Tensor) b).data, o = ((Tensor) out).data;
        for (int i = 0; i < o.length; i++) o[i] = x[i] + y[i];
    }

    /** Literally the contract: {@link #add}, then {@link #rmsNorm} of the sum. */
    @Override
    public void addRmsNorm(
            LoadedWeights lw,
            int layer,
            NormKind which,
            DeviceTensor x,
            DeviceTensor y,
            DeviceTensor sum,
            DeviceTensor out) {
        add(x, y, sum);
        rmsNorm(lw, layer, which, sum, out);
    }

    @Override
    public boolean supports(BackendOp op) {
        return op == BackendOp.ADD_RMS_NORM || super.supports(op);
    }

    @Override
    public float[] logits(LoadedWeights lw, DeviceTensor x, int fromRow) {
        Weights w = (Weights) lw;
        Tensor in = (Tensor) x;
        int vocab = w.config.vocabSize(), h = in.cols, n = in.rows - fromRow;
        float[] out = new float[Math.multiplyExact(n, vocab)];
        float[] row = new float[h];
        for (int r = 0; r < vocab; r++) {
            w.model.unembedding().dequantizeRow(0, r, row, 0);
            for (int i = 0; i < n; i++) out[i * vocab + r] = (float) dot(row, 0, in.data, (fromRow + i) * h, h);
        }
        return out;
    }

    @Override
    public int[] argmax(LoadedWeights lw, DeviceTensor x, int fromRow) {
        float[] l = logits(lw, x, fromRow);
        int vocab = lw.config().vocabSize(), n = l.length / vocab;
        int[] out = new int[n];
        for (int i = 0; i < n; i++) out[i] = TemperatureDraw.argmax(l, i * vocab, vocab);
        return out;
    }

    @Override
    public void close() {}
}
