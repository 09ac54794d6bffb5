package io.gossgpu.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.ObjectName;
import org.junit.jupiter.api.Test;

/**
 * A bounded load test: {@code CLIENTS} concurrent clients each send {@code REQUESTS} requests (chat, streaming chat,
 * raw completions, responses; a few tokens each) to a server with 2 slots and a queue of 4, so that some are refused
 * with 429 (the client waits and retries them). Nothing else may fail, and afterwards every slot is idle, no session
 * beyond the slots' own is open, and memory (heap after GC, and the JVM's committed native memory when native memory
 * tracking is on) is back near where it was. Stops by itself: every request has a timeout, and the whole run a deadline.
 * Figures go to stdout. Sizes: -Dgoss.load.clients, -Dgoss.load.requests.
 */
class LoadTest {
    static final int CLIENTS = Integer.getInteger("goss.load.clients", 8);
    static final int REQUESTS = Integer.getInteger("goss.load.requests", 25);
    static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void concurrentClients() throws Exception {
        ServerOptions options =
                TestServers.options().withParallel(2).withQueue(4).withStoredResponses(16);
        try (GossServer server = TestServers.start(options, new TestServers.Scripted())) {
            String base = "http://127.0.0.1:" + server.port();
            HttpClient http = HttpClient.newBuilder()
                    .connectTimeout(Duration.ofSeconds(5))
                    .build();
            // Warm up: each kind once, so that the baseline includes lazily made sessions, JIT and Jetty threads.
            for (int kind = 0; kind < 4; kind++)
                assertEquals(200, send(http, base, kind, 0, 0).statusCode());
            Memory before = Memory.measure();
            int baselineSessions = server.stats().openSessions();

            AtomicInteger ok = new AtomicInteger(), refused = new AtomicInteger();
            List<String> failures = Collections.synchronizedList(new ArrayList<>());
            List<Long> latencies = Collections.synchronizedList(new ArrayList<>());
            long t0 = System.nanoTime();
            ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
            List<Future<?>> clients = new ArrayList<>();
            for (int c = 0; c < CLIENTS; c++) {
                int client = c;
                clients.add(pool.submit(() -> {
                    for (int i = 0; i < REQUESTS; i++) {
                        int kind = (client + i) % 4;
                        long start = System.nanoTime();
                        for (int attempt = 0; ; attempt++) {
                            try {
                                HttpResponse<String> r = send(http, base, kind, client, i);
                                if (r.statusCode() == 429 && attempt < 400) {
                                    refused.incrementAndGet();
                                    assertTrue(r.headers()
                                            .firstValue("Retry-After")
                                            .isPresent());
                                    Thread.sleep(100);
                                    continue;
                                }
                                if (r.statusCode() != 200 || !valid(kind, r.body()))
                                    failures.add(kind + ": " + r.statusCode() + " " + r.body());
                                else ok.incrementAndGet();
                            } catch (Exception e) {
                                failures.add(kind + ": " + e);
                            }
                            break;
                        }
                        latencies.add(System.nanoTime() - start);
                    }
                    return null;
                }));
            }
            pool.shutdown();
            boolean finished = pool.awaitTermination(150, TimeUnit.SECONDS);
            if (!finished) pool.shutdownNow();
            double seconds = (System.nanoTime() - t0) / 1e9;
            assertTrue(finished, "the load test did not finish in time");
            for (Future<?> f : clients) f.get();

            // Everything idle again: no busy slot, nobody queued, no session beyond the slots' own.
            long deadline = System.nanoTime() + 10_000_000_000L;
            while ((server.stats().busySlots() > 0 || server.stats().queued() > 0) && System.nanoTime() < deadline)
                Thread.sleep(20);
            GossServer.Stats after = server.stats();
            Memory mem = Memory.measure();
            Collections.sort(latencies);
            System.out.printf(
                    "load test: %d clients x %d requests = %d in %.1f s (%.1f req/s), %d ok, %d answered 429 (retried), %d failed%n",
                    CLIENTS,
                    REQUESTS,
                    CLIENTS * REQUESTS,
                    seconds,
                    CLIENTS * REQUESTS / seconds,
                    ok.get(),
                    refused.get(),
                    failures.size());
            System.out.printf(
                    "latency per request incl. retries: p50 %.0f ms, p90 %.0f ms, max %.0f ms%n",
                    pct(latencies, 0.5), pct(latencies, 0.9), pct(latencies, 1.0));
            System.out.printf(
                    "after: %s; open sessions %d (baseline %d)%n", after, after.openSessions(), baselineSessions);
            System.out.printf(
                    "heap after GC: %.1f MiB before, %.1f MiB after; JVM native memory committed (NMT, Java heap excluded): %s before, %s after%n",
                    before.heap / 1048576.0, mem.heap / 1048576.0, before.nativeText(), mem.nativeText());

            assertTrue(
                    failures.isEmpty(),
                    failures.size() + " failed, first: " + (failures.isEmpty() ? "" : failures.get(0)));
            assertEquals(CLIENTS * REQUESTS, ok.get());
            assertEquals(0, after.busySlots());
            assertEquals(0, after.queued());
            // Sessions belong to slots (a chat and, once needed, a completion each), never to requests.
            assertTrue(after.openSessions() <= 2 * options.parallel(), "open sessions: " + after.openSessions());
            assertTrue(mem.heap < before.heap + (64L << 20), "heap grew from " + before.heap + " to " + mem.heap);
            if (before.nativeCommitted > 0)
                assertTrue(
                        mem.nativeCommitted < before.nativeCommitted + (64L << 20),
                        "native memory grew from " + before.nativeText() + " to " + mem.nativeText());
        }
    }

