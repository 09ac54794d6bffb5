package io.gossgpu.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gossgpu.api.Engine;
import io.gossgpu.api.EngineOptions;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Every error case over raw HTTP, in OpenAI's error shape; plus 429, disconnect cancellation and health/models. */
class ErrorsTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static final String KEY = "sk-errors-test";
    static TestServers.Scripted backend;
    static GossServer server;
    static final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @BeforeAll
    static void start() throws Exception {
        backend = new TestServers.Scripted();
        server = TestServers.start(
                TestServers.options()
                        .withApiKey(KEY)
                        .withContextLength(256)
                        .withMaxBodyBytes(16 * 1024)
                        .withParallel(1)
                        .withQueue(0),
                backend);
    }

    @AfterAll
    static void stop() {
        if (server != null) server.close();
    }

    static URI uri(GossServer s, String path) {
        return URI.create("http://127.0.0.1:" + s.port() + path);
    }

    static HttpResponse<String> post(GossServer s, String path, String body, String key) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri(s, path))
                .timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (key != null) b.header("Authorization", "Bearer " + key);
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    static HttpResponse<String> get(GossServer s, String path, String key) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri(s, path))
                .timeout(Duration.ofSeconds(30))
                .GET();
        if (key != null) b.header("Authorization", "Bearer " + key);
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Asserts the status and OpenAI's error shape; returns the error object. */
    static JsonNode error(HttpResponse<String> r, int status) throws Exception {
        assertEquals(status, r.statusCode(), r.body());
        assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("application/json"));
        JsonNode e = JSON.readTree(r.body()).get("error");
        assertNotNull(e, r.body());
        assertTrue(e.get("message").isTextual() && !e.get("message").asText().isEmpty(), r.body());
        assertTrue(e.get("type").isTextual(), r.body());
        assertTrue(e.has("param") && e.has("code"), r.body());
        return e;
    }

    static String chat(String extra) {
        return "{\"model\":\"gpt-oss\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]" + extra + "}";
    }

    @Test
    void healthAndModels() throws Exception {
        HttpResponse<String> h = get(server, "/health", null); // no key needed
        assertEquals(200, h.statusCode());
        assertEquals("ok", JSON.readTree(h.body()).get("status").asText());
        assertEquals(1, JSON.readTree(h.body()).get("slots").asInt());
        assertEquals(0, JSON.readTree(h.body()).get("busy_slots").asInt());
        HttpResponse<String> m = get(server, "/v1/models", KEY);
        assertEquals(200, m.statusCode());
        JsonNode data = JSON.readTree(m.body()).get("data");
        assertEquals("gpt-oss", data.get(0).get("id").asText());
        assertEquals("model", data.get(0).get("object").asText());
        assertEquals(200, get(server, "/v1/models/gpt-oss", KEY).statusCode());
        error(get(server, "/v1/models/gpt-5", KEY), 404);
        error(get(server, "/v1/nothing-here", KEY), 404);
    }

    @Test
    void badKey401() throws Exception {
        assertEquals(
                "invalid_api_key",
                error(post(server, "/v1/chat/completions", chat(""), null), 401)
                        .get("code")
                        .asText());
        assertEquals(
                "invalid_api_key",
                error(post(server, "/v1/chat/completions", chat(""), "sk-wrong"), 401)
                        .get("code")
                        .asText());
        assertEquals(
                "invalid_api_key",
                error(get(server, "/v1/models", KEY + "x"), 401).get("code").asText());
    }

    @Test
    void badRequests400() throws Exception {
        String p = "/v1/chat/completions";
        assertEquals(
                "invalid_json",
                error(post(server, p, "{\"model\": ", KEY), 400).get("code").asText());
        error(post(server, p, "[1,2]", KEY), 400);
        assertEquals(
                "messages",
                error(post(server, p, "{\"model\":\"gpt-oss\"}", KEY), 400)
                        .get("param")
                        .asText());
        assertEquals(
                "messages",
                error(post(server, p, "{\"model\":\"gpt-oss\",\"messages\":[]}", KEY), 400)
                        .get("param")
                        .asText());
        assertEquals(
                "model",
                error(post(server, p, "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}", KEY), 400)
                        .get("param")
                        .asText());
        assertEquals(
                "temperature",
                error(post(server, p, chat(",\"temperature\":7"), KEY), 400)
                        .get("param")
                        .asText());
        assertEquals(
                "temperature",
                error(post(server, p, chat(",\"temperature\":\"hot\""), KEY), 400)
                        .get("param")
                        .asText());
        assertEquals(
                "max_tokens",
                error(post(server, p, chat(",\"max_tokens\":0"), KEY), 400)
                        .get("param")
                        .asText());
        assertEquals(
                "top_p",
                error(post(server, p, chat(",\"top_p\":1.5"), KEY), 400)
                        .get("param")
                        .asText());
        assertEquals(
                "stop",
                error(post(server, p, chat(",\"stop\":[\"a\",\"b\",\"c\",\"d\",\"e\"]"), KEY), 400)
                        .get("param")
                        .asText());
        assertEquals(
                "reasoning_effort",
                error(post(server, p, chat(",\"reasoning_effort\":\"extreme\""), KEY), 400)
                        .get("param")
                        .asText());
        assertEquals(
                "n",
                error(post(server, p, chat(",\"n\":2"), KEY), 400).get("param").asText());
        assertEquals(
                "tools",
                error(post(server, p, chat(",\"tools\":[{\"type\":\"web_search\"}]"), KEY), 400)
                        .get("param")
                        .asText());
        assertEquals(
                "messages[0].role",
                error(
                                post(
                                        server,
                                        p,
                                        "{\"model\":\"gpt-oss\",\"messages\":[{\"role\":\"robot\",\"content\":\"Hi\"}]}",
                                        KEY),
                                400)
                        .get("param")
                        .asText());
        error(
                post(
                        server,
                        p,
                        "{\"model\":\"gpt-oss\",\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\"}]}]}",
                        KEY),
                400);
        error(
                post(
                        server,
                        p,
                        "{\"model\":\"gpt-oss\",\"messages\":[{\"role\":\"tool\",\"tool_call_id\":\"nope\",\"content\":\"x\"}]}",
                        KEY),
                400);
        error(post(server, "/v1/completions", "{\"model\":\"gpt-oss\"}", KEY), 400);
        error(post(server, "/v1/completions", "{\"model\":\"gpt-oss\",\"prompt\":\"\"}", KEY), 400);
        error(post(server, "/v1/responses", "{\"model\":\"gpt-oss\"}", KEY), 400);
        error(
                post(
                        server,
                        "/v1/responses",
                        "{\"model\":\"gpt-oss\",\"input\":[{\"type\":\"web_search_call\"}]}",
                        KEY),
                400);
    }

    @Test
    void promptOverTheContext400() throws Exception {
        String longText = "word ".repeat(400); // the context is 256 tokens
        JsonNode e = error(
                post(
                        server,
                        "/v1/chat/completions",
                        "{\"model\":\"gpt-oss\",\"messages\":[{\"role\":\"user\",\"content\":\"" + longText + "\"}]}",
                        KEY),
                400);
        assertEquals("context_length_exceeded", e.get("code").asText());
        e = error(post(server, "/v1/completions", "{\"model\":\"gpt-oss\",\"prompt\":\"" + longText + "\"}", KEY), 400);
        assertEquals("context_length_exceeded", e.get("code").asText());
        e = error(post(server, "/v1/responses", "{\"model\":\"gpt-oss\",\"input\":\"" + longText + "\"}", KEY), 400);
        assertEquals("context_length_exceeded", e.get("code").asText());
    }

    @Test
    void unknownModel404() throws Exception {
        assertEquals(
                "model_not_found",
                error(
                                post(
                                        server,
                                        "/v1/chat/completions",
                                        "{\"model\":\"gpt-5\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}",
                                        KEY),
                                404)
                        .get("code")
                        .asText());
        error(post(server, "/v1/completions", "{\"model\":\"gpt-5\",\"prompt\":\"Hi\"}", KEY), 404);
        error(post(server, "/v1/responses", "{\"model\":\"gpt-5\",\"input\":\"Hi\"}", KEY), 404);
        assertEquals(
                "previous_response_not_found",
                error(
                                post(
                                        server,
                                        "/v1/responses",
                                        "{\"model\":\"gpt-oss\",\"input\":\"Hi\",\"previous_response_id\":\"resp_missing\"}",
                                        KEY),
                                404)
                        .get("code")
                        .asText());
    }

    @Test
    void oversizedBody413() throws Exception {
        String big = chat(",\"user\":\"" + "x".repeat(40 * 1024) + "\"");
        assertEquals(
                "request_too_large",
                error(post(server, "/v1/chat/completions", big, KEY), 413)
                        .get("code")
                        .asText());
        // Chunked (no Content-Length): the limit holds while reading.
        HttpRequest chunked = HttpRequest.newBuilder(uri(server, "/v1/chat/completions"))
                .header("Authorization", "Bearer " + KEY)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofInputStream(
                        () -> new java.io.ByteArrayInputStream(big.getBytes(StandardCharsets.UTF_8))))
                .build();
        error(http.send(chunked, HttpResponse.BodyHandlers.ofString()), 413);
    }

    @Test
    void busy429AndCancelOnDisconnect() throws Exception {
        // One slot, no queue. A long streaming reply holds the slot (a plain socket, so that closing it is a
        // disconnect)...
        long cancelledBefore = server.stats().cancelled();
        String body = chat(",\"stream\":true,\"max_tokens\":150"); // prompt + 150 fit the 256-token context
        java.net.Socket socket = new java.net.Socket("127.0.0.1", server.port());
        socket.getOutputStream()
                .write(("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + KEY
                                + "\r\nContent-Type: application/json\r\nContent-Length: "
                                + body.getBytes(StandardCharsets.UTF_8).length
                                + "\r\n\r\n" + body)
                        .getBytes(StandardCharsets.UTF_8));
        socket.getOutputStream().flush();
        InputStream in = socket.getInputStream();
        String head = new String(in.readNBytes(12), StandardCharsets.US_ASCII);
        assertEquals("HTTP/1.1 200", head);
        assertEquals(1, server.stats().busySlots());
        // ... so another request is refused with 429 and Retry-After.
        HttpResponse<String> busy = post(server, "/v1/chat/completions", chat(",\"max_tokens\":1"), KEY);
        JsonNode e = error(busy, 429);
        assertEquals("server_busy", e.get("code").asText());
        assertEquals(
                "the slot is busy and 0 requests are waiting; retry later",
                e.get("message").asText()); // not "all 1 slots"
        assertTrue(busy.headers().firstValue("Retry-After").isPresent());
        // The client goes away: the server notices on its next write, cancels, and frees the slot long before 150
        // tokens.
        long t0 = System.nanoTime();
        socket.close();
        while (server.stats().busySlots() > 0 && System.nanoTime() - t0 < 20e9) Thread.sleep(20);
        assertEquals(0, server.stats().busySlots());
        assertEquals(cancelledBefore + 1, server.stats().cancelled());
        double ms = (System.nanoTime() - t0) / 1e6;
        System.out.printf("slot freed %.0f ms after the client disconnected%n", ms);
        assertTrue(ms < 5000, "the generation was not cancelled: " + ms + " ms"); // 200 tokens take ~18 s here
        assertEquals(
                200,
                post(server, "/v1/chat/completions", chat(",\"max_tokens\":1"), KEY)
                        .statusCode());
    }

    @Test
    void closeEndsRunningGenerationsVisiblyAndReleasesSessions() throws Exception {
        // Finding 2: a reply cut by the shutdown used to end like a complete one (finish_reason "stop" and [DONE]).
        GossServer s = TestServers.start(
                TestServers.options().withParallel(1).withDrainTimeoutMs(0), new TestServers.Scripted());
        String body = chat(",\"stream\":true,\"max_tokens\":200");
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", s.port())) {
            socket.getOutputStream()
                    .write(
                            ("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: "
                                            + body.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n" + body)
                                    .getBytes(StandardCharsets.UTF_8));
            InputStream in = socket.getInputStream();
            assertEquals("HTTP/1.1 200", new String(in.readNBytes(12), StandardCharsets.US_ASCII));
            assertEquals(1, s.stats().busySlots());
            long t0 = System.nanoTime();
            s.close();
            double ms = (System.nanoTime() - t0) / 1e6;
            assertTrue(ms < 5000, "close took " + ms + " ms"); // the 200 tokens would take ~18 s
            assertEquals(0, s.stats().busySlots());
            assertEquals(0, s.stats().openSessions());
            String rest = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(rest.contains("\"code\":\"shutting_down\""), rest);
            assertTrue(
                    !rest.contains("[DONE]")
                            && !rest.contains("\"finish_reason\":\"stop\"")
                            && !rest.contains("\"finish_reason\":\"length\""),
                    rest);
        }
    }

    @Test
    void corsWhenAsked() throws Exception {
        HttpRequest preflight = HttpRequest.newBuilder(uri(server, "/v1/chat/completions"))
                .header("Origin", "http://localhost:3000")
                .header("Access-Control-Request-Method", "POST")
                .method("OPTIONS", HttpRequest.BodyPublishers.noBody())
                .build();
        assertTrue(http.send(preflight, HttpResponse.BodyHandlers.ofString())
                .headers()
                .firstValue("Access-Control-Allow-Origin")
                .isEmpty());
        GossServer s = GossServer.start(
                TestServers.options().withCorsOrigins("http://localhost:3000").withApiKey(KEY), () -> {
                    throw new IllegalStateException("no model in this test");
                });
        try {
            HttpResponse<String> r = http.send(
                    HttpRequest.newBuilder(uri(s, "/v1/chat/completions"))
                            .header("Origin", "http://localhost:3000")
                            .header("Access-Control-Request-Method", "POST")
                            .header("Access-Control-Request-Headers", "authorization,content-type")
                            .method("OPTIONS", HttpRequest.BodyPublishers.noBody())
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(
                    "http://localhost:3000",
                    r.headers().firstValue("Access-Control-Allow-Origin").orElse(null),
                    r.headers().toString());
            // A model that failed to load: 503 with the reason.
            assertTrue(!s.awaitReady(Duration.ofSeconds(10)));
            assertEquals(
                    "model_load_failed",
                    error(post(s, "/v1/chat/completions", chat(""), KEY), 503)
                            .get("code")
                            .asText());
            assertEquals(503, get(s, "/health", null).statusCode());
        } finally {
            s.close();
        }
    }

    @Test
    void idleTimeoutClosesIdleConnectionsButNotLongRequests() throws Exception {
        TestServers.Scripted slow = new TestServers.Scripted();
        slow.stepMillis = 200; // 6 steps: the request lasts 4 idle timeouts whatever the machine's speed
        try (GossServer s = TestServers.start(TestServers.options().withReadTimeoutMs(300), slow)) {
            try (java.net.Socket idle = new java.net.Socket("127.0.0.1", s.port())) {
                idle.setSoTimeout(10_000);
                assertEquals(-1, idle.getInputStream().read()); // closed by the server
            }
            long t0 = System.nanoTime();
            HttpResponse<String> r = post(s, "/v1/chat/completions", chat(",\"max_tokens\":6"), null);
            assertEquals(200, r.statusCode(), r.body());
            assertTrue(System.nanoTime() - t0 > 3 * 300e6, "the request was not longer than the idle timeout");
        }
    }

    @Test
    void loading503() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        java.nio.file.Path m = TestServers.model();
        GossServer loading = GossServer.start(TestServers.options(), () -> {
            try {
                release.await();
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            Engine engine = Engine.open(
                    EngineOptions.of(m).withBackend("reference"),
                    () -> io.gossgpu.backend.Backends.open("reference", io.gossgpu.backend.BackendOptions.defaults()));
            return engine;
        });
        try {
            HttpResponse<String> h = get(loading, "/health", null);
            assertEquals(503, h.statusCode());
            assertEquals("loading", JSON.readTree(h.body()).get("status").asText());
            assertEquals(
                    "model_loading",
                    error(post(loading, "/v1/chat/completions", chat(""), null), 503)
                            .get("code")
                            .asText());
            assertEquals(
                    "model_loading",
                    error(get(loading, "/v1/models", null), 503).get("code").asText());
            release.countDown();
            assertTrue(loading.awaitReady(Duration.ofMinutes(1)));
            assertEquals(200, get(loading, "/health", null).statusCode());
        } finally {
            release.countDown();
            loading.close();
        }
    }
}
