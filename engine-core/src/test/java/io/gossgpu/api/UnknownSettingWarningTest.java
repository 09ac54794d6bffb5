package io.gossgpu.api;

import io.gossgpu.backend.BackendOptions;
import io.gossgpu.testmodel.SafetensorsWriter;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Issue 20, finding 4: a misspelled knob in an engine's {@link BackendOptions} (from the environment through
 * {@link EngineOptions#of}, or set in code) used to be ignored without a word; {@link Engine#open} names it once.
 */
class UnknownSettingWarningTest {
    @TempDir
    Path dir;

    @Test
    void engineOpenWarnsOnceAboutANameNoBackendReads() {
        Path model = dir.resolve("m");
        SafetensorsWriter.writeOriginal(new TestModelGenerator(TestModelPresets.tiny(), 1), model);
        BackendOptions typo = BackendOptions.defaults().with("GOSS_CPU_THREDS", "2").with("GOSS_CPU_THREADS", "1");
        EngineOptions options = EngineOptions.of(model).withBackend("cpu").withBackendOptions(typo);
        String err = CapturedStderr.of(() -> {
            for (int i = 0; i < 2; i++) try (Engine e = Engine.open(options)) {
                assertEquals("GOSS_CPU_THREADS=1 (code)", e.knobs().getFirst().brief());
            }
        });
        assertEquals(1, err.lines()
                .filter(l -> l.equals("goss-gpu: warning: unknown setting GOSS_CPU_THREDS (did you mean GOSS_CPU_THREADS?)")).count(),
                err);
    }
}
