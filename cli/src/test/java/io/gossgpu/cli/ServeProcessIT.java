package io.gossgpu.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * Finding 1, end to end: {@code java -jar goss-gpu.jar serve} as a supervisor runs it. SIGTERM to the started
 * process while a reply streams drains and stops the whole server: the stream ends with an error event and no
 * {@code [DONE]}, the port is free, and no JVM is left (the launcher used to exit alone and leave the relaunched
 * server running with the port). SIGINT to that process stops it too. Runs after {@code package} (failsafe), on
 * the jar just built.
 */
class ServeProcessIT {
    @TempDir
    Path dir;

    static final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    @Test
    void sigtermWhileStreamingDrainsAndLeavesNothingBehind() throws Exception {
        Path model = model();
        int port = freePort();
        Process server = serve(model, port, "--drain-timeout", "8", "--api-key", "k");
        try {
            awaitReady(server, port);
            // the options reach the server: the key guards the API, the model is named after its folder
            String base = "http://127.0.0.1:" + port;
            assertEquals(
                    401,
                    http.send(
                                    HttpRequest.newBuilder(URI.create(base + "/v1/models"))
                                            .build(),
                                    HttpResponse.BodyHandlers.ofString())
                            .statusCode());
            HttpResponse<String> models = http.send(
                    HttpRequest.newBuilder(URI.create(base + "/v1/models"))
                            .header("Authorization", "Bearer k")
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertTrue(models.body().contains("\"id\":\"m\""), models.body());
            HttpResponse<String> chat = http.send(
                    HttpRequest.newBuilder(URI.create(base + "/v1/chat/completions"))
                            .header("Authorization", "Bearer k")
                            .header("Content-Type", "application/json")
                            .timeout(Duration.ofSeconds(60))
                            .POST(
                                    HttpRequest.BodyPublishers.ofString(
                                            "{\"model\":\"m\",\"max_tokens\":2,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}"))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, chat.statusCode(), chat.body());
            assertTrue(chat.body().contains("\"completion_tokens\":2"), chat.body());
            // A long reply that the 8 s drain cannot finish, and beside it (the second slot) a short one that it can: 4
            // tokens. (12 did not always fit a 3 s drain on a loaded 2-core machine: ~300 ms a step for the two.)
            try (Socket stream = startStream(port, 1500);
                    Socket shortStream = startStream(port, 4)) {
                List<ProcessHandle> family =
                        List.copyOf(server.toHandle().descendants().toList());
                long t0 = System.nanoTime();
                signal("TERM", server.pid());
                String shortRest = new String(shortStream.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                String rest = new String(stream.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                double s = (System.nanoTime() - t0) / 1e9;
                assertTrue(server.waitFor(60, TimeUnit.SECONDS), "the server did not stop");
                System.out.printf("stream ended %.1f s after SIGTERM (drain 8 s); exit %d%n", s, server.exitValue());
                assertTrue(
                        log(server).contains("shutting down: 2 running requests"),
                        "both were running at SIGTERM: " + log(server));
                // The short request in flight at SIGTERM finishes whole within the drain ...
                assertTrue(
                        shortRest.matches("(?s).*\"finish_reason\":\"(length|stop)\".*data: \\[DONE]\n\n.*"),
                        shortRest + "\n" + log(server));
                assertFalse(shortRest.contains("shutting_down"), shortRest);
                // ... the long one is cut visibly once the drain time is up, not before it and not much after.
                assertTrue(rest.contains("\"code\":\"shutting_down\""), rest);
                assertFalse(rest.contains("[DONE]"), rest);
                assertTrue(s >= 7.8 && s < 8 + 4, "the long stream ended " + s + " s after SIGTERM; the drain is 8 s");
                assertEquals(0, server.exitValue(), log(server));
                for (ProcessHandle p : family) assertFalse(p.isAlive(), "left running: " + p.info());
            }
            assertPortFree(port);
        } finally {
            server.destroyForcibly();
        }
    }

    /**
     * The second signal reached the JVM's default handler (ServeCommand put it back before draining), so the
     * running requests ran on to the end of the drain and the process exited 143. Now it ends them at once and exits 0.
     */
    @Test
    void aSecondSigtermEndsRunningRequestsAtOnce() throws Exception {
        Path model = model();
        int port = freePort();
        Process server = serve(model, port, "--drain-timeout", "120", "--api-key", "k");
        try {
            awaitReady(server, port);
            try (Socket stream = startStream(port, 1500)) {
                signal("TERM", server.pid());
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (!log(server).contains("shutting down") && System.nanoTime() < deadline) Thread.sleep(50);
                assertTrue(log(server).contains("shutting down: 1 running request"), log(server));
                Thread.sleep(300);
                long t0 = System.nanoTime();
                signal("TERM", server.pid());
                String rest = new String(stream.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                double s = (System.nanoTime() - t0) / 1e9;
                assertTrue(server.waitFor(60, TimeUnit.SECONDS), "the server did not stop");
                System.out.printf(
                        "stream ended %.1f s after the second SIGTERM (drain 120 s); exit %d%n", s, server.exitValue());
                assertTrue(rest.contains("\"code\":\"shutting_down\"") && !rest.contains("[DONE]"), rest);
                assertTrue(s < 10, "the second SIGTERM ended the stream " + s + " s later");
                assertEquals(0, server.exitValue(), log(server));
                assertTrue(log(server).contains("received again: ending running requests now"), log(server));
            }
            assertPortFree(port);
        } finally {
            server.destroyForcibly();
        }
    }

    /**
     * Three items on the demo model: with {@code --log-format json} every line on stderr is JSON, from the
     * JVM's incubator warning (written before main) and the demo notice on; and the README's server example (its
     * {@code serve} line has no {@code --model}: the demo) answers the README's own curl body with 200.
     */
    @Test
    void theDemoServerLogsOnlyJsonAndAnswersTheReadmesExample() throws Exception {
        int port = freePort();
        String javaBin = ProcessHandle.current().info().command().orElseThrow();
        String jar = System.getProperty("goss.jar", "target/goss-gpu.jar");
        ProcessBuilder pb = new ProcessBuilder(
                        javaBin,
                        "-Duser.home=" + dir,
                        "-jar",
                        jar,
                        "serve",
                        "--backend",
                        "reference",
                        "--port",
                        String.valueOf(port),
                        "--log-format",
                        "json")
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("serve.log").toFile());
        pb.environment().remove("GOSS_MODEL");
        pb.environment().put("XDG_CACHE_HOME", dir.resolve("cache").toString());
        Process server = pb.start();
        try {
            awaitReady(server, port);
            String readme = Files.readString(Path.of("../README.md"));
            java.util.regex.Matcher curl = java.util.regex.Pattern.compile("-d '(\\{\"model\".*)'")
                    .matcher(readme.substring(readme.indexOf("## Serving an OpenAI-compatible API")));
            assertTrue(curl.find(), "no curl -d in the README's server section");
            HttpResponse<String> r = http.send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/chat/completions"))
                            .header("Content-Type", "application/json")
                            .timeout(Duration.ofSeconds(120))
                            .POST(HttpRequest.BodyPublishers.ofString(curl.group(1)))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode(), curl.group(1) + " -> " + r.body());
            signal("TERM", server.pid());
            assertTrue(server.waitFor(60, TimeUnit.SECONDS), "the server did not stop");
            assertEquals(0, server.exitValue(), log(server));
            List<String> lines = log(server).lines().toList();
            com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
            for (String line : lines)
                assertTrue(line.startsWith("{") && json.readTree(line).isObject(), "not a JSON line: " + line);
            assertTrue(
                    lines.stream()
                            .anyMatch(l -> l.contains("\"logger\":\"jvm\"") && l.contains("Using incubator modules")),
                    log(server));
            assertTrue(lines.stream().anyMatch(l -> l.contains("using the built-in DEMO model")), log(server));
            assertTrue(
                    lines.stream().anyMatch(l -> l.contains("\"message\":\"POST /v1/chat/completions 200\"")),
                    log(server));
        } finally {
            server.destroyForcibly();
        }
    }

    /** A chat stream of {@code maxTokens} tokens on a plain socket, returned once its first event came. */
    private static Socket startStream(int port, int maxTokens) throws IOException {
        String body = "{\"model\":\"m\",\"stream\":true,\"temperature\":0,\"max_tokens\":" + maxTokens
                + ",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
        Socket stream = new Socket("127.0.0.1", port);
        stream.getOutputStream()
                .write(("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer k\r\n"
                                + "Content-Type: application/json\r\nConnection: close\r\nContent-Length: "
                                + body.length() + "\r\n\r\n" + body)
                        .getBytes(StandardCharsets.UTF_8));
        stream.setSoTimeout(150_000);
        InputStream in = stream.getInputStream();
        assertEquals("HTTP/1.1 200", new String(in.readNBytes(12), StandardCharsets.US_ASCII));
        readUntil(in, "data: "); // the stream has begun
        return stream;
    }

    @Test
    void sigintStopsTheStartedProcess() throws Exception {
        assumeFalse(
                sigintIgnored(),
                "SIGINT was ignored when this JVM started (e.g. Maven run as a background job of a shell "
                        + "without job control), and the server started from it inherits that, as a shell's background job does");
        Path model = model();
        int port = freePort();
        Process server = serve(model, port);
        try {
            awaitReady(server, port);
            signal("INT", server.pid());
            assertTrue(server.waitFor(60, TimeUnit.SECONDS), "SIGINT did not stop the server");
            assertEquals(0, server.exitValue());
            assertTrue(server.toHandle().descendants().findAny().isEmpty());
            assertPortFree(port);
            assertTrue(log(server).contains("stopped in "), log(server));
        } finally {
            server.destroyForcibly();
        }
    }

    /** Whether this JVM started with SIGINT ignored (HotSpot then hands back SIG_IGN and installs nothing). */
    private static boolean sigintIgnored() {
        Signal sigint = new Signal("INT");
        SignalHandler before = Signal.handle(sigint, s -> {});
        Signal.handle(sigint, before);
        return before == SignalHandler.SIG_IGN;
    }

    private Path model() {
        Path m = dir.resolve("m");
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
                                "2",
                                "--seed",
                                "5",
                                "--out",
                                m.toString())
                        .code());
        return m;
    }

