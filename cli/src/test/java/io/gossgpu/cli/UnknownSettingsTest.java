package io.gossgpu.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gossgpu.tokenizer.O200kHarmony;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A misspelled {@code GOSS_OPENCL_DENSE_WGG} was silently ignored. The command line names every
 * {@code GOSS_*} variable nothing reads, once, with the nearest known name, and goes on.
 */
class UnknownSettingsTest {
    @Test
    void misspelledVariablesAreNamedWithTheNearestKnownName() throws Exception {
        CommandLineTest.Run r = CommandLineTest.runInNewJvm(
                Map.of(
                        "GOSS_OPENCL_DENSE_WGG", "32",
                        "GOSS_MODLE", "/models/x",
                        "GOSS_CPU_THREADS", "2", // known: no warning
                        "GOSS_REQUIRE_OPENCL", "1"), // read by the tests: no warning
                List.of(),
                "tokenize",
                "--text",
                "a");
        assertEquals(0, r.code(), r.err());
        assertEquals(String.valueOf(O200kHarmony.get().encode("a")[0]), r.out().strip(), "the command still runs");
        assertEquals(
                List.of(
                        "goss-gpu: warning: unknown setting GOSS_MODLE (did you mean GOSS_MODEL?)",
                        "goss-gpu: warning: unknown setting GOSS_OPENCL_DENSE_WGG (did you mean GOSS_OPENCL_DENSE_WG?)"),
                r.err().lines().toList(),
                "two lines, and nothing else: the check probes no device (no LWJGL, no driver)");
    }
}
