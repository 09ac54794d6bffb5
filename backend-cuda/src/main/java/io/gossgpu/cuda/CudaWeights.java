package io.gossgpu.cuda;

import io.gossgpu.GossException;
import io.gossgpu.backend.DenseKind;
import io.gossgpu.backend.DeviceWeights;
import io.gossgpu.device.DensePipeline;
import io.gossgpu.device.Mxfp4Repack;
import io.gossgpu.device.PipelineWeights;
import io.gossgpu.device.UploadedWeights;
import io.gossgpu.model.LayerWeights;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.model.WeightFormat;
import io.gossgpu.model.WeightView;
import io.gossgpu.quant.LE;
import io.gossgpu.quant.Q8_0;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.function.BiFunction;

/**
 * A model on a CUDA device, uploaded once. Dense matrices (embedding, unembedding, q/k/v/out, router) stay in their
 * checkpoint precision, BF16 as BF16, F16 as F16, F32 as F32, contiguous rows copied row by row from the mapped file in
 * pieces of about 64 MiB; Q8_0 as its signed bytes with the blocks' F16 scales in a table after them (the file's 1.0625
 * bytes per value). Q, K and V become one {@code [q; k; v]} matrix (and bias) per layer, so decode runs one linear for
 * the three; the layer's Q, K and V are its row ranges. The kernels of dense.cu decode every value exactly, so this is
 * lossless. Parts of different formats, or a dense view whose values are not adjacent, are decoded to F32 rows.
 * Vectors (biases, norms, sinks) become F32 (a handle is its device address); MXFP4 experts are held in OpenAI's
 * layout (codes + scales apart; ggml {@code block_mxfp4} repacked at upload, same bytes), decoded by the MoE kernels.
 */
