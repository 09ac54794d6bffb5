package io.gossgpu.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.GossException;
import io.gossgpu.backend.DeviceMemoryException;
import io.gossgpu.backend.ForwardingBackend;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.reference.ReferenceBackend;
import io.gossgpu.testmodel.SafetensorsWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code auto} tries the available backends in order: one whose device cannot hold the weights
 * ({@link DeviceMemoryException}) is closed, a line says so, and the next one loads the model. Any other error, and
 * the last backend's, is the caller's. (The real GPU case, a CUDA device with too little free memory, is
 * CudaAutoFallbackTest under the fake driver.)
 */
class AutoBackendFallbackTest {
    @TempDir
    Path dir;

    private Path model;
    private final List<String> events = new ArrayList<>();
    private final List<String> logged = new ArrayList<>();

    @BeforeEach
    void writeModel() {
        model = SafetensorsWriter.writeTinyOriginal(dir, 1);
    }

    /** A backend named {@code name} that fails loading with {@code failure} (none: loads on the reference backend). */
    private Engine.Candidate candidate(String name, RuntimeException failure) {
        return new Engine.Candidate(name, () -> {
            events.add("create " + name);
            return new ForwardingBackend(new ReferenceBackend()) {
                @Override
                public String name() {
                    return name;
                }

                @Override
                public LoadedWeights loadWeights(ModelWeights weights) {
                    if (failure != null) throw failure;
                    return super.loadWeights(weights);
                }

                @Override
                public void close() {
                    events.add("close " + name);
                    super.close();
                }
            };
        });
    }

    private Engine open(Engine.Candidate... candidates) {
        try (AutoCloseable capture = CapturedLog.into(logged)) {
            return Engine.openFirst(EngineOptions.of(model), () -> List.of(candidates));
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private String logged() {
        return String.join("\n", logged);
    }

    @Test
    void aGpuTooSmallForTheModelHandsItToTheNextBackend() {
        try (Engine e = open(
                candidate(
                        "gpu",
                        new DeviceMemoryException(
                                "the model's weights need 12.00 GiB on the device but Small GPU has 8.00 GiB free")),
                candidate("cpu", null))) {
            assertTrue(e.backendDescription().startsWith("cpu "), e.backendDescription());
            assertEquals(List.of("create gpu", "close gpu", "create cpu"), events);
        }
        assertEquals(
                "INFO gpu: the model's weights need 12.00 GiB on the device but Small GPU has 8.00 GiB free; auto loads the "
                        + "model on cpu instead",
                logged());
        assertEquals("close cpu", events.getLast());
    }

    @Test
    void theLastBackendsShortageIsTheCallersError() {
        DeviceMemoryException last = new DeviceMemoryException("second");
        DeviceMemoryException e = assertThrows(
                DeviceMemoryException.class,
                () -> open(candidate("gpu0", new DeviceMemoryException("first")), candidate("gpu1", last)));
        assertSame(last, e);
        assertEquals(List.of("create gpu0", "close gpu0", "create gpu1", "close gpu1"), events);
        assertEquals("INFO gpu0: first; auto loads the model on gpu1 instead", logged());
    }

    @Test
    void otherLoadErrorsAreNotPassedOver() {
        GossException broken = new GossException("upload failed");
        GossException e =
                assertThrows(GossException.class, () -> open(candidate("gpu", broken), candidate("cpu", null)));
        assertSame(broken, e);
        assertEquals(List.of("create gpu", "close gpu"), events);
        assertEquals("", logged());
    }
}
