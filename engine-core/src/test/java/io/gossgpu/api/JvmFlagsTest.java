package io.gossgpu.api;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A library user without the JVM flags is told once, in one line, which flag fixes it (issue 20, finding 2). */
class JvmFlagsTest {
    /** Surefire runs with both flags (see the parent pom): nothing to say. */
    @Test
    void withTheFlagsThereIsNoWarning() {
        assertEquals(List.of(), JvmFlags.missing());
    }

    @Test
    void aJvmWithoutTheFlagsIsToldOnceInOneLine() throws Exception {
        List<String> cmd = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElseThrow(),
                "-cp", System.getProperty("java.class.path"), Probe.class.getName()));
        Process p = new ProcessBuilder(cmd).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), err);
        List<String> lines = out.lines().toList();
        assertEquals(1, lines.size(), out);
        assertTrue(lines.getFirst().startsWith("WARNING start java with --add-modules jdk.incubator.vector"), out);
        assertTrue(lines.getFirst().contains("--enable-native-access=ALL-UNNAMED"), out);
    }

    /** Runs in a JVM started without the flags and warns twice: the captured log, printed on stdout, must hold one message. */
    public static final class Probe {
        public static void main(String[] args) {
            CapturedLog.of(() -> {
                JvmFlags.warnOnceIfMissing();
                JvmFlags.warnOnceIfMissing();
            }).forEach(System.out::println);
        }
    }
}
