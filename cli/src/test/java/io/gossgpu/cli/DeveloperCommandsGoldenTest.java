package io.gossgpu.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gossgpu.cli.CommandLineTest.Run;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The developer commands print the same bytes since their logic moved next to the engine: render, info and
 * make-test-model, logits, verify (op by op and --kl) and bench (its timings masked), on the reference backend, on test
 * models, are compared with golden files written by the cli before the move
 * (src/test/resources/golden). What depends on the machine or the moment is masked on both sides: the temporary
 * folder, timings, the list of available backends and the description of the device the placement names.
 */
class DeveloperCommandsGoldenTest {
    @TempDir
    Path dir;

    @Test
    void renderPrintsTheGoldenTokensAndText() {
        String in = golden("render-in.jsonl");
        Run ids = CommandLineTest.run(in, "render");
        assertEquals(0, ids.code(), ids.err());
        assertEquals(golden("render-out.jsonl"), ids.out());
        Run text = CommandLineTest.run(in, "render", "--text");
        assertEquals(0, text.code(), text.err());
        assertEquals(golden("render-out.txt"), text.out());
    }

    @Test
    void makeTestModelWritesTheGoldenFilesAndInfoDescribesThem() throws IOException {
        List<List<String>> makes = List.of(
                List.of("--format", "original", "--out", "orig"),
                List.of(
                        "--format",
                        "hf",
                        "--seed",
                        "2",
                        "--layers",
                        "2",
                        "--bf16-experts",
                        "--shard-bytes",
                        "200000",
                        "--out",
                        "hf"),
                List.of("--format", "gguf", "--dense-type", "Q8_0", "--out", "q8.gguf"),
                List.of("--format", "ollama", "--preset", "quant", "--experts", "4", "--out", "ollama.gguf"),
                List.of(
                        "--format",
                        "gguf",
                        "--preset",
                        "demo",
                        "--layers",
                        "1",
                        "--with-vocab",
                        "--out",
                        "vocab.gguf"));
        StringBuilder err = new StringBuilder();
        for (List<String> m : makes) {
            List<String> args = new ArrayList<>(m.subList(0, m.size() - 1));
            args.add(0, "make-test-model");
            args.add(dir.resolve(m.getLast()).toString());
            Run r = CommandLineTest.run("", args.toArray(String[]::new));
            assertEquals(0, r.code(), r.err());
            err.append(mask(r.err()));
        }
        assertEquals(golden("make-test-model-err.txt"), err.toString());
        assertEquals(
                golden("make-test-model-sha256.txt"), sha256s("orig", "hf", "q8.gguf", "ollama.gguf", "vocab.gguf"));

        info("orig", "--model", "orig", "--backend", "reference");
        info("hf", "--model", "hf", "--backend", "reference", "--tensors", "--context", "100", "--swa-rollback", "0");
        info("q8", "--model", "q8.gguf", "--backend", "reference", "--no-mmap", "--check-tensors");
        info("ollama", "--model", "ollama.gguf", "--backend", "reference");
        info("vocab", "--model", "vocab.gguf", "--backend", "reference");
    }

    @Test
    void logitsAndVerifyPrintTheGoldenReports() throws IOException {
        Path orig = dir.resolve("orig"),
                demo1 = dir.resolve("demo1"),
                logits = dir.resolve("logits"),
                text = dir.resolve("text.txt");
        assertEquals(
                0,
                CommandLineTest.run("", "make-test-model", "--format", "original", "--out", orig.toString())
                        .code());
        assertEquals(
                0,
                CommandLineTest.run(
                                "",
                                "make-test-model",
                                "--format",
                                "original",
                                "--preset",
                                "demo",
                                "--layers",
                                "1",
                                "--out",
                                demo1.toString())
                        .code());
        Files.writeString(text, golden("verify-kl-text-in.txt"));

        Run l = CommandLineTest.run(
                "",
                "logits",
                "--model",
                orig.toString(),
                "--backend",
                "reference",
                "--tokens",
                "1,2,3,500",
                "--out",
                logits.toString());
        assertEquals(0, l.code(), l.err());
        assertEquals(golden("logits-err.txt"), mask(l.err()));
        // as JSON: the old dump's {id, logit} objects came out in Map.of's order, which changes from JVM to JVM
        var json = new com.fasterxml.jackson.databind.ObjectMapper();
        assertEquals(
                json.readTree(golden("logits.json")),
                json.readTree(mask(Files.readString(logits.resolve("logits.json")))));
        assertEquals(golden("logits-f32.sha256"), sha256(logits.resolve("logits.f32")) + "\n");

        verify("verify-ops.txt", "--model", orig.toString(), "--backend", "reference", "--tokens", "5,6,7,8");
        verify("verify-random.txt", "--model", orig.toString(), "--backend", "reference");
        verify(
                "verify-kl.txt",
                "--model",
                demo1.toString(),
                "--backend",
                "reference",
                "--kl",
                "--limit",
                "2",
                "--kv-type",
                "f32");
        verify(
                "verify-kl-text.txt",
                "--model",
                demo1.toString(),
                "--backend",
                "reference",
                "--kv-type",
                "f32",
                "--kl",
                "--text",
                text.toString(),
                "--chunk",
                "8",
                "--limit",
                "2");
    }

