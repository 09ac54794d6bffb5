package io.gossgpu.server;

import static org.junit.jupiter.api.Assertions.*;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.InputFormat;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import io.gossgpu.api.Engine;
import io.gossgpu.api.EngineOptions;
import io.gossgpu.demo.DemoCheckpoint;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code tool_choice} over HTTP on the demo model, which calls add for a sum and answers a capital in text: a named
 * function makes the reply a call to that function, "required" a call to one of the tools, on chat completions and
 * the Responses API, the arguments valid under the tool's schema (not strict). A choice that cannot be kept is a 400.
 */
class ToolChoiceServerTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    static final String ADD = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"number\"},"
            + "\"b\":{\"type\":\"number\"}},\"required\":[\"a\",\"b\"],\"additionalProperties\":false}";
    static final String WEATHER = "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\","
            + "\"maxLength\":30}},\"required\":[\"city\"],\"additionalProperties\":false}";
    static final Map<String, String> SCHEMAS = Map.of("add", ADD, "get_weather", WEATHER);
    // not strict: only the tool choice holds the arguments to the schema
    static final String RESPONSES_TOOLS = "[{\"type\":\"function\",\"name\":\"add\","
            + "\"description\":\"Adds two numbers.\",\"parameters\":" + ADD + "},{\"type\":\"function\","
            + "\"name\":\"get_weather\",\"description\":\"Gets the weather.\",\"parameters\":" + WEATHER + "}]";
    static final String CHAT_TOOLS = "[{\"type\":\"function\",\"function\":{\"name\":\"add\","
            + "\"description\":\"Adds two numbers.\",\"parameters\":" + ADD + "}},{\"type\":\"function\","
            + "\"function\":{\"name\":\"get_weather\",\"description\":\"Gets the weather.\",\"parameters\":"
            + WEATHER + "}}]";
    static final String SUM = "What is 12 plus 30?", CAPITAL = "What is the capital of France?";
    static GossServer server;

    @BeforeAll
    static void start() throws InterruptedException {
        Path model = DemoCheckpoint.unpack(Path.of(System.getProperty("java.io.tmpdir"), "goss-gpu-tests"));
        server = GossServer.start(
                TestServers.options(), () -> Engine.open(EngineOptions.of(model).withBackend("cpu")));
        assertTrue(server.awaitReady(Duration.ofMinutes(2)), "the demo model did not load");
    }

    @AfterAll
    static void stop() {
        if (server != null) server.close();
    }

    static HttpResponse<String> send(String path, String body) throws Exception {
        return HTTP.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    static JsonNode chat(String prompt, String choice, String sampling) throws Exception {
        HttpResponse<String> r = send(
                "/v1/chat/completions",
                "{\"model\":\"gpt-oss\",\"max_tokens\":300," + sampling
                        + ",\"messages\":[{\"role\":\"user\",\"content\":\"" + prompt + "\"}],\"tools\":" + CHAT_TOOLS
                        + (choice == null ? "" : ",\"tool_choice\":" + choice) + "}");
        assertEquals(200, r.statusCode(), r.body());
        return JSON.readTree(r.body()).get("choices").get(0);
    }

    /** The choice's one tool call, to one of {@code names}, its arguments valid under the tool's schema. */
    static void assertCall(JsonNode choice, String... names) {
        assertEquals("tool_calls", choice.get("finish_reason").asText(), choice.toString());
        JsonNode calls = choice.get("message").get("tool_calls");
        assertEquals(1, calls.size(), choice.toString());
        JsonNode f = calls.get(0).get("function");
        assertTrue(List.of(names).contains(f.get("name").asText()), choice.toString());
        assertArgumentsValid(f.get("name").asText(), f.get("arguments").asText());
    }

    static void assertArgumentsValid(String function, String arguments) {
        List<String> bad = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12)
                .getSchema(SCHEMAS.get(function))
                .validate(arguments, InputFormat.JSON)
                .stream()
                .map(e -> e.getMessage())
                .toList();
        assertEquals(List.of(), bad, function + " " + arguments);
    }

    @Test
    void aNamedFunctionIsCalledThoughTheModelWouldCallAnother() throws Exception {
        JsonNode free = chat(SUM, null, "\"temperature\":0");
        assertEquals(
                "add",
                free.get("message")
                        .get("tool_calls")
                        .get(0)
                        .get("function")
                        .get("name")
                        .asText(),
                "left to itself the demo model calls add: " + free);
        String named = "{\"type\":\"function\",\"function\":{\"name\":\"get_weather\"}}";
        for (String sampling : new String[] {"\"temperature\":0", "\"temperature\":1,\"seed\":5"})
            assertCall(chat(SUM, named, sampling), "get_weather");
    }

    @Test
    void requiredMakesTheReplyACallThoughTheModelWouldAnswer() throws Exception {
        JsonNode free = chat(CAPITAL, "\"auto\"", "\"temperature\":0");
        assertEquals("stop", free.get("finish_reason").asText(), "left to itself the demo model answers: " + free);
        for (String sampling : new String[] {"\"temperature\":0", "\"temperature\":0.8,\"seed\":9"})
            assertCall(chat(CAPITAL, "\"required\"", sampling), "add", "get_weather");
    }

    /**
     * The same forced call streamed (SSE): the deltas carry one call whose name comes first and whose argument pieces
     * join into arguments valid under the tool's schema; the last choice chunk says tool_calls, then [DONE].
     */
    @Test
    void aStreamedRequiredChoiceIsOneWholeCall() throws Exception {
        HttpResponse<String> r = send(
                "/v1/chat/completions",
                "{\"model\":\"gpt-oss\",\"max_tokens\":300,\"temperature\":0,\"stream\":true,"
                        + "\"messages\":[{\"role\":\"user\",\"content\":\"" + CAPITAL + "\"}],\"tools\":"
                        + CHAT_TOOLS + ",\"tool_choice\":\"required\"}");
        assertEquals(200, r.statusCode(), r.body());
        String name = null, finish = null;
        StringBuilder args = new StringBuilder();
        List<String> data = r.body()
                .lines()
                .filter(l -> l.startsWith("data: "))
                .map(l -> l.substring(6))
                .toList();
        assertEquals("[DONE]", data.get(data.size() - 1), r.body());
        for (String d : data.subList(0, data.size() - 1)) {
            JsonNode choices = JSON.readTree(d).path("choices");
            if (choices.isEmpty()) continue; // the usage chunk
            JsonNode c = choices.get(0);
            if (!c.path("finish_reason").isNull() && c.has("finish_reason"))
                finish = c.get("finish_reason").asText();
            assertTrue(
                    c.path("delta").path("content").isMissingNode()
                            || c.path("delta").path("content").isNull()
                            || c.path("delta").path("content").asText().isEmpty(),
                    "no answer text beside the call: " + d);
            for (JsonNode call : c.path("delta").path("tool_calls")) {
                assertEquals(0, call.path("index").asInt(), "one call: " + d);
                if (call.path("function").has("name")) {
                    assertEquals(null, name, "the name comes once: " + d);
                    name = call.get("function").get("name").asText();
                }
                args.append(call.path("function").path("arguments").asText(""));
            }
        }
        assertEquals("tool_calls", finish, r.body());
        assertTrue(List.of("add", "get_weather").contains(name), r.body());
        assertArgumentsValid(name, args.toString());
    }

    @Test
    void responsesNamedFunctionIsAFunctionCallItem() throws Exception {
        HttpResponse<String> r = send(
                "/v1/responses",
                "{\"model\":\"gpt-oss\",\"temperature\":0,"
                        + "\"max_output_tokens\":300,\"input\":\"" + CAPITAL + "\",\"tools\":" + RESPONSES_TOOLS
                        + ",\"tool_choice\":{\"type\":\"function\",\"name\":\"add\"}}");
        assertEquals(200, r.statusCode(), r.body());
        JsonNode call = null;
        for (JsonNode item : JSON.readTree(r.body()).get("output")) {
            assertNotEquals("message", item.path("type").asText(), r.body());
            if (item.path("type").asText().equals("function_call")) call = item;
        }
        assertNotNull(call, r.body());
        assertEquals("add", call.get("name").asText(), r.body());
        assertArgumentsValid("add", call.get("arguments").asText());
    }

    @Test
    void aChoiceThatCannotBeKeptIsA400() throws Exception {
        String ask =
                "{\"model\":\"gpt-oss\",\"max_tokens\":10," + "\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]";
        String unknown = ",\"tools\":" + CHAT_TOOLS + ",\"tool_choice\":{\"type\":\"function\","
                + "\"function\":{\"name\":\"x\"}}";
        for (String bad : new String[] {",\"tool_choice\":\"required\"", unknown}) {
            HttpResponse<String> r = send("/v1/chat/completions", ask + bad + "}");
            assertEquals(400, r.statusCode(), bad + ": " + r.body());
            assertEquals(
                    "tool_choice",
                    JSON.readTree(r.body()).get("error").get("param").asText(),
                    r.body());
        }
    }
}
