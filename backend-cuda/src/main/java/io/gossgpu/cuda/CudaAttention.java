package io.gossgpu.cuda;

import io.gossgpu.GossException;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.device.AttentionParams;
import io.gossgpu.device.AttentionPipeline;
import io.gossgpu.device.AttentionShapes;
import io.gossgpu.device.AttentionShapes.Plan;
import io.gossgpu.device.AttentionShapes.Shape;
import io.gossgpu.device.Grid;

import java.util.List;

import static io.gossgpu.cuda.CudaLauncher.checkBlock;
import static io.gossgpu.device.AttentionPipeline.ATTENTION;
import static io.gossgpu.device.AttentionPipeline.COMBINE;
import static io.gossgpu.device.AttentionPipeline.GQA;
import static io.gossgpu.device.AttentionPipeline.KV_STORE;
import static io.gossgpu.device.Grid.ceilDiv;

/**
 * attention.cu run by the device layer's {@link AttentionPipeline}: its knobs, and how its kernels spread the work
 * ({@link AttentionShapes}). Batches of at least {@code GOSS_CUDA_ATTENTION_PREFILL_MIN_T} tokens (default 2) take
 * attention_gqa: one block per KV head and tile of query rows for all its query heads. A decode step takes the same
 * kernel with the keys split over {@code GOSS_CUDA_ATTENTION_SPLITS} blocks per KV head (default 32; 0: the plain
 * attention kernel), a fixed grid, so that the step's graph replays at every position.
 */
final class CudaAttention {
    /** attention.cu's entry points (CUDA has no attention_split). */
    static final List<CudaEntry> ENTRIES = java.util.stream.Stream.of(ATTENTION, GQA, COMBINE, KV_STORE)
            .map(n -> new CudaEntry("attention", n, AttentionPipeline.buffers(n), AttentionParams.class)).toList();
    /** Block size of attention_gqa; (query row, head) pairs per block. */
    static final int GQA_THREADS = 256, GQA_PAIRS = 16;

    final int block, elementwiseBlock, prefillMinT, splits;
    final AttentionPipeline<Long> pipeline;

    CudaAttention(CudaLauncher launch, BackendOptions o) {
        block = CudaKnobs.ATTENTION.value(o);
        elementwiseBlock = CudaKnobs.ELEMENTWISE.value(o);
        prefillMinT = CudaKnobs.ATTENTION_PREFILL_MIN_T.value(o);
        splits = CudaKnobs.ATTENTION_SPLITS.value(o);
        pipeline = new AttentionPipeline<>(launch, shapes());
        checkBlock((CudaKernel) pipeline.kernel(ATTENTION), CudaKnobs.ATTENTION, block);
        checkBlock((CudaKernel) pipeline.kernel(KV_STORE), CudaKnobs.ELEMENTWISE, elementwiseBlock);
        if (pipeline.kernel(GQA).maxThreads() < GQA_THREADS)
            throw new GossException("kernel " + GQA + " cannot run " + GQA_THREADS + " threads per block on this device");
    }

    /** attention_gqa where its shape allows (head_dim ≤ 128, ≤ 16 query heads per KV head), for prefill and (split) decode. */
    private Plan plan(AttentionParams p) {
        int hd = p.headDim(), T = p.tokens(), shared = 4 * (2 * hd + block);
        if (shared > 48 * 1024)
            throw new GossException("attention: head_dim " + hd + " needs " + shared + " bytes of shared memory per block (48 KiB at most); lower "
                    + CudaKnobs.ATTENTION.envName());
        int tq = Math.max(1, GQA_PAIRS / p.group());
        boolean fits = hd <= 128 && p.group() <= GQA_PAIRS && ceilDiv(T, tq) <= 65535;
        if (fits && (T >= prefillMinT || T == 1 && splits > 0)) return new Plan(GQA, T == 1 ? splits : 1, tq);
        return new Plan(ATTENTION, 1, 1);
    }

    private AttentionShapes shapes() {
        return new AttentionShapes((p, start) -> plan(p),
                p -> new Shape(Grid.of(p.heads(), p.tokens(), block), 4L * (2 * p.headDim() + block)), // a block per (head, row)
                p -> new Shape(Grid.of(p.kvHeads(), ceilDiv(p.tokens(), p.tileQueries()), p.splits(), GQA_THREADS),
                        4L * (GQA_PAIRS * p.headDim() + 32 * (p.headDim() + 1) + 32 * p.headDim())), // q pairs, a tile of keys, of values
                null,
                p -> new Shape(Grid.of(p.heads(), p.tokens(), Math.max(32, ceilDiv(p.headDim(), 32) * 32))),
                p -> new Shape(Grid.of(ceilDiv(p.kvDim(), elementwiseBlock), p.tokens() - p.first(), elementwiseBlock)));
    }
}
