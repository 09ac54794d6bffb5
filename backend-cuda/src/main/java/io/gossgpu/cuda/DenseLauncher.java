package io.gossgpu.cuda;

import io.gossgpu.GossException;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.cuda.CudaWeights.Dense;
import io.gossgpu.device.Grid;
import io.gossgpu.device.KernelLaunch;
import io.gossgpu.device.KernelParams;
import io.gossgpu.device.SmallOps;
import io.gossgpu.device.OpParams.DenseParams;
import io.gossgpu.device.OpParams.EmbedParams;
import io.gossgpu.model.WeightFormat;

import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;

import static io.gossgpu.device.Grid.ceilDiv;
import static io.gossgpu.cuda.CudaLauncher.checkBlock;

/**
 * The dense layers and the elementwise ops between them: embedding rows and linear layers in every dense format
 * (embed.cu, dense.cu), RMSNorm (rmsnorm.cu) and the residual add (add.cu).
 *
 * <p>A linear layer over T tokens runs {@code dense_matvec_*} (one warp per output row, or several for a matrix
 * with few rows such as the router; 16-byte weight loads, up to 8 tokens per weight load) when T is below
 * {@code GOSS_CUDA_DENSE_PREFILL_MIN_T}, else {@code dense_gemm_*} (shared-memory tiles of {@code TILE_T} tokens ×
 * {@code TILE_R} rows, 4×4 outputs per thread, F32 FMA).
 */
final class DenseLauncher {
    /** The dense formats the kernels take, each with its own entry points (name suffix: the format in lower case). */
    private static final List<WeightFormat> FORMATS = List.of(WeightFormat.F32, WeightFormat.F16, WeightFormat.BF16, WeightFormat.Q8_0);

    static final CudaEntry RMSNORM = new CudaEntry("rmsnorm", SmallOps.RMSNORM, 3, io.gossgpu.device.OpParams.NormParams.class),
            ADD_RMSNORM = new CudaEntry("rmsnorm", SmallOps.ADD_RMSNORM, 5, io.gossgpu.device.OpParams.NormParams.class),
            ADD = new CudaEntry("add", SmallOps.ADD, 3, io.gossgpu.device.OpParams.AddParams.class),
            GEMM_MMA = new CudaEntry("dense", "dense_gemm_mma_bf16", 7, DenseParams.class);
    /** dense_gemm_mma_bf16's tile (tokens × rows) and block: DENSE_MMA_TM, _TR, _THREADS in dense.cu. */
    static final int MMA_TILE_T = 32, MMA_TILE_R = 128, MMA_THREADS = 256;
    /** Compute capability from which dense_gemm_mma_bf16 runs (BF16 wmma). */
    static final int MMA_MIN_CC = 80;
    /** Every entry point: per format its embed, matvec and each GEMM tile ({@code GOSS_CUDA_DENSE_TILE_T} × {@code _TILE_R}). */
    static final List<CudaEntry> ENTRIES = Stream.concat(FORMATS.stream().flatMap(f -> Stream.concat(
                    Stream.of(embed(f), matvec(f)),
                    CudaKnobs.DENSE_TILE_T.allowed().oneOf().stream().flatMap(t -> CudaKnobs.DENSE_TILE_R.allowed().oneOf().stream().map(r -> gemm(f, t, r))))),
            Stream.of(RMSNORM, ADD_RMSNORM, ADD, GEMM_MMA)).toList();

    /** The kernels of one element type (F32, F16, BF16, Q8_0). */
    private record Kernels(CudaKernel embed, CudaKernel matvec, CudaKernel gemm) {}

    private static String suffix(WeightFormat f) {
        return f.name().toLowerCase(Locale.ROOT);
    }

    static CudaEntry embed(WeightFormat f) {
        return new CudaEntry("embed", "embed_" + suffix(f), 4, EmbedParams.class);
    }

    static CudaEntry matvec(WeightFormat f) {
        return new CudaEntry("dense", "dense_matvec_" + suffix(f), 7, DenseParams.class);
    }

    static CudaEntry gemm(WeightFormat f, int tileT, int tileR) {
        return new CudaEntry("dense", "dense_gemm_" + suffix(f) + "_" + tileT + "x" + tileR, 7, DenseParams.class);
    }

    private final CudaLauncher launch;
    private final int multiprocessors;
    private final Map<WeightFormat, Kernels> dense = new EnumMap<>(WeightFormat.class);
    final int denseBlock, rmsBlock, elementwiseBlock, prefillMinT, tileT, tileR;
    /** The BF16 prefill GEMM on tensor cores, or null (GOSS_CUDA_DENSE_MMA=0, or compute capability below 8.0). */
    private final CudaKernel gemmMma;

