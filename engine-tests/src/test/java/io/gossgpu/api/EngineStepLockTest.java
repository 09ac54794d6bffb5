package io.gossgpu.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.gossgpu.backend.Backend;
import io.gossgpu.backend.DeviceTensor;
import io.gossgpu.backend.ForwardingBackend;
import io.gossgpu.reference.ReferenceBackend;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * The engine's shared backend belongs to one step at a time: between one thread's {@code beginStep} and its
 * {@code endStep}, another thread's calls wait (so a chat's step, which a backend may record as one CUDA graph or
 * one command buffer, is never split by another chat's ops); outside steps calls interleave freely.
 */
class EngineStepLockTest {
    @Test
    void aStepHoldsTheBackendUntilItEnds() throws Exception {
        Backend shared = Engine.serialized(new ReferenceBackend(), java.nio.file.Path.of("model"), () -> {});
        shared.beginStep(null);
        CompletableFuture<Integer> other = CompletableFuture.supplyAsync(() -> {
            try (DeviceTensor t = shared.allocate(2, 3)) {
                return t.cols();
            }
        });
        assertThrows(
                TimeoutException.class,
                () -> other.get(300, TimeUnit.MILLISECONDS),
                "another thread's call waits for the step");
        assertFalse(other.isDone());
        try (DeviceTensor mine = shared.allocate(1, 1)) { // the step's own thread goes on
            assertEquals(1, mine.rows());
        }
        shared.endStep();
        assertEquals(3, other.get(10, TimeUnit.SECONDS));
        // outside a step nothing is held: another thread gets through at once
        assertEquals("reference", CompletableFuture.supplyAsync(shared::name).get(10, TimeUnit.SECONDS));
    }

    @Test
    void aFailedBeginStepHoldsNothing() throws Exception {
        Backend failing = Engine.serialized(
                new ForwardingBackend(new ReferenceBackend()) {
                    @Override
                    public void beginStep(io.gossgpu.backend.Batch batch) {
                        throw new IllegalStateException("no");
                    }
                },
                java.nio.file.Path.of("model"),
                () -> {});
        assertThrows(IllegalStateException.class, () -> failing.beginStep(null));
        assertEquals("reference", CompletableFuture.supplyAsync(failing::name).get(10, TimeUnit.SECONDS));
    }
}
