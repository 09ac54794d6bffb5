package io.gossgpu.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Findings 6 and 7: fields that were silently ignored (logprobs, top_logprobs, response_format), a prompt plus
 * max_tokens over the context that was silently shortened, GET/DELETE of stored responses, the item status of an
 * incomplete response, parser internals in error texts, and 404 for a wrong method.
 */
class ApiFieldsTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    static TestServers.Scripted backend;
    static GossServer server;

    @BeforeAll
    static void start() throws Exception {
        backend = new TestServers.Scripted();
        backend.boosted = true;
        server = TestServers.start(TestServers.options().withContextLength(256).withParallel(1), backend);
    }

    @AfterAll
    static void stop() {
        if (server != null) server.close();
    }

    static HttpResponse<String> send(String method, String path, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path)).timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json");
        b.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    static JsonNode ok(HttpResponse<String> r) throws Exception {
        assertEquals(200, r.statusCode(), r.body());
        return JSON.readTree(r.body());
    }

    static JsonNode error(HttpResponse<String> r, int status) throws Exception {
        assertEquals(status, r.statusCode(), r.body());
        return JSON.readTree(r.body()).get("error");
    }

    static String chat(String extra) {
        return "{\"model\":\"gpt-oss\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]" + extra + "}";
    }

    @Test
    void chatLogprobs() throws Exception {
        backend.script.clear();
        backend.say("<|channel|>final<|message|>Hello world<|return|>");
        JsonNode r = ok(send("POST", "/v1/chat/completions", chat(",\"temperature\":0,\"logprobs\":true,\"top_logprobs\":3")));
        JsonNode choice = r.get("choices").get(0);
        assertEquals("Hello world", choice.get("message").get("content").asText());
        JsonNode content = choice.get("logprobs").get("content");
        StringBuilder text = new StringBuilder();
        for (JsonNode t : content) {
            text.append(t.get("token").asText());
            assertTrue(t.get("logprob").asDouble() <= 0, t.toString());
            JsonNode top = t.get("top_logprobs");
            assertEquals(3, top.size(), t.toString());
            assertEquals(t.get("token").asText(), top.get(0).get("token").asText(), "greedy: the chosen token is the most likely");
            assertEquals(t.get("logprob").asDouble(), top.get(0).get("logprob").asDouble(), 1e-6);
            assertTrue(top.get(0).get("logprob").asDouble() >= top.get(1).get("logprob").asDouble()
                    && top.get(1).get("logprob").asDouble() >= top.get(2).get("logprob").asDouble(), top.toString());
            byte[] bytes = t.get("token").asText().getBytes(java.nio.charset.StandardCharsets.UTF_8);
            assertEquals(bytes.length, t.get("bytes").size());
        }
        assertEquals("Hello world", text.toString(), "the content's tokens, and no header or reasoning token");
        assertTrue(JSON.readTree(send("POST", "/v1/chat/completions", chat(",\"max_tokens\":1")).body()).get("choices").get(0).get("logprobs").isNull());
        assertEquals("top_logprobs", error(send("POST", "/v1/chat/completions", chat(",\"top_logprobs\":2")), 400).get("param").asText());
        assertEquals("top_logprobs", error(send("POST", "/v1/chat/completions", chat(",\"logprobs\":true,\"top_logprobs\":21")), 400).get("param").asText());
    }

    @Test
    void completionsLogprobs() throws Exception {
        backend.script.clear();
        String prompt = "Once upon";
        JsonNode r = ok(send("POST", "/v1/completions", "{\"model\":\"gpt-oss\",\"prompt\":\"" + prompt + "\",\"max_tokens\":4,\"temperature\":0,\"logprobs\":2}"));
        JsonNode choice = r.get("choices").get(0);
        JsonNode lp = choice.get("logprobs");
        int n = r.get("usage").get("completion_tokens").asInt();
        int shown = n - (choice.get("finish_reason").asText().equals("stop") ? 1 : 0); // an end token has no text
        assertEquals(shown, lp.get("tokens").size(), lp.toString());
        StringBuilder text = new StringBuilder();
        int offset = prompt.length();
        for (int i = 0; i < shown; i++) {
            String tok = lp.get("tokens").get(i).asText();
            text.append(tok);
            assertEquals(offset, lp.get("text_offset").get(i).asInt());
            offset += tok.length();
            JsonNode top = lp.get("top_logprobs").get(i);
            assertEquals(2, top.size(), top.toString());
            assertEquals(lp.get("token_logprobs").get(i).asDouble(), top.get(tok).asDouble(), 1e-6, "greedy: the chosen token leads");
        }
        assertEquals(choice.get("text").asText(), text.toString());
    }

    @Test
    void responseFormatIsHonouredOrRefused() throws Exception {
        ok(send("POST", "/v1/chat/completions", chat(",\"max_tokens\":1,\"response_format\":{\"type\":\"text\"}")));
        ok(send("POST", "/v1/chat/completions", chat(",\"max_tokens\":1,\"response_format\":{\"type\":\"json_object\"}")));
        JsonNode e = error(send("POST", "/v1/chat/completions", chat(",\"response_format\":{\"type\":\"xml\"}")), 400);
        assertEquals("response_format", e.get("param").asText());
        assertTrue(e.get("message").asText().contains("xml"), e.toString());
        e = error(send("POST", "/v1/chat/completions", chat(",\"response_format\":{\"type\":\"json_schema\",\"json_schema\":"
                + "{\"name\":\"x\",\"strict\":true,\"schema\":{\"type\":\"string\",\"pattern\":\"a+\"}}}")), 400);
        assertTrue(e.get("message").asText().contains("pattern"), e.toString());
        error(send("POST", "/v1/chat/completions", chat(",\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"x\"}}")), 400);
        assertEquals("text.format", error(send("POST", "/v1/responses",
                "{\"model\":\"gpt-oss\",\"input\":\"Hi\",\"text\":{\"format\":{\"type\":\"xml\"}}}"), 400).get("param").asText());
    }

    @Test
    void promptPlusMaxTokensOverTheContextIs400WithBothNumbers() throws Exception {
        // The prompt fits the 256-token context; with 250 tokens asked for on top it does not.
        JsonNode e = error(send("POST", "/v1/chat/completions", chat(",\"max_tokens\":250")), 400);
        assertEquals("context_length_exceeded", e.get("code").asText());
        assertEquals("max_tokens", e.get("param").asText());
        String m = e.get("message").asText();
        assertTrue(m.contains("maximum context length is 256 tokens") && m.contains(" in the messages, 250 in the completion"), m);
        assertEquals("max_completion_tokens", error(send("POST", "/v1/chat/completions", chat(",\"max_completion_tokens\":250")), 400).get("param").asText());
        assertTrue(error(send("POST", "/v1/completions", "{\"model\":\"gpt-oss\",\"prompt\":\"Hi\",\"max_tokens\":256}"), 400)
                .get("message").asText().contains("(1 in the prompt, 256 in the completion)"));
        error(send("POST", "/v1/responses", "{\"model\":\"gpt-oss\",\"input\":\"Hi\",\"max_output_tokens\":250}"), 400);
        ok(send("POST", "/v1/chat/completions", chat(""))); // no limit asked: the room that is left
    }

    @Test
    void storedResponsesCanBeRetrievedAndDeleted() throws Exception {
        backend.script.clear();
        backend.say("<|channel|>final<|message|>one two three four five six<|return|>");
        JsonNode created = ok(send("POST", "/v1/responses", "{\"model\":\"gpt-oss\",\"input\":\"Hi\",\"temperature\":0,\"max_output_tokens\":3}"));
        String id = created.get("id").asText();
        assertEquals("incomplete", created.get("status").asText());
        JsonNode message = created.get("output").get(created.get("output").size() - 1);
        assertEquals("message", message.get("type").asText());
        assertEquals("incomplete", message.get("status").asText(), "the cut message said 'completed'");
        JsonNode got = ok(send("GET", "/v1/responses/" + id, null));
        assertEquals(created, got);
        JsonNode deleted = ok(send("DELETE", "/v1/responses/" + id, null));
        assertEquals(id, deleted.get("id").asText());
        assertTrue(deleted.get("deleted").asBoolean());
        assertEquals("not_found", error(send("GET", "/v1/responses/" + id, null), 404).get("code").asText());
        error(send("DELETE", "/v1/responses/" + id, null), 404);
        assertEquals("previous_response_not_found", error(send("POST", "/v1/responses",
                "{\"model\":\"gpt-oss\",\"input\":\"Hi\",\"previous_response_id\":\"" + id + "\"}"), 404).get("code").asText());
        backend.script.clear();
    }

    @Test
    void errorTextsAndMethods() throws Exception {
        String m = error(send("POST", "/v1/chat/completions", "{\"model\": "), 400).get("message").asText();
        assertFalse(m.contains("StreamReadFeature") || m.contains("Source:") || m.contains("REDACTED"), m);
        assertTrue(m.startsWith("the body is not valid JSON: ") && m.contains("line 1, column "), m);
        assertEquals("method_not_allowed", error(send("GET", "/v1/chat/completions", null), 405).get("code").asText());
        error(send("GET", "/v1/completions", null), 405);
        error(send("PUT", "/v1/responses", "{}"), 405);
        error(send("POST", "/v1/models", "{}"), 405);
        error(send("GET", "/v1/nothing", null), 404);
    }
}
