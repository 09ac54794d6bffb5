package io.gossgpu.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.BackendProvider;
import io.gossgpu.backend.TemperatureDraw;
import io.gossgpu.conformance.BackendConformanceKit;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * argmax.cu's one-pass argmax (a row cut into {@link SampleLauncher#ARGMAX_CHUNKS} blocks, the last block to finish
 * reducing their picks) against {@link TemperatureDraw#argmax}, id for id (no tolerance: the pick is exact), on rows
 * the model cannot produce at will: the 201088-id row and sizes that are not multiples of 4 or are smaller than one
 * value per chunk; the largest value tied at several ids in different chunks, in one thread's 16-byte load and at the
 * row's two ends; rows holding NaN or ±∞ (at id 0, as the first value each thread reads, everywhere), for which the
 * reference and the kernel return {@link TemperatureDraw#NOT_FINITE}; several
 * rows per launch. The same launch runs twice and then with more and fewer rows (a new work buffer): the per-row
 * counters must be back at zero after each launch. Planted in the kernel, each fails here: a counter not reset
 * (the second launch writes nothing), the non-finite flag not set or not cleared, the last block's chunks reduced from a stale slot.
 * Under the emulator (blocks on several OS threads) the last-block-done race is real; scripts/emu-race-check.sh's
 * GOSS_EMU_ORDER / GOSS_EMU_POISON apply. Skipped like {@link CudaConformanceTest}.
 */
class CudaArgmaxTest {
    @Test
    void onePassArgmaxPicksTheReferenceId() {
        BackendProvider p = new CudaConformanceTest().provider();
        BackendConformanceKit.requireAvailable(p);
        try (Backend b = p.create(BackendOptions.defaults())) {
            CudaBackend c = (CudaBackend) b;
            SplittableRandom r = new SplittableRandom(39);
            int checked = 0;
            for (int vocab : new int[] {201088, 1000, 1003, 5, 257})
                for (int rows : new int[] {1, 6, 2}) { // 2 after 6: a smaller launch on the buffer of the larger
                    float[] logits = rows(r, rows, vocab);
                    for (int repeat = 0; repeat < 2; repeat++) checked += check(c, logits, rows, vocab);
                }
            System.out.println("CudaArgmaxTest: " + checked + " rows equal to the reference");
        }
    }

    /** Runs the device argmax over {@code rows} rows of {@code vocab} and compares each id; returns the rows checked. */
    private static int check(CudaBackend c, float[] logits, int rows, int vocab) {
        CudaBuffer l = c.device.allocate(4L * logits.length, "test logits"),
                ids = c.device.allocate(4L * rows, "test ids");
        try {
            c.device.write(l, 0, MemorySegment.ofArray(logits));
            int[] poison = new int[rows];
            java.util.Arrays.fill(poison, -7);
            c.device.write(ids, 0, MemorySegment.ofArray(poison));
            c.argmaxRows(l, rows, vocab, ids);
            int[] got = new int[rows];
            c.device.read(ids, 0, MemorySegment.ofArray(got));
            for (int t = 0; t < rows; t++)
                assertEquals(
                        TemperatureDraw.argmax(logits, t * vocab, vocab),
                        got[t],
                        "row " + t + " of " + rows + ", vocab " + vocab);
            return rows;
        } finally {
            c.device.release(l);
            c.device.release(ids);
        }
    }

    /** {@code rows} rows of {@code vocab}, each its own case (by row index): see the class comment. */
    static float[] rows(SplittableRandom r, int rows, int vocab) {
        float[] out = new float[rows * vocab];
        for (int t = 0; t < rows; t++) {
            int o = t * vocab;
            for (int i = 0; i < vocab; i++) out[o + i] = (float) (r.nextGaussian() * 3);
            List<Integer> at = new ArrayList<>();
            switch ((t + vocab) % 6) {
                case 0 -> { // the top value at several ids: random ones, one load's neighbours, the last id
                    for (int k = 0; k < 4; k++) at.add(r.nextInt(vocab));
                    int q = r.nextInt(vocab) & ~3;
                    if (q + 1 < vocab) {
                        at.add(q + 1);
                        at.add(q);
                    }
                    at.add(vocab - 1);
                    for (int i : at) out[o + i] = 50;
                }
                case 1 -> { // NaN at id 0 and +∞ elsewhere: not finite
                    out[o] = Float.NaN;
                    out[o + r.nextInt(vocab)] = Float.POSITIVE_INFINITY;
                }
                case 2 -> { // NaNs where each thread of each block reads first: not finite
                    for (int i = 4; i < vocab; i += 4) out[o + i] = Float.NaN;
                    int top = 4 * r.nextInt((vocab + 3) / 4) + 1 + r.nextInt(3);
                    out[o + Math.min(top, vocab - 1)] = 40;
                }
                case 3 -> java.util.Arrays.fill(out, o, o + vocab, Float.NEGATIVE_INFINITY); // all −∞: not finite
                case 4 -> java.util.Arrays.fill(out, o, o + vocab, Float.NaN); // all NaN: not finite
                default -> { // the largest at id 0 tied at the end
                    out[o] = 60;
                    out[o + vocab - 1] = 60;
                }
            }
        }
        return out;
    }
}
