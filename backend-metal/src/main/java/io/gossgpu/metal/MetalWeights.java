package io.gossgpu.metal;

import io.gossgpu.GossException;
import io.gossgpu.backend.DeviceWeights;
import io.gossgpu.device.DensePipeline.Matrix;
import io.gossgpu.device.Mxfp4Repack;
import io.gossgpu.device.PipelineWeights;
import io.gossgpu.device.UploadedWeights;
import io.gossgpu.metal.MetalDriver.Buf;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.model.WeightFormat;
import io.gossgpu.model.WeightView;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A model on the Metal device, repacked at load: dense BF16 matrices kept as BF16, other dense formats (F32, F16,
 * Q8_0) as F32; contiguous F32/BF16 matrices of a memory-mapped checkpoint used in place (no copy) unless
 * {@code GOSS_METAL_NO_COPY=0}; vectors as F32; MXFP4 experts (either byte layout) as codes {@code [E][rows][cols/2]}
 * (low nibble = even element) plus E8M0 scales {@code [E][rows][cols/32]}.
 */
final class MetalWeights extends UploadedWeights<Buf, Buf>
        implements DeviceWeights.Uploader<Buf, Matrix<Buf>, MetalWeights.Experts> {
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED;

    /**
     * A dense matrix as the kernels read it: fmt 0 = F32, 1 = BF16, row-major {@code rows × cols}, starting at byte
     * {@code offset} of {@code buf} (non-zero when {@code buf} wraps the memory-mapped checkpoint).
     */
    private static Matrix<Buf> dense(Buf buf, long offset, int fmt, int rows, int cols) {
        return new Matrix<>(buf, offset, null, null, fmt, 0, rows, cols);
    }

    /** MXFP4 expert weights repacked: codes {@code [E][rows][cols/2]}, scales {@code [E][rows][cols/32]}. */
    record Experts(Buf codes, Buf scales, int experts, int rows, int cols) {}

    private final MetalDriver driver;
    private final boolean noCopy;
    /** Bytes of weights used in place from memory-mapped checkpoints (not copied). */
    long wrappedBytes;

    final DeviceWeights<Buf, Matrix<Buf>, Experts> tensors;
    private final PipelineWeights<Buf, Matrix<Buf>, Experts> forPipelines;

    MetalWeights(MetalBackend backend, MetalDriver driver, ModelWeights m, boolean noCopy) {
        super(backend, m.config());
        this.driver = driver;
        this.noCopy = noCopy;
        ModelConfig c = m.config();
        if (c.numExperts() > 256)
            throw new GossException("metal: at most 256 experts are supported, the model has " + c.numExperts());
        if (c.expertsPerToken() > c.numExperts())
            throw new GossException("metal: experts_per_token exceeds num_experts");
        if (c.headDim() > 256 || c.headDim() % 2 != 0)
            throw new GossException("metal: head_dim must be even and at most 256, got " + c.headDim());
        tensors = uploadAll(m, this);
        forPipelines = new PipelineWeights<>(tensors, d -> d, Experts::codes, Experts::scales);
    }

    @Override
    public PipelineWeights<Buf, Matrix<Buf>, Experts> forPipelines() {
        return forPipelines;
    }

    /** The bytes the upload allocates at most (matrices wrapped in place take their pages instead of a copy). */
    static long deviceBytes(ModelWeights m) {
        return DeviceWeights.bytes(
                m,
                DeviceWeights::f32Bytes,
                v -> (v.format() == WeightFormat.BF16 ? 2L : 4L) * v.rows() * v.cols(),
                v -> (long) v.experts() * v.rows() * (v.cols() / 2 + v.cols() / 32));
    }

    /** Every value as F32, expert-major (biases and scales). */
    @Override
    public Buf vector(WeightView v) {
        float[] f = v.dequantizeAll();
        Buf b = allocate(4L * f.length, v.name());
        MemorySegment.copy(f, 0, b.host, F32, 0, f.length);
        return b;
    }

    @Override
    public Matrix<Buf> dense(WeightView v) {
        if (v.experts() != 1) throw new GossException("metal: " + v.name() + ": expected a matrix");
        int rows = v.rows(), cols = v.cols();
        Matrix<Buf> mapped = noCopy ? wrapMapped(v) : null;
        if (mapped != null) return mapped;
        if (v.format() == WeightFormat.BF16) {
            Buf b = allocate(2L * rows * cols, v.name());
            for (int r = 0; r < rows; r++) {
                long src = v.rowOffset(0, r), dst = 2L * r * cols;
                if (v.colStride() == 1) MemorySegment.copy(v.data(), src, b.host, dst, 2L * cols);
                else
                    for (int c = 0; c < cols; c++)
                        b.host.set(
                                ValueLayout.JAVA_SHORT_UNALIGNED,
                                dst + 2L * c,
                                v.data().get(ValueLayout.JAVA_SHORT_UNALIGNED, src + 2L * c * v.colStride()));
            }
            return dense(b, 0, 1, rows, cols);
        }
        Buf b = allocate(4L * rows * cols, v.name());
        float[] row = new float[cols];
        for (int r = 0; r < rows; r++) {
            v.dequantizeRow(0, r, row, 0);
            MemorySegment.copy(row, 0, b.host, F32, 4L * r * cols, cols);
        }
        return dense(b, 0, 0, rows, cols);
    }

    /** A contiguous F32/BF16 matrix inside a memory-mapped checkpoint, wrapped without copying, or null to copy it. */
    private Matrix<Buf> wrapMapped(WeightView v) {
        int fmt = v.format() == WeightFormat.BF16 ? 1 : v.format() == WeightFormat.F32 ? 0 : -1;
        if (fmt < 0 || !v.isContiguous() || !v.data().isNative() || !v.data().isMapped()) return null;
        long addr = v.data().address() + v.rowOffset(0, 0);
        if (addr % v.format().elementBytes() != 0) return null;
        long len = v.rowBytes() * v.rows();
        Buf b = driver.wrap(addr, len);
        if (b == null) return null;
        own(b);
        wrappedBytes += len;
        long base = addr & -io.gossgpu.metal.bindings.goss_metal_h.goss_mtl_page_size();
        return dense(b, addr - base, fmt, v.rows(), v.cols());
    }

    @Override
    public Experts experts(WeightView v) {
        int e = v.experts(), rows = v.rows(), cols = v.cols(), groups = cols / 32;
        if (v.format() != WeightFormat.MXFP4_OPENAI && v.format() != WeightFormat.MXFP4_GGML)
            throw new GossException("metal: expert weight " + v.name() + " is " + v.format()
                    + "; the Metal MoE kernels take MXFP4 (OpenAI or GGML layout) only so far");
        Buf codes = allocate((long) e * rows * (cols / 2), v.name() + " codes");
        Buf scales = allocate((long) e * rows * groups, v.name() + " scales");
        if (v.format() == WeightFormat.MXFP4_GGML) {
            Mxfp4Repack.ggmlExperts(v, (c, cAt, s, sAt) -> {
                MemorySegment.copy(c, 0, codes.host, cAt, c.byteSize());
                MemorySegment.copy(s, 0, scales.host, sAt, s.byteSize());
            });
            return new Experts(codes, scales, e, rows, cols);
        }
        for (int x = 0; x < e; x++)
            for (int r = 0; r < rows; r++) {
                long dstRow = ((long) x * rows + r);
                MemorySegment.copy(v.data(), v.rowOffset(x, r), codes.host, dstRow * (cols / 2), cols / 2);
                MemorySegment.copy(v.scales(), v.scaleRowOffset(x, r), scales.host, dstRow * groups, groups);
            }
        return new Experts(codes, scales, e, rows, cols);
    }
}
