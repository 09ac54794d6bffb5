package io.gossgpu.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Finding 3: with no key set (the default) any web page could drive the server through a visitor's browser: a forged
 * {@code Host} (DNS rebinding) was answered, so was a foreign {@code Origin}, and a {@code text/plain} body started a
 * generation. Each is refused now, while the clients that do send these headers legitimately still get through.
 */
class BrowserGuardTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static GossServer server;
    static final String CHAT =
            "{\"model\":\"gpt-oss\",\"max_tokens\":1,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";

    @BeforeAll
    static void start() throws Exception {
        server = TestServers.start(
                TestServers.options().withAllowedHosts("api.example.com").withCorsOrigins("http://localhost:3000"),
                new TestServers.Scripted());
    }

    @AfterAll
    static void stop() {
        if (server != null) server.close();
    }

    static String send(String method, String path, String host, String body, String... headers) {
        return RawHttp.exchange(server.port(), RawHttp.request(method, path, host, body, headers), 60_000);
    }

    static JsonNode error(String response, int status) throws Exception {
        assertEquals(status, RawHttp.status(response), response);
        return JSON.readTree(RawHttp.body(response)).get("error");
    }

    @Test
    void foreignHostNamesAreRefused() throws Exception {
        assertEquals(
                "host_not_allowed",
                error(send("GET", "/health", "evil.example.com", null), 403)
                        .get("code")
                        .asText());
        assertEquals(
                "host_not_allowed",
                error(send("GET", "/v1/models", "evil.example.com:" + server.port(), null), 403)
                        .get("code")
                        .asText());
        long before = server.stats().requests();
        error(
                send("POST", "/v1/chat/completions", "rebind.attacker.test", CHAT, "Content-Type: application/json"),
                403);
        assertEquals(before, server.stats().requests(), "a refused request's body was read");
        for (String ok : new String[] {
            "127.0.0.1:" + server.port(),
            "localhost:" + server.port(),
            "localhost",
            "[::1]:" + server.port(),
            "app.localhost",
            "10.1.2.3:8080",
            "api.example.com",
            "API.example.com:443"
        }) assertEquals(200, RawHttp.status(send("GET", "/health", ok, null)), ok);
    }

    @Test
    void foreignOriginsAreRefused() throws Exception {
        String host = "127.0.0.1:" + server.port();
        assertEquals(
                "origin_not_allowed",
                error(
                                send(
                                        "POST",
                                        "/v1/chat/completions",
                                        host,
                                        CHAT,
                                        "Content-Type: application/json",
                                        "Origin: https://evil.example"),
                                403)
                        .get("code")
                        .asText());
        error(send("GET", "/v1/models", host, null, "Origin: null"), 403);
        // The allowed origin: a real request and a CORS preflight.
        String ok = send(
                "POST",
                "/v1/chat/completions",
                host,
                CHAT,
                "Content-Type: application/json",
                "Origin: http://localhost:3000");
        assertEquals(200, RawHttp.status(ok), ok);
        assertTrue(ok.contains("Access-Control-Allow-Origin: http://localhost:3000"), ok);
        String preflight = send(
                "OPTIONS",
                "/v1/chat/completions",
                host,
                null,
                "Origin: http://localhost:3000",
                "Access-Control-Request-Method: POST",
                "Access-Control-Request-Headers: authorization,content-type");
        assertEquals(200, RawHttp.status(preflight), preflight);
        assertTrue(preflight.contains("Access-Control-Allow-Origin: http://localhost:3000"), preflight);
        error(
                send(
                        "OPTIONS",
                        "/v1/chat/completions",
                        host,
                        null,
                        "Origin: https://evil.example",
                        "Access-Control-Request-Method: POST"),
                403);
        // The server's own origin is not cross-site.
        assertEquals(200, RawHttp.status(send("GET", "/health", host, null, "Origin: http://" + host)));
    }

    @Test
    void bodiesMustBeJson() throws Exception {
        String host = "127.0.0.1:" + server.port();
        long before = server.stats().requests();
        for (String type :
                new String[] {"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"}) {
            JsonNode e = error(send("POST", "/v1/chat/completions", host, CHAT, "Content-Type: " + type), 415);
            assertEquals("unsupported_media_type", e.get("code").asText());
            assertTrue(e.get("message").asText().contains(type), e.toString());
        }
        error(
                send("POST", "/v1/completions", host, "{\"model\":\"gpt-oss\",\"prompt\":\"Hi\"}"),
                415); // no Content-Type
        assertEquals(before, server.stats().requests(), "a refused body was read");
        assertEquals(
                200,
                RawHttp.status(send(
                        "POST", "/v1/chat/completions", host, CHAT, "Content-Type: application/json; charset=utf-8")));
    }
}
