package io.gossgpu.cuda;

import static io.gossgpu.cuda.CudaLauncher.checkBlock;
import static io.gossgpu.device.Grid.ceilDiv;

import io.gossgpu.GossException;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.device.DensePipeline;
import io.gossgpu.device.DensePipeline.Path;
import io.gossgpu.device.DenseShapes;
import io.gossgpu.device.DenseShapes.Shape;
import io.gossgpu.device.DeviceKernel;
import io.gossgpu.device.Grid;
import io.gossgpu.device.OpParams.DenseParams;
import io.gossgpu.device.OpParams.EmbedParams;
import io.gossgpu.device.SmallOps;
import io.gossgpu.model.WeightFormat;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * The CUDA side of the dense op and the elementwise ops between them: the entry points of embed.cu and dense.cu (one per
 * weight format, and per GEMM tile), rmsnorm.cu and add.cu, their knobs, and how dense.cu's kernels spread over blocks,
 * given to the device layer's {@link DensePipeline} (which runs embed and every dense layer).
 *
 * <p>A dense layer over T tokens runs {@code dense_matvec_*} (one warp per output row, or several for a matrix
 * with few rows such as the router; 16-byte weight loads, up to 8 tokens per weight load; Q8_0 at one token its own
 * path and launch, {@link #q8DecodeShape}) when T is below
 * {@code GOSS_CUDA_DENSE_PREFILL_MIN_T} or the matrix has fewer than {@link #GEMM_MIN_ROWS} rows (the router; the
 * matvec's grid has a block row per 8 tokens), else {@code dense_gemm_*} (shared-memory tiles of {@code TILE_T} tokens ×
 * {@code TILE_R} rows, 4×4 outputs per thread, F32 FMA), BF16 weights on tensor cores ({@code dense_gemm_mma_bf16})
 * from compute capability 8.0 unless {@code GOSS_CUDA_DENSE_MMA=0}.
 */
final class DenseLauncher {
    /** The dense formats the kernels take, each with its own entry points (name suffix: the format in lower case). */
    private static final List<WeightFormat> FORMATS =
            List.of(WeightFormat.F32, WeightFormat.F16, WeightFormat.BF16, WeightFormat.Q8_0);

    /** dense.cu's kernels take the Q8_0 scales and a fused QKV's three outputs (DenseShapes' scales and threeOutputs below). */
    private static final int DENSE_BUFFERS = DensePipeline.denseBuffers(true, true);

    static final CudaEntry
            RMSNORM = new CudaEntry("rmsnorm", SmallOps.RMSNORM, 3, io.gossgpu.device.OpParams.NormParams.class),
            ADD_RMSNORM =
                    new CudaEntry("rmsnorm", SmallOps.ADD_RMSNORM, 5, io.gossgpu.device.OpParams.NormParams.class),
            ADD = new CudaEntry("add", SmallOps.ADD, 3, io.gossgpu.device.OpParams.AddParams.class),
            GEMM_MMA = new CudaEntry(DensePipeline.DENSE, "dense_gemm_mma_bf16", DENSE_BUFFERS, DenseParams.class);
    /** dense_gemm_mma_bf16's tile (tokens × rows) and block: DENSE_MMA_TM, _TR, _THREADS in dense.cu. */
    static final int MMA_TILE_T = 32, MMA_TILE_R = 128, MMA_THREADS = 256;
    /** Tokens per weight load of the matvec (DENSE_MATVEC_MAXT in dense.cu): its grid's y blocks take 8 tokens each. */
    static final int MATVEC_MAXT = 8;
    /**
     * Matrices of fewer rows take the matvec at every batch size: the smallest GEMM tile has 64 rows, so their GEMM grid
     * is ceil(T / TILE_T) blocks (the router's 32 rows at pp512: 8 blocks on 132 multiprocessors), where the matvec's is
     * ceil(rows / rows per block) × ceil(T / 8).
     */
    static final int GEMM_MIN_ROWS = 64;
    /** The widest Q8_0 matrix whose one-token matvec stages x in shared memory (DENSE_Q8_T1_MAXK in dense.cu). */
    static final int Q8_DECODE_MAX_COLS = 8192;
    /**
     * Warps a multiprocessor keeps of dense_matvec_q8_0 (DENSE_Q8_REGS, 80 registers: three blocks of 8 warps), the
     * target of its one-token launch: as many warps as fit at once, no partial second wave.
     */
    static final int Q8_DECODE_WARPS_PER_SM = 24;
    /** Compute capability from which dense_gemm_mma_bf16 runs (BF16 wmma). */
    static final int MMA_MIN_CC = 80;
    /** Every entry point: per format its embed, matvec and each GEMM tile ({@code GOSS_CUDA_DENSE_TILE_T} × {@code _TILE_R}). */
    static final List<CudaEntry> ENTRIES = Stream.concat(
                    FORMATS.stream()
                            .flatMap(f -> Stream.concat(
                                    Stream.of(embed(f), matvec(f)),
                                    CudaKnobs.DENSE_TILE_T.allowed().oneOf().stream()
                                            .flatMap(t -> CudaKnobs.DENSE_TILE_R.allowed().oneOf().stream()
                                                    .map(r -> gemm(f, t, r))))),
                    Stream.of(RMSNORM, ADD_RMSNORM, ADD, GEMM_MMA))
            .toList();

    private static String suffix(WeightFormat f) {
        return f.name().toLowerCase(Locale.ROOT);
    }

    static CudaEntry embed(WeightFormat f) {
        return new CudaEntry(
                DensePipeline.EMBED,
                DensePipeline.EMBED + "_" + suffix(f),
                DensePipeline.embedBuffers(true),
                EmbedParams.class);
    }

    static CudaEntry matvec(WeightFormat f) {
        return new CudaEntry(DensePipeline.DENSE, "dense_matvec_" + suffix(f), DENSE_BUFFERS, DenseParams.class);
    }

    static CudaEntry gemm(WeightFormat f, int tileT, int tileR) {
        return new CudaEntry(
                DensePipeline.DENSE,
                "dense_gemm_" + suffix(f) + "_" + tileT + "x" + tileR,
                DENSE_BUFFERS,
                DenseParams.class);
    }

    /** Embed and every dense layer, run by the device layer. */
    final DensePipeline<Long> pipeline;

    final int denseBlock, rmsBlock, elementwiseBlock, prefillMinT, tileT, tileR;
    private final boolean mma;

    /** @param computeCapability the device's, e.g. 90: the tensor-core GEMM from {@link #MMA_MIN_CC} */
    DenseLauncher(CudaLauncher launch, int multiprocessors, BackendOptions o, int computeCapability) {
        denseBlock = CudaKnobs.DENSE.value(o);
        rmsBlock = CudaKnobs.RMSNORM.value(o);
        elementwiseBlock = CudaKnobs.ELEMENTWISE.value(o);
        prefillMinT = CudaKnobs.DENSE_PREFILL_MIN_T.value(o);
        tileT = CudaKnobs.DENSE_TILE_T.value(o);
        tileR = CudaKnobs.DENSE_TILE_R.value(o);
        mma = computeCapability >= MMA_MIN_CC && CudaKnobs.DENSE_MMA.value(o) == 1;
        int warps = denseBlock / 32, block = elementwiseBlock, t = tileT, r = tileR;
        pipeline = new DensePipeline<>(
                launch,
                new DenseShapes(
                        FORMATS,
                        f -> embed(f).name(),
                        f -> matvec(f).name(),
                        f -> gemm(f, t, r).name(),
                        mma ? f -> f == WeightFormat.BF16 ? GEMM_MMA.name() : null : null,
                        prefillMinT,
                        GEMM_MIN_ROWS,
                        true,
                        true,
                        0,
                        (cols, tokens) -> Shape.of(Grid.of(Math.min(tokens, 65535), block)),
                        new MatvecGrid(warps, multiprocessors),
                        (rows, tokens) -> Shape.of(Grid.of(ceilDiv(rows, r), ceilDiv(tokens, t), t * r / 16)),
                        mma
                                ? (rows, tokens) -> Shape.of(Grid.of(
                                        ceilDiv(rows, MMA_TILE_R),
                                        Math.min(ceilDiv(tokens, MMA_TILE_T), 65535),
                                        MMA_THREADS))
                                : null));
        for (DeviceKernel k : pipeline.kernels(Path.MATVEC)) checkBlock((CudaKernel) k, CudaKnobs.DENSE, denseBlock);
        for (DeviceKernel k : pipeline.kernels(null))
            checkBlock((CudaKernel) k, CudaKnobs.ELEMENTWISE, elementwiseBlock);
        for (DeviceKernel k : pipeline.kernels(Path.GEMM))
            if (k.maxThreads() < tileT * tileR / 16)
                throw CudaKnobs.DENSE_TILE_R.invalid(
                        Integer.toString(tileR),
                        "smaller with " + CudaKnobs.DENSE_TILE_T.envName() + "="
                                + tileT + ": kernel " + k.name() + " takes at most " + k.maxThreads()
                                + " threads per block on this device, the tile needs " + tileT * tileR / 16);
        for (DeviceKernel k : pipeline.kernels(Path.MMA))
            if (k.maxThreads() < MMA_THREADS)
                throw new GossException(
                        "kernel " + k.name() + " cannot run " + MMA_THREADS + " threads per block on this device");
    }

    /**
     * dense_matvec_*'s grid: a block row per 8 tokens, {@link #matvecSplit} warps per row; for Q8_0 at one token over
     * at most {@link #Q8_DECODE_MAX_COLS} columns (dense.cu's matvec_q8_t1) {@link #q8DecodeShape}.
     */
    private final class MatvecGrid implements DenseShapes.Sizer {
        private final int warps, multiprocessors;

        MatvecGrid(int warps, int multiprocessors) {
            this.warps = warps;
            this.multiprocessors = multiprocessors;
        }

        @Override
        public Shape of(int rows, int tokens) {
            int chunks = Math.min(ceilDiv(tokens, MATVEC_MAXT), 65535); // block rows of the grid, 8 tokens each
            int split = matvecSplit((long) rows * chunks, warps, multiprocessors);
            return new Shape(Grid.of(ceilDiv(rows, warps / split), chunks, denseBlock), List.of(), split);
        }

        @Override
        public Shape of(WeightFormat format, int rows, int cols, int tokens) {
            return q8Decode(format, cols, tokens)
                    ? q8DecodeShape(rows, cols, warps, multiprocessors)
                    : of(rows, tokens);
        }
    }

    /** Whether dense_matvec_q8_0 takes its one-token path (dense.cu: T = 1 and cols at most DENSE_Q8_T1_MAXK). */
    static boolean q8Decode(WeightFormat format, int cols, int tokens) {
        return format == WeightFormat.Q8_0 && tokens == 1 && cols <= Q8_DECODE_MAX_COLS;
    }

    /**
     * The one-token Q8_0 matvec's launch (dense.cu's matvec_q8_t1): S warps per row, S the power of two dividing the
     * block's W warps that comes closest to {@link #Q8_DECODE_WARPS_PER_SM} warps per multiprocessor without passing it
     * (rows × S), so that a matrix of few rows is read by more warps at once; the row groups (W / S rows each) spread
     * over at most the blocks the multiprocessors keep resident, each block looping over its groups, so x is staged
     * once per block; dynamic shared memory for x (4 cols bytes) and the warps' partial sums (16-byte aligned).
     */
    static Shape q8DecodeShape(int rows, int cols, int warps, int multiprocessors) {
        int split = split(rows, warps, (long) Q8_DECODE_WARPS_PER_SM * Math.max(1, multiprocessors));
        int groups = ceilDiv(rows, warps / split);
        int resident = Math.max(1, multiprocessors) * Math.max(1, Q8_DECODE_WARPS_PER_SM / warps);
        return new Shape(
                Grid.of(Math.min(groups, resident), 1, 32 * warps),
                List.of(4L * cols + 16L * ceilDiv(warps, 4)),
                split);
    }

    /** Whether BF16 prefill GEMMs run on tensor cores (the knob's value in effect). */
    boolean mma() {
        return mma;
    }

    /**
     * Warps per row of the matvec: 1, or for a matrix with too few rows to give each multiprocessor 16 warps (the
     * router), the power of two (dividing the warps of a block) that comes closest without passing it, so that
     * its rows are read by more warps at once. {@code rows} counts each row once per block row of the grid (8 tokens),
     * so a prefill batch of the router, whose grid is already wide, keeps one warp per row (and x in L1 for the block's rows).
     */
    static int matvecSplit(long rows, int warpsPerBlock, int multiprocessors) {
        return split(rows, warpsPerBlock, 16L * Math.max(1, multiprocessors));
    }

    /** The largest power of two dividing {@code warpsPerBlock} with {@code rows × split} at most {@code target} (at least 1). */
    private static int split(long rows, int warpsPerBlock, long target) {
        int split = 1;
        while (2 * split <= warpsPerBlock && warpsPerBlock % (2 * split) == 0 && (long) rows * 2 * split <= target)
            split *= 2;
        return split;
    }
}