    static double pct(List<Long> sorted, double p) {
        if (sorted.isEmpty()) return 0;
        return sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(p * sorted.size()) - 1)) / 1e6;
    }

    static HttpResponse<String> send(HttpClient http, String base, int kind, int client, int i) throws Exception {
        String path, body;
        switch (kind) {
            case 0 -> {
                path = "/v1/chat/completions";
                body =
                        "{\"model\":\"gpt-oss\",\"temperature\":0,\"max_tokens\":2,\"messages\":[{\"role\":\"system\",\"content\":\"Client "
                                + client + "\"},{\"role\":\"user\",\"content\":\"Question " + i + "\"}]}";
            }
            case 1 -> {
                path = "/v1/chat/completions";
                body =
                        "{\"model\":\"gpt-oss\",\"temperature\":0.7,\"seed\":1,\"max_tokens\":2,\"stream\":true,\"stream_options\":{\"include_usage\":true},"
                                + "\"messages\":[{\"role\":\"user\",\"content\":\"Stream " + i + "\"}]}";
            }
            case 2 -> {
                path = "/v1/completions";
                body = "{\"model\":\"gpt-oss\",\"temperature\":0,\"max_tokens\":3,\"prompt\":\"Count " + client + " "
                        + i + "\"}";
            }
            default -> {
                path = "/v1/responses";
                body = "{\"model\":\"gpt-oss\",\"temperature\":0,\"max_output_tokens\":2,\"input\":\"Respond " + i
                        + "\"}";
            }
        }
        HttpRequest req = HttpRequest.newBuilder(URI.create(base + path))
                .timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
        return http.send(req, HttpResponse.BodyHandlers.ofString());
    }

    static boolean valid(int kind, String body) throws Exception {
        return switch (kind) {
            case 0 ->
                JSON.readTree(body).path("usage").path("completion_tokens").asInt() == 2;
            case 1 -> body.endsWith("data: [DONE]\n\n") && body.contains("\"completion_tokens\":2");
            case 2 ->
                JSON.readTree(body).path("usage").path("completion_tokens").asInt() >= 1;
            default -> {
                JsonNode r = JSON.readTree(body);
                yield r.path("object").asText().equals("response")
                        && r.path("usage").path("output_tokens").asInt() == 2;
            }
        };
    }

    /** Heap used after a GC, and the JVM's committed native memory from native memory tracking (0 when it is off). */
    record Memory(long heap, long nativeCommitted) {
        static Memory measure() throws InterruptedException {
            for (int i = 0; i < 3; i++) {
                System.gc();
                Thread.sleep(50);
            }
            var m = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
            return new Memory(m.getUsed(), nativeCommittedNow());
        }

        String nativeText() {
            return nativeCommitted > 0 ? String.format("%.1f MiB", nativeCommitted / 1048576.0) : "n/a (NMT off)";
        }

        static long nativeCommittedNow() {
            try {
                Object out = ManagementFactory.getPlatformMBeanServer()
                        .invoke(
                                new ObjectName("com.sun.management:type=DiagnosticCommand"),
                                "vmNativeMemory",
                                new Object[] {new String[] {"summary"}},
                                new String[] {String[].class.getName()});
                // The total less the Java heap (its committed size follows the GC's sizing, measured apart above).
                String text = String.valueOf(out);
                Matcher total = Pattern.compile("Total: reserved=(\\d+)KB, committed=(\\d+)KB")
                        .matcher(text);
                Matcher heap = Pattern.compile("Java Heap \\(reserved=(\\d+)KB, committed=(\\d+)KB")
                        .matcher(text);
                if (!total.find()) return 0;
                long kb = Long.parseLong(total.group(2)) - (heap.find() ? Long.parseLong(heap.group(2)) : 0);
                return kb * 1024;
            } catch (Exception e) {
                return 0;
            }
        }
    }
}
