package io.gossgpu.api;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gossgpu.backend.BackendOptions;
import io.gossgpu.testmodel.SafetensorsWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A misspelled knob in an engine's {@link BackendOptions} (from the environment through
 * {@link EngineOptions#of}, or set in code) used to be ignored without a word; {@link Engine#open} names it once, as a
 * warning on the {@code io.gossgpu.backend} System.Logger and not on System.err (the library logs, the
 * command line prints).
 */
class UnknownSettingWarningTest {
    @TempDir
    Path dir;

    @Test
    void engineOpenWarnsOnceAboutANameNoBackendReads() {
        Path model = SafetensorsWriter.writeTinyOriginal(dir, 1);
        BackendOptions typo =
                BackendOptions.defaults().with("GOSS_CPU_THREDS", "2").with("GOSS_CPU_THREADS", "1");
        EngineOptions options = EngineOptions.of(model).withBackend("cpu").withBackendOptions(typo);
        List<List<String>> log = new ArrayList<>();
        String err = CapturedStderr.of(() -> log.add(CapturedLog.of(() -> {
            for (int i = 0; i < 2; i++)
                try (Engine e = Engine.open(options)) {
                    assertEquals(
                            "GOSS_CPU_THREADS=1 (code)", e.knobs().getFirst().brief());
                }
        })));
        assertEquals(
                1,
                log.getFirst().stream()
                        .filter(l ->
                                l.equals("WARNING unknown setting GOSS_CPU_THREDS (did you mean GOSS_CPU_THREADS?)"))
                        .count(),
                log.toString());
        assertEquals("", err, "the library writes nothing on System.err itself");
    }
}
