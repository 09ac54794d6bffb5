package io.gossgpu.api;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.backend.BackendOptions;
import io.gossgpu.cpu.CpuBackendProvider;
import io.gossgpu.testmodel.SafetensorsWriter;
import io.gossgpu.testmodel.TestModelPresets;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Knobs are values, not process state: two engines on the same model in one JVM, each created with its own
 * {@link BackendOptions} (here the cpu backend's thread count), run side by side on two threads; each keeps its
 * own setting and both answer the same.
 */
class TwoEnginesWithDifferentKnobsTest {
    @TempDir
    Path dir;

    @Test
    void twoEnginesWithDifferentKnobsRunSideBySide() throws Exception {
        Path model = SafetensorsWriter.writeOriginalIn(dir, TestModelPresets.twoLayerDemo(), 5);
        EngineOptions base = EngineOptions.of(model).withBackend("cpu");
        try (Engine one = Engine.open(
                        base.withBackendOptions(BackendOptions.defaults().with(CpuBackendProvider.THREADS, 1)));
                Engine two = Engine.open(
                        base.withBackendOptions(BackendOptions.defaults().with(CpuBackendProvider.THREADS, 2)))) {
            assertTrue(one.backendDescription().contains("1 thread "), one.backendDescription());
            assertTrue(two.backendDescription().contains("2 threads"), two.backendDescription());
            // each engine lists the knob as it runs it, and where the value came from
            assertEquals("GOSS_CPU_THREADS=1 (code)", one.knobs().getFirst().brief());
            assertEquals("GOSS_CPU_THREADS=2 (code)", two.knobs().getFirst().brief());
            CompletableFuture<Reply> a = CompletableFuture.supplyAsync(() -> complete(one));
            CompletableFuture<Reply> b = CompletableFuture.supplyAsync(() -> complete(two));
            int[] first = a.get().tokens(), second = b.get().tokens();
            assertTrue(first.length > 0);
            assertArrayEquals(first, second, "the thread count changes the speed, not the tokens");
            assertTrue(
                    one.backendDescription().contains("1 thread "),
                    "still one thread after the other engine ran: " + one.backendDescription());
        }
    }

    private static Reply complete(Engine e) {
        try (Completion c = e.newCompletion(ChatOptions.defaults().withContextLength(64))) {
            return c.complete(
                    "The sky is", ChatOptions.defaults().withMaxTokens(24).withSampling(Sampling.greedy()), null);
        }
    }
}
