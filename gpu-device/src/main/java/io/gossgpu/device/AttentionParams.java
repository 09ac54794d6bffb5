package io.gossgpu.device;

import io.gossgpu.backend.KvType;
import io.gossgpu.model.ModelConfig;

/**
 * The one params struct of every attention kernel ({@link AttentionPipeline}: attention, attention_gqa,
 * attention_split, attention_combine, kv_store), declared as {@code AttentionParams} in backend-cuda/kernels/attention.cu,
 * backend-opencl/kernels/attention.cl and backend-metal/kernels/attention.metal with these fields in this order
 * (AttentionKernelContractTest checks all three). The sequence's first position is not here: every kernel reads it
 * from its {@code pos} buffer, so that a CUDA graph of a decode step replays unchanged at the next position.
 *
 * @param tokens      T, the sequence's rows
 * @param row0        its first row of q, k, v and out (the kernels index its rows from there)
 * @param heads       query heads
 * @param group       query heads per KV head
 * @param headDim     hd
 * @param kvDim       values per row of k, v and the cache
 * @param slots       cache slots
 * @param window      the sliding window W; 0: none
 * @param scale       1/√hd
 * @param splits      key splits of attention_gqa / attention_split, merged by attention_combine; 1: none
 * @param tileQueries query rows per group of attention_gqa (CUDA's tiles; 1 where the kernel takes one row)
 * @param first       kv_store: the first row stored ({@code max(0, T − slots)}: earlier rows would be overwritten)
 * @param kvType      how the cache stores its numbers: the {@link KvType#ordinal()} (0 F32, 1 F16, 2 BF16, 3 Q8_0),
 *                    in the layout {@link KvType} describes
 */
public record AttentionParams(
        int tokens,
        int row0,
        int heads,
        int group,
        int headDim,
        int kvDim,
        int slots,
        int window,
        float scale,
        int splits,
        int tileQueries,
        int first,
        int kvType)
        implements KernelParams {

    /** The call for {@code tokens} rows from {@code row0} of layer {@code layer} of model {@code c} over a cache of {@code slots}. */
    public static AttentionParams of(ModelConfig c, int layer, int slots, int tokens, int row0) {
        return of(c, layer, slots, tokens, row0, KvType.F32);
    }

    /** As above over a cache that stores its numbers as {@code type}. */
    public static AttentionParams of(ModelConfig c, int layer, int slots, int tokens, int row0, KvType type) {
        int window = c.isSlidingLayer(layer) ? c.slidingWindow() : 0;
        return new AttentionParams(
                tokens,
                row0,
                c.numAttentionHeads(),
                c.queriesPerKvHead(),
                c.headDim(),
                c.kvDim(),
                slots,
                window,
                (float) (1 / Math.sqrt(c.headDim())),
                1,
                1,
                Math.max(0, tokens - slots),
                type.ordinal());
    }

    /** These params with the key splits and query tile a {@link AttentionShapes.Plan} chose. */
    public AttentionParams planned(int splits, int tileQueries) {
        return new AttentionParams(
                tokens, row0, heads, group, headDim, kvDim, slots, window, scale, splits, tileQueries, first, kvType);
    }

    /** The cache's number type. */
    public KvType type() {
        return KvType.values()[kvType];
    }

    /** KV heads. */
    public int kvHeads() {
        return heads / group;
    }
}
