package io.gossgpu.cpu;

import io.gossgpu.GossException;
import io.gossgpu.backend.DeviceWeights;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.backend.Rope;
import io.gossgpu.cpu.bindings.goss_cpu_h;
import io.gossgpu.cpu.compute.CpuPool;
import io.gossgpu.cpu.matmul.CpuMatrix;
import io.gossgpu.cpu.matmul.JavaMatrix;
import io.gossgpu.cpu.matmul.KernelSet;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.model.WeightFormat;
import io.gossgpu.model.WeightView;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;

/**
 * A model's weights as the cpu backend holds them: vectors (norms, biases, sinks; expert biases
 * expert-major) decoded to float[], every matrix as the {@link CpuMatrix} its {@link KernelSet} multiplies
 * (quantized ones repacked into native memory owned by this object's arena, the rest read in place), the
 * embedding read in place (one row per token), and the RoPE table.
 */
final class CpuWeights implements LoadedWeights {
    final ModelWeights model;
    final ModelConfig config;
    final DeviceWeights<float[], CpuMatrix, CpuMatrix> m;
    private final Arena arena = Arena.ofShared();
    private final List<CpuMatrix> matrices = new ArrayList<>();
    /** The float weights held as Q8_0 tiles (by identity). */
    private final Set<WeightView> quantized = Collections.newSetFromMap(new IdentityHashMap<>());

    float[] rope = new float[0]; // cos/sin table rows for positions [0, ropePositions)
    int ropePositions;

    /** @param availableBytes the memory Linux reports available ({@link MemInfo}), −1 if unknown */
    CpuWeights(ModelWeights w, KernelSet kernels, CpuPool pool, JavaMatrix.Scratch scratch, long availableBytes) {
        model = w;
        config = w.config();
        boolean releaseSource = releasesSource(repackBytes(w, kernels), availableBytes);
        try {
            m = new DeviceWeights<>(w, new DeviceWeights.Uploader<>() {
                @Override
                public float[] vector(WeightView v) {
                    return v.dequantizeAll();
                }

                @Override
                public CpuMatrix dense(WeightView v) {
                    // the embedding is read one row per token, in place: nothing to repack
                    if (v == w.embedding() && v != w.unembedding()) return null;
                    KernelSet k = kernelsFor(v, w, kernels);
                    if (v.format().isDense() && k.quantizesDense()) quantized.add(v);
                    return keep(k.pack(v, pool, arena, scratch), v, releaseSource);
                }

                @Override
                public CpuMatrix experts(WeightView v) {
                    return keep(kernels.pack(v, pool, arena, scratch), v, releaseSource);
                }
            });
        } catch (RuntimeException | Error e) {
            arena.close();
            throw e;
        }
    }

    /** Memory left free beside the file and its repacked copy, below which the file's pages are dropped once copied. */
    static final long RELEASE_HEADROOM = 2L << 30;

    /**
     * Whether each matrix's file pages are dropped from the page cache once repacked ({@code copyBytes} of copies, about
     * the file's weight bytes). They stay cached otherwise; when the file and its copy would not both fit with room to
     * spare, keeping them costs the copy its huge pages and decode its speed (goss_cpu_release says why). A model that
     * fits twice keeps them, so that loading it again reads memory, not the disk.
     */
    static boolean releasesSource(long copyBytes, long availableBytes) {
        return copyBytes > 0 && availableBytes > 0 && 2 * copyBytes + RELEASE_HEADROOM > availableBytes;
    }

    private CpuMatrix keep(CpuMatrix x, WeightView source, boolean releaseSource) {
        matrices.add(x);
        if (releaseSource && x.ownedBytes() > 0) {
            release(
                    source.data(),
                    source.rowOffset(0, 0),
                    source.rowOffset(source.experts() - 1, source.rows() - 1) + source.rowBytes());
            if (source.format() == WeightFormat.MXFP4_OPENAI)
                release(
                        source.scales(),
                        source.scaleRowOffset(0, 0),
                        source.scaleRowOffset(source.experts() - 1, source.rows() - 1) + source.cols() / 32);
        }
        return x;
    }

    /** Drops bytes {@code from .. to−1} of a file mapping from the page cache (nothing for heap memory). */
    private static void release(MemorySegment s, long from, long to) {
        if (s.isNative() && to > from) goss_cpu_h.goss_cpu_release(s.asSlice(from, to - from), to - from);
    }

    /** Native bytes the matrices of {@code w} would take under {@code kernels} (repacked copies). */
    static long repackBytes(ModelWeights w, KernelSet kernels) {
        if (kernels.isa() == KernelSet.Isa.JAVA) return 0;
        return DeviceWeights.bytes(
                w,
                v -> 0,
                v -> v == w.embedding() && v != w.unembedding() ? 0 : tileBytes(v, kernelsFor(v, w, kernels)),
                v -> tileBytes(v, kernels));
    }

    /** The kernels for dense weight {@code v}: float ones for the float weights that stay float ({@link KernelSet#quantizesDense}). */
    private static KernelSet kernelsFor(WeightView v, ModelWeights w, KernelSet kernels) {
        return !v.format().isDense() || kernels.quantizesDense(v, w) ? kernels : kernels.quantizingDense(false);
    }

    private static long tileBytes(WeightView v, KernelSet kernels) {
        long groups = (v.rows() + 15) / 16, blocks = v.cols() / 32;
        return switch (v.format()) {
            case MXFP4_GGML, MXFP4_OPENAI -> v.experts() * groups * blocks * (256 + 16);
            case Q8_0 -> v.experts() * groups * blocks * (512 + 32);
            case F32, F16, BF16 -> kernels.quantizesDense() ? v.experts() * groups * blocks * (512 + 32) : 0;
            default -> 0;
        };
    }

    /** Fails with sizes when the repacked weights would not fit in the memory Linux reports available. */
    static void checkMemory(ModelWeights w, KernelSet kernels) {
        long need = repackBytes(w, kernels);
        long avail = MemInfo.availableBytes();
        if (need > 0 && avail > 0 && need > avail)
            throw new GossException("the native cpu kernels repack the weights into " + KvCacheSpec.humanBytes(need)
                    + " of memory, but only " + KvCacheSpec.humanBytes(avail) + " is available; free memory, or set "
                    + "GOSS_CPU_KERNELS=java to read the file in place (slower)");
    }

    /** Makes the RoPE table cover positions {@code < end} (grows by doubling; amortized, not per token). */
    void ensureRope(int end) {
        if (end <= ropePositions) return;
        int n = Math.max(end, Math.max(64, ropePositions * 2));
        int hd = config.headDim();
        float[] more = Rope.cosSinTable(config, ropePositions, n - ropePositions);
        float[] t = Arrays.copyOf(rope, n * hd);
        System.arraycopy(more, 0, t, ropePositions * hd, more.length);
        rope = t;
        ropePositions = n;
    }

    @Override
    public ModelConfig config() {
        return config;
    }

    /** A float weight quantized at load is read as Q8_0: 34 bytes per 32 values. */
    @Override
    public long rowBytes(WeightView v) {
        return quantized.contains(v) ? WeightFormat.Q8_0.rowBytes(v.cols()) : v.rowBytes();
    }

    /** Native memory the repacked matrices hold, in bytes. */
    long ownedBytes() {
        long b = 0;
        for (CpuMatrix x : matrices) b += x.ownedBytes();
        return b;
    }

    @Override
    public void close() {
        matrices.forEach(CpuMatrix::close);
        arena.close();
    }
}
