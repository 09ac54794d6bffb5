package io.gossgpu.cuda;

import static io.gossgpu.cuda.CudaLauncher.checkBlock;
import static io.gossgpu.device.AttentionPipeline.ATTENTION;
import static io.gossgpu.device.AttentionPipeline.COMBINE;
import static io.gossgpu.device.AttentionPipeline.GQA;
import static io.gossgpu.device.AttentionPipeline.KV_ROUND;
import static io.gossgpu.device.AttentionPipeline.KV_STORE;
import static io.gossgpu.device.AttentionPipeline.MMA;
import static io.gossgpu.device.Grid.ceilDiv;

import io.gossgpu.GossException;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.KvType;
import io.gossgpu.device.AttentionParams;
import io.gossgpu.device.AttentionPipeline;
import io.gossgpu.device.AttentionShapes;
import io.gossgpu.device.AttentionShapes.Plan;
import io.gossgpu.device.AttentionShapes.Shape;
import io.gossgpu.device.Grid;
import java.util.List;

/**
 * attention.cu run by the device layer's {@link AttentionPipeline}: its knobs, and how its kernels spread the work
 * ({@link AttentionShapes}). Batches of at least {@code GOSS_CUDA_ATTENTION_PREFILL_MIN_T} tokens (default 2) take
 * attention_gqa: one block per KV head and tile of query rows for all its query heads. A decode step takes the same
 * kernel with the keys split over {@code GOSS_CUDA_ATTENTION_SPLITS} blocks per KV head (default 32; 0: the plain
 * attention kernel), a fixed grid, so that the step's graph replays at every position. On compute capability 8.0 and
 * up, unless {@code GOSS_CUDA_ATTENTION_MMA=0}, the prefill batches run on tensor cores instead (attention_mma: 64
 * (query row, head) pairs per block) where head_dim is a multiple of 16 up to 64 and a KV head has at most 64 query heads.
 * Every {@link KvType} is stored (kv_round rounds a batch's k and v before the attention kernel, kv_store encodes them,
 * each attention kernel decodes the cache per {@link AttentionParams#kvType}).
 */
final class CudaAttention {
    /** attention.cu's entry points (CUDA has no attention_split). */
    static final List<CudaEntry> ENTRIES = java.util.stream.Stream.of(ATTENTION, GQA, COMBINE, KV_STORE, MMA, KV_ROUND)
            .map(n -> new CudaEntry("attention", n, AttentionPipeline.buffers(n), AttentionParams.class))
            .toList();
    /** Block size of attention_gqa; (query row, head) pairs per block. */
    static final int GQA_THREADS = 256, GQA_PAIRS = 16;
    /** attention_mma's block, its (query row, head) pairs, keys per tile and largest head_dim: AMMA_* in attention.cu. */
    static final int MMA_THREADS = 128, MMA_PAIRS = 64, MMA_KEYS = 32, MMA_HD_MAX = 64;
    /** Compute capability from which attention_mma runs (BF16 wmma). */
    static final int MMA_MIN_CC = 80;

    final int block, elementwiseBlock, prefillMinT, splits;
    /** Whether prefill batches take attention_mma where it fits (GOSS_CUDA_ATTENTION_MMA on compute capability 8.0+). */
    final boolean mma;

    final AttentionPipeline<Long> pipeline;

    /** @param computeCapability the device's, e.g. 90: attention_mma from {@link #MMA_MIN_CC} */
    CudaAttention(CudaLauncher launch, BackendOptions o, int computeCapability) {
        block = CudaKnobs.ATTENTION.value(o);
        elementwiseBlock = CudaKnobs.ELEMENTWISE.value(o);
        prefillMinT = CudaKnobs.ATTENTION_PREFILL_MIN_T.value(o);
        splits = CudaKnobs.ATTENTION_SPLITS.value(o);
        mma = computeCapability >= MMA_MIN_CC && CudaKnobs.ATTENTION_MMA.value(o) == 1;
        pipeline = new AttentionPipeline<>(launch, shapes());
        checkBlock((CudaKernel) pipeline.kernel(ATTENTION), CudaKnobs.ATTENTION, block);
        checkBlock((CudaKernel) pipeline.kernel(KV_STORE), CudaKnobs.ELEMENTWISE, elementwiseBlock);
        checkBlock((CudaKernel) pipeline.kernel(KV_ROUND), CudaKnobs.ELEMENTWISE, elementwiseBlock);
        if (pipeline.kernel(GQA).maxThreads() < GQA_THREADS)
            throw new GossException(
                    "kernel " + GQA + " cannot run " + GQA_THREADS + " threads per block on this device");
        if (mma && pipeline.kernel(MMA).maxThreads() < MMA_THREADS)
            throw new GossException(
                    "kernel " + MMA + " cannot run " + MMA_THREADS + " threads per block on this device");
    }

