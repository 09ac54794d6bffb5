package io.gossgpu.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.GossException;
import io.gossgpu.testmodel.SafetensorsWriter;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A model file changed while mapped is one clear error, not a SIGBUS or an InternalError trace. */
class MappedFileChangeTest {
    @TempDir
    Path dir;

    private Path model() {
        return SafetensorsWriter.writeTinyOriginal(dir, 4);
    }

    private static Completion completion(Engine engine) {
        return engine.newCompletion(ChatOptions.defaults().withContextLength(64).withMaxTokens(2));
    }

    private static void assertChanged(Path file, String change, GossException e) {
        assertTrue(
                e.getMessage().startsWith(file + ": changed on disk while it was mapped (" + change), e.getMessage());
        assertTrue(e.getMessage().contains("--no-mmap"), e.getMessage());
        assertEquals(1, e.getMessage().lines().count(), e.getMessage());
    }

    @Test
    void truncatingTheMappedFileWhileTheReferenceBackendRunsIsAOneLineError() throws Exception {
        Path model = model(), file = model.resolve("model.safetensors");
        long size = Files.size(file);
        try (Engine engine = Engine.open(EngineOptions.of(model).withBackend("reference"));
                Completion completion = completion(engine)) {
            completion.complete("a", new ChatListener() {});
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
                ch.truncate(4096);
            }
            GossException e = assertThrows(GossException.class, () -> completion.complete("a", new ChatListener() {}));
            assertChanged(file, "size " + size + " -> 4096 bytes)", e);
        }
    }

    /**
     * The end of embedding.weight in {@code file} rounded up to 64 KiB (a page on every platform): cut there, a step's
     * first reads (the tokens' embedding rows, in Java) still find their pages and the dense matrices after it, read
     * by the cpu backend's native kernels, do not.
     */
    private static long afterTheEmbedding(Path file) throws Exception {
        byte[] b = Files.readAllBytes(file);
        long headerBytes = java.nio.ByteBuffer.wrap(b)
                .order(java.nio.ByteOrder.LITTLE_ENDIAN)
                .getLong();
        var offsets = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(new String(b, 8, (int) headerBytes, StandardCharsets.UTF_8))
                .get("embedding.weight")
                .get("data_offsets");
        assertEquals(0, offsets.get(0).asLong(), "the embedding comes first in the file");
        long end = 8 + headerBytes + offsets.get(1).asLong(), page = 64 << 10;
        assertTrue(end + page < b.length, "matrices follow the embedding");
        return (end + page - 1) / page * page;
    }

    /** The cpu backend's kernels read the mapping natively: the process died of SIGBUS (exit 134, an hs_err file). */
    @Test
    void truncatingTheMappedFileWhileTheCpuBackendRunsIsAOneLineErrorNotACrash() throws Exception {
        Path model = model(), file = model.resolve("model.safetensors");
        long size = Files.size(file), cut = afterTheEmbedding(file);
        List<String> cmd = new ArrayList<>(List.of(
                ProcessHandle.current().info().command().orElse("java"),
                "--add-modules",
                "jdk.incubator.vector",
                "--enable-native-access=ALL-UNNAMED",
                "-Xmx512m",
                "-XX:ErrorFile=" + dir.resolve("hs_err_%p.log"),
                "-cp",
                System.getProperty("java.class.path"),
                TruncateWhileMapped.class.getName(),
                model.toString(),
                "cpu",
                String.valueOf(cut)));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(5, TimeUnit.MINUTES), "TruncateWhileMapped did not finish");
        assertEquals(1, p.exitValue(), out);
        List<String> lines = out.lines()
                .filter(l -> !l.startsWith("WARNING") && !l.isBlank())
                .toList();
        assertEquals(
                List.of(
                        "completed",
                        "goss-gpu: " + file + ": changed on disk while it was mapped (size " + size + " -> " + cut
                                + " bytes); open the model again, or read it into memory (--no-mmap, EngineOptions.withMmap(false))"),
                lines,
                out);
    }

    @Test
    void rewritingTheMappedFileInPlaceIsNamedToo() throws Exception {
        Path model = model(), file = model.resolve("model.safetensors");
        try (Engine engine = Engine.open(EngineOptions.of(model).withBackend("reference"));
                Completion completion = completion(engine)) {
            completion.complete("a", new ChatListener() {});
            Files.setLastModifiedTime(
                    file, FileTime.fromMillis(Files.getLastModifiedTime(file).toMillis() + 60_000));
            assertChanged(
                    file,
                    "modified ",
                    assertThrows(GossException.class, () -> completion.complete("a", new ChatListener() {})));
        }
    }

    /** Read into memory, the model no longer depends on the file; and a file replaced by a rename leaves the mapping whole. */
    @Test
    void aModelReadIntoMemoryOrAFileReplacedByRenameKeepsRunning() throws Exception {
        Path model = model(), file = model.resolve("model.safetensors");
        try (Engine engine = Engine.open(
                        EngineOptions.of(model).withBackend("reference").withMmap(false));
                Completion completion = completion(engine)) {
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
                ch.truncate(4096);
            }
            assertEquals(0, engine.checkpoint().mappedFiles().size());
            completion.complete("a", new ChatListener() {});
        }
        model = model();
        try (Engine engine = Engine.open(EngineOptions.of(model).withBackend("reference"));
                Completion completion = completion(engine)) {
            assertEquals(1, engine.checkpoint().mappedFiles().size());
            Path other = dir.resolve("other");
            Files.write(other, new byte[4096]);
            Files.move(other, model.resolve("model.safetensors"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            completion.complete("a", new ChatListener() {});
        }
    }
}
