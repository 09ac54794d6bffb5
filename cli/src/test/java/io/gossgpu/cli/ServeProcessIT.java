package io.gossgpu.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import sun.misc.Signal;
import sun.misc.SignalHandler;

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

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

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

    static final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    @Test
    void sigtermWhileStreamingDrainsAndLeavesNothingBehind() throws Exception {
        Path model = model();
        int port = freePort();
        Process server = serve(model, port, "--drain-timeout", "1", "--api-key", "k");
        try {
            awaitReady(server, port);
            // the options reach the server: the key guards the API, the model is named after its folder
            String base = "http://127.0.0.1:" + port;
            assertEquals(401, http.send(HttpRequest.newBuilder(URI.create(base + "/v1/models")).build(), HttpResponse.BodyHandlers.ofString()).statusCode());
            HttpResponse<String> models = http.send(HttpRequest.newBuilder(URI.create(base + "/v1/models")).header("Authorization", "Bearer k").build(),
                    HttpResponse.BodyHandlers.ofString());
            assertTrue(models.body().contains("\"id\":\"m\""), models.body());
            HttpResponse<String> chat = http.send(HttpRequest.newBuilder(URI.create(base + "/v1/chat/completions"))
                    .header("Authorization", "Bearer k").header("Content-Type", "application/json").timeout(Duration.ofSeconds(60))
                    .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"m\",\"max_tokens\":2,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}"))
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, chat.statusCode(), chat.body());
            assertTrue(chat.body().contains("\"completion_tokens\":2"), chat.body());
            String body = "{\"model\":\"m\",\"stream\":true,\"max_tokens\":1500,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
            try (Socket stream = new Socket("127.0.0.1", port)) {
                stream.getOutputStream().write(("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer k\r\nContent-Type: application/json\r\n"
                        + "Content-Length: " + body.length() + "\r\n\r\n" + body).getBytes(StandardCharsets.UTF_8));
                stream.setSoTimeout(60_000);
                InputStream in = stream.getInputStream();
                assertEquals("HTTP/1.1 200", new String(in.readNBytes(12), StandardCharsets.US_ASCII));
                readUntil(in, "data: "); // the stream has begun
                List<ProcessHandle> family = List.copyOf(server.toHandle().descendants().toList());
                long t0 = System.nanoTime();
                signal("TERM", server.pid());
                String rest = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                double s = (System.nanoTime() - t0) / 1e9;
                assertTrue(rest.contains("\"code\":\"shutting_down\""), rest);
                assertFalse(rest.contains("[DONE]"), rest);
                assertTrue(server.waitFor(60, TimeUnit.SECONDS), "the server did not stop");
                System.out.printf("stream ended %.1f s after SIGTERM (drain 1 s); exit %d%n", s, server.exitValue());
                assertEquals(0, server.exitValue(), log(server));
                for (ProcessHandle p : family) assertFalse(p.isAlive(), "left running: " + p.info());
            }
            assertPortFree(port);
        } finally {
            server.destroyForcibly();
        }
    }

    @Test
    void sigintStopsTheStartedProcess() throws Exception {
        assumeFalse(sigintIgnored(), "SIGINT was ignored when this JVM started (e.g. Maven run as a background job of a shell "
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
        assertEquals(0, CommandLineTest.run("", "make-test-model", "--format", "original", "--preset", "demo", "--layers", "2",
                "--seed", "5", "--out", m.toString()).code());
        return m;
    }

    private Process serve(Path model, int port, String... extra) throws IOException {
        String java = ProcessHandle.current().info().command().orElseThrow();
        String jar = System.getProperty("goss.jar", "target/goss-gpu.jar");
        assertTrue(Files.isRegularFile(Path.of(jar)), "no " + jar + " (this test runs after package)");
        List<String> cmd = new java.util.ArrayList<>(List.of(java, "-jar", jar, "serve", "--model", model.toString(),
                "--backend", "reference", "--port", String.valueOf(port), "--context", "2048"));
        cmd.addAll(List.of(extra));
        return new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(dir.resolve("serve.log").toFile()).start();
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
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health/ready")).build(),
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
        assertEquals(0, new ProcessBuilder("kill", "-" + name, String.valueOf(pid)).inheritIO().start().waitFor());
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
