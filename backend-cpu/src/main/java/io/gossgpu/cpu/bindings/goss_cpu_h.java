package io.gossgpu.cpu.bindings;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;

/**
 * FFM bindings to {@code backend-cpu/kernels/goss_cpu.h}, in the style jextract generates (one class per header, C
 * names, a {@link FunctionDescriptor} and a downcall handle per function, pointers as {@link MemorySegment}).
 * Written by hand because jextract is not part of the build; keep it in step with the header
 * ({@link #GOSS_CPU_ABI_VERSION} is checked when the library is bound).
 *
 * <p>The handles are static finals, so the JIT can inline the downcalls. They are bound from the library that
 * {@link Library#path} names when this class initialises: set it (once) before touching anything else here.
 * Kernel calls are {@linkplain Linker.Option#critical critical}: they are short, never call back into Java,
 * and may take heap segments ({@code MemorySegment.ofArray}), so activations stay in Java arrays.
 */
@SuppressWarnings({"unused", "checkstyle:MethodName"})
public final class goss_cpu_h {
    private goss_cpu_h() {}

    public static final int GOSS_CPU_ABI_VERSION = 5;
    public static final int GOSS_CPU_AVX2 = 1;
    public static final int GOSS_CPU_AVX512 = 2;
    public static final int GOSS_CPU_AVXVNNI = 4;
    public static final int GOSS_CPU_KV_F32 = 0;
    public static final int GOSS_CPU_KV_F16 = 1;
    public static final int GOSS_CPU_KV_BF16 = 2;
    public static final int GOSS_CPU_KV_Q8_0 = 3;
    public static final int GOSS_CPU_FORMAT_F32 = 0;
    public static final int GOSS_CPU_FORMAT_F16 = 1;
    public static final int GOSS_CPU_FORMAT_BF16 = 2;

    public static final ValueLayout.OfInt C_INT = ValueLayout.JAVA_INT;
    public static final ValueLayout.OfLong C_LONG_LONG = ValueLayout.JAVA_LONG;
    public static final ValueLayout C_POINTER = ValueLayout.ADDRESS;

    /** Where the library is; a class of its own, so setting it does not initialise (bind) the bindings. */
    public static final class Library {
        private Library() {}

        /**
         * The library to bind; set once before {@link goss_cpu_h} initialises (see {@code NativeCpu}), and read only
         * then: a temporary copy is deleted once bound.
         */
        public static volatile Path path;
    }

    private static final Linker LINKER = Linker.nativeLinker();
    private static final SymbolLookup LOOKUP = SymbolLookup.libraryLookup(requirePath(), Arena.global());

    private static Path requirePath() {
        Path p = Library.path;
        if (p == null) throw new IllegalStateException("goss_cpu_h.Library.path is not set");
        return p;
    }

    private static MethodHandle bind(String name, FunctionDescriptor fd, boolean critical) {
        MemorySegment sym =
                LOOKUP.find(name).orElseThrow(() -> new UnsatisfiedLinkError("libgoss_cpu has no symbol " + name));
        return critical ? LINKER.downcallHandle(sym, fd, Linker.Option.critical(true)) : LINKER.downcallHandle(sym, fd);
    }

    private static final ValueLayout P = C_POINTER, L = C_LONG_LONG, I = C_INT;

    private static final FunctionDescriptor QUANTIZE_Q8 = FunctionDescriptor.ofVoid(P, L, L, L, P, P, P);
    private static final FunctionDescriptor TILE_GEMM =
            FunctionDescriptor.ofVoid(P, P, L, L, L, L, P, P, P, L, P, L, P);
    private static final FunctionDescriptor DENSE_GEMM = FunctionDescriptor.ofVoid(I, P, L, L, L, L, P, L, L, P, L, P);
    private static final ValueLayout F = ValueLayout.JAVA_FLOAT;
    private static final FunctionDescriptor ATTN_UPDATE =
            FunctionDescriptor.ofVoid(P, L, L, L, L, L, L, I, P, L, P, L, P, P, L, L, L, L, L, F, P, P, P, P);
    private static final FunctionDescriptor ATTN_MERGE = FunctionDescriptor.ofVoid(L, L, P, P, P, P, P, P);
    private static final FunctionDescriptor ATTN_FINISH = FunctionDescriptor.ofVoid(L, L, L, P, P, P, P, P, L);

