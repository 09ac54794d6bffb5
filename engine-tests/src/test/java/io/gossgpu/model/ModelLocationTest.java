package io.gossgpu.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gossgpu.GossException;
import io.gossgpu.testmodel.GgufWriter;
import io.gossgpu.testmodel.SafetensorsWriter;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every download layout opens by pointing at its top folder. */
class ModelLocationTest {
    @TempDir
    Path tmp;

    private final TestModelGenerator g = new TestModelGenerator(TestModelPresets.tiny(), 3);

    /** {@code huggingface-cli download openai/gpt-oss-20b --include "original/*" --local-dir gpt-oss-20b/}. */
    @Test
    void officialOriginalOnlyDownloadOpensFromItsTopFolder() throws IOException {
        Path root = tmp.resolve("gpt-oss-20b");
        SafetensorsWriter.writeOriginal(g, root.resolve("original"));
        Files.writeString(root.resolve("original/dtypes.json"), "{}");
        assertOpensAs(root, ModelFormat.ORIGINAL, root.resolve("original"));
    }

    @Test
    void huggingFaceFolderOpensWithAndWithoutOriginal() {
        Path plain = tmp.resolve("hf");
        SafetensorsWriter.writeHf(g, plain, 400_000);
        assertOpensAs(plain, ModelFormat.HF, plain);
        Path both = tmp.resolve("both");
        SafetensorsWriter.writeHf(g, both, 400_000);
        SafetensorsWriter.writeOriginal(g, both.resolve("original"));
        assertOpensAs(both, ModelFormat.HF, both);
    }

    /** ~/.cache/huggingface/hub/models--openai--gpt-oss-20b: refs/main names the snapshot (whose files are links to blobs). */
    @Test
    void huggingFaceCacheRepositoryFolderOpensItsMainSnapshot() throws IOException {
        Path repo = tmp.resolve("models--openai--gpt-oss-20b");
        Path blobs = repo.resolve("blobs"), snap = repo.resolve("snapshots/abc123/original");
        SafetensorsWriter.writeOriginal(g, blobs.resolve("tmp"));
        Files.createDirectories(snap);
        for (String f : List.of("config.json", "model.safetensors"))
            Files.createSymbolicLink(snap.resolve(f), blobs.resolve("tmp").resolve(f));
        Files.createDirectories(repo.resolve("snapshots/older"));
        Files.createDirectories(repo.resolve("refs"));
        Files.writeString(repo.resolve("refs/main"), "abc123\n");
        assertOpensAs(repo, ModelFormat.ORIGINAL, snap);
    }

    /** LM Studio: lmstudio-community/gpt-oss-20b-GGUF/gpt-oss-20b-MXFP4.gguf. */
    @Test
    void ggufFileAndTheFolderHoldingItOpen() {
        Path folder = tmp.resolve("gpt-oss-20b-GGUF");
        Path file = folder.resolve("gpt-oss-20b-MXFP4.gguf");
        writeGguf(file);
        assertOpensAs(file, ModelFormat.GGUF, file);
        assertOpensAs(folder, ModelFormat.GGUF, file);
    }

    @Test
    void splitGgufOpensFromAnyShardOrItsFolderWithTheSameWeights() throws IOException {
        Path single = tmp.resolve("one.gguf");
        writeGguf(single);
        Path folder = tmp.resolve("gpt-oss-120b-GGUF");
        Files.createDirectories(folder);
        Path first = GgufWriter.writeSplit(g, folder, "gpt-oss-120b-mxfp4", 3, GgufWriter.Options.defaults());
        assertEquals(
                "gpt-oss-120b-mxfp4-00001-of-00003.gguf", first.getFileName().toString());
        assertOpensAs(folder, ModelFormat.GGUF, first);
        assertOpensAs(folder.resolve("gpt-oss-120b-mxfp4-00002-of-00003.gguf"), ModelFormat.GGUF, first);
        try (Checkpoint a = Checkpoint.open(single, LoadOptions.defaults());
                Checkpoint b = Checkpoint.open(folder, LoadOptions.defaults())) {
            assertEquals(a.config(), b.config());
            assertEquals(a.tensors().keySet(), b.tensors().keySet());
            for (String name : a.tensors().keySet())
                assertArrayEquals(
                        a.tensor(name).bytes().toArray(java.lang.foreign.ValueLayout.JAVA_BYTE),
                        b.tensor(name).bytes().toArray(java.lang.foreign.ValueLayout.JAVA_BYTE),
                        name);
            ModelWeights.of(b);
            assertEquals(
                    3,
                    b.tensors().values().stream()
                            .map(TensorData::file)
                            .distinct()
                            .count());
        }
        Files.delete(folder.resolve("gpt-oss-120b-mxfp4-00003-of-00003.gguf"));
        GossException e = assertThrows(GossException.class, () -> Checkpoint.open(folder, LoadOptions.defaults()));
        assertTrue(e.getMessage().contains("shard gpt-oss-120b-mxfp4-00003-of-00003.gguf is missing"), e.getMessage());
    }

    @Test
    void splitShardsMustSayWhichShardTheyAre() throws IOException {
        Path folder = tmp.resolve("split");
        Files.createDirectories(folder);
        GgufWriter.writeSplit(g, folder, "m", 2, GgufWriter.Options.defaults());
        Files.move(folder.resolve("m-00002-of-00002.gguf"), folder.resolve("x.tmp"));
        Files.move(folder.resolve("m-00001-of-00002.gguf"), folder.resolve("m-00002-of-00002.gguf"));
        Files.move(folder.resolve("x.tmp"), folder.resolve("m-00001-of-00002.gguf"));
        GossException e = assertThrows(GossException.class, () -> Checkpoint.open(folder, LoadOptions.defaults()));
        assertTrue(e.getMessage().contains("split shard 1 of 2"), e.getMessage());
    }

