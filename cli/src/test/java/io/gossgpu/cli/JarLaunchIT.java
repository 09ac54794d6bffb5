package io.gossgpu.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code java -jar goss-gpu.jar -V} and {@code help} printed the JDK's "WARNING: Using incubator modules",
 * which only the relaunch with {@code --add-modules jdk.incubator.vector} causes and which these need not do. Runs
 * after {@code package} (failsafe), on the jar just built.
 */
class JarLaunchIT {
    @TempDir
    Path dir;

    @Test
    void versionAndHelpPrintTheirTextAndNothingOnStderr() throws Exception {
        String java = ProcessHandle.current().info().command().orElseThrow();
        String jar = System.getProperty("goss.jar", "target/goss-gpu.jar");
        assertTrue(Files.isRegularFile(Path.of(jar)), "no " + jar + " (this test runs after package)");
        for (List<String> args : List.of(
                List.of("-V"),
                List.of("--version"),
                List.of("help"),
                List.of("help", "bench"),
                List.of("--help"),
                List.of("bench", "--help"))) {
            List<String> cmd = new ArrayList<>(List.of(java, "-jar", jar));
            cmd.addAll(args);
            Path out = dir.resolve("out.txt"), err = dir.resolve("err.txt");
            Process p = new ProcessBuilder(cmd)
                    .redirectOutput(out.toFile())
                    .redirectError(err.toFile())
                    .start();
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), args + " did not finish");
            assertEquals(0, p.exitValue(), args + ": " + Files.readString(err));
            assertEquals("", Files.readString(err), args + " wrote on stderr");
            assertFalse(Files.readString(out).isBlank(), args + " printed nothing");
        }
    }
}