    /** @param computeCapability the device's, e.g. 90: the tensor-core GEMM from {@link #MMA_MIN_CC} */
    DenseLauncher(CudaLauncher launch, int multiprocessors, BackendOptions o, int computeCapability) {
        this.launch = launch;
        this.multiprocessors = multiprocessors;
        denseBlock = CudaKnobs.DENSE.value(o);
        rmsBlock = CudaKnobs.RMSNORM.value(o);
        elementwiseBlock = CudaKnobs.ELEMENTWISE.value(o);
        prefillMinT = CudaKnobs.DENSE_PREFILL_MIN_T.value(o);
        tileT = CudaKnobs.DENSE_TILE_T.value(o);
        tileR = CudaKnobs.DENSE_TILE_R.value(o);
        for (WeightFormat f : FORMATS) {
            Kernels k = new Kernels(launch.kernel(embed(f).name()), launch.kernel(matvec(f).name()), launch.kernel(gemm(f, tileT, tileR).name()));
            checkBlock(k.matvec(), CudaKnobs.DENSE, denseBlock);
            if (k.gemm().maxThreadsPerBlock() < tileT * tileR / 16)
                throw CudaKnobs.DENSE_TILE_R.invalid(Integer.toString(tileR), "smaller with " + CudaKnobs.DENSE_TILE_T.envName() + "="
                        + tileT + ": kernel " + k.gemm().name() + " takes at most " + k.gemm().maxThreadsPerBlock()
                        + " threads per block on this device, the tile needs " + tileT * tileR / 16);
            checkBlock(k.embed(), CudaKnobs.ELEMENTWISE, elementwiseBlock);
            dense.put(f, k);
        }
        gemmMma = computeCapability >= MMA_MIN_CC && CudaKnobs.DENSE_MMA.value(o) == 1 ? launch.kernel(GEMM_MMA.name()) : null;
        if (gemmMma != null && gemmMma.maxThreadsPerBlock() < MMA_THREADS)
            throw new GossException("kernel " + gemmMma.name() + " cannot run " + MMA_THREADS + " threads per block on this device");
    }

    /** Whether BF16 prefill GEMMs run on tensor cores (the knob's value in effect). */
    boolean mma() {
        return gemmMma != null;
    }

    /** {@code out[t, :]} = row {@code tokens[t]} of {@code table} as F32, the ids read from the device at {@code ids}. */
    void embed(Dense table, long ids, int tokens, long out) {
        launch.launch(dense.get(table.format()).embed()).buffer(table.ptr()).buffer(table.scales()).buffer(ids).buffer(out).run(new EmbedParams(tokens, table.cols(), 0), Grid.of(Math.min(tokens, 65535), elementwiseBlock));
    }

    /** {@code out[t, :] = W·x[t, :]} (+ bias, a device address of {@code d.rows()} floats, or 0) for {@code t < T}. */
    void matmul(Dense d, long bias, long x, int T, long out) {
        matmul(d, bias, x, T, out, d.rows(), 0, 0, 0);
    }

    /**
     * Warps per row of the matvec: 1, or for a matrix with too few rows to give each multiprocessor 16 warps (the
     * router), the power of two (dividing the warps of a block) that comes closest without passing it, so that
     * its rows are read by more warps at once.
     */
    static int matvecSplit(int rows, int warpsPerBlock, int multiprocessors) {
        long target = 16L * Math.max(1, multiprocessors);
        int split = 1;
        while (2 * split <= warpsPerBlock && warpsPerBlock % (2 * split) == 0 && (long) rows * 2 * split <= target) split *= 2;
        return split;
    }

    /**
     * y = W·x (+ bias) with rows {@code 0..n0−1} of y going to out0 (T × n0), the next n1 to out1 and the rest to
     * out2 (a fused QKV): matvec for T below {@link #prefillMinT}, else the tiled GEMM (BF16 weights: on tensor cores
     * where {@link #mma}).
     */
    void matmul(Dense d, long bias, long x, int T, long out0, int n0, long out1, int n1, long out2) {
        Kernels k = dense.get(d.format());
        int hasBias = bias == 0 ? 0 : 1;
        boolean gemm = T >= prefillMinT, mma = gemm && gemmMma != null && d.format() == WeightFormat.BF16;
        KernelLaunch<Long> a = launch.launch(mma ? gemmMma : gemm ? k.gemm() : k.matvec()).buffer(d.ptr()).buffer(d.scales()).buffer(bias).buffer(x)
                .buffer(out0).buffer(out1).buffer(out2);
        if (!gemm) {
            int warps = denseBlock / 32, split = matvecSplit(d.rows(), warps, multiprocessors);
            a.run(new DenseParams(0, hasBias, T, d.cols(), d.rows(), 0, n0, n1, split, 0, 0), Grid.of(ceilDiv(d.rows(), warps / split), denseBlock));
        } else if (mma) {
            a.run(new DenseParams(0, hasBias, T, d.cols(), d.rows(), 0, n0, n1, 1, 0, 0),
                    Grid.of(ceilDiv(d.rows(), MMA_TILE_R), Math.min(ceilDiv(T, MMA_TILE_T), 65535), MMA_THREADS));
        } else {
            a.run(new DenseParams(0, hasBias, T, d.cols(), d.rows(), 0, n0, n1, 1, 0, 0), Grid.of(ceilDiv(d.rows(), tileR), ceilDiv(T, tileT), tileT * tileR / 16));
        }
    }

    /** {@code out = x·Wᵀ} (+ bias), shapes checked: a {@code T × cols} x into {@code T × rows}. */
    void linear(Dense d, long bias, long x, int xRows, int xCols, long out, int outRows, int outCols) {
        if (xCols != d.cols() || outCols != d.rows() || outRows != xRows)
            throw new GossException("linear: " + xRows + "x" + xCols + " times a " + d.rows() + "x" + d.cols()
                    + " matrix into " + outRows + "x" + outCols);
        matmul(d, bias, x, xRows, out);
    }
}