    /**
     * attention_mma's dynamic shared memory: k and v tiles as BF16 hi and lo (q's before them, in the space after), a
     * 16-row FP32 scratch per warp, P as BF16 hi and lo per warp. A multiple of 32 bytes; 46080 at head_dim 64.
     */
    static long mmaSharedBytes(int hd) {
        int warps = MMA_THREADS / 32;
        return 2L * 2 * 2 * MMA_KEYS * (hd + 8)
                + 4L * warps * 16 * (Math.max(MMA_KEYS, hd) + 4)
                + 2L * 2 * warps * 16 * (MMA_KEYS + 8);
    }

    /** Whether attention_mma takes a call of this shape: head_dim a multiple of 16 up to 64, at most 64 query heads per KV head. */
    static boolean mmaFits(AttentionParams p) {
        return p.headDim() % 16 == 0
                && p.headDim() <= MMA_HD_MAX
                && p.group() <= MMA_PAIRS
                && ceilDiv(p.tokens(), MMA_PAIRS / p.group()) <= 65535;
    }

    /**
     * attention_mma for prefill batches where it fits and is on; else attention_gqa where its shape allows (head_dim ≤ 128,
     * ≤ 16 query heads per KV head), for prefill and (split) decode.
     */
    private Plan plan(AttentionParams p) {
        int hd = p.headDim(), T = p.tokens(), shared = 4 * (2 * hd + block);
        if (shared > 48 * 1024)
            throw new GossException("attention: head_dim " + hd + " needs " + shared
                    + " bytes of shared memory per block (48 KiB at most); lower " + CudaKnobs.ATTENTION.envName());
        int tq = Math.max(1, GQA_PAIRS / p.group());
        boolean fits = hd <= 128 && p.group() <= GQA_PAIRS && ceilDiv(T, tq) <= 65535;
        if (mma && T > 1 && T >= prefillMinT && mmaFits(p)) return new Plan(MMA, 1, MMA_PAIRS / p.group());
        if (fits && (T >= prefillMinT || T == 1 && splits > 0)) return new Plan(GQA, T == 1 ? splits : 1, tq);
        return new Plan(ATTENTION, 1, 1);
    }

    /**
     * kv_store's and kv_round's grid: a thread per number of a row (per 32-number block on Q8_0) and per row of
     * {@code rows}, in blocks of the elementwise knob.
     */
    private Shape rowsShape(AttentionParams p, int rows) {
        int perRow = p.type() == KvType.Q8_0 ? KvType.q8Blocks(p.kvDim()) : p.kvDim();
        return new Shape(Grid.of(ceilDiv(perRow, elementwiseBlock), rows, elementwiseBlock));
    }

    private AttentionShapes shapes() {
        return new AttentionShapes(
                (p, start) -> plan(p),
                p -> new Shape(
                        Grid.of(p.heads(), p.tokens(), block),
                        4L * (2 * p.headDim() + block)), // a block per (head, row)
                p -> new Shape(
                        Grid.of(p.kvHeads(), ceilDiv(p.tokens(), p.tileQueries()), p.splits(), GQA_THREADS),
                        4L
                                * (GQA_PAIRS * p.headDim()
                                        + 32 * (p.headDim() + 1)
                                        + 32 * p.headDim())), // q pairs, a tile of keys, of values
                null,
                p -> new Shape(
                        Grid.of(p.heads(), p.tokens(), Math.max(32, ceilDiv(p.headDim(), 32) * 32)),
                        8L * p.splits()), // (z, e_z) of each split
                p -> rowsShape(p, p.tokens() - p.first()),
                p -> new Shape(
                        Grid.of(p.kvHeads(), ceilDiv(p.tokens(), p.tileQueries()), MMA_THREADS),
                        mmaSharedBytes(p.headDim())),
                p -> rowsShape(p, p.tokens()));
    }
}
