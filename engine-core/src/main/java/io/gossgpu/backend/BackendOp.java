package io.gossgpu.backend;

/**
 * The ops of the {@link Backend} SPI, as {@link Backend#supports} names them. Most are required: every backend runs
 * them. A declinable op has a way to run without the backend's own implementation, taken in one place
 * ({@link DeclinedOps}): a fusion of existing ops runs as its decomposition, an op without one runs on the host
 * from what the backend can return. So a new op can land on the reference and cpu backends first and the GPU
 * backends decline it until they have a kernel.
 */
public enum BackendOp {
    EMBED,
    RMS_NORM,
    DENSE,
    QKV_ROPE,
    ATTENTION,
    ROUTER,
    MOE,
    ADD,
    LOGITS,
    ARGMAX,
    /** {@link Backend#sample}; declined: {@link #LOGITS} come back and the host picks ({@link TemperatureDraw}). */
    SAMPLE(Fallback.HOST, true),
    /** {@link Backend#addRmsNorm}; declined: {@link #ADD} then {@link #RMS_NORM}. Declined unless a backend says otherwise. */
    ADD_RMS_NORM(Fallback.DECOMPOSITION, false);

    /** How a declined op runs. */
    public enum Fallback {
        /** None: every backend must run the op. */
        NONE,
        /** As the existing ops it fuses. */
        DECOMPOSITION,
        /** On the host, from what the backend returns. */
        HOST
    }

    private final Fallback fallback;
    private final boolean supportedByDefault;

    BackendOp() {
        this(Fallback.NONE, true);
    }

    BackendOp(Fallback fallback, boolean supportedByDefault) {
        this.fallback = fallback;
        this.supportedByDefault = supportedByDefault;
    }

    public Fallback fallback() {
        return fallback;
    }

    /** Whether a backend may decline it ({@link Backend#supports} false). */
    public boolean declinable() {
        return fallback != Fallback.NONE;
    }

    /**
     * What {@link Backend#supports} says when a backend does not override it: yes for every op the SPI had before
     * ops could be declined, no for an op added since (a backend opts in when it implements it).
     */
    public boolean supportedByDefault() {
        return supportedByDefault;
    }
}