    private Process serve(Path model, int port, String... extra) throws IOException {
        String java = ProcessHandle.current().info().command().orElseThrow();
        String jar = System.getProperty("goss.jar", "target/goss-gpu.jar");
        assertTrue(Files.isRegularFile(Path.of(jar)), "no " + jar + " (this test runs after package)");
        List<String> cmd = new java.util.ArrayList<>(List.of(
                java,
                "-jar",
                jar,
                "serve",
                "--model",
                model.toString(),
                "--backend",
                "reference",
                "--port",
                String.valueOf(port),
                "--context",
                "2048"));
        cmd.addAll(List.of(extra));
        return new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("serve.log").toFile())
                .start();
    }

    private String log(Process p) {
        try {
            return Files.readString(dir.resolve("serve.log"));
        } catch (IOException e) {
            return e.toString();
        }
    }

    private void awaitReady(Process server, int port) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
        while (System.nanoTime() < deadline) {
            assertTrue(server.isAlive(), "the server died: " + log(server));
            try {
                HttpResponse<String> r = http.send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health/ready"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200) return;
            } catch (IOException notYet) {
                // not listening yet
            }
            Thread.sleep(200);
        }
        throw new AssertionError("not ready in time: " + log(server));
    }

    private static void signal(String name, long pid) throws Exception {
        assertEquals(
                0,
                new ProcessBuilder("kill", "-" + name, String.valueOf(pid))
                        .inheritIO()
                        .start()
                        .waitFor());
    }

    private static void readUntil(InputStream in, String marker) throws IOException {
        StringBuilder sb = new StringBuilder();
        while (!sb.toString().endsWith(marker)) {
            int b = in.read();
            if (b < 0) throw new IOException("the stream ended before '" + marker + "': " + sb);
            sb.append((char) b);
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"))) {
            return s.getLocalPort();
        }
    }

    private static void assertPortFree(int port) throws IOException {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(true);
            s.bind(new java.net.InetSocketAddress("127.0.0.1", port));
        }
    }
}
