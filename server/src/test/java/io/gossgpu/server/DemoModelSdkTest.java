package io.gossgpu.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.JsonValue;
import com.openai.core.http.StreamResponse;
import com.openai.models.FunctionDefinition;
import com.openai.models.FunctionParameters;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionMessageFunctionToolCall;
import com.openai.models.chat.completions.ChatCompletionToolMessageParam;
import com.openai.models.responses.Response;
import com.openai.models.responses.ResponseCreateParams;
import com.openai.models.responses.ResponseOutputItem;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The OpenAI SDK against the server running the shipped demo model (trained, nothing scripted): real tool
 * calls with JSON arguments, an answer after the tool's result, reasoning in {@code reasoning_content} and in the
 * Responses API's reasoning items, tool-call arguments streamed in pieces. The tools are declared as the model was
 * trained to see them (scripts/train-demo/data.py).
 */
class DemoModelSdkTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static GossServer server;
    static OpenAIClient client;

    @BeforeAll
    static void start() throws InterruptedException {
        server = TestServers.startDemo();
        client = OpenAIOkHttpClient.builder()
                .baseUrl("http://127.0.0.1:" + server.port() + "/v1")
                .apiKey("unused")
                .maxRetries(0)
                .build();
    }

    @AfterAll
    static void stop() {
        if (client != null) client.close();
        if (server != null) server.close();
    }

    static FunctionDefinition weather() {
        return FunctionDefinition.builder()
                .name("get_weather")
                .description("Gets the current weather in a city.")
                .parameters(FunctionParameters.builder()
                        .putAdditionalProperty("type", JsonValue.from("object"))
                        .putAdditionalProperty(
                                "properties",
                                JsonValue.from(
                                        Map.of("city", Map.of("type", "string", "description", "The city name"))))
                        .putAdditionalProperty("required", JsonValue.from(List.of("city")))
                        .build())
                .build();
    }

    static FunctionDefinition add() {
        return FunctionDefinition.builder()
                .name("add")
                .description("Adds two numbers.")
                .parameters(FunctionParameters.builder()
                        .putAdditionalProperty("type", JsonValue.from("object"))
                        .putAdditionalProperty(
                                "properties",
                                JsonValue.from(Map.of("a", Map.of("type", "number"), "b", Map.of("type", "number"))))
                        .putAdditionalProperty("required", JsonValue.from(List.of("a", "b")))
                        .build())
                .build();
    }

    static JsonNode json(String s) throws Exception {
        return JSON.readTree(s);
    }

    @Test
    void toolCallWithJsonArgumentsThenAnAnswerFromTheResult() throws Exception {
        ChatCompletionCreateParams.Builder req = ChatCompletionCreateParams.builder()
                .model("gpt-oss")
                .addUserMessage("What's the weather in Paris?")
                .addFunctionTool(weather())
                .addFunctionTool(add())
                .temperature(0)
                .maxCompletionTokens(128);
        ChatCompletion first = client.chat().completions().create(req.build());
        ChatCompletion.Choice ch = first.choices().get(0);
        assertEquals(ChatCompletion.Choice.FinishReason.TOOL_CALLS, ch.finishReason());
        List<ChatCompletionMessageFunctionToolCall> calls = ch.message().toolCalls().orElseThrow().stream()
                .map(t -> t.asFunction())
                .toList();
        assertEquals(1, calls.size());
        assertEquals("get_weather", calls.get(0).function().name());
        assertEquals(json("{\"city\":\"Paris\"}"), json(calls.get(0).function().arguments()));

        ChatCompletion second = client.chat()
                .completions()
                .create(req.addMessage(ch.message())
                        .addMessage(ChatCompletionToolMessageParam.builder()
                                .toolCallId(calls.get(0).id())
                                .content("{\"city\":\"Paris\",\"temperature_c\":21,\"condition\":\"cloudy\"}")
                                .build())
                        .build());
        ChatCompletion.Choice answer = second.choices().get(0);
        assertEquals(ChatCompletion.Choice.FinishReason.STOP, answer.finishReason());
        assertTrue(
                answer.message().content().orElseThrow().contains("21°C and cloudy"),
                answer.message().content().orElseThrow());
        assertTrue(answer.message().toolCalls().map(List::isEmpty).orElse(true));
    }

    @Test
    void addToolGetsNumbersAsJson() throws Exception {
        ChatCompletion c = client.chat()
                .completions()
                .create(ChatCompletionCreateParams.builder()
                        .model("gpt-oss")
                        .addSystemMessage("Answer briefly.")
                        .addUserMessage("What is 38 + 47?")
                        .addFunctionTool(add())
                        .temperature(0)
                        .maxCompletionTokens(128)
                        .build());
        ChatCompletionMessageFunctionToolCall call =
                c.choices().get(0).message().toolCalls().orElseThrow().get(0).asFunction();
        assertEquals("add", call.function().name());
        assertEquals(json("{\"a\":38,\"b\":47}"), json(call.function().arguments()));
    }

    @Test
    void reasoningContentCarriesTheAnalysis() {
        ChatCompletion c = client.chat()
                .completions()
                .create(ChatCompletionCreateParams.builder()
                        .model("gpt-oss")
                        .addUserMessage("What is 17 + 25?")
                        .temperature(0)
                        .maxCompletionTokens(128)
                        .build());
        var m = c.choices().get(0).message();
        String reasoning = String.valueOf(
                m._additionalProperties().get("reasoning_content").asString().orElseThrow());
        assertTrue(reasoning.contains("7 + 5 = 12"), reasoning);
        assertTrue(m.content().orElseThrow().contains("42"), m.content().orElseThrow());
        assertTrue(
                !m.content().orElseThrow().contains("carry"), "the analysis stays out of the answer: " + m.content());
    }

    @Test
    void responsesReasoningItemCarriesTheAnalysis() {
        Response r = client.responses()
                .create(ResponseCreateParams.builder()
                        .model("gpt-oss")
                        .input("What is the capital of Japan?")
                        .temperature(0)
                        .maxOutputTokens(128)
                        .build());
        List<ResponseOutputItem> out = r.output();
        String reasoning = out.get(0)
                .reasoning()
                .orElseThrow()
                .content()
                .orElseThrow()
                .get(0)
                .text();
        assertTrue(reasoning.contains("Tokyo"), reasoning);
        StringBuilder text = new StringBuilder();
        out.get(1).message().orElseThrow().content().forEach(c -> c.outputText().ifPresent(t -> text.append(t.text())));
        assertEquals("The capital of Japan is Tokyo.", text.toString());
    }

    @Test
    void streamedToolCallArgumentsReassemble() throws Exception {
        List<String> pieces = new ArrayList<>(), names = new ArrayList<>();
        List<ChatCompletionChunk.Choice.FinishReason> finish = new ArrayList<>();
        try (StreamResponse<ChatCompletionChunk> s = client.chat()
                .completions()
                .createStreaming(ChatCompletionCreateParams.builder()
                        .model("gpt-oss")
                        .addUserMessage("What is the weather like in Tokyo?")
                        .addFunctionTool(weather())
                        .temperature(0)
                        .maxCompletionTokens(128)
                        .build())) {
            s.stream()
                    .forEach(chunk -> chunk.choices().forEach(ch -> {
                        ch.delta()
                                .toolCalls()
                                .ifPresent(tcs ->
                                        tcs.forEach(tc -> tc.function().ifPresent(f -> {
                                            f.name().ifPresent(names::add);
                                            f.arguments()
                                                    .filter(a -> !a.isEmpty())
                                                    .ifPresent(pieces::add);
                                        })));
                        ch.finishReason().ifPresent(finish::add);
                    }));
        }
        assertEquals(List.of("get_weather"), names);
        assertTrue(pieces.size() > 1, "the arguments came in one piece: " + pieces);
        assertEquals(json("{\"city\":\"Tokyo\"}"), json(String.join("", pieces)));
        assertEquals(List.of(ChatCompletionChunk.Choice.FinishReason.TOOL_CALLS), finish);
    }
}
