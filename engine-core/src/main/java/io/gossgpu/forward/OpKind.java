package io.gossgpu.forward;

/**
 * The ops of the forward pass ({@link Executor}), in the order a layer runs them, as its observers see them. Each names
 * the {@link io.gossgpu.backend.Backend} call it makes. A residual and the norm after it (ATTN_RESIDUAL + MLP_NORM,
 * MOE_RESIDUAL + the next ATTN_NORM or FINAL_NORM) are one call, {@code Backend.addRmsNorm}, where the backend runs it:
 * both outputs are observed after it, and an op timer sees the pair's time on the residual.
 */
public enum OpKind {
    /** x = embedding[tokens] ({@code Backend.embed}). Output: x, T × H. */
    EMBED,
    /** t = RMSNorm(x)·attn scale. Output: t, T × H. */
    ATTN_NORM,
    /** q, k, v = projections of t, RoPE on q and k. Output observed: q | k | v per row. */
    QKV_ROPE,
    /** Attention with sinks over cache + batch, then cache store. Output: T × heads·hd. */
    ATTENTION,
    /** o = out·attn + bias ({@code Backend.linear ATTN_OUT}). Output: T × H. */
    ATTN_OUT,
    /** x += o ({@code Backend.addRmsNorm} with MLP_NORM, or {@code add}). Output: x. */
    ATTN_RESIDUAL,
    /** t = RMSNorm(x)·mlp scale. Output: T × H. */
    MLP_NORM,
    /** top-k experts and weights. Output observed: k expert ids (as floats) then k weights per row. */
    ROUTER,
    /** Σ weight·expert(t). Output: T × H. */
    MOE,
    /** x += moe ({@code Backend.addRmsNorm} with the next norm, or {@code add}). Output: x. */
    MOE_RESIDUAL,
    /** t = RMSNorm(x)·final scale. Output: T × H. */
    FINAL_NORM,
    /** logits = unembedding·x (or argmax). Output observed: the logits rows returned to the host. */
    LOGITS
}