    private static final MethodHandle abi_version = bind("goss_cpu_abi_version", FunctionDescriptor.of(I), false);
    private static final MethodHandle features = bind("goss_cpu_features", FunctionDescriptor.of(I), false);
    private static final MethodHandle alloc = bind("goss_cpu_alloc", FunctionDescriptor.of(P, L), false);
    private static final MethodHandle free = bind("goss_cpu_free", FunctionDescriptor.ofVoid(P, L), false);
    private static final MethodHandle prefault = bind("goss_cpu_prefault", FunctionDescriptor.ofVoid(P, L), false);
    private static final MethodHandle release = bind("goss_cpu_release", FunctionDescriptor.ofVoid(P, L), false);
    private static final MethodHandle stream_probe =
            bind("goss_cpu_stream_probe", FunctionDescriptor.of(ValueLayout.JAVA_DOUBLE, I, L, I, P), false);
    private static final MethodHandle probe_open = bind("goss_cpu_probe_open", FunctionDescriptor.of(P, I, L), false);
    private static final MethodHandle probe_pass =
            bind("goss_cpu_probe_pass", FunctionDescriptor.of(ValueLayout.JAVA_DOUBLE, P, I), false);
    private static final MethodHandle probe_close = bind("goss_cpu_probe_close", FunctionDescriptor.ofVoid(P), false);
    private static final MethodHandle repack_mx4_openai =
            bind("goss_cpu_repack_mx4_openai", FunctionDescriptor.ofVoid(P, L, P, L, L, L, L, L, P, P), true);
    private static final MethodHandle repack_mx4_ggml =
            bind("goss_cpu_repack_mx4_ggml", FunctionDescriptor.ofVoid(P, L, L, L, L, L, P, P), true);
    private static final MethodHandle repack_q8_0 =
            bind("goss_cpu_repack_q8_0", FunctionDescriptor.ofVoid(P, L, L, L, L, L, P, P), true);

    private static final MethodHandle repack_float_q8 =
            bind("goss_cpu_repack_float_q8", FunctionDescriptor.ofVoid(I, P, L, L, L, L, L, P, P), true);

    private static final MethodHandle avx2_quantize_q8 = bind("goss_avx2_quantize_q8", QUANTIZE_Q8, true);
    private static final MethodHandle avx2_mx4_gemm = bind("goss_avx2_mx4_gemm", TILE_GEMM, true);
    private static final MethodHandle avx2_q8_gemm = bind("goss_avx2_q8_gemm", TILE_GEMM, true);
    private static final MethodHandle avx2_dense_gemm = bind("goss_avx2_dense_gemm", DENSE_GEMM, true);
    private static final MethodHandle avxvnni_quantize_q8 = bind("goss_avxvnni_quantize_q8", QUANTIZE_Q8, true);
    private static final MethodHandle avxvnni_mx4_gemm = bind("goss_avxvnni_mx4_gemm", TILE_GEMM, true);
    private static final MethodHandle avxvnni_q8_gemm = bind("goss_avxvnni_q8_gemm", TILE_GEMM, true);
    private static final MethodHandle avxvnni_dense_gemm = bind("goss_avxvnni_dense_gemm", DENSE_GEMM, true);
    private static final MethodHandle avxvnni_attn_update = bind("goss_avxvnni_attn_update", ATTN_UPDATE, true);
    private static final MethodHandle avxvnni_attn_merge = bind("goss_avxvnni_attn_merge", ATTN_MERGE, true);
    private static final MethodHandle avxvnni_attn_finish = bind("goss_avxvnni_attn_finish", ATTN_FINISH, true);
    private static final MethodHandle avx512_quantize_q8 = bind("goss_avx512_quantize_q8", QUANTIZE_Q8, true);
    private static final MethodHandle avx512_mx4_gemm = bind("goss_avx512_mx4_gemm", TILE_GEMM, true);
    private static final MethodHandle avx512_q8_gemm = bind("goss_avx512_q8_gemm", TILE_GEMM, true);
    private static final MethodHandle avx512_dense_gemm = bind("goss_avx512_dense_gemm", DENSE_GEMM, true);
    private static final MethodHandle avx2_attn_update = bind("goss_avx2_attn_update", ATTN_UPDATE, true);
    private static final MethodHandle avx2_attn_merge = bind("goss_avx2_attn_merge", ATTN_MERGE, true);
    private static final MethodHandle avx2_attn_finish = bind("goss_avx2_attn_finish", ATTN_FINISH, true);
    private static final MethodHandle avx512_attn_update = bind("goss_avx512_attn_update", ATTN_UPDATE, true);
    private static final MethodHandle avx512_attn_merge = bind("goss_avx512_attn_merge", ATTN_MERGE, true);
    private static final MethodHandle avx512_attn_finish = bind("goss_avx512_attn_finish", ATTN_FINISH, true);