    /** ~/.ollama/models: a manifest per tag names the GGUF blob. */
    @Test
    void ollamaModelsFolderAndManifestOpenTheBlob() throws IOException {
        Path models = tmp.resolve("ollama/models");
        Path blob = models.resolve("blobs/sha256-0123abcd");
        Files.createDirectories(blob.getParent());
        writeGguf(blob);
        Path manifest = models.resolve("manifests/registry.ollama.ai/library/gpt-oss/20b");
        Files.createDirectories(manifest.getParent());
        Files.writeString(manifest, """
                {"schemaVersion":2,"mediaType":"application/vnd.docker.distribution.manifest.v2+json",
                 "layers":[{"mediaType":"application/vnd.ollama.image.license","digest":"sha256-ffff","size":1},
                           {"mediaType":"application/vnd.ollama.image.model","digest":"sha256:0123abcd","size":10}]}""");
        assertOpensAs(models, ModelFormat.GGUF, blob);
        assertOpensAs(manifest, ModelFormat.GGUF, blob);
    }

    @Test
    void ollamaModelNamesNameTheirManifest() throws IOException {
        Path models = tmp.resolve("ollama-names");
        Path manifest = models.resolve("manifests/registry.ollama.ai/library/gpt-oss/20b");
        Files.createDirectories(manifest.getParent());
        Files.writeString(manifest, "{}");
        assertEquals(manifest, ModelLocation.ollamaManifest("ollama:gpt-oss:20b", models));
        Path latest = manifest.resolveSibling("latest");
        Files.writeString(latest, "{}");
        assertEquals(latest, ModelLocation.ollamaManifest("ollama:gpt-oss", models));
        GossException e =
                assertThrows(GossException.class, () -> ModelLocation.ollamaManifest("ollama:gpt-oss:120b", models));
        assertTrue(e.getMessage().contains("ollama pull gpt-oss:120b"), e.getMessage());
        assertThrows(GossException.class, () -> ModelLocation.ollamaManifest("ollama:../x:1", models));
    }

    @Test
    void aFifoIsNotCalledMissing() throws Exception {
        Path fifo = tmp.resolve("fifo");
        Process p = new ProcessBuilder("mkfifo", fifo.toString()).start();
        assumeTrue(p.waitFor() == 0, "mkfifo is not available here");
        GossException e = assertThrows(GossException.class, () -> Checkpoint.open(fifo, LoadOptions.defaults()));
        assertTrue(e.getMessage().contains("not a regular file or folder"), e.getMessage());
    }

    @Test
    void folderWithSeveralGgufModelsNamesThem() {
        Path folder = tmp.resolve("many");
        writeGguf(folder.resolve("a.gguf"));
        writeGguf(folder.resolve("b.gguf"));
        GossException e = assertThrows(GossException.class, () -> Checkpoint.open(folder, LoadOptions.defaults()));
        assertTrue(
                e.getMessage().contains("holds 2 GGUF models") && e.getMessage().contains("a.gguf, b.gguf"),
                e.getMessage());
    }

    /** An original/ folder and a .gguf side by side: refused, naming both, not one picked silently. */
    @Test
    void folderWithAnOriginalFolderAndAGgufNamesBoth() {
        Path folder = tmp.resolve("two");
        SafetensorsWriter.writeOriginal(g, folder.resolve("original"));
        writeGguf(folder.resolve("gpt-oss-20b-mxfp4.gguf"));
        GossException e = assertThrows(GossException.class, () -> ModelLocation.find(folder));
        String m = e.getMessage();
        assertTrue(
                m.contains(folder.resolve("original").toString())
                        && m.contains("gpt-oss-20b-mxfp4.gguf")
                        && m.contains("point --model at"),
                m);
        assertEquals(1, m.lines().count(), m);
        assertOpensAs(folder.resolve("original"), ModelFormat.ORIGINAL, folder.resolve("original"));
    }

    /** A link to itself, or two links to each other: the error says loop, not "not found". */
    @Test
    void symbolicLinkLoopIsCalledALoop() throws IOException {
        Path self = tmp.resolve("self");
        Files.createSymbolicLink(self, self.getFileName());
        Path a = tmp.resolve("a"), b = tmp.resolve("b");
        Files.createSymbolicLink(a, b);
        Files.createSymbolicLink(b, a);
        for (Path p : List.of(self, a)) {
            GossException e = assertThrows(GossException.class, () -> Checkpoint.open(p, LoadOptions.defaults()));
            assertTrue(e.getMessage().contains("symbolic link loop"), e.getMessage());
        }
        Path dangling = tmp.resolve("dangling");
        Files.createSymbolicLink(dangling, tmp.resolve("nowhere"));
        GossException e = assertThrows(GossException.class, () -> ModelLocation.find(dangling));
        assertTrue(e.getMessage().contains("nowhere, which does not exist"), e.getMessage());
        e = assertThrows(GossException.class, () -> ModelLocation.find(tmp.resolve("missing")));
        assertEquals("model not found: " + tmp.resolve("missing"), e.getMessage());
    }

    private void writeGguf(Path file) {
        try {
            Files.createDirectories(file.getParent());
        } catch (IOException e) {
            throw new RuntimeException(e);
        }
        GgufWriter.write(g, file, GgufWriter.Options.defaults());
    }

    private void assertOpensAs(Path given, ModelFormat format, Path resolved) {
        ModelLocation at = ModelLocation.find(given);
        assertEquals(format, at.format(), given.toString());
        assertEquals(resolved, at.path(), given.toString());
        try (Checkpoint c = Checkpoint.open(given, LoadOptions.defaults())) {
            assertEquals(g.config(), c.config());
            ModelWeights.of(c);
        }
    }
}