final class CudaWeights extends UploadedWeights<CudaBuffer, Long>
        implements DeviceWeights.Uploader<Long, CudaWeights.Dense, CudaWeights.Mx> {
    /**
     * {@code rows} contiguous rows from device address {@code ptr}, {@code format} F32, F16, BF16 or Q8_0; for
     * Q8_0, {@code ptr} holds the signed bytes and {@code scales} one F16 scale per 32 values (else 0).
     */
    record Dense(long ptr, long scales, int rows, int cols, WeightFormat format) {
        /** Rows {@code first .. first+count−1} (Q, K or V of the fused QKV matrix; or the whole of it from Q's range). */
        Dense rows(int first, int count) {
            return format == WeightFormat.Q8_0
                    ? new Dense(ptr + (long) first * cols, scales + 2L * first * (cols / 32), count, cols, format)
                    : new Dense(ptr + (long) first * format.rowBytes(cols), 0, count, cols, format);
        }

        /** The matrix as the device layer's {@link DensePipeline} takes it (the format picks the entry point: fmt unread). */
        DensePipeline.Matrix<Long> matrix() {
            return new DensePipeline.Matrix<>(ptr, 0, scales, format, 0, 0, rows, cols);
        }
    }

    /**
     * MXFP4 experts in OpenAI's layout, whatever the checkpoint's: codes (cols/2 bytes per row, 16 per block) and
     * scales (cols/32 bytes per row) in their own buffers, so the kernels load a block as one aligned 16-byte word.
     */
    record Mx(CudaBuffer codes, CudaBuffer scales) {
        long scalesPtr() {
            return scales.address();
        }
    }

    final DeviceWeights<Long, Dense, Mx> tensors;
    private final PipelineWeights<Long, Dense, Mx> forPipelines;

    CudaWeights(CudaBackend backend, ModelWeights m) {
        super(backend, m.config());
        tensors = uploadAll(m, this);
        int qkvRows = m.config().qDim() + 2 * m.config().kvDim();
        forPipelines =
                new PipelineWeights<>(tensors, Dense::matrix, x -> x.codes().address(), Mx::scalesPtr) {
                    /** Q's rows start the fused {@code [q; k; v]} matrix. */
                    @Override
                    public DensePipeline.Matrix<Long> qkv(int layer) {
                        return tensors()
                                .layer(layer)
                                .dense(DenseKind.Q)
                                .rows(0, qkvRows)
                                .matrix();
                    }
                };
    }

    @Override
    public PipelineWeights<Long, Dense, Mx> forPipelines() {
        return forPipelines;
    }

    @Override
    public Long vector(WeightView v) {
        return vectors(v).address();
    }

    /** The three biases in one buffer, like the matrix. */
    @Override
    public List<Long> qkvBias(WeightView q, WeightView k, WeightView v) {
        long at = vectors(q, k, v).address();
        long kAt = at + 4L * q.experts() * q.rows() * q.cols();
        return List.of(at, kAt, kAt + 4L * k.experts() * k.rows() * k.cols());
    }

    /** The values of {@code parts}, one after the other, as F32. */
    private CudaBuffer vectors(WeightView... parts) {
        long n = 0;
        for (WeightView v : parts) n += (long) v.experts() * v.rows() * v.cols();
        CudaBuffer b = allocate(4L * n, parts[0].name());
        long at = 0;
        for (WeightView v : parts) {
            float[] f = v.dequantizeAll();
            b.copyFrom(MemorySegment.ofArray(f), at);
            at += 4L * f.length;
        }
        return b;
    }

    @Override
    public Dense dense(WeightView v) {
        return uploadDense(this::allocate, v);
    }

    /** One {@code [q; k; v]} matrix; Q, K and V are its row ranges. */
    @Override
    public List<Dense> qkv(WeightView q, WeightView k, WeightView v) {
        Dense all = uploadDense(this::allocate, q, k, v);
        return List.of(all.rows(0, q.rows()), all.rows(q.rows(), k.rows()), all.rows(q.rows() + k.rows(), v.rows()));
    }

    @Override
    public Mx experts(WeightView v) {
        WeightFormat f = v.format();
        if (f != WeightFormat.MXFP4_OPENAI && f != WeightFormat.MXFP4_GGML)
            throw new GossException(v.name() + ": the cuda backend takes MoE experts as MXFP4, not " + f);
        if (v.cols() % 32 != 0)
            throw new GossException(v.name() + ": MXFP4 rows of " + v.cols() + " values are not whole 32-value blocks");
        int blocks = v.cols() / 32;
        long rows = (long) v.rows() * v.experts();
        CudaBuffer codes = allocate(16L * blocks * rows, v.name());
        CudaBuffer scales = allocate((long) blocks * rows, v.name() + " scales");
        if (f == WeightFormat.MXFP4_GGML) {
            Mxfp4Repack.ggmlExperts(v, (c, cAt, s, sAt) -> {
                codes.copyFrom(c, cAt);
                scales.copyFrom(s, sAt);
            });
            return new Mx(codes, scales);
        }
        copyRows(codes, 0, v.data(), v.rows(), v.experts(), v.rowBytes(), v::rowOffset);
        copyRows(scales, 0, v.scales(), v.rows(), v.experts(), blocks, v::scaleRowOffset);
        return new Mx(codes, scales);
    }

    /**
     * The rows of {@code parts} (same width), one after the other, in the format {@link #deviceFormat} picks, in a
     * buffer from {@code allocate}: F32, F16 and BF16 rows copied as stored; Q8_0 split into its bytes and its
     * scales; anything else decoded to F32 rows, in chunks of at most 4 Mi values.
     */
    static Dense uploadDense(BiFunction<Long, String, CudaBuffer> allocate, WeightView... parts) {
        int rows = 0, cols = parts[0].cols();
        for (WeightView v : parts) {
            if (v.experts() != 1) throw new GossException(v.name() + ": a dense matrix with experts is not supported");
            WeightFormat f = v.format();
            if (!f.isDense() && f != WeightFormat.Q8_0)
                throw new GossException(
                        v.name() + ": the cuda backend takes dense matrices as F32, F16, BF16 or Q8_0, not " + f);
            if (v.cols() != cols)
                throw new GossException(
                        v.name() + ": " + v.cols() + " columns where " + parts[0].name() + " has " + cols);
            rows = Math.addExact(rows, v.rows());
        }
        WeightFormat f = deviceFormat(parts);
        long rowBytes = f.rowBytes(cols); // Q8_0: the file's bytes, codes and scales apart
        CudaBuffer b = allocate.apply(rowBytes * rows, parts[0].name());
        if (f == WeightFormat.Q8_0) {
            long scales = (long) rows * cols, at = 0;
            for (WeightView v : parts) {
                uploadQ8_0(b, at, scales + 2 * (at / 32), v);
                at += (long) v.rows() * cols;
            }
            return new Dense(b.address(), b.address() + scales, rows, cols, f);
        }
        long at = 0;
        for (WeightView v : parts) {
            if (f == v.format()) {
                copyRows(b, at, v.data(), v.rows(), 1, rowBytes, v::rowOffset);
            } else {
                int chunkRows = (int) Math.max(1, Math.min(v.rows(), (4L << 20) / cols));
                float[] chunk = new float[chunkRows * cols];
                for (int r0 = 0; r0 < v.rows(); r0 += chunkRows) {
                    int n = Math.min(chunkRows, v.rows() - r0);
                    for (int r = 0; r < n; r++) v.dequantizeRow(0, r0 + r, chunk, r * cols);
                    b.copyFrom(MemorySegment.ofArray(chunk).asSlice(0, 4L * n * cols), at + 4L * r0 * cols);
                }
            }
            at += rowBytes * v.rows();
        }
        return new Dense(b.address(), 0, rows, cols, f);
    }

    /** The Q8_0 rows of {@code v}: their bytes to {@code b} at {@code codesAt}, their F16 scales at {@code scalesAt}. */
    private static void uploadQ8_0(CudaBuffer b, long codesAt, long scalesAt, WeightView v) {
        int cols = v.cols(), blocks = cols / 32;
        int chunkRows = (int) Math.max(1, Math.min(v.rows(), (4L << 20) / cols));
        byte[] codes = new byte[chunkRows * cols];
        short[] scales = new short[chunkRows * blocks];
        for (int r0 = 0; r0 < v.rows(); r0 += chunkRows) {
            int n = Math.min(chunkRows, v.rows() - r0);
            for (int r = 0; r < n; r++) {
                long row = v.rowOffset(0, r0 + r);
                for (int g = 0; g < blocks; g++) {
                    long block = row + (long) g * Q8_0.BLOCK_BYTES;
                    scales[r * blocks + g] = v.data().get(LE.I16, block);
                    MemorySegment.copy(v.data(), ValueLayout.JAVA_BYTE, block + 2, codes, r * cols + g * 32, 32);
                }
            }
            b.copyFrom(MemorySegment.ofArray(codes).asSlice(0, (long) n * cols), codesAt + (long) r0 * cols);
            b.copyFrom(MemorySegment.ofArray(scales).asSlice(0, 2L * n * blocks), scalesAt + 2L * r0 * blocks);
        }
    }

    interface RowOffset {
        long at(int expert, int row);
    }

    /** Copies {@code experts × rows} rows of {@code rowBytes} to {@code b} from byte {@code at} on, in pieces of about 64 MiB. */
    private static void copyRows(
            CudaBuffer b, long at, MemorySegment src, int rows, int experts, long rowBytes, RowOffset off) {
        long total = rowBytes * rows * experts;
        try (Arena arena = Arena.ofConfined()) {
            long pieceRows = Math.max(1, (64L << 20) / Math.max(1, rowBytes));
            MemorySegment staging = arena.allocate(Math.min(total, pieceRows * rowBytes), 64);
            long pos = 0, filled = 0, base = at;
            for (int e = 0; e < experts; e++) {
                for (int r = 0; r < rows; r++) {
                    MemorySegment.copy(src, off.at(e, r), staging, filled, rowBytes);
                    filled += rowBytes;
                    pos += rowBytes;
                    if (filled + rowBytes > staging.byteSize() || pos == total) {
                        b.copyFrom(staging.asSlice(0, filled), base);
                        base += filled;
                        filled = 0;
                    }
                }
            }
        }
    }

    /**
     * What the upload allocates for {@code m}: dense matrices in their {@link #deviceFormat}, vectors as F32, MXFP4 as
     * codes + scales (17 bytes per 32 values in either layout).
     */
    static long deviceBytes(ModelWeights m) {
        long total = denseBytes(m.embedding()) + denseBytes(m.unembedding()) + DeviceWeights.f32Bytes(m.finalNorm());
        for (LayerWeights l : m.layers()) {
            total += denseBytes(l.q(), l.k(), l.v()) + denseBytes(l.out()) + denseBytes(l.router());
            for (WeightView v : new WeightView[] {
                l.attnNorm(),
                l.mlpNorm(),
                l.sinks(),
                l.qBias(),
                l.kBias(),
                l.vBias(),
                l.outBias(),
                l.routerBias(),
                l.gateBias(),
                l.upBias(),
                l.downBias()
            }) {
                total += DeviceWeights.f32Bytes(v);
            }
            for (WeightView v : new WeightView[] {l.gate(), l.up(), l.down()}) {
                if (v == null) continue; // experts another backend runs (io.gossgpu.device.SplitModel)
                long rows = (long) v.experts() * v.rows();
                total += rows * v.rowBytes() + (v.format() == WeightFormat.MXFP4_OPENAI ? rows * (v.cols() / 32) : 0);
            }
        }
        return total;
    }

    /**
     * The device format of a dense matrix made of the rows of {@code parts}: their own when all are F32, F16,
     * BF16 (with adjacent values) or Q8_0 alike, else F32.
     */
    static WeightFormat deviceFormat(WeightView... parts) {
        WeightFormat f = parts[0].format();
        for (WeightView v : parts)
            if (v.format() != f || !(f == WeightFormat.Q8_0 || f.isDense() && v.colStride() == 1))
                return WeightFormat.F32;
        return f;
    }

    private static long denseBytes(WeightView... parts) {
        if (parts[0] == null)
            return 0; // left out: one layer's experts streamed (io.gossgpu.device.SplitModel.expertsOf)
        long bytes = 0;
        for (WeightView v : parts)
            bytes += (long) v.experts() * v.rows() * deviceFormat(parts).rowBytes(v.cols());
        return bytes;
    }
}
