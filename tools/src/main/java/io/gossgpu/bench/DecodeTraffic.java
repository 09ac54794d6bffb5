package io.gossgpu.bench;

import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.backend.KvType;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.forward.OpKind;
import io.gossgpu.model.LayerWeights;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.model.WeightFormat;
import io.gossgpu.model.WeightView;

/**
 * The bytes one decoded token must read from memory, counted from the model's tensor sizes as the backend holds
 * them ({@link LoadedWeights#rowBytes}; as stored in the file when no backend is given): the floor of memory traffic a
 * decode step can have, to compare with the machine's bandwidth.
 */
public final class DecodeTraffic {
    private DecodeTraffic() {}

    /**
     * Bytes a token at KV position {@code position} reads: every tensor of every layer except the experts the
     * router did not pick (norms, sinks, the Q/K/V/output matrices, the router, all with their biases; the
     * {@code experts_per_token} chosen experts' gate, up and down matrices with their scales and biases), the
     * final norm, the whole unembedding, one embedding row, and the K and V of the positions it attends, itself
     * included ({@code min(position + 1, window)} on sliding-window layers, {@code position + 1} on the others)
     * at the cache's {@link KvCacheSpec#bytesPerPosition()}.
     */
    public static long bytesPerToken(ModelWeights w, int position) {
        return bytesPerToken(w, null, position);
    }

    /** {@link #bytesPerToken(ModelWeights, int)} with the weights as {@code held} holds them (null: as in the file). */
    public static long bytesPerToken(ModelWeights w, LoadedWeights held, int position) {
        long total = 0;
        for (OpKind op : OpKind.values()) total += bytesPerToken(w, held, position, op);
        return total;
    }

    /** The part of {@link #bytesPerToken(ModelWeights, int)} that {@code op} reads, summed over the layers (0 for the residual adds). */
    public static long bytesPerToken(ModelWeights w, LoadedWeights held, int position, OpKind op) {
        return bytesPerToken(w, held, position, op, KvType.F32);
    }

    /** The part {@code op} reads with the KV cache stored as {@code kv}. */
    public static long bytesPerToken(ModelWeights w, LoadedWeights held, int position, OpKind op, KvType kv) {
        ModelConfig c = w.config();
        switch (op) {
            case EMBED:
                return w.embedding().rowBytes(); // one row of the file, read in place
            case FINAL_NORM:
                return viewBytes(w.finalNorm(), held);
            case LOGITS:
                return viewBytes(w.unembedding(), held);
            case ATTN_RESIDUAL, MOE_RESIDUAL:
                return 0;
            default:
                break;
        }
        long total = 0;
        for (int l = 0; l < c.numHiddenLayers(); l++) {
            LayerWeights lw = w.layers().get(l);
            total += switch (op) {
                case ATTN_NORM -> viewBytes(lw.attnNorm(), held);
                case QKV_ROPE -> sum(held, lw.q(), lw.qBias(), lw.k(), lw.kBias(), lw.v(), lw.vBias());
                case ATTENTION ->
                    viewBytes(lw.sinks(), held)
                            + (c.isSlidingLayer(l) ? Math.min(position + 1L, c.slidingWindow()) : position + 1L)
                                    * 2
                                    * kv.rowBytes(c.kvDim());
                case ATTN_OUT -> sum(held, lw.out(), lw.outBias());
                case MLP_NORM -> viewBytes(lw.mlpNorm(), held);
                case ROUTER -> sum(held, lw.router(), lw.routerBias());
                case MOE ->
                    c.expertsPerToken()
                            * sum(held, lw.gate(), lw.gateBias(), lw.up(), lw.upBias(), lw.down(), lw.downBias());
                default -> throw new IllegalStateException(op.toString());
            };
        }
        return total;
    }

    /**
     * The MoE's part of {@link #bytesPerToken(ModelWeights, LoadedWeights, int, OpKind)} in two: the active experts'
     * gate and up matrices with their biases ({@code gateUp}), or their down matrices with their biases, summed over the layers.
     */
    public static long moeBytesPerToken(ModelWeights w, LoadedWeights held, boolean gateUp) {
        ModelConfig c = w.config();
        long total = 0;
        for (LayerWeights lw : w.layers())
            total += c.expertsPerToken()
                    * (gateUp
                            ? sum(held, lw.gate(), lw.gateBias(), lw.up(), lw.upBias())
                            : sum(held, lw.down(), lw.downBias()));
        return total;
    }

    private static long sum(LoadedWeights held, WeightView... views) {
        long b = 0;
        for (WeightView v : views) b += viewBytes(v, held);
        return b;
    }

    /** The mean of {@link #bytesPerToken} over the {@code tokens} positions from {@code first} on (a decode run). */
    public static long meanBytesPerToken(ModelWeights w, int first, int tokens) {
        return meanBytesPerToken(w, null, first, tokens);
    }

    /** {@link #meanBytesPerToken(ModelWeights, int, int)} with the weights as {@code held} holds them (null: as in the file). */
    public static long meanBytesPerToken(ModelWeights w, LoadedWeights held, int first, int tokens) {
        return meanBytesPerToken(w, held, first, tokens, KvType.F32);
    }

    /** {@link #meanBytesPerToken(ModelWeights, LoadedWeights, int, int)} with the KV cache stored as {@code kv}. */
    public static long meanBytesPerToken(ModelWeights w, LoadedWeights held, int first, int tokens, KvType kv) {
        if (tokens <= 0) throw new IllegalArgumentException("tokens " + tokens);
        long sum = 0;
        for (int p = first; p < first + tokens; p++)
            for (OpKind op : OpKind.values()) sum += bytesPerToken(w, held, p, op, kv);
        return Math.round(sum / (double) tokens);
    }

    /** The part of {@link #meanBytesPerToken(ModelWeights, LoadedWeights, int, int)} that {@code op} reads. */
    public static long meanBytesPerToken(ModelWeights w, LoadedWeights held, int first, int tokens, OpKind op) {
        return meanBytesPerToken(w, held, first, tokens, op, KvType.F32);
    }

    /** The part {@code op} reads with the KV cache stored as {@code kv}. */
    public static long meanBytesPerToken(
            ModelWeights w, LoadedWeights held, int first, int tokens, OpKind op, KvType kv) {
        if (tokens <= 0) throw new IllegalArgumentException("tokens " + tokens);
        long sum = 0;
        for (int p = first; p < first + tokens; p++) sum += bytesPerToken(w, held, p, op, kv);
        return Math.round(sum / (double) tokens);
    }

    /** Bytes of one expert's part of {@code v} (the whole of an ordinary weight), OpenAI MXFP4 scale bytes included. */
    private static long viewBytes(WeightView v, LoadedWeights held) {
        long b = v.rows() * (held == null ? v.rowBytes() : held.rowBytes(v));
        if (v.format() == WeightFormat.MXFP4_OPENAI) b += (long) v.rows() * (v.cols() / ModelConfig.MXFP4_BLOCK);
        return b;
    }
}
