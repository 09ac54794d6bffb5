package io.gossgpu.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.model.WeightFormat;
import io.gossgpu.model.WeightView;
import io.gossgpu.quant.Mxfp4;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The upload repack every device backend uses for GGUF experts: pieces of at most 4 MiB of codes that together are
 * OpenAI's codes and scales planes of every row, in row order. The backends' GGUF tests use tiny models (one piece);
 * here an expert spans two pieces (gpt-oss's 2880 columns: 2912 rows a piece) and experts sit apart in the file.
 */
class Mxfp4RepackTest {

    @Test
    void piecesAreOpenAisPlanesInRowOrderAcrossExpertsAndPieces() {
        int experts = 2, rows = 3000, cols = 2880, blocks = cols / 32;
        long rb = WeightFormat.MXFP4_GGML.rowBytes(cols), expertStride = rb * rows + 5; // a gap between experts
        byte[] wantCodes = new byte[experts * rows * cols / 2], wantScales = new byte[experts * rows * blocks];
        SplittableRandom rnd = new SplittableRandom(42);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment file = arena.allocate(3 + expertStride * experts).asSlice(3); // odd base, as in a file
            byte[] codes = new byte[cols], scales = new byte[blocks];
            for (int e = 0; e < experts; e++)
                for (int r = 0; r < rows; r++) {
                    for (int i = 0; i < cols; i++) codes[i] = (byte) rnd.nextInt(16);
                    for (int b = 0; b < blocks; b++) scales[b] = (byte) rnd.nextInt(256);
                    MemorySegment.copy(
                            Mxfp4.packGgml(codes, scales),
                            0,
                            file,
                            ValueLayout.JAVA_BYTE,
                            e * expertStride + r * rb,
                            (int) rb);
                    int row = e * rows + r;
                    System.arraycopy(Mxfp4.packOpenAi(codes), 0, wantCodes, row * cols / 2, cols / 2);
                    System.arraycopy(scales, 0, wantScales, row * blocks, blocks);
                }
            WeightView v = new WeightView(
                    "experts",
                    WeightFormat.MXFP4_GGML,
                    experts,
                    rows,
                    cols,
                    file,
                    0,
                    expertStride,
                    rb,
                    1,
                    null,
                    0,
                    0,
                    0);
            byte[] gotCodes = new byte[wantCodes.length], gotScales = new byte[wantScales.length];
            long[] next = {0, 0, 0}; // codes and scales offsets expected next, pieces seen
            Mxfp4Repack.ggmlExperts(v, (c, cAt, s, sAt) -> {
                assertEquals(next[0], cAt, "codes piece " + next[2] + " follows the previous one");
                assertEquals(next[1], sAt, "scales piece " + next[2] + " follows the previous one");
                assertTrue(c.byteSize() <= 4L << 20, "a piece holds at most 4 MiB of codes: " + c.byteSize());
                assertEquals(c.byteSize(), 16 * s.byteSize(), "16 code bytes per scale byte");
                MemorySegment.copy(c, ValueLayout.JAVA_BYTE, 0, gotCodes, (int) cAt, (int) c.byteSize());
                MemorySegment.copy(s, ValueLayout.JAVA_BYTE, 0, gotScales, (int) sAt, (int) s.byteSize());
                next[0] += c.byteSize();
                next[1] += s.byteSize();
                next[2]++;
            });
            assertEquals(4, next[2], "two pieces per expert");
            assertEquals(wantCodes.length, next[0]);
            assertArrayEquals(wantScales, gotScales);
            assertArrayEquals(wantCodes, gotCodes);
        }
    }

    @Test
    void onlyGgmlBlocksAreRepacked() {
        WeightView v = new WeightView(
                "w",
                WeightFormat.MXFP4_OPENAI,
                1,
                1,
                32,
                MemorySegment.ofArray(new byte[16]),
                0,
                16,
                16,
                1,
                MemorySegment.ofArray(new byte[1]),
                0,
                1,
                1);
        assertThrows(IllegalArgumentException.class, () -> Mxfp4Repack.ggmlExperts(v, (c, cAt, s, sAt) -> {}));
    }
}
