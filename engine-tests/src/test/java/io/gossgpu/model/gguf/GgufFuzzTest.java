package io.gossgpu.model.gguf;

import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.gossgpu.GossException;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.LoadOptions;
import io.gossgpu.model.ModelWeights;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Seeded random corruptions of a valid GGUF: byte flips (mostly in the header, where they matter),
 * overwritten 8-byte fields, truncations. Every case must end in a loaded model or a
 * {@link GossException}: never another exception, an OutOfMemoryError, a hang or a crash.
 */
class GgufFuzzTest {
    private static final int CASES = Integer.getInteger("goss.gguf.fuzzCases", 3000);
    private static final long[] INTERESTING = {
        0,
        1,
        -1,
        2,
        31,
        32,
        33,
        4096,
        Integer.MAX_VALUE,
        0xffffffffL,
        1L << 31,
        1L << 32,
        1L << 40,
        1L << 62,
        Long.MAX_VALUE,
        Long.MIN_VALUE
    };

    @TempDir
    Path dir;

    @Test
    void corruptedFilesLoadOrFailCleanly() throws Exception {
        byte[] base = GgufFixtures.microModel(dir);
        int headerEnd = headerLength(base);
        assertTimeoutPreemptively(java.time.Duration.ofSeconds(Math.max(120, CASES / 20)), () -> {
            int loaded = 0, rejected = 0;
            Path f = dir.resolve("fuzz.gguf");
            for (int seed = 0; seed < CASES; seed++) {
                byte[] b = mutate(base, headerEnd, new SplittableRandom(seed * 0x9E3779B97F4A7C15L + 1));
                Files.write(f, b);
                LoadOptions opts = new LoadOptions(seed % 7 != 0);
                try (Checkpoint c = Checkpoint.open(f, opts)) {
                    ModelWeights.of(c)
                            .layers()
                            .getFirst()
                            .gate()
                            .dequantizeRow(0, 0, new float[c.config().hiddenSize()], 0);
                    loaded++;
                } catch (GossException e) {
                    if (e.getMessage() == null || e.getMessage().contains("\n"))
                        fail("case seed " + seed + ": message is not one line: " + e.getMessage());
                    rejected++;
                } catch (Throwable t) {
                    throw new AssertionError("case seed " + seed + " (" + b.length + " bytes): " + t, t);
                }
            }
            System.out.println("GGUF fuzz: " + CASES + " cases, " + loaded + " loaded, " + rejected + " rejected");
            assertTrue(loaded > 0 && rejected > CASES / 4, "loaded " + loaded + ", rejected " + rejected);
        });
    }

    private static byte[] mutate(byte[] base, int headerEnd, SplittableRandom r) {
        byte[] b = base.clone();
        int kind = r.nextInt(10);
        if (kind < 5) { // flip 1..4 bytes, mostly in the header
            for (int i = 0, n = 1 + r.nextInt(4); i < n; i++) {
                int at = r.nextInt(10) < 8 ? r.nextInt(headerEnd) : r.nextInt(b.length);
                b[at] ^= (byte) (1 + r.nextInt(255));
            }
        } else if (kind < 8) { // an 8-byte field in the header set to an awkward value
            int at = r.nextInt(headerEnd - 8);
            long v = INTERESTING[r.nextInt(INTERESTING.length)] + (r.nextBoolean() ? 0 : r.nextInt(3) - 1);
            GgufFixtures.putI64(b, at, v);
        } else { // truncation, sometimes combined with a flip
            b = Arrays.copyOf(b, r.nextInt(b.length));
            if (b.length > 0 && r.nextBoolean()) b[r.nextInt(b.length)] ^= (byte) 0x5a;
        }
        return b;
    }

    /** Where the data section starts: everything before it is header. */
    private static int headerLength(byte[] b) {
        return (int) GgufParser.parse(java.lang.foreign.MemorySegment.ofArray(b), Path.of("base"))
                .dataOffset();
    }
}
