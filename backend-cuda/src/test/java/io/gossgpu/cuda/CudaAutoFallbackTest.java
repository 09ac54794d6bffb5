package io.gossgpu.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.api.CapturedLog;
import io.gossgpu.api.Engine;
import io.gossgpu.api.EngineOptions;
import io.gossgpu.backend.DeviceMemoryException;
import io.gossgpu.testmodel.SafetensorsWriter;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A GPU whose free memory cannot hold the model: {@code auto} says so in one log message and loads the model on the next
 * available backend (cpu here); {@code --backend cuda} named explicitly is the one-line error. The fake driver reports
 * the free memory the test sets, so it runs only under it (elsewhere it is skipped, saying why).
 */
@ExtendWith(FakeCudaDriver.class)
class CudaAutoFallbackTest {
    @TempDir
    Path dir;

    @Test
    void autoLoadsAModelTooBigForTheGpuOnTheCpu() {
        Path model = SafetensorsWriter.writeTinyOriginal(dir, 1);
        EngineOptions auto = EngineOptions.of(model).withBackend("auto");

        try (Engine e = Engine.open(auto)) { // it fits: auto takes the GPU
            assertTrue(e.backendDescription().startsWith("cuda "), e.backendDescription());
        }

        FakeCudaDriver.setFreeMemory(1000);
        List<String> log = CapturedLog.of(() -> {
            try (Engine e = Engine.open(auto)) {
                assertTrue(e.backendDescription().startsWith("cpu "), e.backendDescription());
            }
        });
        String line = log.stream()
                .filter(l -> l.startsWith("INFO cuda: "))
                .findFirst()
                .orElseThrow(() -> new AssertionError(log));
        // the expert placement (auto) finds that not even the model without its experts fits (io.gossgpu.device)
        assertTrue(
                line.matches(
                        "INFO cuda: even with every layer's experts on the CPU, the rest of the model \\([0-9.]+ [KM]iB\\) and a KV "
                                + "cache for 4096 positions \\([0-9.]+ [KM]iB\\) with [0-9.]+ [KM]iB scratch need [0-9.]+ [KM]iB on goss-gpu fake CUDA driver, "
                                + "which has 1000 B free; choose a shorter context or another backend; auto loads the model on cpu instead"),
                line);

        DeviceMemoryException named = assertThrows(
                DeviceMemoryException.class,
                () -> Engine.open(EngineOptions.of(model).withBackend("cuda")).close());
        assertEquals(line.substring("INFO cuda: ".length(), line.indexOf("; auto loads")), named.getMessage());
    }
}
