package io.gossgpu.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** What an operator sees: the access and error log, /metrics and the probes, and the drain on shutdown. */
class OperationsTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    static HttpResponse<String> post(GossServer s, String path, String body) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.port() + path))
                        .timeout(Duration.ofSeconds(60))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    static HttpResponse<String> get(GossServer s, String path) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.port() + path))
                        .timeout(Duration.ofSeconds(30))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** A chat request on another thread; returns once the server is generating it. */
    static CompletableFuture<HttpResponse<String>> postInBackground(GossServer s, String body)
            throws InterruptedException {
        CompletableFuture<HttpResponse<String>> r = CompletableFuture.supplyAsync(() -> {
            try {
                return post(s, "/v1/chat/completions", body);
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        while (s.stats().busySlots() == 0 && !r.isDone()) Thread.sleep(10);
        return r;
    }

    static String chat(String extra) {
        return "{\"model\":\"gpt-oss\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]" + extra + "}";
    }

    @Test
    void accessAndErrorEvents() throws Exception {
        List<LoggedEvents.Event> events = LoggedEvents.of(() -> {
            try (GossServer s = TestServers.start(TestServers.options(), new TestServers.Scripted())) {
                assertEquals(
                        200,
                        post(s, "/v1/chat/completions", chat(",\"max_tokens\":3,\"temperature\":0"))
                                .statusCode());
                assertEquals(
                        400,
                        post(s, "/v1/chat/completions", chat(",\"temperature\":9"))
                                .statusCode());
                assertEquals(404, get(s, "/v1/nothing").statusCode());
            }
            try (GossServer failing = GossServer.start(TestServers.options(), () -> {
                throw new IllegalStateException("no weights here");
            })) {
                assertFalse(failing.awaitReady(Duration.ofSeconds(30)));
            }
        });
        List<LoggedEvents.Event> access =
                events.stream().filter(e -> e.logger().equals("goss.access")).toList();
        assertEquals(3, access.size(), events.toString());
        LoggedEvents.Event ok = access.get(0);
        assertEquals("INFO", ok.level());
        assertEquals("POST /v1/chat/completions 200", ok.message());
        assertTrue(((Number) ok.get("prompt_tokens")).intValue() > 0, ok.toString());
        assertEquals(3, ((Number) ok.get("completion_tokens")).intValue(), ok.toString());
        assertTrue(
                ok.get("ttft_ms") instanceof Number
                        && ok.get("total_ms") instanceof Number
                        && ((Number) ok.get("slot")).intValue() >= 0,
                ok.toString());
        assertEquals("127.0.0.1", ok.get("client"), ok.toString());
        assertEquals("POST /v1/chat/completions 400", access.get(1).message());
        assertTrue(
                access.get(1).get("error") != null && access.get(1).error() == null,
                "a client error is a line, not a stack trace: " + access.get(1));
        assertEquals("GET /v1/nothing 404", access.get(2).message());
        assertTrue(
                events.stream().anyMatch(e -> e.message().startsWith("serving 'gpt-oss' at http://127.0.0.1:")),
                events.toString());
        assertTrue(events.stream().anyMatch(e -> e.message().startsWith("stopped in ")), events.toString());
        assertTrue(
                events.stream()
                        .anyMatch(e -> e.level().equals("ERROR")
                                && e.message().contains("loading the model failed: no weights here")),
                events.toString());
    }

    /**
     * A stream whose client vanished at 0.5 s was logged "200" and its line had no {@code client}. Now it is
     * logged 499 with {@code client_gone} and the client's address, as every other line.
     */
    @Test
    void aStreamWhoseClientLeftIsLoggedAsClientGone() throws Exception {
        TestServers.Scripted backend = new TestServers.Scripted();
        backend.stepMillis = 20; // 300 tokens take 6 s: the client leaves long before
        List<LoggedEvents.Event> events = LoggedEvents.of(() -> {
            try (GossServer s = TestServers.start(TestServers.options().withParallel(1), backend)) {
                String body = chat(",\"stream\":true,\"max_tokens\":300,\"temperature\":0");
                try (java.net.Socket k = new java.net.Socket("127.0.0.1", s.port())) {
                    k.getOutputStream()
                            .write(RawHttp.request(
                                            "POST",
                                            "/v1/chat/completions",
                                            "127.0.0.1",
                                            body,
                                            "Content-Type: application/json")
                                    .getBytes(StandardCharsets.UTF_8));
                    k.setSoTimeout(30_000);
                    java.io.InputStream in = k.getInputStream();
                    StringBuilder seen = new StringBuilder();
                    while (!seen.toString().contains("data: ")) {
                        int b = in.read();
                        assertTrue(b >= 0, "the stream ended early: " + seen);
                        seen.append((char) b);
                    }
                    Thread.sleep(500);
                }
                long deadline = System.nanoTime() + 20_000_000_000L;
                while (s.stats().busySlots() > 0 && System.nanoTime() < deadline) Thread.sleep(20);
                assertEquals(0, s.stats().busySlots(), "the generation went on after the client left");
            }
        });
        LoggedEvents.Event line = null;
        for (LoggedEvents.Event e : events)
            if (e.logger().equals("goss.access") && e.message().startsWith("POST /v1/chat/completions")) line = e;
        assertTrue(line != null, events.toString());
        assertEquals("POST /v1/chat/completions 499", line.message(), line.toString());
        assertEquals(Boolean.TRUE, line.get("client_gone"), line.toString());
        assertEquals("127.0.0.1", line.get("client"), line.toString());
        assertTrue(((Number) line.get("completion_tokens")).intValue() < 300, line.toString());
    }

    /** The value of an unlabelled metric in Prometheus text. */
    private static double metric(String text, String name) {
        java.util.regex.Matcher m =
                java.util.regex.Pattern.compile("(?m)^" + name + " (\\S+)$").matcher(text);
        assertTrue(m.find(), name + " missing in\n" + text);
        return Double.parseDouble(m.group(1));
    }

    @Test
    void metricsAndProbes() throws Exception {
        try (GossServer s = TestServers.start(TestServers.options().withParallel(1), new TestServers.Scripted())) {
            assertEquals(
                    200,
                    post(s, "/v1/chat/completions", chat(",\"max_tokens\":4,\"temperature\":0"))
                            .statusCode());
            assertEquals(400, post(s, "/v1/chat/completions", chat(",\"n\":3")).statusCode());
            assertEquals(200, get(s, "/health/live").statusCode());
            assertEquals(200, get(s, "/health/ready").statusCode());
            HttpResponse<String> m = get(s, "/metrics");
            assertEquals(200, m.statusCode());
            assertTrue(
                    m.headers().firstValue("Content-Type").orElse("").startsWith("text/plain; version=0.0.4"),
                    m.headers().toString());
            String text = m.body();
            assertTrue(
                    text.contains("goss_http_requests_total{endpoint=\"/v1/chat/completions\",status=\"200\"} 1.0"),
                    text);
            assertTrue(
                    text.contains("goss_http_requests_total{endpoint=\"/v1/chat/completions\",status=\"400\"} 1.0"),
                    text);
            assertTrue(text.contains("goss_completion_tokens_total 4.0"), text);
            assertTrue(text.matches("(?s).*goss_prompt_tokens_total [1-9][0-9]*\\.0.*"), text);
            assertTrue(text.contains("goss_time_to_first_token_seconds_count 1"), text);
            assertTrue(text.contains("goss_decode_tokens_per_second_count 1"), text);
            assertTrue(
                    text.contains("goss_slots 1.0")
                            && text.contains("goss_slots_busy 0.0")
                            && text.contains("goss_queue_depth 0.0"),
                    text);
            assertTrue(text.contains("goss_kv_cache_capacity_tokens 1024.0"), text);
            assertTrue(text.matches("(?s).*goss_kv_cache_used_tokens [1-9][0-9]*\\.0.*"), text);
            assertTrue(text.contains("goss_model_ready 1.0") && text.contains("goss_draining 0.0"), text);
            // one stream alone: its prompt in one step, then one step per further token, each serving that one sequence
            double prompt = metric(text, "goss_prompt_tokens_total");
            assertEquals(4.0, metric(text, "goss_batch_steps_total"), text);
            assertEquals(4.0, metric(text, "goss_batch_sequences_total"), text);
            assertEquals(prompt + 3, metric(text, "goss_batch_rows_total"), text);
            // the backend's own counters, by name: the scripted backend counts its argmax reads (one per greedy step)
            assertEquals(4.0, metric(text, "goss_backend_work_total\\{counter=\"argmax_reads\"\\}"), text);
        }
        // Loading: alive but not ready.
        java.util.concurrent.CountDownLatch never = new java.util.concurrent.CountDownLatch(1);
        try (GossServer loading = GossServer.start(TestServers.options(), () -> {
            try {
                never.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            throw new IllegalStateException("test over");
        })) {
            assertEquals(200, get(loading, "/health/live").statusCode());
            assertEquals(503, get(loading, "/health/ready").statusCode());
            assertTrue(get(loading, "/metrics").body().contains("goss_model_ready 0.0"));
            never.countDown();
        }
    }

    @Test
    void drainLetsRunningRequestsFinishAndRefusesNewOnes() throws Exception {
        TestServers.Scripted slow = new TestServers.Scripted();
        slow.stepMillis = 150;
        GossServer s = TestServers.start(TestServers.options().withDrainTimeoutMs(30_000), slow);
        int port = s.port();
        CompletableFuture<HttpResponse<String>> running =
                postInBackground(s, chat(",\"max_tokens\":12,\"temperature\":0"));
        CompletableFuture<Void> closing = CompletableFuture.runAsync(s::close);
        Thread.sleep(300);
        assertFalse(closing.isDone(), "close did not wait for the running request");
        try { // new requests: the listener is closed (or, on a kept-alive connection, 503)
            assertEquals(503, get(s, "/health/ready").statusCode());
        } catch (java.net.ConnectException refused) {
            // expected
        }
        try (ServerSocket rebind = new ServerSocket()) { // the port is free while the request finishes
            rebind.setReuseAddress(true);
            rebind.bind(new java.net.InetSocketAddress("127.0.0.1", port));
        }
        HttpResponse<String> r = running.get();
        closing.get();
        assertEquals(200, r.statusCode(), r.body()); // finished, not cut
        JsonNode choice = JSON.readTree(r.body()).get("choices").get(0);
        assertEquals("length", choice.get("finish_reason").asText(), r.body());
        assertEquals(
                12,
                JSON.readTree(r.body()).get("usage").get("completion_tokens").asInt());
    }

    @Test
    void aNonStreamedReplyCutByTheShutdownIs503() throws Exception {
        TestServers.Scripted slow = new TestServers.Scripted();
        slow.stepMillis = 100;
        GossServer s = TestServers.start(TestServers.options().withDrainTimeoutMs(200), slow);
        CompletableFuture<HttpResponse<String>> running =
                postInBackground(s, chat(",\"max_tokens\":300,\"temperature\":0"));
        s.close();
        HttpResponse<String> r = running.get();
        assertEquals(503, r.statusCode(), r.body()); // it used to be 200 with finish_reason "stop"
        assertEquals(
                "shutting_down",
                JSON.readTree(r.body()).get("error").get("code").asText());
    }
}
