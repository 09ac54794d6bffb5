package io.gossgpu.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's first command on a fresh machine: {@code goss-gpu --prompt "What is 17 + 25?" -n 64} with no
 * model anywhere (an empty home and cache) unpacks the demo model from the jar into $XDG_CACHE_HOME/goss-gpu, prints
 * the reasoning, then the answer 42, and says what the model is. A second run uses what the first unpacked. Runs after
 * {@code package} (failsafe), on the jar just built.
 */
class DemoModelIT {
    @TempDir
    Path dir;

    record Run(int code, String out, String err) {}

    Run goss(String... args) throws IOException, InterruptedException {
        String java = ProcessHandle.current().info().command().orElseThrow();
        String jar = System.getProperty("goss.jar", "target/goss-gpu.jar");
        assertTrue(Files.isRegularFile(Path.of(jar)), "no " + jar + " (this test runs after package)");
        List<String> cmd = new java.util.ArrayList<>(List.of(java, "-Duser.home=" + dir.resolve("home"), "-jar", jar));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd)
                .redirectOutput(dir.resolve("out.txt").toFile())
                .redirectError(dir.resolve("err.txt").toFile());
        Map<String, String> env = pb.environment();
        for (String k : List.of("GOSS_MODEL", "HF_HOME", "HF_HUB_CACHE", "OLLAMA_MODELS", "GOSS_BACKEND"))
            env.remove(k);
        env.put("XDG_CACHE_HOME", dir.resolve("cache").toString());
        Process p = pb.start();
        assertTrue(p.waitFor(180, TimeUnit.SECONDS), "goss-gpu did not finish");
        return new Run(
                p.exitValue(), Files.readString(dir.resolve("out.txt")), Files.readString(dir.resolve("err.txt")));
    }

    @Test
    void noModelAnywhereUnpacksTheDemoModelWhichReasonsThenAnswers() throws Exception {
        Files.createDirectories(dir.resolve("home"));
        Run first = goss("--prompt", "What is 17 + 25?", "-n", "64", "--backend", "cpu");
        assertEquals(0, first.code(), first.err());
        assertTrue(
                first.err()
                        .contains("unpacking the demo model to "
                                + dir.resolve("cache").resolve("goss-gpu")),
                first.err());
        assertTrue(first.err().contains("not gpt-oss"), first.err());
        String out = first.out();
        int reasoning = out.indexOf("7 + 5 = 12"), answer = out.lastIndexOf("42");
        assertTrue(reasoning >= 0 && answer > reasoning, "reasoning, then 42: " + out);
        assertTrue(out.strip().lines().toList().getLast().contains("17 + 25 = 42"), out);

        try (Stream<Path> files = Files.walk(dir.resolve("cache"))) {
            List<String> names = files.map(f -> f.getFileName().toString()).toList();
            assertTrue(names.contains("model.safetensors") && names.contains("config.json"), names.toString());
            assertFalse(names.stream().anyMatch(n -> n.endsWith(".part")), "a temporary file was left: " + names);
        }
        Run again = goss("--prompt", "What is 17 + 25?", "-n", "64", "--backend", "cpu");
        assertEquals(0, again.code(), again.err());
        assertFalse(again.err().contains("unpacking"), again.err());
        assertEquals(out, again.out());
    }
}
