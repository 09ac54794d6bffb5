package io.gossgpu.backend;

/** Which RMSNorm scale an {@link Backend#rmsNorm} call applies. */
public enum NormKind {
    /** Layer's attention-block norm ({@code attn.norm.scale}). */
    ATTN,
    /** Layer's MoE-block norm ({@code mlp.norm.scale}). */
    MLP,
    /** The final norm before the unembedding ({@code norm.scale}); layer is ignored. */
    FINAL
}
