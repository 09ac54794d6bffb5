package io.gossgpu.model;

import io.gossgpu.quant.Bf16;
import io.gossgpu.quant.F16;
import io.gossgpu.quant.LE;
import io.gossgpu.quant.Mxfp4;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.DoubleAdder;
import java.util.stream.IntStream;

/**
 * MoE expert weights stored as floats (a BF16 fine-tune) made into what every backend runs: ggml MXFP4 blocks
 * ({@link Mxfp4#quantizeBlock}), or, when asked to keep them, a BF16 copy. Hugging Face stores each expert
 * transposed ({@code [E, in, out]}: {@code gate_up_proj} is {@code [E, H, 2I]}, {@code down_proj} {@code [E, I, H]});
 * the result is always {@code [E, out, in]}, rows = output features, as the engine reads weights.
 */
final class ExpertQuantizer {
    /** Output rows gathered per task: one tile of a transposed source is {@code TILE × in} floats. */
    private static final int TILE = 32;

    /** Squared error and squared values summed over every quantized weight. */
    record Error(double squaredError, double squaredValues) {
        double relativeRms() {
            return squaredValues == 0 ? 0 : Math.sqrt(squaredError / squaredValues);
        }
    }

    private final DoubleAdder sse = new DoubleAdder(), ssq = new DoubleAdder();

    Error error() {
        return new Error(sse.sum(), ssq.sum());
    }

    /**
     * {@code t} ({@code [E, rows, cols]}, or {@code [E, cols, rows]} when {@code transposed}) as MXFP4
     * ({@code quantize}) or BF16 {@code [E, rows, cols]}.
     */
    TensorData convert(TensorData t, boolean transposed, boolean quantize, Arena arena) {
        int experts = (int) t.dim(0);
        int rows = (int) (transposed ? t.dim(2) : t.dim(1)), cols = (int) (transposed ? t.dim(1) : t.dim(2));
        long[] shape = {experts, rows, cols};
        DType to = quantize ? DType.MXFP4 : DType.BF16;
        long rowBytes = to.rowBytes(cols);
        MemorySegment out = arena.allocate(rowBytes * rows * experts, 64);
        int tilesPerExpert = (rows + TILE - 1) / TILE;
        IntStream.range(0, experts * tilesPerExpert).parallel().forEach(task -> {
            int e = task / tilesPerExpert, r0 = task % tilesPerExpert * TILE, n = Math.min(TILE, rows - r0);
            float[] tile = new float[n * cols];
            gather(t, transposed, e, r0, n, rows, cols, tile);
            for (int r = 0; r < n; r++) {
                long at = ((long) e * rows + r0 + r) * rowBytes;
                if (quantize) quantizeRow(tile, r * cols, cols, out, at);
                else for (int c = 0; c < cols; c++) out.set(LE.I16, at + 2L * c, Bf16.fromFloat(tile[r * cols + c]));
            }
        });
        return new TensorData(t.name(), to, shape, out, t.file());
    }

    /** Rows {@code r0 .. r0+n} of expert {@code e} (output features), every input feature, into {@code tile}. */
    private static void gather(
            TensorData t, boolean transposed, int e, int r0, int n, int rows, int cols, float[] tile) {
        MemorySegment src = t.bytes();
        int size = t.dtype() == DType.F32 ? 4 : 2;
        long expert = (long) e * rows * cols;
        for (int a = 0; a < (transposed ? cols : n); a++)
            for (int b = 0; b < (transposed ? n : cols); b++) {
                // transposed: source row = input feature a, column = output feature r0 + b
                long index = transposed ? expert + (long) a * rows + r0 + b : expert + (long) (r0 + a) * cols + b;
                float v = switch (t.dtype()) {
                    case F32 -> src.get(LE.F32, index * size);
                    case F16 -> F16.toFloat(src.get(LE.I16, index * size));
                    default -> Bf16.toFloat(src.get(LE.I16, index * size));
                };
                if (transposed) tile[b * cols + a] = v;
                else tile[a * cols + b] = v;
            }
    }

    private void quantizeRow(float[] x, int offset, int cols, MemorySegment out, long at) {
        byte[] codes = new byte[Mxfp4.BLOCK], scales = new byte[cols / Mxfp4.BLOCK], all = new byte[cols];
        double err = 0, sq = 0;
        for (int g = 0; g < cols / Mxfp4.BLOCK; g++) {
            int o = offset + g * Mxfp4.BLOCK;
            int scale = Mxfp4.quantizeBlock(x, o, codes);
            scales[g] = (byte) scale;
            for (int i = 0; i < Mxfp4.BLOCK; i++) {
                double d = x[o + i] - Mxfp4.value(codes[i], scale);
                err += d * d;
                sq += (double) x[o + i] * x[o + i];
                all[g * Mxfp4.BLOCK + i] = codes[i];
            }
        }
        sse.add(err);
        ssq.add(sq);
        byte[] packed = Mxfp4.packGgml(all, scales);
        MemorySegment.copy(packed, 0, out, LE.U8, at, packed.length);
    }
}
