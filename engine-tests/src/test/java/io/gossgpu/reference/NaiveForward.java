package io.gossgpu.reference;

import io.gossgpu.model.LayerWeights;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;

/**
 * An independent whole-sequence forward pass, written straight from the gpt-oss formulas with no cache,
 * no backend and no shared code (RoPE/YaRN, attention, MoE are all re-derived here), in double precision
 * throughout. Recomputes every position: the "torch reference" shape of the computation.
 */
final class NaiveForward {
    private final ModelConfig c;
    private final ModelWeights w;

    NaiveForward(ModelWeights w) {
        this.w = w;
        this.c = w.config();
    }

    /** Logits [T][vocab] of every position of {@code tokens}. */
    double[][] logits(int[] tokens) {
        int T = tokens.length, H = c.hiddenSize();
        float[] emb = w.embedding().dequantizeAll();
        double[][] x = new double[T][H];
        for (int i = 0; i < T; i++) for (int d = 0; d < H; d++) x[i][d] = emb[tokens[i] * H + d];
        for (int l = 0; l < c.numHiddenLayers(); l++) {
            LayerWeights lw = w.layers().get(l);
            double[][] a = attention(l, lw, norm(x, lw.attnNorm().dequantizeAll()));
            for (int i = 0; i < T; i++) for (int d = 0; d < H; d++) x[i][d] += a[i][d];
            double[][] m = moe(lw, norm(x, lw.mlpNorm().dequantizeAll()));
            for (int i = 0; i < T; i++) for (int d = 0; d < H; d++) x[i][d] += m[i][d];
        }
        double[][] f = norm(x, w.finalNorm().dequantizeAll());
        return matmul(f, w.unembedding().dequantizeAll(), c.vocabSize(), null);
    }

    private double[][] norm(double[][] x, float[] scale) {
        double[][] out = new double[x.length][];
        for (int i = 0; i < x.length; i++) {
            double ms = 0;
            for (double v : x[i]) ms += v * v;
            ms /= x[i].length;
            out[i] = new double[x[i].length];
            for (int d = 0; d < x[i].length; d++) out[i][d] = x[i][d] / Math.sqrt(ms + c.rmsNormEps()) * scale[d];
        }
        return out;
    }

    /** y[i][r] = Σ_c W[r][c] x[i][c] + b[r], W given flat [rows][cols]. */
    private static double[][] matmul(double[][] x, float[] wFlat, int rows, float[] bias) {
        int cols = x[0].length;
        double[][] y = new double[x.length][rows];
        for (int i = 0; i < x.length; i++)
            for (int r = 0; r < rows; r++) {
                double s = bias == null ? 0 : bias[r];
                for (int k = 0; k < cols; k++) s += wFlat[r * cols + k] * x[i][k];
                y[i][r] = s;
            }
        return y;
    }

    private double[] inverseFrequencies() {
        int hd = c.headDim(), dh = hd / 2;
        double[] inv = new double[dh];
        double f = c.ropeScalingFactor();
        double low =
                dh * Math.log(c.initialContextLength() / (c.ropeNtkBeta() * 2 * Math.PI)) / Math.log(c.ropeTheta());
        double high =
                dh * Math.log(c.initialContextLength() / (c.ropeNtkAlpha() * 2 * Math.PI)) / Math.log(c.ropeTheta());
        for (int i = 0; i < dh; i++) {
            double freq = Math.pow(c.ropeTheta(), (2.0 * i) / hd);
            if (f <= 1) {
                inv[i] = 1 / freq;
                continue;
            }
            double ramp = (i - low) / (high - low);
            double mask = 1 - Math.max(0, Math.min(1, ramp));
            inv[i] = (1 / (f * freq)) * (1 - mask) + (1 / freq) * mask;
        }
        return inv;
    }

    private void rope(double[] head, int pos, double[] inv, double conc) {
        int dh = head.length / 2;
        for (int i = 0; i < dh; i++) {
            double cos = Math.cos(pos * inv[i]) * conc, sin = Math.sin(pos * inv[i]) * conc;
            double x1 = head[i], x2 = head[dh + i];
            head[i] = x1 * cos - x2 * sin;
            head[dh + i] = x2 * cos + x1 * sin;
        }
    }

