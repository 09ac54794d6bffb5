package io.gossgpu.device;

import java.util.function.Function;

/**
 * How one API runs attention, as data for {@link AttentionPipeline}: which kernel a call takes and with how many key
 * splits ({@link #plan}: each API's thresholds and knobs), and each kernel's grid and dynamic group memory for the
 * call's {@link AttentionParams}. A kernel the API does not have is {@code null} (Metal has attention, kv_store and
 * kv_round; attention_split is OpenCL's, attention_mma CUDA's). An API with {@code kv_round} stores every
 * {@link io.gossgpu.backend.KvType}; one without it F32 only.
 */
public record AttentionShapes(
        Planner plan,
        Function<AttentionParams, Shape> attention,
        Function<AttentionParams, Shape> gqa,
        Function<AttentionParams, Shape> split,
        Function<AttentionParams, Shape> combine,
        Function<AttentionParams, Shape> kvStore,
        Function<AttentionParams, Shape> mma,
        Function<AttentionParams, Shape> kvRound) {
    /** An API whose caches are F32 only (no kv_round). */
    public AttentionShapes(
            Planner plan,
            Function<AttentionParams, Shape> attention,
            Function<AttentionParams, Shape> gqa,
            Function<AttentionParams, Shape> split,
            Function<AttentionParams, Shape> combine,
            Function<AttentionParams, Shape> kvStore,
            Function<AttentionParams, Shape> mma) {
        this(plan, attention, gqa, split, combine, kvStore, mma, null);
    }

    /** An API without attention_mma whose caches are F32 only. */
    public AttentionShapes(
            Planner plan,
            Function<AttentionParams, Shape> attention,
            Function<AttentionParams, Shape> gqa,
            Function<AttentionParams, Shape> split,
            Function<AttentionParams, Shape> combine,
            Function<AttentionParams, Shape> kvStore) {
        this(plan, attention, gqa, split, combine, kvStore, null, null);
    }

    public AttentionShapes {
        if (plan == null || attention == null || kvStore == null)
            throw new IllegalArgumentException("attention and kv_store are on every API");
        if ((gqa != null || split != null) && combine == null)
            throw new IllegalArgumentException("a split kernel without attention_combine");
    }

    /**
     * The kernel a call takes ({@link AttentionPipeline#ATTENTION}, {@link AttentionPipeline#GQA},
     * {@link AttentionPipeline#SPLIT} or {@link AttentionPipeline#MMA}), its key splits (1: none; more: attention_combine merges them) and the query
     * rows per group of attention_gqa.
     */
    public record Plan(String kernel, int splits, int tileQueries) {}

    /** Chooses a call's {@link Plan}. */
    @FunctionalInterface
    public interface Planner {
        /** The plan for {@code p} (its splits and tileQueries 1) of a sequence whose first row is at position {@code start}. */
        Plan plan(AttentionParams p, int start);
    }

    /** A kernel's grid and its dynamic group memory in bytes, in the kernel's order (OpenCL's __local arguments; CUDA adds them up). */
    public record Shape(Grid grid, long... locals) {}
}
