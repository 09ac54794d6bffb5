package io.gossgpu.opencl;

import io.gossgpu.GossException;
import io.gossgpu.backend.DeviceWeights;
import io.gossgpu.device.DensePipeline.Matrix;
import io.gossgpu.device.Mxfp4Repack;
import io.gossgpu.device.PipelineWeights;
import io.gossgpu.device.UploadedWeights;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.model.WeightFormat;
import io.gossgpu.model.WeightView;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A model on an OpenCL device: dense matrices in their file format (F32/F16/BF16/Q8_0 rows, gathered contiguous;
 * strided values decoded to F32), MXFP4 experts as OpenAI's codes + scales (ggml
 * blocks repacked at upload by {@link Mxfp4Repack}), vectors decoded to F32.
 */
final class OpenClWeights extends UploadedWeights<Long, Long>
        implements DeviceWeights.Uploader<Long, Matrix<Long>, OpenClWeights.Mx> {
    /** Element formats as dense.cl and embed.cl number them. */
    static final int FMT_F32 = 0, FMT_F16 = 1, FMT_BF16 = 2, FMT_Q8_0 = 3;

    /** MXFP4 expert matrices in OpenAI's layout: codes {@code [E][rows][cols/2]}, scales {@code [E][rows][cols/32]}. */
    record Mx(long codes, long scales) {}

    private final OpenClDriver driver;
    final DeviceWeights<Long, Matrix<Long>, Mx> tensors;
    private final PipelineWeights<Long, Matrix<Long>, Mx> forPipelines;

    OpenClWeights(OpenClBackend backend, OpenClDriver driver, ModelWeights m) {
        super(backend, m.config());
        this.driver = driver;
        tensors = uploadAll(m, this);
        forPipelines = new PipelineWeights<>(tensors, d -> d, Mx::codes, Mx::scales);
    }

    @Override
    public PipelineWeights<Long, Matrix<Long>, Mx> forPipelines() {
        return forPipelines;
    }

    /** What the upload allocates for {@code m}: matrices in their format, vectors as F32. */
    static long deviceBytes(ModelWeights m) {
        return DeviceWeights.bytes(m, DeviceWeights::f32Bytes, OpenClWeights::matrixBytes, OpenClWeights::matrixBytes);
    }

    private static long matrixBytes(WeightView v) {
        long rows = (long) v.experts() * v.rows();
        if (v.format().isDense() && v.colStride() != 1) return 4L * rows * v.cols();
        long b = rows * v.rowBytes();
        if (v.format() == WeightFormat.MXFP4_OPENAI) b += rows * (v.cols() / 32);
        return b;
    }

    private long upload(float[] values, String what) {
        long mem = allocate(4L * values.length, what);
        driver.write(mem, 0, MemorySegment.ofArray(values));
        return mem;
    }

    @Override
    public Long vector(WeightView v) {
        return upload(v.dequantizeAll(), v.name());
    }

    @Override
    public Matrix<Long> dense(WeightView v) {
        if (v.experts() != 1) throw new GossException(v.name() + ": a dense matrix with experts is not supported");
        WeightFormat f = v.format();
        if (!f.isDense() && f != WeightFormat.Q8_0)
            throw new GossException(
                    v.name() + ": the opencl backend takes dense matrices as F32, F16, BF16 or Q8_0, not " + f);
        if (f.isDense() && v.colStride() != 1) // strided values: decode to F32 rows
        return matrix(upload(v.dequantizeAll(), v.name()), FMT_F32, 4L * v.cols(), v);
        int fmt = switch (f) {
            case F32 -> FMT_F32;
            case F16 -> FMT_F16;
            case BF16 -> FMT_BF16;
            default -> FMT_Q8_0;
        };
        long rowBytes = v.rowBytes();
        long mem =
                uploadRows(v.data(), v.rows(), 1, rowBytes, v::rowOffset, v.name(), v.isContiguous() ? v.offset() : -1);
        return matrix(mem, fmt, rowBytes, v);
    }

    /** A dense matrix as dense.cl and embed.cl read it: {@code v}'s rows of {@code rowBytes} in format {@code fmt} (no scales). */
    private static Matrix<Long> matrix(long mem, int fmt, long rowBytes, WeightView v) {
        return new Matrix<>(mem, 0, null, null, fmt, rowBytes, v.rows(), v.cols());
    }

    @Override
    public Mx experts(WeightView v) {
        WeightFormat f = v.format();
        if (f != WeightFormat.MXFP4_OPENAI && f != WeightFormat.MXFP4_GGML)
            throw new GossException(v.name() + ": the opencl backend takes MoE experts as MXFP4, not " + f);
        if (v.cols() % 32 != 0)
            throw new GossException(v.name() + ": MXFP4 rows of " + v.cols() + " values are not whole 32-value blocks");
        long sRow = v.cols() / 32;
        if (f == WeightFormat.MXFP4_GGML) {
            long rows = (long) v.rows() * v.experts();
            long codes = allocate(16 * sRow * rows, v.name()), scales = allocate(sRow * rows, v.name() + " scales");
            Mxfp4Repack.ggmlExperts(v, (c, cAt, s, sAt) -> {
                driver.write(codes, cAt, c);
                driver.write(scales, sAt, s);
            });
            return new Mx(codes, scales);
        }
        long codes = uploadRows(
                v.data(),
                v.rows(),
                v.experts(),
                v.rowBytes(),
                v::rowOffset,
                v.name(),
                v.isContiguous() ? v.offset() : -1);
        boolean contiguous =
                v.scaleRowStride() == sRow && (v.experts() == 1 || v.scaleExpertStride() == sRow * v.rows());
        long scales = uploadRows(
                v.scales(),
                v.rows(),
                v.experts(),
                sRow,
                v::scaleRowOffset,
                v.name() + " scales",
                contiguous ? v.scaleOffset() : -1);
        return new Mx(codes, scales);
    }

    interface RowOffset {
        long at(int expert, int row);
    }

    /** Gathers {@code experts × rows} rows of {@code rowBytes} (or takes one slice when contiguous) and uploads them. */
    private long uploadRows(
            MemorySegment src,
            int rows,
            int experts,
            long rowBytes,
            RowOffset off,
            String what,
            long contiguousOffset) {
        long total = rowBytes * rows * experts;
        long mem = allocate(total, what);
        if (contiguousOffset >= 0 && src.isNative()) {
            driver.write(mem, 0, src.asSlice(contiguousOffset, total));
            return mem;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment dst = arena.allocate(total, 64);
            long pos = 0;
            for (int e = 0; e < experts; e++)
                for (int r = 0; r < rows; r++) {
                    MemorySegment.copy(src, off.at(e, r), dst, pos, rowBytes);
                    pos += rowBytes;
                }
            driver.write(mem, 0, dst);
        }
        return mem;
    }
}
