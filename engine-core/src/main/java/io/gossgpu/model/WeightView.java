package io.gossgpu.model;

import io.gossgpu.GossException;
import io.gossgpu.quant.Bf16;
import io.gossgpu.quant.F16;
import io.gossgpu.quant.LE;
import io.gossgpu.quant.Mxfp4;
import io.gossgpu.quant.Q8_0;
import java.lang.foreign.MemorySegment;

/**
 * A weight as the engine sees it: {@code experts × rows × cols} numbers (experts = 1 for ordinary
 * weights, rows = 1 for vectors), read in place from the bytes of a file tensor through strides.
 * Strides let one file tensor serve as several weights without copying: the Q, K and V rows of a
 * fused QKV matrix, or the interleaved gate/up rows of OpenAI's mlp1.
 *
 * <p>Row {@code r} of expert {@code e} starts at byte {@code offset + e·expertStride + r·rowStride}.
 * Dense formats may also step {@code colStride} elements between consecutive values (an interleaved
 * bias). {@link WeightFormat#MXFP4_OPENAI} keeps its scale bytes in {@code scales}, addressed the
 * same way with the {@code scale*} strides.
 */
public record WeightView(
        String name,
        WeightFormat format,
        int experts,
        int rows,
        int cols,
        MemorySegment data,
        long offset,
        long expertStride,
        long rowStride,
        int colStride,
        MemorySegment scales,
        long scaleOffset,
        long scaleExpertStride,
        long scaleRowStride) {

    public WeightView {
        if (experts <= 0 || rows <= 0 || cols <= 0) throw new GossException(name + ": empty weight view");
        if (!format.isDense() && (cols % 32 != 0 || colStride != 1))
            throw new GossException(name + ": block-quantized rows must be whole 32-value blocks, got " + cols);
        long last = offset
                + (experts - 1) * expertStride
                + (rows - 1) * rowStride
                + (format.isDense()
                        ? ((long) (cols - 1) * colStride + 1) * format.elementBytes()
                        : format.rowBytes(cols));
        if (offset < 0 || last > data.byteSize())
            throw new GossException(
                    name + ": view needs bytes up to " + last + " but the tensor has " + data.byteSize());
        if (format == WeightFormat.MXFP4_OPENAI) {
            long lastScale = scaleOffset + (experts - 1) * scaleExpertStride + (rows - 1) * scaleRowStride + cols / 32;
            if (scales == null || lastScale > scales.byteSize())
                throw new GossException(name + ": scale view exceeds its tensor");
        }
    }

    /** A whole dense or ggml-block tensor: rank 1 is one row, rank 2 rows × cols, rank 3 experts × rows × cols. */
    public static WeightView of(TensorData t) {
        long[] s = t.shape();
        if (s.length > 3 || s.length == 0)
            throw new ModelFormatException(t.file(), t.name(), "expected 1 to 3 dimensions, got " + t.shapeString());
        if (!isWeightType(t.dtype()))
            throw new ModelFormatException(
                    t.file(),
                    t.name(),
                    "dtype " + t.dtype()
                            + " cannot hold this weight (expected F32, F16, BF16, Q8_0 or MXFP4; other ggml types are decoded by Checkpoint.conversions())");
        for (long d : s)
            if (d > Integer.MAX_VALUE)
                throw new ModelFormatException(t.file(), t.name(), "dimension too large: " + t.shapeString());
        int experts = s.length == 3 ? (int) s[0] : 1;
        int rows = s.length >= 2 ? (int) s[s.length - 2] : 1;
        int cols = (int) s[s.length - 1];
        WeightFormat f = WeightFormat.of(t.dtype());
        long rowBytes = f.rowBytes(cols);
        return new WeightView(
                t.name(), f, experts, rows, cols, t.bytes(), 0, rowBytes * rows, rowBytes, 1, null, 0, 0, 0);
    }

    private static boolean isWeightType(DType d) {
        return switch (d) {
            case F32, F16, BF16, Q8_0, MXFP4 -> true;
            default -> false;
        };
    }

    /** OpenAI MXFP4 from its two tensors: codes {@code [E, rows, cols/32, 16]} and scales {@code [E, rows, cols/32]}, both U8. */
    public static WeightView mxfp4OpenAi(String name, TensorData codes, TensorData scales) {
        long[] s = codes.shape();
        if (s.length != 4 || s[3] != 16)
            throw new ModelFormatException(
                    codes.file(), codes.name(), "expected [experts, rows, blocks, 16], got " + codes.shapeString());
        if (codes.dtype() != DType.U8)
            throw new ModelFormatException(codes.file(), codes.name(), "MXFP4 codes must be U8, got " + codes.dtype());
        if (scales.dtype() != DType.U8)
            throw new ModelFormatException(
                    scales.file(), scales.name(), "MXFP4 scales must be U8, got " + scales.dtype());
        if (!java.util.Arrays.equals(scales.shape(), new long[] {s[0], s[1], s[2]}))
            throw new ModelFormatException(
                    scales.file(),
                    scales.name(),
                    "MXFP4 scales of " + codes.name() + " " + codes.shapeString() + " must be [" + s[0] + ", " + s[1]
                            + ", " + s[2] + "], got " + scales.shapeString());
        for (long d : s)
            if (d > Integer.MAX_VALUE / 32)
                throw new ModelFormatException(
                        codes.file(), codes.name(), "dimension too large: " + codes.shapeString());
        int experts = (int) s[0], rows = (int) s[1], groups = (int) s[2];
        int cols = groups * 32;
        return new WeightView(
                name,
                WeightFormat.MXFP4_OPENAI,
                experts,
                rows,
                cols,
                codes.bytes(),
                0,
                (long) rows * groups * 16,
                (long) groups * 16,
                1,
                scales.bytes(),
                0,
                (long) rows * groups,
                groups);
    }

    public boolean isVector() {
        return experts == 1 && rows == 1;
    }

    /** Bytes of one row's values (codes only, for OpenAI MXFP4). */
    public long rowBytes() {
        return format.rowBytes(cols);
    }

    /** True when rows follow each other with no gaps and values are adjacent: one bulk copy uploads it. */
    public boolean isContiguous() {
        return colStride == 1 && rowStride == rowBytes() && (experts == 1 || expertStride == rowStride * rows);
    }

    public long rowOffset(int expert, int row) {
        return offset + expert * expertStride + row * rowStride;
    }

    public long scaleRowOffset(int expert, int row) {
        return scaleOffset + expert * scaleExpertStride + row * scaleRowStride;
    }

    /** {@code count} rows starting at {@code first} (the Q, K or V part of a fused QKV matrix). */
    public WeightView sliceRows(String newName, int first, int count) {
        check(first >= 0 && count > 0 && first + count <= rows, "rows " + first + "+" + count);
        return new WeightView(
                newName,
                format,
                experts,
                count,
                cols,
                data,
                offset + first * rowStride,
                expertStride,
                rowStride,
                colStride,
                scales,
                scaleOffset + first * scaleRowStride,
                scaleExpertStride,
                scaleRowStride);
    }

    /** Rows {@code phase, phase+2, phase+4, …}: one half of row-interleaved pairs (OpenAI's mlp1 gate/up). */
    public WeightView everyOtherRow(String newName, int phase) {
        check(rows % 2 == 0 && (phase == 0 || phase == 1), "every other row, phase " + phase);
        return new WeightView(
                newName,
                format,
                experts,
                rows / 2,
                cols,
                data,
                offset + phase * rowStride,
                expertStride,
                2 * rowStride,
                colStride,
                scales,
                scaleOffset + phase * scaleRowStride,
                scaleExpertStride,
                2 * scaleRowStride);
    }

    /** {@code count} values of each row starting at {@code first} (the Q, K or V part of a fused bias). */
    public WeightView sliceCols(String newName, int first, int count) {
        check(format.isDense() && first >= 0 && count > 0 && first + count <= cols, "cols " + first + "+" + count);
        return new WeightView(
                newName,
                format,
                experts,
                rows,
                count,
                data,
                offset + (long) first * colStride * format.elementBytes(),
                expertStride,
                rowStride,
                colStride,
                null,
                0,
                0,
                0);
    }

    /** Values {@code phase, phase+2, …} of each row: one half of an interleaved bias. */
    public WeightView everyOtherCol(String newName, int phase) {
        check(format.isDense() && cols % 2 == 0 && (phase == 0 || phase == 1), "every other col, phase " + phase);
        return new WeightView(
                newName,
                format,
                experts,
                rows,
                cols / 2,
                data,
                offset + (long) phase * colStride * format.elementBytes(),
                expertStride,
                rowStride,
                2 * colStride,
                null,
                0,
                0,
                0);
    }

    /** A {@code [E, n]} tensor (E rows) seen as E experts of one row each: the MoE biases. */
    public WeightView rowsAsExperts(String newName) {
        check(experts == 1, "rows as experts");
        return new WeightView(
                newName,
                format,
                rows,
                1,
                cols,
                data,
                offset,
                rowStride,
                rowStride,
                colStride,
                scales,
                scaleOffset,
                scaleRowStride,
                scaleRowStride);
    }

    /** Decodes row {@code row} of expert {@code expert} into {@code out[outOffset .. outOffset+cols)}. */
    public void dequantizeRow(int expert, int row, float[] out, int outOffset) {
        long base = rowOffset(expert, row);
        switch (format) {
            case F32 -> {
                for (int c = 0; c < cols; c++) out[outOffset + c] = data.get(LE.F32, base + 4L * c * colStride);
            }
            case BF16 -> {
                for (int c = 0; c < cols; c++)
                    out[outOffset + c] = Bf16.toFloat(data.get(LE.I16, base + 2L * c * colStride));
            }
            case F16 -> {
                for (int c = 0; c < cols; c++)
                    out[outOffset + c] = F16.toFloat(data.get(LE.I16, base + 2L * c * colStride));
            }
            case Q8_0 -> Q8_0.decodeRow(data, base, cols, out, outOffset);
            case MXFP4_GGML -> Mxfp4.decodeGgmlRow(data, base, cols, out, outOffset);
            case MXFP4_OPENAI ->
                Mxfp4.decodeOpenAiRow(data, base, scales, scaleRowOffset(expert, row), cols, out, outOffset);
        }
    }

    /** Every value, expert-major then row-major: for vectors and small weights. */
    public float[] dequantizeAll() {
        long n = (long) experts * rows * cols;
        if (n > Integer.MAX_VALUE - 8)
            throw new GossException(name + ": too large to decode at once (" + n + " values)");
        float[] out = new float[(int) n];
        for (int e = 0; e < experts; e++)
            for (int r = 0; r < rows; r++) dequantizeRow(e, r, out, (e * rows + r) * cols);
        return out;
    }

    private void check(boolean ok, String what) {
        if (!ok)
            throw new GossException(name + ": invalid view (" + what + ") of " + experts + "x" + rows + "x" + cols);
    }
}
