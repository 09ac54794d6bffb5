package io.gossgpu.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.api.CapturedLog;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The knob names of the backends found on the class path (here the cpu backend's), and their warnings. */
class SettingNamesOnClassPathTest {
    @Test
    void theBackendsOnTheClassPathDeclareTheirNamesAndEachWarningIsPrintedOnce() {
        assertTrue(
                SettingNames.known().containsAll(List.of("GOSS_CPU_THREADS", "GOSS_CPU_KERNELS")),
                SettingNames.known().toString());
        List<String> w = SettingNames.unknown(List.of("GOSS_CPU_THREADSX"), SettingNames.known());
        List<String> log = CapturedLog.of(() -> {
            SettingNames.warnOnce(w);
            SettingNames.warnOnce(w);
        });
        assertEquals(List.of("WARNING unknown setting GOSS_CPU_THREADSX (did you mean GOSS_CPU_THREADS?)"), log);
    }
}
