package io.gossgpu.model.safetensors;

import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.LayerWeights;
import io.gossgpu.model.LoadOptions;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelFormatException;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.model.WeightView;
import io.gossgpu.testmodel.SafetensorsWriter;
import io.gossgpu.testmodel.TestModelGenerator;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Random byte flips and truncations of small valid models: every case must end in a loaded model
 * whose every weight decodes, or in a {@link ModelFormatException} (one line, naming the file) — never
 * another exception, a hang or a crash. Deterministic: case {@code i} uses seed {@code base + i}, and a
 * failure names the case, its seed and what was done to the files.
 */
class SafetensorsFuzzTest {
    static final long BASE_SEED = 0x5AFE_7E45L;
    /** Small enough that headers are a good part of the file, so flips often land in them. */
    static final ModelConfig SMALL =
            new ModelConfig(2, 4, 2, 37, 64, 32, 7f, 8, 4, 2, 3, 4096, 150000f, 32f, 1f, 32f, 1e-5f);

    static final String JSON_CHARS = " {}[],:\"0123456789-.eE\\";

    @TempDir
    Path tmp;

    @Test
    void corruptedOriginalModelsLoadOrFailWithModelFormatException() throws IOException {
        Path valid = tmp.resolve("valid");
        SafetensorsWriter.writeOriginal(new TestModelGenerator(SMALL, 1), valid);
        run(valid, 3000, BASE_SEED);
    }

    @Test
    void corruptedShardedHfModelsLoadOrFailWithModelFormatException() throws IOException {
        Path valid = tmp.resolve("valid");
        SafetensorsWriter.writeHf(new TestModelGenerator(SMALL, 1), valid, 20_000);
        run(valid, 600, BASE_SEED ^ 0xF00D);
    }

    /** Runs {@code cases} mutations of the files in {@code valid}. */
    private void run(Path valid, int cases, long baseSeed) throws IOException {
        Map<String, byte[]> files = new LinkedHashMap<>();
        try (Stream<Path> s = Files.list(valid)) {
            for (Path p : s.sorted().toList()) files.put(p.getFileName().toString(), Files.readAllBytes(p));
        }
        List<String> names = new ArrayList<>(files.keySet());
        Path dir = tmp.resolve("case");
        Files.createDirectories(dir);
        for (String n : names) Files.write(dir.resolve(n), files.get(n));
        String[] lastTarget = {names.getFirst()};
        int[] outcomes = new int[2];
        long start = System.nanoTime();
        assertTimeoutPreemptively(Duration.ofSeconds(120), () -> {
            for (int i = 0; i < cases; i++) {
                long seed = baseSeed + i;
                SplittableRandom rnd = new SplittableRandom(seed);
                // safetensors files are picked more often than the JSON ones
                String target = names.get(rnd.nextInt(names.size()));
                if (!target.endsWith(".safetensors") && rnd.nextBoolean())
                    target = names.get(rnd.nextInt(names.size()));
                byte[] b = files.get(target).clone();
                String what = target + ": ";
                boolean safetensors = target.endsWith(".safetensors");
                int headerEnd = safetensors
                        ? 8
                                + (int) ByteBuffer.wrap(b)
                                        .order(ByteOrder.LITTLE_ENDIAN)
                                        .getLong(0)
                        : b.length;
                int kind = rnd.nextInt(10);
                if (kind < 4) { // flips in the header (length field included) or the JSON file
                    what += flip(rnd, b, 0, headerEnd, 1 + rnd.nextInt(4));
                } else if (kind < 6) { // flips anywhere
                    what += flip(rnd, b, 0, b.length, 1 + rnd.nextInt(8));
                } else if (kind < 8) { // truncation, sometimes after a flip
                    int len = rnd.nextInt(b.length);
                    what += (rnd.nextBoolean() ? flip(rnd, b, 0, headerEnd, 1) + ", " : "") + "truncated to " + len;
                    b = Arrays.copyOf(b, len);
                } else { // JSON punctuation or digits substituted into the header / JSON file
                    int from = safetensors ? 8 : 0;
                    what += "substituted";
                    for (int k = 0, n = 1 + rnd.nextInt(2); k < n; k++) {
                        int at = from + rnd.nextInt(headerEnd - from);
                        b[at] = (byte) JSON_CHARS.charAt(rnd.nextInt(JSON_CHARS.length()));
                        what += " " + at + "='" + (char) b[at] + "'";
                    }
                }
                if (!lastTarget[0].equals(target)) Files.write(dir.resolve(lastTarget[0]), files.get(lastTarget[0]));
                Files.write(dir.resolve(target), b);
                lastTarget[0] = target;
                boolean mmap = rnd.nextInt(4) != 0;
                String description = "fuzz case " + i + " (seed " + seed + ", " + what + ", mmap " + mmap + ")";
                try (Checkpoint ckpt = Checkpoint.open(dir, new LoadOptions(mmap))) {
                    decodeEverything(ModelWeights.of(ckpt));
                    outcomes[0]++;
                } catch (ModelFormatException e) {
                    String m = e.getMessage();
                    if (m == null || m.contains("\n") || !m.startsWith(dir.toString()))
                        throw new AssertionError(description + ": message not one line naming the file: " + m, e);
                    outcomes[1]++;
                } catch (Throwable t) {
                    throw new AssertionError(description + ": " + t, t);
                }
            }
        });
        System.out.printf(
                "safetensors fuzz of %s: %d cases in %.1f s, loaded %d, rejected %d%n",
                names, cases, (System.nanoTime() - start) / 1e9, outcomes[0], outcomes[1]);
        assertTrue(
                outcomes[0] > cases / 30 && outcomes[1] > cases / 3,
                "loaded " + outcomes[0] + ", rejected " + outcomes[1]);
    }

    private static String flip(SplittableRandom rnd, byte[] b, int from, int to, int count) {
        StringBuilder sb = new StringBuilder("flips at");
        if (to <= from) return "no flips";
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
