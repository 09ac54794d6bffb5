package io.gossgpu.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Finding 4: about 300 connections that never finished their body took all of Jetty's threads, so {@code /health}
 * and the API stopped answering, and each stalled request got a text/plain 500 after 60 s. Now stalled requests
 * park virtual threads, {@code /health} answers at once, each stalled request gets a JSON 408 after the read timeout,
 * and the connection cap holds. Every socket here is on loopback and closed by the end of the test.
 */
class SlowClientsTest {
    static final int STALLED = 300;

    @Test
    void stalledBodiesDoNotStarveHealthAndGet408() throws Exception {
        long readTimeout = 4000;
        try (GossServer s = TestServers.start(
                TestServers.options().withReadTimeoutMs(readTimeout).withMaxConnections(1000),
                new TestServers.Scripted())) {
            List<Socket> stalled = new ArrayList<>();
            try {
                String head =
                        "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                                + "Content-Length: 1000\r\n\r\n{\"model\":";
                for (int i = 0; i < STALLED; i++) {
                    Socket k = new Socket("127.0.0.1", s.port());
                    k.getOutputStream().write(head.getBytes(StandardCharsets.US_ASCII));
                    k.getOutputStream().flush();
                    stalled.add(k);
                }
                long t0 = System.nanoTime();
                String health =
                        RawHttp.exchange(s.port(), RawHttp.request("GET", "/health", "127.0.0.1", null), 10_000);
                double ms = (System.nanoTime() - t0) / 1e6;
                assertEquals(200, RawHttp.status(health), health);
                System.out.printf("/health answered in %.0f ms with %d stalled requests%n", ms, STALLED);
                assertTrue(ms < readTimeout / 2.0, "/health took " + ms + " ms while requests stalled");
                // Every stalled request ends with a JSON 408 once the read timeout has passed.
                int timedOut = 0;
                for (Socket k : stalled) {
                    k.setSoTimeout((int) (readTimeout * 4));
                    String r = new String(k.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                    assertEquals(408, RawHttp.status(r), r);
                    assertTrue(r.contains("application/json") && r.contains("\"code\":\"request_timeout\""), r);
                    timedOut++;
                }
                assertEquals(STALLED, timedOut);
            } finally {
                for (Socket k : stalled) k.close();
            }
        }
    }

    @Test
    void stalledHeadersAreClosedAfterTheReadTimeout() throws Exception {
        try (GossServer s =
                        TestServers.start(TestServers.options().withReadTimeoutMs(500), new TestServers.Scripted());
                Socket k = new Socket("127.0.0.1", s.port())) {
            k.getOutputStream().write("GET /health HTTP/1.1\r\nHost: 127.0".getBytes(StandardCharsets.US_ASCII));
            k.setSoTimeout(10_000);
            long t0 = System.nanoTime();
            String r = new String(k.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            double ms = (System.nanoTime() - t0) / 1e6;
            assertTrue(ms >= 400 && ms < 5000, "closed after " + ms + " ms");
            // The connection was closed with 0 bytes (this assertion only ran when something came back).
            assertEquals(408, RawHttp.status(r), r);
            assertTrue(r.contains("application/json") && r.contains("\"code\":\"request_timeout\""), r);
        }
    }

    /** A keep-alive connection idle between requests has nothing to answer: it is closed without a 408. */
    @Test
    void anIdleConnectionIsClosedSilently() throws Exception {
        try (GossServer s =
                        TestServers.start(TestServers.options().withReadTimeoutMs(500), new TestServers.Scripted());
                Socket k = new Socket("127.0.0.1", s.port())) {
            k.getOutputStream()
                    .write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            k.setSoTimeout(10_000);
            InputStream in = k.getInputStream();
            assertTrue(readResponseHead(in).startsWith("HTTP/1.1 200"));
            String rest =
                    new String(in.readAllBytes(), StandardCharsets.UTF_8); // the body, then the close after 500 ms
            assertFalse(rest.contains("408"), rest);
        }
    }

    @Test
    void theConnectionCapHolds() throws Exception {
        try (GossServer s = TestServers.start(
                TestServers.options().withMaxConnections(4).withReadTimeoutMs(60_000), new TestServers.Scripted())) {
            List<Socket> held = new ArrayList<>();
            try {
                for (int i = 0; i < 4; i++) {
                    Socket k = new Socket("127.0.0.1", s.port());
                    k.getOutputStream()
                            .write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                                    .getBytes(StandardCharsets.US_ASCII));
                    k.setSoTimeout(10_000);
                    readResponseHead(k.getInputStream()); // served: the connection is open (keep-alive)
                    held.add(k);
                }
                try (Socket fifth = new Socket("127.0.0.1", s.port())) { // the kernel accepts it into the backlog ...
                    fifth.getOutputStream()
                            .write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                                    .getBytes(StandardCharsets.US_ASCII));
                    fifth.setSoTimeout(1000);
                    assertThrows(
                            SocketTimeoutException.class,
                            () -> fifth.getInputStream().read()); // ... Jetty does not serve it
                    held.removeFirst().close();
                    fifth.setSoTimeout(10_000);
                    assertTrue(
                            readResponseHead(fifth.getInputStream()).startsWith("HTTP/1.1 200"),
                            "not served after a connection closed");
                }
            } finally {
                for (Socket k : held) k.close();
            }
        }
    }

    private static String readResponseHead(InputStream in) throws IOException {
        StringBuilder sb = new StringBuilder();
        while (!sb.toString().endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) break;
            sb.append((char) b);
        }
        return sb.toString();
    }
}
