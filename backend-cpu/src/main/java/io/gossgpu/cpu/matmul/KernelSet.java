package io.gossgpu.cpu.matmul;

import io.gossgpu.GossException;
import io.gossgpu.cpu.bindings.goss_cpu_h;
import io.gossgpu.cpu.compute.CpuKernels;
import io.gossgpu.cpu.compute.CpuPool;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.model.WeightView;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Locale;

/**
 * The matrix kernels one cpu backend uses: {@link Isa#JAVA} (the float kernels of {@link CpuKernels}, exact
 * to float rounding, every platform) or native integer kernels for AVX2 or AVX-512 (libgoss_cpu:
 * quantized weights repacked at load into 16-row tiles and multiplied with int8-quantized activations;
 * float weights quantized to the same tiles by Q8_0's rule, or, with {@link #quantizingDense quantizingDense(false)},
 * multiplied in place in float). {@link #pack} turns each weight into the matrix these kernels read.
 */
public final class KernelSet {
    /** A kernel family; {@code GOSS_CPU_KERNELS} names them in lower case. */
    public enum Isa {
        JAVA,
        AVX2,
        AVXVNNI,
        AVX512;

        public String knobValue() {
            return name().toLowerCase(Locale.ROOT);
        }

        /** {@code auto} (null) or a family name; a GossException naming the knob and the allowed values otherwise. */
        public static Isa parse(String knob, String value) {
            String v = value.strip().toLowerCase(Locale.ROOT);
            if (v.equals("auto")) return null;
            for (Isa i : values()) if (i.knobValue().equals(v)) return i;
            throw new GossException(
                    "invalid " + knob + "=" + value + ": must be one of auto, avx512, avxvnni, avx2, java");
        }
    }

    private final Isa isa;
    private final CpuKernels java;
    private final boolean quantizeDense;

    private KernelSet(Isa isa, CpuKernels java, boolean quantizeDense) {
        this.isa = isa;
        this.java = java;
        this.quantizeDense = quantizeDense;
    }

    /**
     * The kernel set for {@code wanted} (null: the best this machine runs). Asking for a native family this
     * CPU or build cannot run is a GossException saying why.
     */
    public static KernelSet of(Isa wanted, CpuKernels java) {
        Isa isa = wanted == null ? NativeCpu.best() : wanted;
        if (!NativeCpu.supports(isa)) {
            String why = NativeCpu.unavailableReason();
            throw new GossException("cpu kernels " + isa.knobValue() + " cannot run here: "
                    + (why != null
                            ? why
                            : "this CPU lacks "
                                    + switch (isa) {
                                        case AVX512 -> "AVX-512 (F, BW, VL, DQ, VNNI)";
                                        case AVXVNNI -> "AVX-VNNI";
                                        default -> "AVX2 and FMA";
                                    }));
        }
        return new KernelSet(isa, java, true);
    }

    /**
     * This set with float dense weights (F32/F16/BF16, the attention and unembedding matrices of OpenAI's files)
     * quantized to q8 tiles at load ({@code true}, the default: half the bytes of BF16 per token, int8 products as
     * for Q8_0 files, which is how the ggml-org release stores them) or read in place and multiplied in float.
     * The {@link Isa#JAVA} set always multiplies in float.
     */
    public KernelSet quantizingDense(boolean quantize) {
        return quantize == quantizeDense ? this : new KernelSet(isa, java, quantize);
    }

    /** Whether float dense weights are quantized to q8 tiles at load ({@link #quantizingDense}). */
    public boolean quantizesDense() {
        return quantizeDense && isa != Isa.JAVA;
    }

    public Isa isa() {
        return isa;
    }

    /** The Java float kernels (attention, norms, and the {@link Isa#JAVA} matrix products). */
    public CpuKernels java() {
        return java;
    }

    public String describe() {
        String int8 = "(int8 dot products for MXFP4/Q8_0"
                + (quantizesDense() ? " and float weights quantized to Q8_0" : "") + "), ";
        return switch (isa) {
            case JAVA -> java.describe();
            case AVX2 -> "native AVX2 kernels " + int8 + java.describe() + " for the rest";
            case AVXVNNI -> "native AVX-VNNI kernels " + int8 + java.describe() + " for the rest";
            case AVX512 -> "native AVX-512 VNNI kernels " + int8 + java.describe() + " for the rest";
        };
    }

