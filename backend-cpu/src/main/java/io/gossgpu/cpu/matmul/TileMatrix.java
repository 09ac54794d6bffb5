package io.gossgpu.cpu.matmul;

import io.gossgpu.GossException;
import io.gossgpu.cpu.bindings.goss_cpu_h;
import io.gossgpu.cpu.compute.CpuPool;
import io.gossgpu.model.WeightFormat;
import io.gossgpu.model.WeightView;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A quantized weight (MXFP4 in either layout, or Q8_0) repacked at load into the 16-row tiles of
 * {@code backend-cpu/kernels/goss_cpu.h} and multiplied by the native integer kernels. Both MXFP4 layouts become
 * the same tiles (natural column order), so one kernel serves OpenAI's and ggml's files and activations
 * are never permuted. A float (F32/F16/BF16) weight becomes q8 tiles too, quantized by Q8_0's rule
 * ({@link KernelSet#quantizesDense}). Costs one copy of the weight in native memory; the file's pages are then unused.
 */
final class TileMatrix extends CpuMatrix {
    static final int GROUP = 16;

    private final KernelSet kernels;
    private final boolean mx4;
    /** Views without a session of the arena's memory (see {@link KernelSet#unscoped}); the arena frees it. */
    private final MemorySegment tiles, scales;

    private final int blocks, groups;
    private final long expertTileBytes, expertScaleBytes;

    private TileMatrix(
            WeightView w,
            KernelSet kernels,
            boolean mx4,
            MemorySegment tiles,
            MemorySegment scales,
            long expertTileBytes,
            long expertScaleBytes) {
        super(w.name(), w.experts(), w.rows(), w.cols());
        this.kernels = kernels;
        this.mx4 = mx4;
        this.tiles = KernelSet.unscoped(tiles);
        this.scales = KernelSet.unscoped(scales);
        this.blocks = w.cols() / 32;
        this.groups = (w.rows() + GROUP - 1) / GROUP;
        this.expertTileBytes = expertTileBytes;
        this.expertScaleBytes = expertScaleBytes;
    }

    /** Repacks every expert of {@code w} on {@code pool}'s threads into memory from {@code arena}. */
    static TileMatrix repack(WeightView w, KernelSet kernels, CpuPool pool, Arena arena) {
        boolean mx4 = w.format() == WeightFormat.MXFP4_OPENAI || w.format() == WeightFormat.MXFP4_GGML;
        int blocks = w.cols() / 32, groups = (w.rows() + GROUP - 1) / GROUP;
        long tileBytes = (long) groups * blocks * (mx4 ? 256 : 512);
        long scaleBytes = (long) groups * blocks * (mx4 ? 16 : 32);
        MemorySegment tiles = allocate(w, tileBytes * w.experts(), arena),
                scales = allocate(w, scaleBytes * w.experts(), arena);
        // items: (expert, run of up to 8 groups), so each native call is short and the threads share the work
        int perItem = 8, itemsPerExpert = (groups + perItem - 1) / perItem;
        pool.run(w.experts() * itemsPerExpert, 1, (from, to, worker) -> {
            for (int item = from; item < to; item++) {
                int e = item / itemsPerExpert;
                long g0 = (long) (item % itemsPerExpert) * perItem, g1 = Math.min(groups, g0 + perItem);
                MemorySegment ot = tiles.asSlice(e * tileBytes, tileBytes),
                        os = scales.asSlice(e * scaleBytes, scaleBytes);
                MemorySegment src = w.data().asSlice(w.rowOffset(e, 0));
                // this item's rows, mapped in one call rather than one page fault per 4 KiB
                long first = g0 * GROUP * w.rowStride(),
                        len = Math.min(Math.min(w.rows(), g1 * GROUP) * w.rowStride(), src.byteSize()) - first;
                if (src.isNative() && len > 0) goss_cpu_h.goss_cpu_prefault(src.asSlice(first, len), len);
                switch (w.format()) {
                    case MXFP4_OPENAI ->
                        goss_cpu_h.goss_cpu_repack_mx4_openai(
                                src,
                                w.rowStride(),
                                w.scales().asSlice(w.scaleRowOffset(e, 0)),
                                w.scaleRowStride(),
                                w.rows(),
                                blocks,
                                g0,
                                g1,
                                ot,
                                os);
                    case MXFP4_GGML ->
                        goss_cpu_h.goss_cpu_repack_mx4_ggml(src, w.rowStride(), w.rows(), blocks, g0, g1, ot, os);
                    case Q8_0 -> goss_cpu_h.goss_cpu_repack_q8_0(src, w.rowStride(), w.rows(), blocks, g0, g1, ot, os);
                    case F32, F16, BF16 ->
                        goss_cpu_h.goss_cpu_repack_float_q8(
                                DenseMatrix.formatCode(w.format()),
                                src,
                                w.rowStride(),
                                w.rows(),
                                blocks,
                                g0,
                                g1,
                                ot,
                                os);
                    default -> throw new IllegalStateException(w.format() + " is not tiled");
                }
            }
        });
        return new TileMatrix(w, kernels, mx4, tiles, scales, tileBytes, scaleBytes);
    }

    /** Huge-page memory owned by {@code arena} (freed when it closes). */
    private static MemorySegment allocate(WeightView w, long bytes, Arena arena) {
        MemorySegment p = goss_cpu_h.goss_cpu_alloc(bytes);
        if (p.equals(MemorySegment.NULL))
            throw new GossException(w.name() + ": not enough memory to repack " + (bytes >> 20)
                    + " MiB for the native cpu kernels (GOSS_CPU_KERNELS=java reads the file in place)");
        return p.reinterpret(bytes, arena, s -> goss_cpu_h.goss_cpu_free(s, bytes));
    }

    @Override
    public int rowGrain() {
        return GROUP;
    }

    @Override
    public MatrixInput.Form inputForm() {
        return MatrixInput.Form.Q8;
    }

    @Override
    public void gemm(
            int expert,
            int r0,
            int r1,
            MatrixInput x,
            int xRow0,
            int T,
            float[] out,
            int outOff,
            int outStride,
            float[] bias,
            int biasOff,
            int worker) {
        int nb = blocks;
        kernels.tileGemm(
                mx4,
                tiles.asSlice(expert * expertTileBytes),
                scales.asSlice(expert * expertScaleBytes),
                nb,
                r1,
                r0 / GROUP,
                (r1 + GROUP - 1) / GROUP,
                MemorySegment.ofArray(x.q).asSlice((long) xRow0 * cols),
                MemorySegment.ofArray(x.d).asSlice(4L * xRow0 * nb),
                MemorySegment.ofArray(x.s).asSlice(4L * xRow0 * nb),
                T,
                MemorySegment.ofArray(out).asSlice(4L * outOff),
                outStride,
                bias == null ? MemorySegment.NULL : MemorySegment.ofArray(bias).asSlice(4L * biasOff));
    }

    @Override
    public long ownedBytes() {
        return tiles.byteSize() + scales.byteSize();
    }
}
