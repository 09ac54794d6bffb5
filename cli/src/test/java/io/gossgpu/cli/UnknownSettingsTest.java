package io.gossgpu.cli;

import io.gossgpu.tokenizer.O200kHarmony;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Issue 20, finding 4: a misspelled {@code GOSS_OPENCL_LINEAR_WGG} was silently ignored. The command line names every
 * {@code GOSS_*} variable nothing reads, once, with the nearest known name, and goes on.
 */
class UnknownSettingsTest {
    @Test
    void misspelledVariablesAreNamedWithTheNearestKnownName() throws Exception {
        List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "--add-modules", "jdk.incubator.vector",
                "-cp", System.getProperty("java.class.path"), Launcher.class.getName(), "tokenize", "--text", "a");
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().keySet().removeIf(k -> k.startsWith("GOSS_"));
        pb.environment().put("GOSS_OPENCL_LINEAR_WGG", "32");
        pb.environment().put("GOSS_MODLE", "/models/x");
        pb.environment().put("GOSS_CPU_THREADS", "2"); // known: no warning
        pb.environment().put("GOSS_REQUIRE_OPENCL", "1"); // read by the tests: no warning
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), err);
        assertEquals(String.valueOf(O200kHarmony.get().encode("a")[0]), out.strip(), "the command still runs");
        assertEquals(List.of("goss-gpu: warning: unknown setting GOSS_MODLE (did you mean GOSS_MODEL?)",
                        "goss-gpu: warning: unknown setting GOSS_OPENCL_LINEAR_WGG (did you mean GOSS_OPENCL_LINEAR_WG?)"),
                err.lines().filter(l -> !l.startsWith("WARNING: Using incubator modules")).toList(),
                "two lines, and nothing else: the check probes no device (no LWJGL, no driver)");
    }
}
