package io.gossgpu.bench;

import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.model.LayerWeights;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.model.WeightFormat;
import io.gossgpu.model.WeightView;

import java.util.List;

/**
 * The bytes one decoded token must read from memory, counted from the model's tensor sizes as stored in
 * the file: the floor of memory traffic a decode step can have, to compare with the machine's bandwidth.
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
        ModelConfig c = w.config();
        long total = viewBytes(w.unembedding()) + w.embedding().rowBytes() + viewBytes(w.finalNorm());
        for (int l = 0; l < c.numHiddenLayers(); l++) {
            LayerWeights lw = w.layers().get(l);
            for (WeightView v : List.of(lw.attnNorm(), lw.q(), lw.qBias(), lw.k(), lw.kBias(), lw.v(), lw.vBias(), lw.sinks(),
                    lw.out(), lw.outBias(), lw.mlpNorm(), lw.router(), lw.routerBias()))
                total += viewBytes(v);
            for (WeightView v : List.of(lw.gate(), lw.gateBias(), lw.up(), lw.upBias(), lw.down(), lw.downBias()))
                total += (long) c.expertsPerToken() * viewBytes(v);
            long attended = c.isSlidingLayer(l) ? Math.min(position + 1L, c.slidingWindow()) : position + 1L;
            total += attended * KvCacheSpec.bytesPerPosition(c);
        }
        return total;
    }

    /** The mean of {@link #bytesPerToken} over the {@code tokens} positions from {@code first} on (a decode run). */
    public static long meanBytesPerToken(ModelWeights w, int first, int tokens) {
        if (tokens <= 0) throw new IllegalArgumentException("tokens " + tokens);
        long sum = 0;
        for (int p = first; p < first + tokens; p++) sum += bytesPerToken(w, p);
        return Math.round(sum / (double) tokens);
    }

    /** Bytes of one expert's part of {@code v} (the whole of an ordinary weight), OpenAI MXFP4 scale bytes included. */
    private static long viewBytes(WeightView v) {
        long b = v.rows() * v.rowBytes();
        if (v.format() == WeightFormat.MXFP4_OPENAI) b += (long) v.rows() * (v.cols() / ModelConfig.MXFP4_BLOCK);
        return b;
    }
}
