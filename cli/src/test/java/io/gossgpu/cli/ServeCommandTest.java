package io.gossgpu.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.ServerSocket;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code goss-gpu serve}'s options and their errors, in-process (the server as a process, stopped by a signal: {@link ServeProcessIT}). */
class ServeCommandTest {
    @TempDir
    Path dir;

    @Test
    void defaultModelIdFromThePath() {
        assertEquals("gpt-oss-20b", ServeCommand.defaultModelId(Path.of("/m/gpt-oss-20b/original")));
        assertEquals("gpt-oss-20b-mxfp4", ServeCommand.defaultModelId(Path.of("/m/gpt-oss-20b-mxfp4.gguf")));
        assertEquals("demo", ServeCommand.defaultModelId(Path.of("/m/demo")));
    }

    /**
     * The README's server example sent {@code "model":"gpt-oss-20b"} to the server its own command started,
     * the demo model's, which answered 404 (it served {@code demo-model-HASH}). The id in the README's curl is now the
     * one the demo is served as. (ServeProcessIT sends that very request to a demo server.)
     */
    @Test
    void theReadmesServerExampleNamesTheDemosModelId() throws Exception {
        String readme = java.nio.file.Files.readString(Path.of("../README.md"));
        String section = readme.substring(readme.indexOf("## Serving an OpenAI-compatible API"));
        java.util.regex.Matcher serve = java.util.regex.Pattern.compile("(?m)^java -jar \\S+ serve (.*)$")
                .matcher(section);
        assertTrue(serve.find(), section);
        assertFalse(serve.group(1).contains("--model "), "the example serves the demo model: " + serve.group());
        java.util.regex.Matcher model =
                java.util.regex.Pattern.compile("\"model\":\"([^\"]+)\"").matcher(section);
        assertTrue(model.find(), section);
        assertEquals(ServeCommand.defaultModelId(io.gossgpu.demo.DemoCheckpoint.folder(dir)), model.group(1));
        assertEquals(ServeCommand.DEMO_MODEL_ID, model.group(1));
    }

    @Test
    void badOptionsGiveOneLine() {
        CommandLineTest.Run r = CommandLineTest.run("", "serve", "--model", dir.toString(), "--parallel", "0");
        assertEquals(1, r.code());
        assertEquals("goss-gpu: --parallel must be at least 1, got 0", r.err().strip());
    }

    @Test
    void aPortInUseIsOneLine() throws Exception {
        // Finding 7: Javalin's own ERROR line (with a stack trace) came before the friendly one.
        try (ServerSocket taken = new ServerSocket(0, 50, java.net.InetAddress.getByName("127.0.0.1"))) {
            CommandLineTest.Run r = CommandLineTest.run(
                    "", "serve", "--model", dir.toString(), "--port", String.valueOf(taken.getLocalPort()));
            assertEquals(1, r.code());
            assertEquals(
                    "goss-gpu: cannot listen on 127.0.0.1:" + taken.getLocalPort()
                            + ": the address is in use or not this machine's" + " (Address already in use)",
                    r.err().strip());
        }
    }

    @Test
    void badServerFlagsGiveOneLine() {
        assertEquals(
                "goss-gpu: --log-format must be text or json, got 'xml'",
                CommandLineTest.run("", "serve", "--model", dir.toString(), "--log-format", "xml")
                        .err()
                        .strip());
        assertEquals(
                "goss-gpu: --drain-timeout must be a number of seconds >= 0, got -1.0",
                CommandLineTest.run("", "serve", "--model", dir.toString(), "--drain-timeout", "-1")
                        .err()
                        .strip());
        CommandLineTest.Run kv = CommandLineTest.run("", "serve", "--model", dir.toString(), "--kv-memory", "lots");
        assertEquals(2, kv.code());
        assertTrue(
                kv.err().startsWith("goss-gpu: Invalid value for option '--kv-memory': 'lots' is not a size"),
                kv.err());
    }

    /**
     * A model that fails to load ends {@code serve} with exit 1 and its reason as the last line; it used to leave a
     * server answering 503 until a signal came (found with {@code --kv-memory 1}). A timeout turns that hang into a failure.
     */
    @Test
    @org.junit.jupiter.api.Timeout(120)
    void aModelThatCannotLoadEndsServeWithItsReason() {
        assertTrue(lastLineOfFailedServe("--kv-memory", "1")
                .startsWith("goss-gpu: the model failed to load: --kv-memory 1 B cannot hold one slot's KV cache"));
    }

    /** {@code serve --context} beyond the model's positions is refused with run's message, Engine.open's (it was accepted, then worded apart). */
    @Test
    @org.junit.jupiter.api.Timeout(120)
    void aContextBeyondTheModelsMaximumIsRefused() {
        String last = lastLineOfFailedServe("--context", "99999999");
        assertTrue(
                last.equals(
                        "goss-gpu: the model failed to load: context length 99999999 exceeds this model's maximum of 131072 tokens "
                                + "(initial_context_length 4096 × rope_scaling_factor 32.0)"),
                last);
    }

    /** serve on the tiny model with {@code options}, which must exit 1: the last line of its stderr. */
    private String lastLineOfFailedServe(String... options) {
        java.util.List<String> args = new java.util.ArrayList<>(java.util.List.of(
                "serve", "--model", CommandLineTest.tinyModel(dir).toString(), "--port", "0"));
        args.addAll(java.util.List.of(options));
        CommandLineTest.Run r = CommandLineTest.run("", args.toArray(String[]::new));
        assertEquals(1, r.code(), r.err());
        return r.err().strip().lines().reduce((a, b) -> b).orElseThrow();
    }

    @Test
    void kvMemorySizes() {
        ByteSize b = new ByteSize();
        assertEquals(6L << 30, b.convert("6g"));
        assertEquals(6L << 30, b.convert("6GiB"));
        assertEquals(512L << 20, b.convert("512m"));
        assertEquals(1536L << 20, b.convert("1.5G"));
        assertEquals(4096L, b.convert("4096"));
        for (String bad : new String[] {"", "g", "-1g", "1x", "1e30t"})
            assertThrows(picocli.CommandLine.TypeConversionException.class, () -> b.convert(bad), bad);
    }
}