    /**
     * The matrix for {@code w}: repacked into native memory from {@code arena} (quantized weights on a native
     * set), else the file's bytes read in place. Repacking runs on {@code pool}'s threads.
     */
    public CpuMatrix pack(WeightView w, CpuPool pool, Arena arena, JavaMatrix.Scratch scratch) {
        if (isa == Isa.JAVA) return new JavaMatrix(w, java, scratch);
        return switch (w.format()) {
            case MXFP4_OPENAI, MXFP4_GGML, Q8_0 -> TileMatrix.repack(w, this, pool, arena);
            case F32, F16, BF16 ->
                tiles(w)
                        ? TileMatrix.repack(w, this, pool, arena)
                        : w.colStride() == 1 ? new DenseMatrix(w, this) : new JavaMatrix(w, java, scratch);
        };
    }

    /** Whether {@link #pack} makes q8 tiles of the float weight {@code w}: rows in place of whole blocks of 32. */
    private boolean tiles(WeightView w) {
        return quantizesDense() && w.colStride() == 1 && w.cols() % 32 == 0;
    }

    /**
     * Whether the float dense weight {@code v} of model {@code m} is quantized to q8 tiles at load: when this set
     * quantizes dense weights and {@code v}'s rows are whole blocks, except the routers, which stay in float (F32 in
     * the ggml-org files too): their top-k is a discrete choice that rounding should not flip, and they are a few
     * thousandths of the bytes.
     */
    public boolean quantizesDense(WeightView v, ModelWeights m) {
        if (!v.format().isDense() || !tiles(v)) return false;
        for (var l : m.layers()) if (l.router() == v) return false;
        return true;
    }

    /**
     * {@code s} as a segment of the global scope. A downcall acquires and releases the session of every segment of
     * a shared arena it is given, an atomic update of one counter that all threads share; with thousands of kernel
     * calls per token from every worker that contention cost more than the kernels. The weights' arena still owns
     * and frees the memory; these views are used only while the weights are loaded. Heap segments need no view.
     */
    static MemorySegment unscoped(MemorySegment s) {
        return s.isNative() ? MemorySegment.ofAddress(s.address()).reinterpret(s.byteSize()) : s;
    }

    // ---- native entry points of this set ---------------------------------------------------------

    /** Rows {@code row0 .. row0+rows−1} of the input at {@code x[off + i·stride]} into q8 rows {@code row0 ..}. */
    void quantizeQ8(float[] x, int off, int stride, int row0, int rows, int cols, byte[] q, float[] d, int[] s) {
        int nb = cols / 32;
        MemorySegment xs = MemorySegment.ofArray(x).asSlice(4L * (off + (long) row0 * stride)),
                qs = MemorySegment.ofArray(q).asSlice((long) row0 * cols),
                ds = MemorySegment.ofArray(d).asSlice(4L * row0 * nb),
                ss = MemorySegment.ofArray(s).asSlice(4L * row0 * nb);
        switch (isa) {
            case AVX512 -> goss_cpu_h.goss_avx512_quantize_q8(xs, stride, rows, cols, qs, ds, ss);
            case AVXVNNI -> goss_cpu_h.goss_avxvnni_quantize_q8(xs, stride, rows, cols, qs, ds, ss);
            default -> goss_cpu_h.goss_avx2_quantize_q8(xs, stride, rows, cols, qs, ds, ss);
        }
    }

    /**
     * {@code goss_<isa>_mx4_gemm} or {@code _q8_gemm} of this set (goss_cpu.h): row groups {@code g0 .. g1−1} of a tiled
     * matrix times {@code T} q8 activation rows. Public for benchmarks/scripts/job-mix, which calls the kernels without a model.
     */
    public void tileGemm(
            boolean mx4,
            MemorySegment w,
            MemorySegment scales,
            long blocks,
            long rows,
            long g0,
            long g1,
            MemorySegment q,
            MemorySegment d,
            MemorySegment s,
            long T,
            MemorySegment out,
            long outStride,
            MemorySegment bias) {
        switch (isa) {
            case AVX512 -> {
                if (mx4)
                    goss_cpu_h.goss_avx512_mx4_gemm(w, scales, blocks, rows, g0, g1, q, d, s, T, out, outStride, bias);
                else goss_cpu_h.goss_avx512_q8_gemm(w, scales, blocks, rows, g0, g1, q, d, s, T, out, outStride, bias);
            }
            case AVXVNNI -> {
                if (mx4)
                    goss_cpu_h.goss_avxvnni_mx4_gemm(w, scales, blocks, rows, g0, g1, q, d, s, T, out, outStride, bias);
                else goss_cpu_h.goss_avxvnni_q8_gemm(w, scales, blocks, rows, g0, g1, q, d, s, T, out, outStride, bias);
            }
            default -> {
                if (mx4)
                    goss_cpu_h.goss_avx2_mx4_gemm(w, scales, blocks, rows, g0, g1, q, d, s, T, out, outStride, bias);
                else goss_cpu_h.goss_avx2_q8_gemm(w, scales, blocks, rows, g0, g1, q, d, s, T, out, outStride, bias);
            }
        }
    }

