package io.gossgpu.cuda;

import static io.gossgpu.cuda.CudaLauncher.checkBlock;
import static io.gossgpu.device.Grid.ceilDiv;

import io.gossgpu.GossException;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.device.Grid;
import io.gossgpu.device.MoeParams;
import io.gossgpu.device.MoePipeline;
import io.gossgpu.device.MoeShapes;
import io.gossgpu.device.MoeShapes.Shape;
import io.gossgpu.device.OpParams.TopKParams;
import java.util.List;

/**
 * The router's top-k entry (router.cu's topk_softmax, launched by the device layer's SmallOps), and the MXFP4 mixture of experts of moe.cu run by the device layer's
 * {@link MoePipeline}: this class gives it how moe.cu's kernels spread their work ({@link MoeShapes}): for decode a
 * warp per {@link #UNITS} rows (or units) of a slot, the activations in registers; batched by expert for batches of at least
 * {@code GOSS_CUDA_MOE_PREFILL_MIN_T} tokens: blocks per (64 or 128 rows, tile of 32 slots), each MXFP4 row decoded
 * once per tile. The two tiled expert GEMMs run on tensor cores (moe_gate_up_mma, moe_down_mma) on compute capability
 * 8.0 and up unless {@code GOSS_CUDA_MOE_MMA=0}. Expert ids stay on the device between the router and the MoE.
 */
final class MoeLauncher {
    /** Units (moe_gate_up: gate and up rows) per warp, output rows (moe_down) per block of moe.cu's decode kernels (MOE_UNITS). */
    static final int UNITS = 8;

    static final CudaEntry TOPK = new CudaEntry("router", "topk_softmax", 3, TopKParams.class);
    /** The entry points: topk_softmax, then MoePipeline's kernels with its buffer counts and params, then the tensor-core twins. */
    static final List<CudaEntry> ENTRIES = java.util.stream.Stream.of(
                    java.util.stream.Stream.of(TOPK),
                    java.util.stream.IntStream.range(0, MoePipeline.KERNELS.size())
                            .mapToObj(i -> new CudaEntry(
                                    "moe", MoePipeline.KERNELS.get(i), MoePipeline.BUFFERS.get(i), MoeParams.class)),
                    java.util.stream.Stream.of(
                            new CudaEntry("moe", MoePipeline.GATE_UP_MMA, MoePipeline.BUFFERS.get(3), MoeParams.class),
                            new CudaEntry("moe", MoePipeline.DOWN_MMA, MoePipeline.BUFFERS.get(4), MoeParams.class)))
            .flatMap(x -> x)
            .toList();
    /** Compute capability from which moe.cu's mma kernels run (BF16 wmma). */
    static final int MMA_MIN_CC = 80;
    /** Slots per work tile of moe.cu's tiled kernels (MOE_TM). */
    static final int TILE = 32;
    /** Threads per block of moe.cu's tiled kernels. */
    static final int TILED_THREADS = 256;

    final MoePipeline<Long> pipeline;
    final int moeBlock, elementwiseBlock;

    /** @param computeCapability the device's, e.g. 90: the tensor-core kernels from {@link #MMA_MIN_CC} */
    MoeLauncher(CudaLauncher launch, BackendOptions o, int computeCapability) {
        moeBlock = CudaKnobs.MOE.value(o);
        elementwiseBlock = CudaKnobs.ELEMENTWISE.value(o);
        boolean mma = computeCapability >= MMA_MIN_CC && CudaKnobs.MOE_MMA.value(o) == 1;
        pipeline = new MoePipeline<>(launch, shapes(mma), CudaKnobs.MOE_PREFILL_MIN_T.value(o));
        checkBlock(kernel(MoePipeline.GATE_UP), CudaKnobs.MOE, moeBlock);
        checkBlock(kernel(MoePipeline.DOWN), CudaKnobs.MOE, moeBlock);
        checkBlock(kernel(MoePipeline.COMBINE), CudaKnobs.ELEMENTWISE, elementwiseBlock);
        List<String> tiled = mma
                ? List.of(
                        MoePipeline.GATE_UP_TILED,
                        MoePipeline.DOWN_TILED,
                        MoePipeline.GATE_UP_MMA,
                        MoePipeline.DOWN_MMA)
                : List.of(MoePipeline.GATE_UP_TILED, MoePipeline.DOWN_TILED);
        for (String name : tiled)
            if (kernel(name).maxThreadsPerBlock() < TILED_THREADS)
                throw new GossException(
                        "kernel " + name + " cannot run " + TILED_THREADS + " threads per block on this device");
    }

    private CudaKernel kernel(String name) {
        return (CudaKernel) pipeline.kernel(name);
    }

    /** Work tiles of at most {@link #TILE} slots of one expert: at most this many (grid y of the tiled kernels). */
    private static int maxTiles(MoeParams p) {
        return ceilDiv(p.slots(), TILE) + Math.min(p.experts(), p.slots());
    }

    /** How moe.cu's kernels spread their work over blocks (the mma kernels as the tiled ones they replace). */
    private MoeShapes shapes(boolean mma) {
        int warps = moeBlock / 32, tiled = TILED_THREADS;
        // decode: moe_gate_up a warp per UNITS units of a slot; moe_down a block per (UNITS outputs, token), a warp per
        // slot
        return new MoeShapes(
                p -> Shape.of(Grid.of(ceilDiv(p.inter(), warps * UNITS), Math.min(p.slots(), 65535), moeBlock)),
                p -> new Shape(
                        Grid.of(ceilDiv(p.hidden(), UNITS), Math.min(p.tokens(), 65535), 32 * Math.min(warps, p.k())),
                        4L * p.k() * UNITS),
                p -> Shape.of(Grid.of(1, Math.min(1024, ceilDiv(p.experts(), 32) * 32))), // moe_sort: one block
                p -> Shape.of(Grid.of(ceilDiv(p.inter(), 64), maxTiles(p), tiled)), // 64 rows × a tile of slots
                p -> Shape.of(Grid.of(ceilDiv(p.hidden(), 128), maxTiles(p), tiled)), // 128 rows × a tile of slots
                p -> Shape.of(Grid.of(Math.min(p.tokens(), 65535), elementwiseBlock)), // moe_combine
                p -> maxTiles(p) <= 65535,
                mma);
    }
}
