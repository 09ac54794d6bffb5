package io.gossgpu.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.BackendProvider;
import io.gossgpu.backend.Backends;
import io.gossgpu.opencl.OpenCl;
import io.gossgpu.opencl.OpenClBackendProvider;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The command line picks and lists devices through the backend SPI ({@link BackendProvider#deviceSetting()},
 * {@link BackendProvider#deviceListing}), naming no backend class: {@code --device} sets each backend's device setting,
 * {@code --threads} each backend's threads setting, and {@code info --backends} prints the listing of each backend that has one.
 */
class DeviceSelectionTest {
    @Test
    void deviceFlagSetsTheDeviceSettingOfEachBackendThatHasOne() {
        ModelOptions o = new ModelOptions();
        o.device = "1"; // as --device 1 sets it
        BackendOptions b = o.backendOptions();
        List<String> settings = Backends.providers().stream()
                .flatMap(p -> p.deviceSetting().stream())
                .toList();
        assertEquals(List.of(OpenCl.DEVICE), settings, "only opencl offers a choice of device today");
        assertEquals("1", b.get(OpenCl.DEVICE));
    }

    /** {@code --threads} likewise sets each backend's threads setting ({@link BackendProvider#threadsSetting()}), the cpu backend's today. */
    @Test
    void threadsFlagSetsTheThreadsSettingOfEachBackendThatHasOne() {
        ModelOptions o = new ModelOptions();
        o.threads = 3; // as --threads 3 sets it
        BackendOptions b = o.backendOptions();
        List<String> settings = Backends.providers().stream()
                .flatMap(p -> p.threadsSetting().stream())
                .toList();
        assertEquals(List.of("GOSS_CPU_THREADS"), settings, "only cpu runs on a choice of threads today");
        assertEquals("3", b.get("GOSS_CPU_THREADS"));
        assertEquals("--threads", b.source("GOSS_CPU_THREADS"));
        BackendProvider cpu = Backends.providers().stream()
                .filter(p -> p.name().equals("cpu"))
                .findFirst()
                .orElseThrow();
        assertEquals(
                3,
                cpu.knobStates(b).stream()
                        .filter(k -> k.knob().envName().equals("GOSS_CPU_THREADS"))
                        .findFirst()
                        .orElseThrow()
                        .value());
    }

    @Test
    void infoListsTheDevicesOfEachBackendThatHasThem() {
        BackendProvider opencl = new OpenClBackendProvider();
        assumeTrue(Backends.safeAvailability(opencl).available(), "no OpenCL platform here: nothing to list");
        CommandLineTest.Run r = CommandLineTest.run("", "info", "--backends");
        assertEquals(0, r.code(), r.err());
        List<String> lines = OpenCl.deviceListing(null);
        assertTrue(!lines.isEmpty() && lines.stream().anyMatch(l -> l.startsWith("* [0] ")), lines.toString());
        StringBuilder want = new StringBuilder("opencl devices (* = selected; --device or GOSS_OPENCL_DEVICE):\n");
        lines.forEach(l -> want.append("  ").append(l).append('\n'));
        assertTrue(r.out().contains(want), r.out());
        assertEquals(lines, opencl.deviceListing(BackendOptions.defaults()));
    }
}