    void denseGemm(
            int format,
            MemorySegment w,
            long rowStride,
            long r0,
            long r1,
            long k,
            MemorySegment x,
            long xStride,
            long T,
            MemorySegment out,
            long outStride,
            MemorySegment bias) {
        switch (isa) {
            case AVX512 ->
                goss_cpu_h.goss_avx512_dense_gemm(format, w, rowStride, r0, r1, k, x, xStride, T, out, outStride, bias);
            case AVXVNNI ->
                goss_cpu_h.goss_avxvnni_dense_gemm(
                        format, w, rowStride, r0, r1, k, x, xStride, T, out, outStride, bias);
            default ->
                goss_cpu_h.goss_avx2_dense_gemm(format, w, rowStride, r0, r1, k, x, xStride, T, out, outStride, bias);
        }
    }

    // ---- attention (io.gossgpu.cpu.AttentionJob): an online softmax over runs of keys,
    // backend-cpu/kernels/attention.c ----

    /** Whether this set has native attention kernels. */
    public boolean nativeAttention() {
        return isa != Isa.JAVA;
    }

    /**
     * {@code goss_<isa>_attn_update} (goss_cpu.h): extends the softmax states with the keys of one run of slots, stored
     * as the KV type of ordinal {@code kvType} ({@code ks}, {@code vs}, {@code nb} and {@code chan0} for Q8_0's scales;
     * {@code scratch}: 128·hd floats the kernel decodes a typed cache into, {@link MemorySegment#NULL} for F32).
     */
    public void attnUpdate(
            MemorySegment q,
            long qStride,
            long nt,
            long group,
            long hd,
            long qpos0,
            long window,
            int kvType,
            MemorySegment kt,
            long ktBlock,
            MemorySegment v,
            long vStride,
            MemorySegment ks,
            MemorySegment vs,
            long nb,
            long chan0,
            long s0,
            long count,
            long kpos0,
            float scale,
            MemorySegment m,
            MemorySegment l,
            MemorySegment acc,
            MemorySegment scratch) {
        switch (isa) {
            case AVX512 ->
                goss_cpu_h.goss_avx512_attn_update(
                        q, qStride, nt, group, hd, qpos0, window, kvType, kt, ktBlock, v, vStride, ks, vs, nb, chan0,
                        s0, count, kpos0, scale, m, l, acc, scratch);
            case AVXVNNI ->
                goss_cpu_h.goss_avxvnni_attn_update(
                        q, qStride, nt, group, hd, qpos0, window, kvType, kt, ktBlock, v, vStride, ks, vs, nb, chan0,
                        s0, count, kpos0, scale, m, l, acc, scratch);
            default ->
                goss_cpu_h.goss_avx2_attn_update(
                        q, qStride, nt, group, hd, qpos0, window, kvType, kt, ktBlock, v, vStride, ks, vs, nb, chan0,
                        s0, count, kpos0, scale, m, l, acc, scratch);
        }
    }

    public void attnMerge(
            long rows,
            long hd,
            MemorySegment m,
            MemorySegment l,
            MemorySegment acc,
            MemorySegment m2,
            MemorySegment l2,
            MemorySegment acc2) {
        switch (isa) {
            case AVX512 -> goss_cpu_h.goss_avx512_attn_merge(rows, hd, m, l, acc, m2, l2, acc2);
            case AVXVNNI -> goss_cpu_h.goss_avxvnni_attn_merge(rows, hd, m, l, acc, m2, l2, acc2);
            default -> goss_cpu_h.goss_avx2_attn_merge(rows, hd, m, l, acc, m2, l2, acc2);
        }
    }

    public void attnFinish(
            long nt,
            long group,
            long hd,
            MemorySegment m,
            MemorySegment l,
            MemorySegment acc,
            MemorySegment sinks,
            MemorySegment out,
            long outStride) {
        switch (isa) {
            case AVX512 -> goss_cpu_h.goss_avx512_attn_finish(nt, group, hd, m, l, acc, sinks, out, outStride);
            case AVXVNNI -> goss_cpu_h.goss_avxvnni_attn_finish(nt, group, hd, m, l, acc, sinks, out, outStride);
            default -> goss_cpu_h.goss_avx2_attn_finish(nt, group, hd, m, l, acc, sinks, out, outStride);
        }
    }
}
