package io.gossgpu.server;

import static org.junit.jupiter.api.Assertions.*;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.InputFormat;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
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
 * Chat {@code response_format} json_schema and json_object, Responses
 * {@code text.format}, and a strict function tool's arguments all validate against their schemas (networknt is the
 * oracle). Strings carry a maxLength because the demo model, which knows no JSON, never closes a string by itself.
 */
class StructuredOutputServerTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    static final String SCHEMA = """
            {"type":"object","properties":{"city":{"type":"string","maxLength":30},"population":{"type":"integer"},
             "tags":{"type":"array","items":{"enum":["big","old","coastal"]},"maxItems":3}},
             "required":["city","population","tags"],"additionalProperties":false}""";
    static GossServer server;

    @BeforeAll
    static void start() throws InterruptedException {
        server = TestServers.startDemo();
    }

    @AfterAll
    static void stop() {
        if (server != null) server.close();
    }

    static JsonNode post(String path, String body) throws Exception {
        HttpResponse<String> r = HTTP.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), r.body());
        return JSON.readTree(r.body());
    }

    static List<String> violations(String schema, String doc) {
        return SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12)
                .getSchema(schema)
                .validate(doc, InputFormat.JSON)
                .stream()
                .map(e -> e.getMessage())
                .toList();
    }

    @Test
    void chatJsonSchemaAnswersValidate() throws Exception {
        for (int seed = 1; seed <= 3; seed++) {
            JsonNode r = post(
                    "/v1/chat/completions",
                    "{\"model\":\"gpt-oss\",\"seed\":" + seed + ",\"max_tokens\":600,"
                            + "\"messages\":[{\"role\":\"user\",\"content\":\"What is the capital of France?\"}],"
                            + "\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"city\",\"strict\":true,\"schema\":"
                            + SCHEMA + "}}}");
            JsonNode choice = r.get("choices").get(0);
            assertEquals("stop", choice.get("finish_reason").asText(), r.toString());
            String content = choice.get("message").get("content").asText();
            assertTrue(violations(SCHEMA, content).isEmpty(), content + ": " + violations(SCHEMA, content));
        }
    }

    @Test
    void responsesTextFormatAnswersValidate() throws Exception {
        JsonNode r = post(
                "/v1/responses",
                "{\"model\":\"gpt-oss\",\"input\":\"What is the capital of France?\",\"max_output_tokens\":600,"
                        + "\"text\":{\"format\":{\"type\":\"json_schema\",\"name\":\"city\",\"strict\":true,\"schema\":"
                        + SCHEMA + "}}}");
        String text = null;
        for (JsonNode item : r.get("output"))
            if (item.path("type").asText().equals("message"))
                text = item.get("content").get(0).get("text").asText();
        assertNotNull(text, r.toString());
        assertTrue(violations(SCHEMA, text).isEmpty(), text);
    }

    /** logit_bias reaches the sampler (a greedy reply changes with it); the penalties are accepted; bad values are 400s. */
    @Test
    void logitBiasChangesTheReplyPenaltiesAreAcceptedBadValuesAre400() throws Exception {
        String ask = "{\"model\":\"gpt-oss\",\"temperature\":0,\"max_tokens\":60,"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"What is the capital of France?\"}]";
        JsonNode plain =
                post("/v1/chat/completions", ask + "}").get("choices").get(0).get("message");
        assertEquals(
                plain.toString(),
                post("/v1/chat/completions", ask + "}")
                        .get("choices")
                        .get(0)
                        .get("message")
                        .toString(),
                "greedy is repeatable");
        // the first token of a reply is <|channel|> (200005): ruled out, the reply must differ
        JsonNode biased = post("/v1/chat/completions", ask + ",\"logit_bias\":{\"200005\":-100}}")
                .get("choices")
                .get(0)
                .get("message");
        assertNotEquals(plain.toString(), biased.toString());
        // the penalties take the same path (LogitAdjustments.apply, whose numbers LogitAdjustmentsTest checks by hand);
        // the demo model's greedy margins exceed what a penalty of 2 can move, so here they need only be accepted
        post("/v1/chat/completions", ask + ",\"frequency_penalty\":2,\"presence_penalty\":-1.5}");
        for (String bad : new String[] {
            ",\"logit_bias\":{\"5\":150}",
            ",\"logit_bias\":{\"x\":1}",
            ",\"presence_penalty\":3",
            ",\"frequency_penalty\":\"a\""
        }) {
            HttpResponse<String> r = HTTP.send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/v1/chat/completions"))
                            .header("Content-Type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString(ask + bad + "}"))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(400, r.statusCode(), bad + ": " + r.body());
        }
    }

    @Test
    void strictToolArgumentsValidate() throws Exception {
        String params = "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\",\"maxLength\":20},"
                + "\"unit\":{\"enum\":[\"c\",\"f\"]}},\"required\":[\"city\",\"unit\"],\"additionalProperties\":false}";
        JsonNode r = post(
                "/v1/chat/completions",
                "{\"model\":\"gpt-oss\",\"seed\":3,\"max_tokens\":600,"
                        + "\"messages\":[{\"role\":\"user\",\"content\":\"What is the weather in Paris?\"}],"
                        + "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"description\":\"Gets the current weather in a city.\","
                        + "\"strict\":true,\"parameters\":" + params + "}}]}");
        JsonNode calls = r.get("choices").get(0).get("message").get("tool_calls");
        assertNotNull(calls, "the demo model calls get_weather for a weather question: " + r);
        String args = calls.get(0).get("function").get("arguments").asText();
        assertTrue(violations(params, args).isEmpty(), args + ": " + violations(params, args));
    }

    static HttpResponse<String> send(String path, String body) throws Exception {
        return HTTP.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** The texts of a response's output items (ids differ between calls). */
    static String texts(JsonNode response) {
        StringBuilder sb = new StringBuilder();
        for (JsonNode item : response.get("output"))
            sb.append(item.path("type").asText())
                    .append(':')
                    .append(item.path("content"))
                    .append(item.path("arguments"))
                    .append('|');
        return sb.toString().replaceAll("\"id\":\"[^\"]*\"", "");
    }

    static final String DATE_GBNF = "root ::= [12] [0-9]{3} \"-\" (\"0\" [1-9] | \"1\" [0-2]) \" \" [a-z]{2,6}";
    static final String DATE_REGEX = "[12][0-9]{3}-(0[1-9]|1[0-2]) [a-z]{2,6}";

    /** llama-server's {@code grammar} field on chat completions and completions; a bad grammar is a 400 with line:column. */
    @Test
    void grammarFieldHoldsChatAnswersAndCompletions() throws Exception {
        String grammar = JSON.writeValueAsString(DATE_GBNF);
        for (int seed = 1; seed <= 2; seed++) {
            JsonNode r = post(
                    "/v1/chat/completions",
                    "{\"model\":\"gpt-oss\",\"seed\":" + seed + ",\"max_tokens\":600,"
                            + "\"messages\":[{\"role\":\"user\",\"content\":\"When was the Eiffel Tower built?\"}],\"grammar\":"
                            + grammar + "}");
            JsonNode choice = r.get("choices").get(0);
            assertEquals("stop", choice.get("finish_reason").asText(), r.toString());
            assertTrue(choice.get("message").get("content").asText().matches(DATE_REGEX), r.toString());
            JsonNode c = post(
                            "/v1/completions",
                            "{\"model\":\"gpt-oss\",\"seed\":" + seed + ",\"max_tokens\":40,"
                                    + "\"prompt\":\"The tower was built on \",\"grammar\":" + grammar + "}")
                    .get("choices")
                    .get(0);
            assertEquals("stop", c.get("finish_reason").asText(), c.toString());
            assertTrue(c.get("text").asText().matches(DATE_REGEX), c.toString());
        }
        HttpResponse<String> bad =
                send("/v1/completions", "{\"model\":\"gpt-oss\",\"prompt\":\"x\",\"grammar\":\"root ::= item\"}");
        assertEquals(400, bad.statusCode(), bad.body());
        assertTrue(bad.body().contains("grammar 1:10: rule 'item' is not defined"), bad.body());
        HttpResponse<String> both = send(
                "/v1/chat/completions",
                "{\"model\":\"gpt-oss\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],"
                        + "\"response_format\":{\"type\":\"json_object\"},\"grammar\":" + grammar + "}");
        assertEquals(400, both.statusCode(), both.body());
        HttpResponse<String> notText = send(
                "/v1/chat/completions",
                "{\"model\":\"gpt-oss\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"grammar\":5}");
        assertEquals(400, notText.statusCode(), notText.body());
    }

    /**
     * /v1/completions and /v1/responses take logit_bias and the penalties as chat does: +100 on one token makes a
     * greedy completion that token over and over, -100 on the first token of a reply (<|channel|>) changes it; out
     * of range values are 400s.
     */
    @Test
    void completionsAndResponsesTakeLogitBiasAndPenalties() throws Exception {
        int x = io.gossgpu.tokenizer.O200kHarmony.get().encode(" Paris")[0];
        String ask =
                "{\"model\":\"gpt-oss\",\"temperature\":0,\"max_tokens\":6,\"prompt\":\"The capital of France is\"";
        String plain = post("/v1/completions", ask + "}")
                .get("choices")
                .get(0)
                .get("text")
                .asText();
        String forced = post("/v1/completions", ask + ",\"logit_bias\":{\"" + x + "\":100}}")
                .get("choices")
                .get(0)
                .get("text")
                .asText();
        assertEquals(" Paris".repeat(6), forced, "plain greedy text was '" + plain + "'");
        post("/v1/completions", ask + ",\"frequency_penalty\":2,\"presence_penalty\":-1.5,\"seed\":4}");

        String rask =
                "{\"model\":\"gpt-oss\",\"temperature\":0,\"max_output_tokens\":60,\"input\":\"What is the capital of France?\"";
        String rplain = texts(post("/v1/responses", rask + "}"));
        assertEquals(rplain, texts(post("/v1/responses", rask + "}")), "greedy is repeatable");
        String rbiased = texts(post("/v1/responses", rask + ",\"logit_bias\":{\"200005\":-100}}"));
        assertNotEquals(rplain, rbiased);
        post("/v1/responses", rask + ",\"frequency_penalty\":2,\"presence_penalty\":-1.5}");

        for (String bad : new String[] {
            ",\"logit_bias\":{\"5\":150}",
            ",\"logit_bias\":{\"x\":1}",
            ",\"presence_penalty\":3",
            ",\"frequency_penalty\":\"a\""
        }) {
            HttpResponse<String> c = send("/v1/completions", ask + bad + "}");
            assertEquals(400, c.statusCode(), bad + ": " + c.body());
            HttpResponse<String> r = send("/v1/responses", rask + bad + "}");
            assertEquals(400, r.statusCode(), bad + ": " + r.body());
        }
    }
}