    /** bench's tables and JSON as before, its timings masked (the JSON: every field name, and the values that are no timing). */
    @Test
    void benchPrintsTheGoldenTables() throws IOException {
        Path orig = dir.resolve("orig");
        assertEquals(
                0,
                CommandLineTest.run("", "make-test-model", "--format", "original", "--out", orig.toString())
                        .code());
        String[] args = {
            "bench",
            "--model",
            orig.toString(),
            "--backend",
            "reference",
            "-p",
            "4",
            "-n",
            "2",
            "-r",
            "1",
            "-w",
            "0",
            "--no-bandwidth-probe",
            "--kv-type",
            "f32" // the golden figures' bytes per token count an F32 cache
        };
        Run md = CommandLineTest.run("", args);
        assertEquals(0, md.code(), md.err());
        assertEquals(maskTimings(golden("bench.md")), maskTimings(md.out()));
        assertEquals(golden("bench-err.txt"), maskTimings(md.err()));
        List<String> withJson = new ArrayList<>(List.of(args));
        withJson.addAll(List.of("-o", "json"));
        Run json = CommandLineTest.run("", withJson.toArray(String[]::new));
        assertEquals(0, json.code(), json.err());
        var mapper = new com.fasterxml.jackson.databind.ObjectMapper();
        var want = mapper.readTree(golden("bench.json"));
        var got = mapper.readTree(json.out());
        assertEquals(fieldNames(want), fieldNames(got));
        for (String f :
                List.of("model", "backend", "threads", "bandwidth", "streamProbe", "ceilingGBps", "warmups", "reps"))
            assertEquals(want.get(f), got.get(f), f);
        for (int i = 0; i < want.get("rows").size(); i++)
            for (String f : List.of(
                    "test", "nPrompt", "nGen", "depth", "stddev", "bytesPerToken", "percentOfBandwidth", "streams"))
                assertEquals(
                        want.get("rows").get(i).get(f), got.get("rows").get(i).get(f), "row " + i + " " + f);
    }

    private static List<String> fieldNames(com.fasterxml.jackson.databind.JsonNode n) {
        List<String> out = new ArrayList<>();
        n.fieldNames().forEachRemaining(out::add);
        n.get("rows").get(0).fieldNames().forEachRemaining(f -> out.add("rows." + f));
        return out;
    }

    private String maskTimings(String s) {
        return mask(s).lines()
                .map(l -> l.replaceAll("^cpu: .*", "cpu: (this machine)")
                                .replaceAll("[0-9]+\\.[0-9]+", "N")
                                .replaceAll("± N \\| (N)? \\|", "± N | (per CPU time, blank when not measured) |")
                        + "\n")
                .collect(Collectors.joining());
    }

    private void verify(String golden, String... args) {
        List<String> a = new ArrayList<>(List.of("verify"));
        a.addAll(List.of(args));
        Run r = CommandLineTest.run("", a.toArray(String[]::new));
        assertEquals(0, r.code(), r.err());
        assertEquals(golden(golden), mask(r.out()), golden);
    }

    private void info(String name, String... args) {
        List<String> a = new ArrayList<>(List.of("info"));
        for (int i = 0; i < args.length; i++)
            a.add(i > 0 && args[i - 1].equals("--model") ? dir.resolve(args[i]).toString() : args[i]);
        Run r = CommandLineTest.run("", a.toArray(String[]::new));
        assertEquals(0, r.code(), r.err());
        assertEquals("", r.err(), name);
        assertEquals(golden("info-" + name + ".txt"), mask(r.out()), name);
    }

    /** What changes from run to run or machine to machine, as the golden files were masked. */
    private String mask(String s) {
        return s.lines()
                .map(l -> l.replace(dir.toString(), "$DIR")
                        .replaceAll("opened in \\d+ ms", "opened in N ms")
                        .replaceAll("^backends   .*", "backends   (this machine's)")
                        .replaceAll("^(placement  everything on [a-z]+) \\(.*\\); ", "$1 (this device); ")
                        .replaceAll(" in \\d+\\.\\d s$", " in N s")
                        .replaceAll("\\(\\d+ CPUs, used: \\d+\\)", "(N CPUs, used: N)"))
                .map(l -> l + "\n")
                .collect(Collectors.joining());
    }

    /** sha256sum's lines for every file under {@code paths} (relative to the test folder), sorted by path. */
    private String sha256s(String... paths) throws IOException {
        List<String> files = new ArrayList<>();
        for (String p : paths)
            try (Stream<Path> s = Files.walk(dir.resolve(p))) {
                s.filter(Files::isRegularFile)
                        .forEach(f -> files.add(dir.relativize(f).toString()));
            }
        StringBuilder out = new StringBuilder();
        for (String f : files.stream().sorted().toList())
            out.append(sha256(dir.resolve(f))).append("  ").append(f).append('\n');
        return out.toString();
    }

    private static String sha256(Path f) throws IOException {
        try (InputStream in = Files.newInputStream(f)) {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            byte[] buf = new byte[1 << 20];
            for (int n; (n = in.read(buf)) > 0; ) md.update(buf, 0, n);
            return HexFormat.of().formatHex(md.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }

    private static String golden(String name) {
        try (InputStream in = DeveloperCommandsGoldenTest.class.getResourceAsStream("/golden/" + name)) {
            if (in == null) throw new AssertionError("no golden file " + name);
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