    static {
        int v = goss_cpu_abi_version();
        if (v != GOSS_CPU_ABI_VERSION)
            throw new IllegalStateException(
                    "libgoss_cpu ABI version " + v + ", these bindings need " + GOSS_CPU_ABI_VERSION);
    }

    private static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) return r;
        if (t instanceof Error e) throw e;
        return new IllegalStateException(t);
    }

    public static int goss_cpu_abi_version() {
        try {
            return (int) abi_version.invokeExact();
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int goss_cpu_features() {
        try {
            return (int) features.invokeExact();
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static MemorySegment goss_cpu_alloc(long bytes) {
        try {
            return (MemorySegment) alloc.invokeExact(bytes);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void goss_cpu_prefault(MemorySegment p, long bytes) {
        try {
            prefault.invokeExact(p, bytes);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void goss_cpu_release(MemorySegment p, long bytes) {
        try {
            release.invokeExact(p, bytes);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** See goss_cpu.h: the best pass's GB/s of a plain C streaming read, negative when it could not run. */
    public static double goss_cpu_stream_probe(int threads, long bytes, int passes, MemorySegment method) {
        try {
            return (double) stream_probe.invokeExact(threads, bytes, passes, method);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static MemorySegment goss_cpu_probe_open(int threads, long bytes) {
        try {
            return (MemorySegment) probe_open.invokeExact(threads, bytes);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static double goss_cpu_probe_pass(MemorySegment probe, int passes) {
        try {
            return (double) probe_pass.invokeExact(probe, passes);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void goss_cpu_probe_close(MemorySegment probe) {
        try {
            probe_close.invokeExact(probe);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void goss_cpu_free(MemorySegment p, long bytes) {
        try {
            free.invokeExact(p, bytes);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void goss_cpu_repack_mx4_openai(
            MemorySegment codes,
            long codeRowStride,
            MemorySegment scales,
            long scaleRowStride,
            long rows,
            long blocks,
            long g0,
            long g1,
            MemorySegment outCodes,
            MemorySegment outScales) {
        try {
            repack_mx4_openai.invokeExact(
                    codes, codeRowStride, scales, scaleRowStride, rows, blocks, g0, g1, outCodes, outScales);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void goss_cpu_repack_mx4_ggml(
            MemorySegment src,
            long rowStride,
            long rows,
            long blocks,
            long g0,
            long g1,
            MemorySegment outCodes,
            MemorySegment outScales) {
        try {
            repack_mx4_ggml.invokeExact(src, rowStride, rows, blocks, g0, g1, outCodes, outScales);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void goss_cpu_repack_q8_0(
            MemorySegment src,
            long rowStride,
            long rows,
            long blocks,
            long g0,
            long g1,
            MemorySegment outQ,
            MemorySegment outScales) {
        try {
            repack_q8_0.invokeExact(src, rowStride, rows, blocks, g0, g1, outQ, outScales);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void goss_cpu_repack_float_q8(
            int format,
            MemorySegment src,
            long rowStride,
            long rows,
            long blocks,
            long g0,
            long g1,
            MemorySegment outQ,
            MemorySegment outScales) {
        try {
            repack_float_q8.invokeExact(format, src, rowStride, rows, blocks, g0, g1, outQ, outScales);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void goss_avx2_quantize_q8(
            MemorySegment x, long xStride, long n, long k, MemorySegment q, MemorySegment d, MemorySegment s) {
        try {
            avx2_quantize_q8.invokeExact(x, xStride, n, k, q, d, s);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void goss_avx512_quantize_q8(
            MemorySegment x, long xStride, long n, long k, MemorySegment q, MemorySegment d, MemorySegment s) {
        try {
            avx512_quantize_q8.invokeExact(x, xStride, n, k, q, d, s);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void goss_avx2_mx4_gemm(
            MemorySegment codes,
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
        try {
            avx2_mx4_gemm.invokeExact(codes, scales, blocks, rows, g0, g1, q, d, s, T, out, outStride, bias);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void goss_avx512_mx4_gemm(
            MemorySegment codes,
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
        try {
            avx512_mx4_gemm.invokeExact(codes, scales, blocks, rows, g0, g1, q, d, s, T, out, outStride, bias);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void goss_avx2_q8_gemm(
            MemorySegment qw,
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
        try {
            avx2_q8_gemm.invokeExact(qw, scales, blocks, rows, g0, g1, q, d, s, T, out, outStride, bias);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void goss_avx512_q8_gemm(
            MemorySegment qw,
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
        try {
            avx512_q8_gemm.invokeExact(qw, scales, blocks, rows, g0, g1, q, d, s, T, out, outStride, bias);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void goss_avx2_dense_gemm(
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
        try {
            avx2_dense_gemm.invokeExact(format, w, rowStride, r0, r1, k, x, xStride, T, out, outStride, bias);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void goss_avx512_dense_gemm(
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
        try {
            avx512_dense_gemm.invokeExact(format, w, rowStride, r0, r1, k, x, xStride, T, out, outStride, bias);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void goss_avx2_attn_update(
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
        try {
            avx2_attn_update.invokeExact(
                    q, qStride, nt, group, hd, qpos0, window, kvType, kt, ktBlock, v, vStride, ks, vs, nb, chan0, s0,
                    count, kpos0, scale, m, l, acc, scratch);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void goss_avx2_attn_merge(
            long rows,
            long hd,
            MemorySegment m,
            MemorySegment l,
            MemorySegment acc,
            MemorySegment m2,
            MemorySegment l2,
            MemorySegment acc2) {
        try {
            avx2_attn_merge.invokeExact(rows, hd, m, l, acc, m2, l2, acc2);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void goss_avx2_attn_finish(
            long nt,
            long group,
            long hd,
            MemorySegment m,
            MemorySegment l,
            MemorySegment acc,
            MemorySegment sinks,
            MemorySegment out,
            long outStride) {
        try {
            avx2_attn_finish.invokeExact(nt, group, hd, m, l, acc, sinks, out, outStride);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void goss_avx512_attn_update(
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
        try {
            avx512_attn_update.invokeExact(
                    q, qStride, nt, group, hd, qpos0, window, kvType, kt, ktBlock, v, vStride, ks, vs, nb, chan0, s0,
                    count, kpos0, scale, m, l, acc, scratch);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void goss_avx512_attn_merge(
            long rows,
            long hd,
            MemorySegment m,
            MemorySegment l,
            MemorySegment acc,
            MemorySegment m2,
            MemorySegment l2,
            MemorySegment acc2) {
        try {
            avx512_attn_merge.invokeExact(rows, hd, m, l, acc, m2, l2, acc2);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void goss_avx512_attn_finish(
            long nt,
            long group,
            long hd,
            MemorySegment m,
            MemorySegment l,
            MemorySegment acc,
            MemorySegment sinks,
            MemorySegment out,
            long outStride) {
        try {
            avx512_attn_finish.invokeExact(nt, group, hd, m, l, acc, sinks, out, outStride);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void goss_avxvnni_quantize_q8(
            MemorySegment x, long xStride, long n, long k, MemorySegment q, MemorySegment d, MemorySegment s) {
        try {
            avxvnni_quantize_q8.invokeExact(x, xStride, n, k, q, d, s);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void goss_avxvnni_mx4_gemm(
            MemorySegment codes,
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
        try {
            avxvnni_mx4_gemm.invokeExact(codes, scales, blocks, rows, g0, g1, q, d, s, T, out, outStride, bias);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void goss_avxvnni_q8_gemm(
            MemorySegment qw,
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
        try {
            avxvnni_q8_gemm.invokeExact(qw, scales, blocks, rows, g0, g1, q, d, s, T, out, outStride, bias);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void goss_avxvnni_dense_gemm(
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
        try {
            avxvnni_dense_gemm.invokeExact(format, w, rowStride, r0, r1, k, x, xStride, T, out, outStride, bias);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void goss_avxvnni_attn_update(
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
        try {
            avxvnni_attn_update.invokeExact(
                    q, qStride, nt, group, hd, qpos0, window, kvType, kt, ktBlock, v, vStride, ks, vs, nb, chan0, s0,
                    count, kpos0, scale, m, l, acc, scratch);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void goss_avxvnni_attn_merge(
            long rows,
            long hd,
            MemorySegment m,
            MemorySegment l,
            MemorySegment acc,
            MemorySegment m2,
            MemorySegment l2,
            MemorySegment acc2) {
        try {
            avxvnni_attn_merge.invokeExact(rows, hd, m, l, acc, m2, l2, acc2);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void goss_avxvnni_attn_finish(
            long nt,
            long group,
            long hd,
            MemorySegment m,
            MemorySegment l,
            MemorySegment acc,
            MemorySegment sinks,
            MemorySegment out,
            long outStride) {
        try {
            avxvnni_attn_finish.invokeExact(nt, group, hd, m, l, acc, sinks, out, outStride);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }
}