    private double[][] attention(int layer, LayerWeights lw, double[][] t) {
        int T = t.length, hd = c.headDim(), nh = c.numAttentionHeads(), nkv = c.numKeyValueHeads();
        double[][] q = matmul(t, lw.q().dequantizeAll(), c.qDim(), lw.qBias().dequantizeAll());
        double[][] k = matmul(t, lw.k().dequantizeAll(), c.kvDim(), lw.kBias().dequantizeAll());
        double[][] v = matmul(t, lw.v().dequantizeAll(), c.kvDim(), lw.vBias().dequantizeAll());
        double[] inv = inverseFrequencies();
        double conc = c.ropeScalingFactor() > 1 ? 0.1 * Math.log(c.ropeScalingFactor()) + 1 : 1;
        double[][][] qh = new double[T][nh][hd], kh = new double[T][nkv][hd];
        for (int i = 0; i < T; i++) {
            for (int h = 0; h < nh; h++) {
                System.arraycopy(q[i], h * hd, qh[i][h], 0, hd);
                rope(qh[i][h], i, inv, conc);
            }
            for (int g = 0; g < nkv; g++) {
                System.arraycopy(k[i], g * hd, kh[i][g], 0, hd);
                rope(kh[i][g], i, inv, conc);
            }
        }
        float[] sinks = lw.sinks().dequantizeAll();
        boolean sliding = layer % 2 == 0 && c.slidingWindow() > 0;
        double[][] out = new double[T][c.qDim()];
        for (int h = 0; h < nh; h++) {
            int g = h / (nh / nkv);
            for (int i = 0; i < T; i++) {
                // row of scores with -inf where masked, then the sink, softmax over all, drop the sink
                double[] row = new double[T + 1];
                for (int j = 0; j < T; j++) {
                    boolean allowed = j <= i && (!sliding || j > i - c.slidingWindow());
                    double s = 0;
                    for (int d = 0; d < hd; d++) s += qh[i][h][d] * kh[j][g][d];
                    row[j] = allowed ? s / Math.sqrt(hd) : Double.NEGATIVE_INFINITY;
                }
                row[T] = sinks[h];
                double max = Double.NEGATIVE_INFINITY;
                for (double s : row) max = Math.max(max, s);
                double z = 0;
                for (int j = 0; j <= T; j++) z += Math.exp(row[j] - max);
                for (int j = 0; j < T; j++) {
                    double p = Math.exp(row[j] - max) / z;
                    for (int d = 0; d < hd; d++) out[i][h * hd + d] += p * v[j][g * hd + d];
                }
            }
        }
        return matmul(
                out, lw.out().dequantizeAll(), c.hiddenSize(), lw.outBias().dequantizeAll());
    }

    private double[][] moe(LayerWeights lw, double[][] t) {
        int T = t.length, E = c.numExperts(), K = c.expertsPerToken(), H = c.hiddenSize(), I = c.intermediateSize();
        double[][] g = matmul(t, lw.router().dequantizeAll(), E, lw.routerBias().dequantizeAll());
        float[] gate = lw.gate().dequantizeAll(),
                up = lw.up().dequantizeAll(),
                down = lw.down().dequantizeAll();
        float[] gateB = lw.gateBias().dequantizeAll(),
                upB = lw.upBias().dequantizeAll(),
                downB = lw.downBias().dequantizeAll();
        double L = c.swigluLimit();
        double[][] out = new double[T][H];
        for (int i = 0; i < T; i++) {
            // selection sort of expert indices by logit, stable on ties (lower index first)
            Integer[] idx = new Integer[E];
            for (int e = 0; e < E; e++) idx[e] = e;
            final double[] gi = g[i];
            java.util.Arrays.sort(idx, (a, b) -> gi[a] != gi[b] ? Double.compare(gi[b], gi[a]) : Integer.compare(a, b));
            double z = 0;
            for (int j = 0; j < K; j++) z += Math.exp(gi[idx[j]] - gi[idx[0]]);
            for (int j = 0; j < K; j++) {
                int e = idx[j];
                double weight = Math.exp(gi[e] - gi[idx[0]]) / z;
                double[] h = new double[I];
                for (int u = 0; u < I; u++) {
                    double a = gateB[e * I + u], b = upB[e * I + u];
                    for (int d = 0; d < H; d++) {
                        a += gate[(e * I + u) * H + d] * t[i][d];
                        b += up[(e * I + u) * H + d] * t[i][d];
                    }
                    a = Math.min(a, L);
                    b = Math.max(-L, Math.min(L, b));
                    h[u] = a * (1 / (1 + Math.exp(-1.702 * a))) * (b + 1);
                }
                for (int d = 0; d < H; d++) {
                    double y = downB[e * H + d];
                    for (int u = 0; u < I; u++) y += down[(e * H + d) * I + u] * h[u];
                    out[i][d] += weight * y;
                }
            }
        }
        return out;
    }
}
