package io.gossgpu.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gossgpu.tokenizer.O200kHarmony;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Java errors as one line and UTF-8 text whatever the locale. */
class ErrorsAndLocaleTest {
    @TempDir
    Path dir;

    @Test
    void absurdLayerCountInConfigJsonIsOneLineNotAnOutOfMemoryTrace() throws Exception {
        Path model = dir.resolve("m");
        CommandLineTest.Run made =
                CommandLineTest.run("", "make-test-model", "--format", "original", "--out", model.toString());
        assertEquals(0, made.code(), made.err());
        Path config = model.resolve("config.json");
        Files.writeString(
                config,
                Files.readString(config)
                        .replaceAll("\"num_hidden_layers\"\\s*:\\s*\\d+", "\"num_hidden_layers\": 2147483647"));
        for (String cmd : List.of("info", "logits")) {
            CommandLineTest.Run r = cmd.equals("info")
                    ? CommandLineTest.run("", "info", "--model", model.toString(), "--tensors")
                    : CommandLineTest.run(
                            "",
                            "--model",
                            model.toString(),
                            "--backend",
                            "reference",
                            "--raw",
                            "--prompt",
                            "a",
                            "-n",
                            "1");
            assertEquals(1, r.code(), r.err());
            assertEquals(1, r.err().lines().count(), r.err());
            assertTrue(r.err().contains("2147483647 layers cannot fit"), r.err());
        }
    }

    @Test
    void outOfMemoryAndMappedFileFaultsAreOneLineWithWhatToDo() {
        StringWriter s = new StringWriter();
        assertEquals(1, Main.report(new RuntimeException(new OutOfMemoryError("Java heap space")), new PrintWriter(s)));
        assertEquals(1, s.toString().lines().count(), s.toString());
        assertTrue(s.toString().contains("-Xmx") && s.toString().contains("--context"), s.toString());
        s = new StringWriter();
        Main.report(new InternalError("a fault occurred in an unsafe memory access operation"), new PrintWriter(s));
        assertEquals(1, s.toString().lines().count(), s.toString());
        assertTrue(s.toString().contains("truncated or changed") && s.toString().contains("--no-mmap"), s.toString());
    }

    @Test
    void argumentsPassedToTheRestartedJvmSurviveAnyCharset() {
        String[] args = {"tokenize", "--text", "日本語 ✓", "", "a,b"};
        assertArrayEquals(args, Arguments.decode(Arguments.encode(args)));
        assertArrayEquals(new String[0], Arguments.decode(Arguments.encode(new String[0])));
    }

    /** Under LC_ALL=C the JVM reads argv and writes stdout as ASCII: 日本語 became "???" both ways. */
    @Test
    void tokenizeAndDetokenizeKeepUtf8UnderTheCLocale() throws Exception {
        assumeTrue(Files.isReadable(Path.of("/proc/self/cmdline")), "needs /proc (Linux)");
        String text = "日本語 ✓";
        String ids = Arrays.stream(O200kHarmony.get().encode(text))
                .mapToObj(Integer::toString)
                .collect(Collectors.joining(","));
        assertEquals(ids, runWithCLocale("tokenize", "--text", text).strip());
        assertEquals(text, runWithCLocale("detokenize", "--ids", ids).strip());
    }

    private static String runWithCLocale(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                Launcher.class.getName()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(false);
        pb.environment().put("LC_ALL", "C");
        pb.environment().put("LANG", "C");
        pb.environment().put("GOSS_NO_RELAUNCH", "1");
        Process p = pb.start();
        byte[] out = p.getInputStream().readAllBytes();
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), err);
        return new String(out, StandardCharsets.UTF_8);
    }
}
