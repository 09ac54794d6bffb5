package io.gossgpu.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.cpu.matmul.NativeCpu;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The goss-gpu command end to end, in-process: stdin piped in, stdout/stderr and the exit code checked. */
class CommandLineTest {
    @TempDir
    static Path dir;

    static Path model;

    record Run(int code, String out, String err) {}

    /**
     * The goss-gpu command in a JVM of its own (this one's java and class path), for what is read once at the edge:
     * its {@code GOSS_*} variables are those of {@code env} (every other variable is this JVM's), {@code jvmOptions} come
     * before the main class. The JDK's incubator warning is left out of {@code err}.
     */
    static Run runInNewJvm(Map<String, String> env, List<String> jvmOptions, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-modules",
                "jdk.incubator.vector"));
        cmd.addAll(jvmOptions);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), Launcher.class.getName()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        pb.environment().keySet().removeIf(k -> k.startsWith("GOSS_"));
        env.forEach((k, v) -> {
            if (k.startsWith("GOSS_")) pb.environment().put(k, v);
        });
        Process p = pb.start();
        CompletableFuture<byte[]> err = CompletableFuture.supplyAsync(
                () -> { // drained beside stdout: neither pipe fills up
                    try {
                        return p.getErrorStream().readAllBytes();
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                });
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        int code = p.waitFor();
        String e = new String(err.get(), StandardCharsets.UTF_8)
                .lines()
                .filter(l -> !l.startsWith("WARNING: Using incubator modules"))
                .collect(Collectors.joining("\n"));
        return new Run(code, out, e);
    }

    /** Writes the tiny preset (original layout) to {@code dir}/tiny with make-test-model and returns that folder. */
    static Path tinyModel(Path dir) {
        Path model = dir.resolve("tiny");
        Run r = run("", "make-test-model", "--format", "original", "--preset", "tiny", "--out", model.toString());
        assertEquals(0, r.code(), r.err());
        return model;
    }

    static synchronized Run run(String stdin, String... args) {
        InputStream in0 = System.in;
        PrintStream out0 = System.out, err0 = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream(), err = new ByteArrayOutputStream();
        try {
            System.setIn(new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)));
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            int code = Main.run(args);
            return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setIn(in0);
            System.setOut(out0);
            System.setErr(err0);
        }
    }

    @BeforeAll
    static void makeModel() {
        model = dir.resolve("demo2");
        Run r = run(
                "",
                "make-test-model",
                "--format",
                "original",
                "--preset",
                "demo",
                "--layers",
                "2",
                "--seed",
                "3",
                "--out",
                model.toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(Files.isRegularFile(model.resolve("model.safetensors")));
        assertTrue(r.err().contains("random weights"), r.err());
    }

    @Test
    void pipedChatAnswersEveryLine() {
        Run r = run(
                "Hello\nHow are you?\n",
                "--model",
                model.toString(),
                "--backend",
                "reference",
                "-n",
                "4",
                "--seed",
                "1",
                "-v");
        assertEquals(0, r.code(), r.err());
        // One timing line per user turn: two turns were answered.
        assertEquals(
                2,
                r.err()
                        .lines()
                        .filter(l -> l.contains("prefill") && l.contains("decode"))
                        .count(),
                r.err());
        // -v states the KV cache, with the sliding-window rollback slack (demo window 16)
        assertTrue(r.err().contains("sliding layers keep 2064 positions: window 16 + rollback 2048"), r.err());
    }

    /** --verbose names the knobs in effect and where each value came from. */
    @Test
    void verboseListsTheKnobsInEffect() {
        Run r = run(
                "",
                "--model",
                model.toString(),
                "--backend",
                "cpu",
                "--threads",
                "1",
                "--raw",
                "--prompt",
                "a",
                "-n",
                "1",
                "-v");
        assertEquals(0, r.code(), r.err());
        assertTrue(
                r.err()
                        .contains(
                                "goss-gpu: knobs GOSS_CPU_THREADS=1 (--threads), GOSS_CPU_KERNELS="
                                        + NativeCpu.best().knobValue()
                                        + " (device default: the fastest this machine runs), GOSS_CPU_DENSE=q8 (default), GOSS_CPU_WARMUP=1 (default)\n"),
                r.err());
    }

    /** A random model's gibberish streams to stdout rather than arriving at the end as a notice. */
    @Test
    void outputThatIsNotHarmonyStillStreamsAndIsNamedOnce() {
        Run r = run(
                "Hello\n",
                "--model",
                model.toString(),
                "--backend",
                "reference",
                "-n",
                "40",
                "--seed",
                "2",
                "--temperature",
                "1");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().strip().length() > 20, "stdout: " + r.out());
        assertEquals(
                1,
                r.err()
                        .lines()
                        .filter(l -> l.contains("not well-formed Harmony"))
                        .count(),
                r.err());
        assertFalse(r.err().contains(r.out().strip().substring(0, 10)), "the text is not printed twice: " + r.err());
    }

    @Test
    void rawPromptPrintsTextAndTimings() {
        Run r = run(
                "",
                "--model",
                model.toString(),
                "--backend",
                "reference",
                "--raw",
                "--prompt",
                "The sea is",
                "-n",
                "5",
                "--temperature",
                "0",
                "-v");
        assertEquals(0, r.code(), r.err());
        assertFalse(r.out().isBlank(), "completion text on stdout");
        assertTrue(
                r.err().matches("(?s).*prefill \\d+ tok at [0-9.]+ tok/s.*decode 4 tok at [0-9.]+ tok/s.*"), r.err());
    }

    @Test
    void verifyKlMeasuresAndRefusesBadInputInOneLine() throws Exception {
        String m = model.toString();
        Run both = run("", "verify", "--model", m, "--kl", "--tokens", "1,2");
        assertEquals(1, both.code());
        assertEquals(
                "goss-gpu: --tokens and --tolerance compare op by op: they do not go with --kl",
                both.err().strip());
        Run limit = run("", "verify", "--model", m, "--limit", "3");
        assertEquals(1, limit.code());
        assertEquals(
                "goss-gpu: --conversations, --text and --limit go with --kl",
                limit.err().strip());
        Run missing = run(
                "",
                "verify",
                "--model",
                m,
                "--kl",
                "--text",
                dir.resolve("nope.txt").toString());
        assertEquals(1, missing.code());
        assertEquals(
                "goss-gpu: no such file: " + dir.resolve("nope.txt"),
                missing.err().strip());
        Path bad = Files.writeString(dir.resolve("bad.jsonl"), "{\"messages\": [\n");
        Run notJson = run("", "verify", "--model", m, "--kl", "--conversations", bad.toString());
        assertEquals(1, notJson.code());
        assertTrue(notJson.err().strip().matches("goss-gpu: \\S+bad.jsonl line 1: not JSON: [^\\n]*"), notJson.err());
        // a text, in chunks of 8 tokens scored over their second halves: the reference beside itself agrees exactly
        Path text = Files.writeString(
                dir.resolve("t.txt"), "The quick brown fox jumps over the lazy dog, again and again.");
        Run same = run(
                "",
                "verify",
                "--model",
                m,
                "--backend",
                "reference",
                "--kl",
                "--text",
                text.toString(),
                "--chunk",
                "8",
                "--kv-type",
                "f32");
        assertEquals(0, same.code(), same.out() + same.err());
        assertTrue(
                same.out()
                        .contains(
                                "KL divergence (reference || reference, f32 KV cache): mean 0.00, p99 0.00, max 0.00 nats"),
                same.out());
        assertTrue(
                same.out().contains("top-1 agreement: 100.00 %")
                        && same.out().contains("over 7 positions of 2 sequences"),
                same.out());
    }

    @Test
    void badInputGivesOneLineAndExitCodeOne() {
        Run unknown = run("", "--model", model.toString(), "--backend", "quantum", "--prompt", "hi");
        assertEquals(1, unknown.code());
        assertTrue(
                unknown.err().contains("unknown backend 'quantum'")
                        && unknown.err().contains("reference"),
                unknown.err());

        Run missing = run("", "--model", dir.resolve("nope").toString(), "--prompt", "hi");
        assertEquals(1, missing.code());
        assertEquals(
                "goss-gpu: model not found: " + dir.resolve("nope"),
                missing.err().strip());
        Run ollama = run("", "info", "--model", "ollama:a..b:1"); // resolved by api.ModelPath, as the model lookup does
        assertEquals(
                "goss-gpu: 'ollama:a..b:1' is not an Ollama model name (expected ollama:MODEL:TAG, e.g. ollama:gpt-oss:20b)",
                ollama.err().strip());

        Run tooLong = run("", "--model", model.toString(), "--backend", "reference", "-c", "16", "--prompt", "hi");
        assertEquals(1, tooLong.code());
        assertTrue(
                tooLong.err()
                        .strip()
                        .matches("goss-gpu: prompt of \\d+ tokens exceeds the context length of 16 tokens"),
                tooLong.err());

        Run badFlag = run("", "--top-p", "2", "--model", model.toString(), "--prompt", "hi");
        assertEquals(1, badFlag.code());
        assertTrue(badFlag.err().contains("top-p must be in (0, 1]"), badFlag.err());

        Run badRollback = run(
                "", "--swa-rollback", "-1", "--model", model.toString(), "--backend", "reference", "--prompt", "hi");
        assertEquals(1, badRollback.code());
        assertEquals(
                "goss-gpu: sliding-window rollback must be >= 0, got -1",
                badRollback.err().strip());

        Run unknownOption = run("", "--frobnicate");
        assertEquals(2, unknownOption.code());
    }

    /** A negative temperature and a context beyond the model's maximum (here 4096 × 32) were accepted. */
    @Test
    void negativeTemperatureAndContextBeyondTheModelAreRefused() {
        Run cold = run(
                "",
                "--temperature",
                "-1",
                "--model",
                model.toString(),
                "--backend",
                "reference",
                "--prompt",
                "hi",
                "-n",
                "1");
        assertEquals(1, cold.code(), cold.out());
        assertEquals(
                "goss-gpu: temperature must be >= 0 (0 is greedy), got -1.0",
                cold.err().strip());

        Run huge = run(
                "",
                "--context",
                "3000000",
                "--model",
                model.toString(),
                "--backend",
                "reference",
                "--prompt",
                "hi",
                "-n",
                "1");
        assertEquals(1, huge.code(), huge.out());
        assertEquals(
                "goss-gpu: context length 3000000 exceeds this model's maximum of 131072 tokens (initial_context_length 4096 × rope_scaling_factor 32.0)",
                huge.err().strip());
        Run zero = run(
                "",
                "--context",
                "0",
                "--model",
                model.toString(),
                "--backend",
                "reference",
                "--prompt",
                "hi",
                "-n",
                "1");
        assertEquals("goss-gpu: --context must be positive, got 0", zero.err().strip());
    }

    /** JSON read from the user (render's conversations) is named by line and column, without Jackson's internals. */
    @Test
    void badJsonOnStdinIsOneLineWithoutJacksonInternals() {
        Run syntax = run("{\"messages\": [\n", "render");
        assertEquals(1, syntax.code(), syntax.out());
        assertTrue(
                syntax.err()
                        .strip()
                        .matches(
                                "goss-gpu: stdin line 1: invalid JSON at line 1 column \\d+: unexpected end of input.*"),
                syntax.err());
        for (String bad : List.of(
                "{oops}",
                "[1, 2]",
                "{\"messages\": \"x\"}",
                "{\"messages\": [1]}",
                "{\"messages\": [{\"role\": 7}]}",
                "{\"messages\": [{\"role\": \"user\", \"content\": {\"a\": 1}}, {\"role\": \"assistant\", \"content\": \"x\"}]}",
                "\"text\"")) {
            Run r = run(bad + "\n", "render");
            assertEquals(1, r.code(), bad + " -> " + r.out());
            String e = r.err().strip();
            assertEquals(1, e.lines().count(), bad + " -> " + e);
            assertTrue(e.startsWith("goss-gpu: stdin line 1: "), bad + " -> " + e);
            for (String internal :
                    List.of("Source:", "REDACTED", "StreamReadFeature", "jackson", "Exception", "internal error"))
                assertFalse(e.contains(internal), bad + " -> " + e);
        }
    }

    @Test
    void tokenizeAndDetokenizeRoundTrip() {
        Run t = run("", "tokenize", "--text", "Hello, world!");
        assertEquals(0, t.code(), t.err());
        String ids = t.out().strip();
        assertEquals("13225,11,2375,0", ids); // o200k_base, as tiktoken encodes it
        Run d = run("", "detokenize", "--ids", ids);
        assertEquals("Hello, world!", d.out().strip());
        Run specials = run("", "tokenize", "--harmony", "--text", "<|start|>user");
        assertEquals("200006,1428", specials.out().strip());
        Run jsonl = run("\"a\"\n\"<|start|>\"\n", "tokenize", "--jsonl");
        assertEquals(2, jsonl.out().lines().count());
    }

    @Test
    void infoDescribesTheModelAndLogitsAreWritten() throws Exception {
        Run info = run("", "info", "--model", model.toString());
        assertEquals(0, info.code(), info.err());
        assertTrue(info.out().contains("ORIGINAL") && info.out().contains("vocab 201088"), info.out());
        assertTrue(
                info.out()
                        .contains(
                                "KV cache for 4096 positions: 3.0 MiB (f16, 2 layers, kv_dim 128, sliding layers keep 2064 positions: window 16 + rollback 2048)"),
                info.out());
        Run noSlack = run(
                "",
                "info",
                "--model",
                model.toString(),
                "--context",
                "8192",
                "--swa-rollback",
                "0",
                "--kv-type",
                "f32");
        assertTrue(
                noSlack.out()
                        .contains(
                                "KV cache for 8192 positions: 8.0 MiB (f32, 2 layers, kv_dim 128, sliding layers keep 16 positions)"),
                noSlack.out());
        // q8_0: 128 quants and 4 F16 scales a row, 136 of F32's 512 bytes
        Run q8 = run(
                "",
                "info",
                "--model",
                model.toString(),
                "--context",
                "8192",
                "--swa-rollback",
                "0",
                "--kv-type",
                "Q8_0");
        assertTrue(
                q8.out().contains("KV cache for 8192 positions: 2.1 MiB (q8_0, 2 layers")
                        && q8.out()
                                .contains("kv types   f32 8.0 MiB, f16 4.0 MiB, bf16 4.0 MiB, q8_0 2.1 MiB (this one)"),
                q8.out());
        Run bad = run("", "info", "--model", model.toString(), "--kv-type", "q4_0");
        assertEquals(2, bad.code(), bad.err());
        assertTrue(bad.err().contains("unknown KV cache type 'q4_0'; choose one of f32, f16, bf16, q8_0"), bad.err());
        Path out = dir.resolve("logits");
        Run logits = run(
                "",
                "logits",
                "--model",
                model.toString(),
                "--backend",
                "reference",
                "--tokens",
                "1,2,3",
                "--out",
                out.toString());
        assertEquals(0, logits.code(), logits.err());
        assertEquals(3L * 201088 * 4, Files.size(out.resolve("logits.f32")));
        Run verify = run("", "verify", "--model", model.toString(), "--backend", "reference", "--tokens", "5,6,7,8");
        assertEquals(0, verify.code(), verify.out() + verify.err());
        assertTrue(verify.out().contains("agrees"), verify.out());
    }

    @Test
    void ggufVocabularyIsComparedWithTheTokenizer() {
        Path gguf = dir.resolve("vocab.gguf");
        Run made = run(
                "",
                "make-test-model",
                "--format",
                "gguf",
                "--preset",
                "demo",
                "--layers",
                "1",
                "--with-vocab",
                "--out",
                gguf.toString());
        assertEquals(0, made.code(), made.err());
        Run info = run("", "info", "--model", gguf.toString());
        assertTrue(
                info.out()
                        .contains(
                                "vocabulary the file's 201088 tokens agree with the built-in o200k_harmony tokenizer"),
                info.out());
        Run tiny = run(
                "",
                "make-test-model",
                "--format",
                "gguf",
                "--with-vocab",
                "--out",
                dir.resolve("t.gguf").toString());
        assertEquals(1, tiny.code());
        assertTrue(tiny.err().contains("--with-vocab needs the full vocabulary"), tiny.err());
    }
}
