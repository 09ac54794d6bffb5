package io.gossgpu.device;

import io.gossgpu.model.WeightFormat;
import io.gossgpu.model.WeightView;
import io.gossgpu.quant.Mxfp4;
import java.lang.foreign.MemorySegment;

/**
 * ggml {@code block_mxfp4} expert rows repacked into OpenAI's layout ({@link Mxfp4#ggmlToOpenAi}) for upload, so that
 * every backend's MoE kernels read one layout: the codes of all {@code experts × rows} rows one after the other
 * ({@code cols/2} bytes a row), the scales likewise ({@code cols/32} bytes a row). The host holds one piece of at most
 * 4 MiB of codes at a time; the device ends up with the same bytes as the file.
 */
public final class Mxfp4Repack {
    private static final long PIECE_CODE_BYTES = 4L << 20;

    private Mxfp4Repack() {}

    /** Where a piece goes: its codes at byte {@code codesAt} of the codes buffer, its scales at {@code scalesAt} of the scales'. */
    @FunctionalInterface
    public interface Sink {
        void write(MemorySegment codes, long codesAt, MemorySegment scales, long scalesAt);
    }

    /** Repacks the MXFP4_GGML experts {@code v} and hands them to {@code sink} in row order, a piece at a time. */
    public static void ggmlExperts(WeightView v, Sink sink) {
        if (v.format() != WeightFormat.MXFP4_GGML)
            throw new IllegalArgumentException(v.name() + " is " + v.format() + ", not MXFP4_GGML");
        int blocks = v.cols() / 32;
        int pieceRows = (int) Math.max(1, Math.min(v.rows(), PIECE_CODE_BYTES / (16L * blocks)));
        byte[] c = new byte[pieceRows * 16 * blocks], sc = new byte[pieceRows * blocks];
        long row = 0;
        for (int e = 0; e < v.experts(); e++) {
            for (int r0 = 0; r0 < v.rows(); r0 += pieceRows) {
                int n = Math.min(pieceRows, v.rows() - r0);
                for (int r = 0; r < n; r++)
                    Mxfp4.ggmlToOpenAi(v.data(), v.rowOffset(e, r0 + r), blocks, c, r * 16 * blocks, sc, r * blocks);
                sink.write(
                        MemorySegment.ofArray(c).asSlice(0, 16L * n * blocks),
                        16L * blocks * row,
                        MemorySegment.ofArray(sc).asSlice(0, (long) n * blocks),
                        (long) blocks * row);
                row += n;
            }
        }
    }
}
