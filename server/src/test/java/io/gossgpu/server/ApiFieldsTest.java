package io.gossgpu.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gossgpu.tokenizer.O200kHarmony;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Findings 6 and 7: fields that were silently ignored (logprobs, top_logprobs, response_format), a prompt plus
 * max_tokens over the context that was silently shortened, GET/DELETE of stored responses, the item status of an
 * incomplete response, parser internals in error texts, and 404 for a wrong method.
 */
class ApiFieldsTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
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
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                .timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json");
        b.method(
                method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
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
        backend.logitRows.clear();
        backend.recordLogits = true;
        JsonNode r;
        try {
            r = ok(send(
                    "POST", "/v1/chat/completions", chat(",\"temperature\":0,\"logprobs\":true,\"top_logprobs\":3")));
        } finally {
            backend.recordLogits = false;
        }
        checkAgainstTheLogits(
                r.get("choices").get(0).get("logprobs").get("content"),
                List.copyOf(backend.logitRows),
                O200kHarmony.get().encodeWithSpecials("<|channel|>final<|message|>").length);
        JsonNode choice = r.get("choices").get(0);
        assertEquals("Hello world", choice.get("message").get("content").asText());
        JsonNode content = choice.get("logprobs").get("content");
        StringBuilder text = new StringBuilder();
        for (JsonNode t : content) {
            text.append(t.get("token").asText());
            assertTrue(t.get("logprob").asDouble() <= 0, t.toString());
            JsonNode top = t.get("top_logprobs");
            assertEquals(3, top.size(), t.toString());
            assertEquals(
                    t.get("token").asText(),
                    top.get(0).get("token").asText(),
                    "greedy: the chosen token is the most likely");
            assertEquals(t.get("logprob").asDouble(), top.get(0).get("logprob").asDouble(), 1e-6);
            assertTrue(
                    top.get(0).get("logprob").asDouble()
                                    >= top.get(1).get("logprob").asDouble()
                            && top.get(1).get("logprob").asDouble()
                                    >= top.get(2).get("logprob").asDouble(),
                    top.toString());
            byte[] bytes = t.get("token").asText().getBytes(java.nio.charset.StandardCharsets.UTF_8);
            assertEquals(bytes.length, t.get("bytes").size());
        }
        assertEquals("Hello world", text.toString(), "the content's tokens, and no header or reasoning token");
        assertTrue(JSON.readTree(send("POST", "/v1/chat/completions", chat(",\"max_tokens\":1"))
                        .body())
                .get("choices")
                .get(0)
                .get("logprobs")
                .isNull());
        assertEquals(
                "top_logprobs",
                error(send("POST", "/v1/chat/completions", chat(",\"top_logprobs\":2")), 400)
                        .get("param")
                        .asText());
        assertEquals(
                "top_logprobs",
                error(send("POST", "/v1/chat/completions", chat(",\"logprobs\":true,\"top_logprobs\":21")), 400)
                        .get("param")
                        .asText());
    }

    /**
     * The checks above hold for any greedy reply (the chosen token leads its own list by construction).
     * Here every reported number is compared with the log-softmax, in doubles, of the logits the backend returned
     * for the same prefix: the chosen token's logprob and the top 3 alternatives' tokens and logprobs, to 1e-4.
     * {@code skip}: the generated tokens before the first content token (the Harmony header).
     */
    private static void checkAgainstTheLogits(JsonNode content, List<float[]> rows, int skip) {
        O200kHarmony tok = O200kHarmony.get();
        assertTrue(
                rows.size() >= skip + content.size(),
                rows.size() + " logit rows for " + skip + " + " + content.size() + " tokens");
        for (int j = 0; j < content.size(); j++) {
            float[] row = rows.get(skip + j);
            double max = Double.NEGATIVE_INFINITY, sum = 0;
            for (float v : row) max = Math.max(max, v);
            for (float v : row) sum += Math.exp(v - max);
            double logZ = max + Math.log(sum);
            Integer[] order = new Integer[row.length];
            for (int i = 0; i < order.length; i++) order[i] = i;
            java.util.Arrays.sort(order, (a, b) -> Float.compare(row[b], row[a]));
            JsonNode t = content.get(j);
            assertEquals(
                    bytes(tok.tokenBytes(order[0])),
                    t.get("bytes").toString(),
                    "token " + j + ": greedy picks the top logit");
            assertEquals(row[order[0]] - logZ, t.get("logprob").asDouble(), 1e-4, "token " + j + "'s logprob");
            for (int k = 0; k < 3; k++) {
                JsonNode alt = t.get("top_logprobs").get(k);
                assertEquals(
                        bytes(tok.tokenBytes(order[k])),
                        alt.get("bytes").toString(),
                        "token " + j + ", alternative " + k);
                assertEquals(
                        row[order[k]] - logZ,
                        alt.get("logprob").asDouble(),
                        1e-4,
                        "token " + j + ", alternative " + k + "'s logprob");
            }
        }
    }

    /** A token's bytes as the API writes them: a JSON array of numbers 0..255. */
    private static String bytes(byte[] b) {
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < b.length; i++) sb.append(i > 0 ? "," : "").append(b[i] & 0xff);
        return sb.append(']').toString();
    }

    @Test
    void completionsLogprobs() throws Exception {
        backend.script.clear();
        String prompt = "Once upon";
        JsonNode r = ok(send(
                "POST",
                "/v1/completions",
                "{\"model\":\"gpt-oss\",\"prompt\":\"" + prompt
                        + "\",\"max_tokens\":4,\"temperature\":0,\"logprobs\":2}"));
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
            assertEquals(
                    lp.get("token_logprobs").get(i).asDouble(),
                    top.get(tok).asDouble(),
                    1e-6,
                    "greedy: the chosen token leads");
        }
        assertEquals(choice.get("text").asText(), text.toString());
    }

    @Test
    void responseFormatIsHonouredOrRefused() throws Exception {
        ok(send("POST", "/v1/chat/completions", chat(",\"max_tokens\":1,\"response_format\":{\"type\":\"text\"}")));
        ok(send(
                "POST",
                "/v1/chat/completions",
                chat(",\"max_tokens\":1,\"response_format\":{\"type\":\"json_object\"}")));
        JsonNode e = error(send("POST", "/v1/chat/completions", chat(",\"response_format\":{\"type\":\"xml\"}")), 400);
        assertEquals("response_format", e.get("param").asText());
        assertTrue(e.get("message").asText().contains("xml"), e.toString());
        e = error(
                send(
                        "POST",
                        "/v1/chat/completions",
                        chat(
                                ",\"response_format\":{\"type\":\"json_schema\",\"json_schema\":"
                                        + "{\"name\":\"x\",\"strict\":true,\"schema\":{\"type\":\"string\",\"pattern\":\"(?=a)a+\"}}}")),
                400); // lookahead: outside the subset
        assertTrue(e.get("message").asText().contains("pattern"), e.toString());
        error(
                send(
                        "POST",
                        "/v1/chat/completions",
                        chat(",\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"x\"}}")),
                400);
        assertEquals(
                "text.format",
                error(
                                send(
                                        "POST",
                                        "/v1/responses",
                                        "{\"model\":\"gpt-oss\",\"input\":\"Hi\",\"text\":{\"format\":{\"type\":\"xml\"}}}"),
                                400)
                        .get("param")
                        .asText());
    }

    @Test
    void promptPlusMaxTokensOverTheContextIs400WithBothNumbers() throws Exception {
        // The prompt fits the 256-token context; with 250 tokens asked for on top it does not.
        JsonNode e = error(send("POST", "/v1/chat/completions", chat(",\"max_tokens\":250")), 400);
        assertEquals("context_length_exceeded", e.get("code").asText());
        assertEquals("max_tokens", e.get("param").asText());
        String m = e.get("message").asText();
        assertTrue(
                m.contains("maximum context length is 256 tokens")
                        && m.contains(" in the messages, 250 in the completion"),
                m);
        assertEquals(
                "max_completion_tokens",
                error(send("POST", "/v1/chat/completions", chat(",\"max_completion_tokens\":250")), 400)
                        .get("param")
                        .asText());
        assertTrue(error(
                        send("POST", "/v1/completions", "{\"model\":\"gpt-oss\",\"prompt\":\"Hi\",\"max_tokens\":256}"),
                        400)
                .get("message")
                .asText()
                .contains("(1 in the prompt, 256 in the completion)"));
        error(send("POST", "/v1/responses", "{\"model\":\"gpt-oss\",\"input\":\"Hi\",\"max_output_tokens\":250}"), 400);
        ok(send("POST", "/v1/chat/completions", chat(""))); // no limit asked: the room that is left
    }

    @Test
    void storedResponsesCanBeRetrievedAndDeleted() throws Exception {
        backend.script.clear();
        backend.say("<|channel|>final<|message|>one two three four five six<|return|>");
        JsonNode created = ok(send(
                "POST",
                "/v1/responses",
                "{\"model\":\"gpt-oss\",\"input\":\"Hi\",\"temperature\":0,\"max_output_tokens\":3}"));
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
        assertEquals(
                "not_found",
                error(send("GET", "/v1/responses/" + id, null), 404).get("code").asText());
        error(send("DELETE", "/v1/responses/" + id, null), 404);
        assertEquals(
                "previous_response_not_found",
                error(
                                send(
                                        "POST",
                                        "/v1/responses",
                                        "{\"model\":\"gpt-oss\",\"input\":\"Hi\",\"previous_response_id\":\"" + id
                                                + "\"}"),
                                404)
                        .get("code")
                        .asText());
        backend.script.clear();
    }

    /** Each of these was answered 200 where OpenAI answers 400. */
    @Test
    void requestsOpenAiRefusesAre400() throws Exception {
        String[][] cases = { // body, param
            {"{\"model\":\"gpt-oss\",\"messages\":[{\"role\":\"user\"}]}", "messages[0].content"},
            {"{\"model\":\"gpt-oss\",\"messages\":[{\"role\":\"user\",\"content\":null}]}", "messages[0].content"},
            {chat(",\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\",\"parameters\":\"x\"}}]"), "tools"},
            {chat(",\"stream_options\":{\"include_usage\":true}"), "stream_options"},
            {chat(",\"stream\":false,\"stream_options\":{\"include_usage\":true}"), "stream_options"},
            {
                "{\"model\":\"gpt-oss\",\"messages\":[{\"role\":\"user\",\"content\":\"a\\ud800b\"}]}",
                "messages[0].content"
            },
            {"{\"model\":\"gpt-oss\",\"messages\":[{\"role\":\"user\",\"content\":\"\\udc00\"}]}", "messages[0].content"
            },
            {chat(",\"stop\":[\"\"]"), "stop"},
            {chat(",\"stop\":[\"x\",\"\"]"), "stop"},
            {chat(",\"stop\":\"\""), "stop"},
            {"{\"model\":\"gpt-oss\",\"prompt\":\"Hi\",\"stream_options\":{\"include_usage\":true}}", "stream_options"},
            {"{\"model\":\"gpt-oss\",\"prompt\":\"Hi\",\"stop\":[\"\"]}", "stop"},
            {
                "{\"model\":\"gpt-oss\",\"input\":\"Hi\",\"tools\":[{\"type\":\"function\",\"name\":\"f\",\"parameters\":\"x\"}]}",
                "tools"
            }
        };
        for (String[] c : cases) {
            String path = c[0].contains("\"prompt\"")
                    ? "/v1/completions"
                    : c[0].contains("\"input\"") ? "/v1/responses" : "/v1/chat/completions";
            HttpResponse<String> r = send("POST", path, c[0]);
            assertEquals(400, r.statusCode(), c[0] + " -> " + r.body());
            JsonNode e = JSON.readTree(r.body()).get("error");
            assertEquals("invalid_request_error", e.get("type").asText(), r.body());
            assertEquals(c[1], e.get("param").asText(), r.body());
            assertFalse(e.get("message").asText().isBlank(), r.body());
        }
        // what stays accepted: a pair of surrogates (an emoji), stop strings, stream_options with stream, an object
        // schema
        backend.script.clear();
        ok(
                send(
                        "POST",
                        "/v1/chat/completions",
                        "{\"model\":\"gpt-oss\",\"max_tokens\":1,\"messages\":[{\"role\":\"user\",\"content\":\"\\ud83d\\ude00\"}]}"));
        ok(send("POST", "/v1/chat/completions", chat(",\"max_tokens\":1,\"stop\":[\"x\"],\"stream_options\":null")));
        ok(
                send(
                        "POST",
                        "/v1/chat/completions",
                        chat(
                                ",\"max_tokens\":1,\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\",\"parameters\":{\"type\":\"object\"}}}]")));
        assertEquals(
                200,
                send(
                                "POST",
                                "/v1/chat/completions",
                                chat(",\"max_tokens\":1,\"stream\":true,\"stream_options\":{\"include_usage\":true}"))
                        .statusCode());
    }

    @Test
    void errorTextsAndMethods() throws Exception {
        String m = error(send("POST", "/v1/chat/completions", "{\"model\": "), 400)
                .get("message")
                .asText();
        assertFalse(m.contains("StreamReadFeature") || m.contains("Source:") || m.contains("REDACTED"), m);
        assertEquals("invalid JSON at line 1 column 11: unexpected end of input within/between Object entries", m);
        // Jackson's wording leaked ("(code 125)", "was expecting (JSON String, Number, ...)", class names).
        String[][] malformed = {
            {"{\"model\":}", "invalid JSON at line 1 column 10: unexpected character ('}'): expected a value"},
            {"{\"model\": nope}", "invalid JSON at line 1 column 16: unrecognized token 'nope'"},
            {
                "{\"a\":1,}",
                "invalid JSON at line 1 column 8: unexpected character ('}'): was expecting double-quote to start field name"
            },
            {
                "{\"a\":\"x\n\"}",
                "invalid JSON at line 1 column 8: illegal unquoted character (control character 10): has to be escaped using backslash to be included in string value"
            }
        };
        for (String[] c : malformed) {
            JsonNode e = error(send("POST", "/v1/chat/completions", c[0]), 400);
            String got = e.get("message").asText();
            assertEquals("invalid_json", e.get("code").asText());
            assertFalse(
                    got.contains("\n")
                            || got.contains("com.fasterxml")
                            || got.contains("Source:")
                            || got.contains("Feature"),
                    got);
            assertEquals(c[1], got);
        }
        assertEquals(
                "method_not_allowed",
                error(send("GET", "/v1/chat/completions", null), 405)
                        .get("code")
                        .asText());
        error(send("GET", "/v1/completions", null), 405);
        error(send("PUT", "/v1/responses", "{}"), 405);
        error(send("POST", "/v1/models", "{}"), 405);
        error(send("GET", "/v1/nothing", null), 404);
    }
}
