package io.gossgpu.server;

import static org.junit.jupiter.api.Assertions.*;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A call the model makes to a function the request did not declare (no tools, tool_choice none, or another name) is
 * not passed on as {@code tool_calls} / a {@code function_call} item: its text comes back as content and the finish
 * reason is {@code stop}, as an OpenAI client that sent no such tool expects. A declared function's call still is a
 * tool call. The random-weight model's greedy choices are scripted to make the call.
 */
class UndeclaredToolCallTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    static final String CALL =
            " to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>{\"city\":\"Paris\"}<|call|>";
    static final String TOOL =
            "{\"type\":\"function\",\"function\":{\"name\":\"%s\",\"parameters\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}}}}}";
    static TestServers.Scripted backend;
    static GossServer server;

    @BeforeAll
    static void start() throws InterruptedException {
        backend = new TestServers.Scripted();
        server = TestServers.start(TestServers.options(), backend);
    }

    @AfterAll
    static void stop() {
        if (server != null) server.close();
    }

    @BeforeEach
    void clear() {
        backend.script.clear();
    }

    static String post(String path, String body) throws Exception {
        HttpResponse<String> r = HTTP.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), r.body());
        return r.body();
    }

    static JsonNode chat(String extra) throws Exception {
        backend.say(CALL);
        return JSON.readTree(post(
                        "/v1/chat/completions",
                        "{\"model\":\"gpt-oss\",\"temperature\":0,\"max_tokens\":40,"
                                + "\"messages\":[{\"role\":\"user\",\"content\":\"Weather in Paris?\"}]" + extra + "}"))
                .get("choices")
                .get(0);
    }

    @Test
    void aCallWithNoToolsDeclaredIsContent() throws Exception {
        JsonNode c = chat("");
        assertEquals("stop", c.get("finish_reason").asText(), c.toString());
        assertFalse(
                c.get("message").has("tool_calls")
                        && !c.get("message").get("tool_calls").isNull(),
                c.toString());
        assertEquals("{\"city\":\"Paris\"}", c.get("message").get("content").asText(), c.toString());
    }

    @Test
    void aCallToAnotherFunctionOrWithToolChoiceNoneIsContent() throws Exception {
        for (String extra : new String[] {
            ",\"tools\":[" + TOOL.formatted("get_time") + "]",
            ",\"tools\":[" + TOOL.formatted("get_weather") + "],\"tool_choice\":\"none\""
        }) {
            JsonNode c = chat(extra);
            assertEquals("stop", c.get("finish_reason").asText(), extra + ": " + c);
            assertEquals("{\"city\":\"Paris\"}", c.get("message").get("content").asText(), extra + ": " + c);
        }
    }

    @Test
    void aDeclaredFunctionsCallIsStillAToolCall() throws Exception {
        JsonNode c = chat(",\"tools\":[" + TOOL.formatted("get_weather") + "]");
        assertEquals("tool_calls", c.get("finish_reason").asText(), c.toString());
        JsonNode call = c.get("message").get("tool_calls").get(0).get("function");
        assertEquals("get_weather", call.get("name").asText());
        assertEquals("{\"city\":\"Paris\"}", call.get("arguments").asText());
    }

    @Test
    void streamingSendsContentDeltasAndNoToolCalls() throws Exception {
        backend.say(CALL);
        String sse = post(
                "/v1/chat/completions",
                "{\"model\":\"gpt-oss\",\"temperature\":0,\"max_tokens\":40,\"stream\":true,"
                        + "\"messages\":[{\"role\":\"user\",\"content\":\"Weather in Paris?\"}]}");
        StringBuilder content = new StringBuilder();
        String finish = null;
        for (String line : sse.split("\n")) {
            if (!line.startsWith("data: {")) continue;
            JsonNode choices = JSON.readTree(line.substring(6)).get("choices");
            if (choices == null || choices.isEmpty()) continue;
            JsonNode delta = choices.get(0).get("delta");
            assertFalse(delta.has("tool_calls"), line);
            if (delta.hasNonNull("content")) content.append(delta.get("content").asText());
            if (choices.get(0).hasNonNull("finish_reason"))
                finish = choices.get(0).get("finish_reason").asText();
        }
        assertEquals("{\"city\":\"Paris\"}", content.toString());
        assertEquals("stop", finish);
    }

    @Test
    void responsesHaveNoFunctionCallItem() throws Exception {
        backend.say(CALL);
        JsonNode r = JSON.readTree(post(
                "/v1/responses",
                "{\"model\":\"gpt-oss\",\"temperature\":0,\"max_output_tokens\":40,\"input\":\"Weather in Paris?\"}"));
        StringBuilder text = new StringBuilder();
        for (JsonNode item : r.get("output")) {
            assertNotEquals("function_call", item.path("type").asText(), r.toString());
            if (item.path("type").asText().equals("message"))
                text.append(item.get("content").get(0).get("text").asText());
        }
        assertEquals("{\"city\":\"Paris\"}", text.toString(), r.toString());
    }
}
