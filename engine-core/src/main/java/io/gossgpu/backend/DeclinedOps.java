package io.gossgpu.backend;

import io.gossgpu.GossException;

/**
 * The one place where a declinable op ({@link BackendOp#declinable}) runs: on the backend when it
 * {@link Backend#supports supports} the op, otherwise its decomposition into existing ops, or the host path (read what
 * the backend returns, compute on the host). The {@link io.gossgpu.forward.Executor} calls its ops through here, so a
 * backend that declines an op still runs every model; the SPI's default methods of a declinable op run the fallback
 * too, so a direct call works on every backend.
 */
public final class DeclinedOps {
    private DeclinedOps() {}

    /** Throws when {@code b} declines an op that has no fallback (a backend bug, found when it is opened). */
    public static void checkRequired(Backend b) {
        for (BackendOp op : BackendOp.values())
            if (!op.declinable() && !b.supports(op))
                throw new GossException("backend " + b.name() + " declines " + op + ", which every backend must run");
    }

    /** {@link Backend#addRmsNorm} on {@code b}, or {@link Backend#add} then {@link Backend#rmsNorm} when it declines it. */
    public static void addRmsNorm(
            Backend b,
            LoadedWeights w,
            int layer,
            NormKind which,
            DeviceTensor x,
            DeviceTensor y,
            DeviceTensor sum,
            DeviceTensor out) {
        if (b.supports(BackendOp.ADD_RMS_NORM)) b.addRmsNorm(w, layer, which, x, y, sum, out);
        else decomposeAddRmsNorm(b, w, layer, which, x, y, sum, out);
    }

    /** The decomposition of {@link BackendOp#ADD_RMS_NORM}. */
    static void decomposeAddRmsNorm(
            Backend b,
            LoadedWeights w,
            int layer,
            NormKind which,
            DeviceTensor x,
            DeviceTensor y,
            DeviceTensor sum,
            DeviceTensor out) {
        b.add(x, y, sum);
        b.rmsNorm(w, layer, which, sum, out);
    }

    /** {@link Backend#sample} on {@code b}, or the host path when it declines it. */
    public static int[] sample(
            Backend b, LoadedWeights w, DeviceTensor x, int fromRow, double[] temperatures, double[] draws) {
        if (b.supports(BackendOp.SAMPLE)) return b.sample(w, x, fromRow, temperatures, draws);
        return hostSample(b, w, x, fromRow, temperatures, draws);
    }

    /** The host path of {@link BackendOp#SAMPLE}: the logits come back, the host picks each row's id. */
    static int[] hostSample(
            Backend b, LoadedWeights w, DeviceTensor x, int fromRow, double[] temperatures, double[] draws) {
        int n = x.rows() - fromRow, vocab = w.config().vocabSize();
        TemperatureDraw.check(n, temperatures, draws);
        float[] l = b.logits(w, x, fromRow);
        int[] ids = new int[n];
        for (int i = 0; i < n; i++)
            ids[i] = temperatures[i] == 0
                    ? TemperatureDraw.argmax(l, i * vocab, vocab)
                    : TemperatureDraw.draw(l, i * vocab, vocab, temperatures[i], draws[i]);
        return ids;
    }
}
