package io.gossgpu.model;

import io.gossgpu.quant.F16;
import io.gossgpu.quant.Iq4;
import io.gossgpu.quant.LE;
import io.gossgpu.quant.LegacyQuants;
import io.gossgpu.quant.Q8_0;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.IntStream;

/**
 * Turns a dense matrix of a ggml type no backend runs (legacy and K-quants, IQ4) into one they all do:
 * <ul>
 *   <li>{@code Q8_0}, exactly, for Q4_0, Q5_0 and IQ4_NL: each of their 32-value blocks is an F16 scale times
 *       integers within int8's range, which is what a Q8_0 block holds (the same scale, the same integers);</li>
 *   <li>{@code F16} for the rest (Q4_1, Q5_1, K-quants, IQ4_XS), whose values are sums or products no Q8_0 block
 *       can hold: each decoded value rounds once to F16, which adds 2.1e-4 relative RMS error where re-quantizing to
 *       Q8_0 would add 5.2e-3, 23 to 26 times more (DenseTargetErrorTest, on llama-quantize's Q2_K to Q6_K
 *       tensors), for 2 bytes a value instead of 1.06; {@code F32} where a value exceeds F16's range or
 *       {@code exact} is asked for. On gpt-oss-20b only the attention output (rows of 4096, 283 M values: 566 MB)
 *       can be a K-quant; the 2880-wide matrices take llama-quantize's 32-value fallbacks, mostly Q5_0, Q4_0 or
 *       Q8_0, which stay Q8_0-sized.</li>
 * </ul>
 */
final class DenseDecode {
    /** Rows per parallel task. */
    private static final int ROWS_PER_TASK = 64;

    private DenseDecode() {}

    /** The type {@code source} decodes into (before the F16 range check). */
    static DType target(DType source, boolean exact) {
        return switch (source) {
            case Q4_0, Q5_0, IQ4_NL -> DType.Q8_0;
            default -> exact ? DType.F32 : DType.F16;
        };
    }

    static TensorData convert(TensorData t, boolean exact, Arena arena) {
        BlockDecoder decoder = BlockDecoder.of(t.dtype());
        int cols = (int) t.dim(t.rank() - 1);
        long rows = t.elements() / cols;
        DType to = target(t.dtype(), exact);
        if (to == DType.Q8_0) return new TensorData(t.name(), to, t.shape(), toQ8_0(t, rows, cols, arena), t.file());
        if (to == DType.F16) {
            MemorySegment out = arena.allocate(rows * cols * 2, 64);
            if (toFloats(t, decoder, rows, cols, out, true))
                return new TensorData(t.name(), to, t.shape(), out, t.file());
        }
        MemorySegment out = arena.allocate(rows * cols * 4, 64);
        toFloats(t, decoder, rows, cols, out, false);
        return new TensorData(t.name(), DType.F32, t.shape(), out, t.file());
    }

    /** Decodes every row into F16 ({@code half}) or F32; false when a value does not fit F16. */
    private static boolean toFloats(
            TensorData t, BlockDecoder decoder, long rows, int cols, MemorySegment out, boolean half) {
        long rowBytes = t.dtype().rowBytes(cols);
        AtomicBoolean fits = new AtomicBoolean(true);
        IntStream.range(0, (int) ((rows + ROWS_PER_TASK - 1) / ROWS_PER_TASK))
                .parallel()
                .forEach(task -> {
                    float[] row = new float[cols];
                    for (long r = (long) task * ROWS_PER_TASK;
                            r < Math.min(rows, (task + 1L) * ROWS_PER_TASK) && fits.get();
                            r++) {
                        decoder.decodeRow(t.bytes(), r * rowBytes, cols, row, 0);
                        if (!half) {
                            MemorySegment.copy(row, 0, out, LE.F32, r * cols * 4, cols);
                            continue;
                        }
                        for (int c = 0; c < cols; c++) {
                            short h = F16.fromFloat(row[c]);
                            if ((h & 0x7c00) == 0x7c00 && Float.isFinite(row[c])) fits.set(false);
                            out.set(LE.I16, (r * cols + c) * 2, h);
                        }
                    }
                });
        return fits.get();
    }

    /** Q4_0, Q5_0, IQ4_NL → Q8_0 with each block's scale and integers unchanged. */
    private static MemorySegment toQ8_0(TensorData t, long rows, int cols, Arena arena) {
        long blocks = rows * cols / 32;
        int srcBlock = t.dtype().blockBytes();
        MemorySegment src = t.bytes(), out = arena.allocate(blocks * Q8_0.BLOCK_BYTES, 64);
        long perTask = 4096;
        IntStream.range(0, (int) ((blocks + perTask - 1) / perTask)).parallel().forEach(task -> {
            for (long b = task * perTask; b < Math.min(blocks, (task + 1) * perTask); b++) {
                long s = b * srcBlock, d = b * Q8_0.BLOCK_BYTES;
                out.set(LE.I16, d, src.get(LE.I16, s));
                for (int i = 0; i < 32; i++) {
                    int q = switch (t.dtype()) {
                        case Q4_0 -> LegacyQuants.q4_0(src, s, i);
                        case Q5_0 -> LegacyQuants.q5_0(src, s, i);
                        case IQ4_NL -> Iq4.nl(src, s, i);
                        default -> throw new IllegalStateException(t.dtype().toString());
                    };
                    out.set(LE.U8, d + 2 + i, (byte) q);
                }
            }
        });
        return out;
    }
}
