package io.gossgpu.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.util.ContextInitializer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * serve's two log formats, which the command line owns since the server module logs through the SLF4J API only:
 * an access event with key-values and an error with an exception, as text and as JSON lines; and the
 * library's System.Logger messages joining the same log ({@link LibraryMessages#toSlf4j}).
 */
class ServerLoggingTest {
    static final ObjectMapper JSON = new ObjectMapper();

    private static List<String> logged(ServerLogging.Format format, Runnable body) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ServerLogging.configure(format, out);
        try {
            body.run();
        } finally {
            LoggerContext ctx = (LoggerContext) LoggerFactory.getILoggerFactory();
            ctx.reset();
            try {
                new ContextInitializer(ctx).autoConfig(); // back to logback-test.xml
            } catch (Exception e) {
                throw new AssertionError(e);
            }
            LibraryMessages.toStderr();
        }
        return out.toString(StandardCharsets.UTF_8).lines().toList();
    }

    private static void events() {
        LoggerFactory.getLogger("goss.access")
                .atInfo()
                .setMessage("POST /v1/completions 200")
                .addKeyValue("prompt_tokens", 1)
                .addKeyValue("client", "127.0.0.1")
                .log();
        LoggerFactory.getLogger("goss.server")
                .error("loading the model failed: no weights here", new IllegalStateException("no weights here"));
        LoggerFactory.getLogger("org.eclipse.jetty.server").info("jetty chatter below WARN");
        LibraryMessages.toSlf4j();
        System.getLogger("io.gossgpu.backend").log(System.Logger.Level.WARNING, "unknown setting GOSS_X");
    }

    @Test
    void textLines() {
        List<String> lines = logged(ServerLogging.Format.TEXT, ServerLoggingTest::events);
        assertTrue(
                lines.getFirst()
                        .matches(
                                "\\d{4}-\\d\\d-\\d\\dT\\S+ INFO  access: POST /v1/completions 200 prompt_tokens=1 client=127\\.0\\.0\\.1"),
                lines.toString());
        assertTrue(
                lines.stream()
                        .anyMatch(l -> l.matches("\\S+ ERROR server: loading the model failed: no weights here ")),
                lines.toString());
        assertTrue(
                lines.stream().anyMatch(l -> l.startsWith("java.lang.IllegalStateException: no weights here")),
                lines.toString());
        assertFalse(lines.stream().anyMatch(l -> l.contains("jetty chatter")), lines.toString());
        assertTrue(lines.getLast().matches("\\S+ WARN  backend: unknown setting GOSS_X "), lines.toString());
    }

    @Test
    void jsonLines() throws Exception {
        List<String> lines = logged(ServerLogging.Format.JSON, ServerLoggingTest::events);
        assertEquals(3, lines.size(), lines.toString());
        JsonNode access = JSON.readTree(lines.get(0));
        assertEquals("goss.access", access.get("logger").asText());
        assertEquals("INFO", access.get("level").asText());
        assertEquals("POST /v1/completions 200", access.get("message").asText());
        assertTrue(access.get("prompt_tokens").isInt(), "numbers stay numbers: " + access);
        assertEquals("127.0.0.1", access.get("client").asText());
        JsonNode error = JSON.readTree(lines.get(1));
        assertEquals(
                "java.lang.IllegalStateException: no weights here",
                error.get("error").asText());
        assertTrue(error.get("stack").asText().contains("at io.gossgpu.cli.ServerLoggingTest"), error.toString());
        JsonNode library = JSON.readTree(lines.get(2));
        assertEquals("io.gossgpu.backend", library.get("logger").asText());
        assertEquals("WARN", library.get("level").asText());
        assertEquals("unknown setting GOSS_X", library.get("message").asText());
    }
}
