package io.gossgpu.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A library user without the JVM flags is told once, in one line, which flag fixes it. */
class JvmFlagsTest {
    /** Surefire runs with both flags (see the parent pom): nothing to say. */
    @Test
    void withTheFlagsThereIsNoWarning() {
        assertEquals(List.of(), JvmFlags.missing());
    }

    @Test
    void aJvmWithoutTheFlagsIsToldOnceInOneLine() throws Exception {
        List<String> cmd = new ArrayList<>(List.of(
                ProcessHandle.current().info().command().orElseThrow(),
                "-cp",
                System.getProperty("java.class.path"),
                Probe.class.getName()));
        Process p = new ProcessBuilder(cmd).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), err);
        List<String> lines = out.lines().toList();
        assertEquals(1, lines.size(), out);
        assertTrue(lines.getFirst().startsWith("WARNING start java with --add-modules jdk.incubator.vector"), out);
        assertTrue(lines.getFirst().contains("--enable-native-access=ALL-UNNAMED"), out);
    }

    /**
     * On the module path engine-core is module io.gossgpu.core: it resolves with its requires (jackson,
     * jtokkit; the vector module added as a user of the cpu backend adds it) and names the modules native access is for.
     */
    @Test
    void onTheModulePathTheWarningNamesTheModules() throws Exception {
        String core = Path.of(Engine.class
                        .getProtectionDomain()
                        .getCodeSource()
                        .getLocation()
                        .toURI())
                .toString();
        String tests = Path.of(Probe.class
                        .getProtectionDomain()
                        .getCodeSource()
                        .getLocation()
                        .toURI())
                .toString();
        List<String> modulePath = new ArrayList<>(List.of(core)), classPath = new ArrayList<>();
        for (String e : System.getProperty("java.class.path").split(File.pathSeparator)) {
            if (e.equals(core) || e.equals(tests)) continue;
            String jar =
                    Path.of(e).getFileName().toString(); // engine-core's requires go on the module path, the rest not
            (jar.matches("(jackson-(core|databind|annotations)|jtokkit)-.*\\.jar") ? modulePath : classPath).add(e);
        }
        List<String> cmd = List.of(
                ProcessHandle.current().info().command().orElseThrow(),
                "--module-path",
                String.join(File.pathSeparator, modulePath),
                "-cp",
                String.join(File.pathSeparator, classPath),
                "--patch-module",
                "io.gossgpu.core=" + tests,
                "--add-modules",
                "java.logging,jdk.incubator.vector",
                "--add-reads",
                "io.gossgpu.core=java.logging",
                "-m",
                "io.gossgpu.core/" + Probe.class.getName());
        Process p = new ProcessBuilder(cmd).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), out + err);
        assertEquals(
                List.of("WARNING start java with --enable-native-access=" + JvmFlags.NATIVE_MODULES
                        + " (else the JDK warns at the GPU backends' native calls)"),
                out.lines().toList(),
                err);
    }

    /** Runs in a JVM started without the flags and warns twice: the captured log, printed on stdout, must hold one message. */
    public static final class Probe {
        public static void main(String[] args) {
            CapturedLog.of(() -> {
                        JvmFlags.warnOnceIfMissing();
                        JvmFlags.warnOnceIfMissing();
                    })
                    .forEach(System.out::println);
        }
    }
}
