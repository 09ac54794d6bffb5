package io.gossgpu.api;

import io.gossgpu.GossException;
import io.gossgpu.model.safetensors.SafetensorsWriter;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A model file truncated while mapped is one clear error, not an InternalError trace (issue 17, finding 4). */
class MappedFileChangeTest {
    @TempDir
    Path dir;

    @Test
    void truncatingTheMappedFileWhileTheReferenceBackendRunsIsAOneLineError() throws Exception {
        Path model = dir.resolve("m");
        SafetensorsWriter.writeOriginal(new TestModelGenerator(TestModelPresets.tiny(), 4), model);
        try (Engine engine = Engine.open(EngineOptions.of(model).withBackend("reference"));
             Completion completion = engine.newCompletion(ChatOptions.defaults().withContextLength(64).withMaxTokens(2))) {
            try (FileChannel ch = FileChannel.open(model.resolve("model.safetensors"), StandardOpenOption.WRITE)) {
                ch.truncate(4096);
            }
            GossException e = assertThrows(GossException.class, () -> completion.complete("a", new ChatListener() {}));
            assertTrue(e.getMessage().startsWith(model + ": the model file was truncated or changed while mapped"), e.getMessage());
            assertTrue(e.getMessage().contains("--no-mmap"), e.getMessage());
        }
    }
}
