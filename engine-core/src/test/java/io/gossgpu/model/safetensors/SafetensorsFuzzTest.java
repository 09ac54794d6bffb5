package io.gossgpu.model.safetensors;

import io.gossgpu.GossException;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.LayerWeights;
import io.gossgpu.model.LoadOptions;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.model.WeightView;
import io.gossgpu.testmodel.TestModelGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Random byte flips and truncations of a small valid original/ model: every case must end in a
 * loaded model whose every weight decodes, or in a {@link GossException} — never another exception,
 * a hang or a crash. Deterministic: case {@code i} uses seed {@code BASE_SEED + i}, printed on failure.
 */
class SafetensorsFuzzTest {
    static final long BASE_SEED = 0x5AFE_7E45L;
    static final int CASES = 3000;
    /** Small enough that the header is a good part of the file, so flips often land in it. */
    static final ModelConfig SMALL = new ModelConfig(2, 4, 2, 37, 64, 32, 7f, 8, 4, 2, 3, 4096, 150000f, 32f, 1f, 32f, 1e-5f);

    @TempDir
    Path tmp;

    @Test
    void corruptedFilesLoadOrFailWithGossException() throws IOException {
        Path valid = tmp.resolve("valid");
        SafetensorsWriter.writeOriginal(new TestModelGenerator(SMALL, 1), valid);
        byte[] model = Files.readAllBytes(valid.resolve("model.safetensors"));
        byte[] config = Files.readAllBytes(valid.resolve("config.json"));
        int headerEnd = 8 + (int) ByteBuffer.wrap(model).order(ByteOrder.LITTLE_ENDIAN).getLong(0);
        Path dir = tmp.resolve("case");
        Files.createDirectories(dir);
        int[] outcomes = new int[2];
        java.util.List<String> notFormat = new java.util.ArrayList<>();

        assertTimeoutPreemptively(Duration.ofSeconds(120), () -> {
            for (int i = 0; i < CASES; i++) {
                long seed = BASE_SEED + i;
                SplittableRandom rnd = new SplittableRandom(seed);
                byte[] m = model.clone(), c = config;
                String what;
                int kind = rnd.nextInt(10);
                if (kind < 4) {            // flips in the header (length field included)
                    what = flip(rnd, m, 0, headerEnd, 1 + rnd.nextInt(4));
                } else if (kind < 6) {     // flips anywhere
                    what = flip(rnd, m, 0, m.length, 1 + rnd.nextInt(8));
                } else if (kind < 8) {     // truncation, sometimes after a flip
                    int len = rnd.nextInt(m.length);
                    what = (rnd.nextBoolean() ? flip(rnd, m, 0, headerEnd, 1) + ", " : "") + "truncated to " + len;
                    m = Arrays.copyOf(m, len);
                } else if (kind < 9) {     // flips in config.json
                    c = config.clone();
                    what = "config.json " + flip(rnd, c, 0, c.length, 1 + rnd.nextInt(3));
                } else {                   // a printable character substituted in the header
                    int at = 8 + rnd.nextInt(headerEnd - 8);
                    byte old = m[at];
                    m[at] = (byte) " {}[],:\"0123456789-.eE\\"
                            .charAt(rnd.nextInt(23));
                    what = "header[" + at + "] " + (char) old + " -> " + (char) m[at];
                }
                Files.write(dir.resolve("model.safetensors"), m);
                Files.write(dir.resolve("config.json"), c);
                boolean mmap = rnd.nextInt(4) != 0;
                try (Checkpoint ckpt = Checkpoint.open(dir, new LoadOptions(mmap))) {
                    decodeEverything(ModelWeights.of(ckpt));
                    outcomes[0]++;
                } catch (GossException e) {
                    if (e.getMessage() == null || e.getMessage().isBlank() || e.getMessage().contains("\n"))
                        throw new AssertionError(describe(i, seed, what, mmap) + ": message not one line: " + e.getMessage(), e);
                    outcomes[1]++;
                    if (!(e instanceof io.gossgpu.model.ModelFormatException)) notFormat.add(describe(i, seed, what, mmap) + ": " + e.getMessage());
                } catch (Throwable t) {
                    throw new AssertionError(describe(i, seed, what, mmap) + ": " + t, t);
                }
            }
        });
        System.out.println("safetensors fuzz: " + CASES + " cases, loaded " + outcomes[0] + ", rejected " + outcomes[1]);
        assertTrue(notFormat.isEmpty(), "rejected without naming the file (not a ModelFormatException): " + notFormat.size() + ", first: "
                + (notFormat.isEmpty() ? "" : notFormat.getFirst()));
        assertTrue(outcomes[0] > 100 && outcomes[1] > 100, "loaded " + outcomes[0] + ", rejected " + outcomes[1]);
    }

    private static String describe(int i, long seed, String what, boolean mmap) {
        return "fuzz case " + i + " (seed " + seed + ", " + what + ", mmap " + mmap + ")";
    }

    private static String flip(SplittableRandom rnd, byte[] b, int from, int to, int count) {
        StringBuilder sb = new StringBuilder("flips");
        for (int k = 0; k < count; k++) {
            int at = from + rnd.nextInt(to - from);
            if (rnd.nextBoolean()) b[at] ^= (byte) (1 << rnd.nextInt(8));
            else b[at] = (byte) rnd.nextInt(256);
            sb.append(' ').append(at);
        }
        return sb.toString();
    }

    private static void decodeEverything(ModelWeights w) {
        w.embedding().dequantizeAll();
        w.finalNorm().dequantizeAll();
        w.unembedding().dequantizeAll();
        for (LayerWeights l : w.layers())
            for (var rc : LayerWeights.class.getRecordComponents()) {
                try {
                    ((WeightView) rc.getAccessor().invoke(l)).dequantizeAll();
                } catch (ReflectiveOperationException e) {
                    throw new AssertionError(e);
                }
            }
    }
}
