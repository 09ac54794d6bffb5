package io.gossgpu.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.LoadOptions;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The jar's demo model unpacks to a folder named by its hash, whole or not at all, and loads as gpt-oss's original/ layout. */
class DemoCheckpointTest {
    @TempDir
    Path dir;

    @Test
    void unpacksOnceIntoAFolderNamedByItsHashAndLoads() throws Exception {
        assertFalse(DemoCheckpoint.isUnpacked(dir));
        Path model = DemoCheckpoint.unpack(dir);
        assertEquals(dir.resolve("demo-model-" + DemoCheckpoint.sha256().substring(0, 12)), model);
        assertTrue(DemoCheckpoint.isUnpacked(dir));
        try (InputStream in = Files.newInputStream(model.resolve("model.safetensors"))) {
            assertEquals(
                    DemoCheckpoint.sha256(),
                    HexFormat.of()
                            .formatHex(MessageDigest.getInstance("SHA-256").digest(in.readAllBytes())));
        }
        long modified =
                Files.getLastModifiedTime(model.resolve("model.safetensors")).toMillis();
        assertEquals(model, DemoCheckpoint.unpack(dir));
        assertEquals(
                modified,
                Files.getLastModifiedTime(model.resolve("model.safetensors")).toMillis(),
                "unpacked again");
        try (Checkpoint c = Checkpoint.open(model, LoadOptions.defaults())) {
            assertEquals(201088, c.config().vocabSize());
            assertEquals(4, c.config().numHiddenLayers());
            assertTrue(
                    c.config().slidingWindow() > 0 && c.config().ropeScalingFactor() > 1,
                    "sliding window and YaRN, as gpt-oss");
        }
    }

    /** An unpack cut short leaves at most a temporary file, never a model.safetensors; the next unpack completes. */
    @Test
    void anInterruptedUnpackIsNeverTakenForAModel() throws Exception {
        Path folder = DemoCheckpoint.folder(dir);
        Files.createDirectories(folder);
        Files.writeString(
                folder.resolve("model.safetensors.123.part"),
                "the first megabytes of a model"); // what a killed unpack leaves
        assertFalse(DemoCheckpoint.isUnpacked(dir));
        Path model = DemoCheckpoint.unpack(dir);
        assertTrue(Files.size(model.resolve("model.safetensors")) > 50_000_000);
        try (Stream<Path> files = Files.list(model)) {
            List<String> names =
                    files.map(p -> p.getFileName().toString()).sorted().toList();
            assertEquals(
                    List.of("config.json", "model.safetensors", "model.safetensors.123.part"),
                    names,
                    "only the old leftover stays");
        }
    }
}
