package io.gossgpu.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.gossgpu.GossException;
import io.gossgpu.reference.ReferenceBackend;
import io.gossgpu.testmodel.SafetensorsWriter;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The one check of a requested context against the model's maximum (initial_context_length × rope_scaling_factor,
 * 4096 × 32 on the tiny model) lives in the engine (cli and server each had their own, worded differently):
 * {@link Engine#open} refuses a stated {@link EngineOptions#contextLength()} before any backend is made, and a chat,
 * completion or KV cache asked for beyond it gets the same message.
 */
class ContextLengthCheckTest {
    private static final String BEYOND = "context length 131073 exceeds this model's maximum of 131072 tokens "
            + "(initial_context_length 4096 × rope_scaling_factor 32.0)";

    @TempDir
    Path dir;

    private Path model() {
        return SafetensorsWriter.writeTinyOriginal(dir, 1);
    }

    @Test
    void openRefusesAContextBeyondTheModelBeforeMakingABackend() {
        EngineOptions options = EngineOptions.of(model()).withContextLength(131073);
        GossException e = assertThrows(
                GossException.class,
                () -> Engine.open(options, () -> {
                    throw new AssertionError("the backend was made before the context was checked");
                }));
        assertEquals(BEYOND, e.getMessage());
        try (Engine atMax = Engine.open(EngineOptions.of(model()).withContextLength(131072), ReferenceBackend::new)) {
            assertEquals(131072, atMax.modelInfo().maxContextLength());
        }
    }

    @Test
    void chatsCompletionsAndKvCachesBeyondTheModelGetTheSameMessage() {
        try (Engine engine = Engine.open(EngineOptions.of(model()), ReferenceBackend::new)) { // no context stated
            ChatOptions beyond = ChatOptions.defaults().withContextLength(131073);
            assertEquals(
                    BEYOND,
                    assertThrows(GossException.class, () -> engine.newCompletion(beyond))
                            .getMessage());
            assertEquals(
                    BEYOND,
                    assertThrows(GossException.class, () -> engine.kvCacheSpec(131073, 0))
                            .getMessage());
            assertEquals(0, engine.openSessions());
        }
    }

    @Test
    void aStatedContextMustBePositive() {
        EngineOptions o = EngineOptions.of(Path.of("m"));
        assertEquals(
                "context length must be positive, got 0",
                assertThrows(GossException.class, () -> o.withContextLength(0)).getMessage());
        assertEquals(0, o.contextLength());
    }
}
