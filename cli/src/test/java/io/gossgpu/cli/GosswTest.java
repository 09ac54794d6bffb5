package io.gossgpu.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The first {@code ./gossw run} printed Maven's build lines and an escape code (ESC[0m, which Maven 3.8's
 * console library writes even in batch mode) on stdout, ahead of the answer. The real gossw runs here in a copy of
 * the checkout's layout whose {@code mvn} and {@code java} are stand-ins: the stand-in Maven writes what Maven writes,
 * on both streams, and the stand-in java prints the answer.
 */
class GosswTest {
    @TempDir
    Path root;

    @Test
    void buildOutputGoesToStderrWithoutEscapeCodesAndStdoutCarriesOnlyTheAnswer() throws Exception {
        Path gossw = Path.of("..", "gossw").toAbsolutePath().normalize();
        assertTrue(Files.isRegularFile(gossw), "no " + gossw);
        Files.copy(gossw, root.resolve("gossw"));
        script(root.resolve("scripts/find-jdk.sh"), "echo \"$(cd \"$(dirname \"$0\")/..\" && pwd)/jdk\"");
        script(root.resolve("jdk/bin/mvn"), """
                printf '\\033[0m[INFO] Building goss-gpu\\n\\033[0m'
                printf '\\033[1;33mWARNING\\033[0m: something\\n' >&2
                mkdir -p cli/target && : > cli/target/goss-gpu.jar
                """);
        script(root.resolve("jdk/bin/java"), "echo \"the answer ($*)\"");

        Process p = new ProcessBuilder("bash", root.resolve("gossw").toString(), "run", "--prompt", "hi")
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .start();
        byte[] err = p.getErrorStream().readAllBytes(); // small: neither pipe fills while the other is read
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        String e = new String(err, StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), e);
        assertEquals("the answer (-jar " + root.resolve("cli/target/goss-gpu.jar") + " --prompt hi)\n", out);
        assertTrue(
                e.contains("[INFO] Building goss-gpu")
                        && e.contains("WARNING: something")
                        && e.contains("building goss-gpu.jar"),
                e);
        assertFalse(e.contains("\u001b"), "escape codes on a stderr that is no terminal: " + e);
    }

    private static void script(Path file, String body) throws Exception {
        Files.createDirectories(file.getParent());
        Files.writeString(file, "#!/usr/bin/env bash\n" + body + "\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
    }
}
