package io.gossgpu.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.openai.core.JsonValue;
import com.openai.core.http.StreamResponse;
import com.openai.models.Reasoning;
import com.openai.models.ReasoningEffort;
import com.openai.models.responses.FunctionTool;
import com.openai.models.responses.Response;
import com.openai.models.responses.ResponseCreateParams;
import com.openai.models.responses.ResponseFunctionToolCall;
import com.openai.models.responses.ResponseInputItem;
import com.openai.models.responses.ResponseOutputItem;
import com.openai.models.responses.ResponseStatus;
import com.openai.models.responses.ResponseStreamEvent;
import com.openai.models.responses.Tool;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The Responses API through the official SDK: output items, reasoning, previous_response_id, tools, streaming events. */
class ResponsesSdkTest extends ScriptedSdkTest {

    @Override
    ServerOptions options() {
        return TestServers.options();
    }

    @AfterEach
    void idle() {
        assertEquals(0, server.stats().busySlots());
    }

    static String text(Response r) {
        StringBuilder sb = new StringBuilder();
        for (ResponseOutputItem it : r.output())
            it.message().ifPresent(m -> m.content().forEach(c -> c.outputText().ifPresent(t -> sb.append(t.text()))));
        return sb.toString();
    }

    static Tool weather() {
        return Tool.ofFunction(FunctionTool.builder()
                .name("get_weather")
                .description("Current weather in a city")
                .strict(false)
                .parameters(FunctionTool.Parameters.builder()
                        .putAdditionalProperty("type", JsonValue.from("object"))
                        .putAdditionalProperty("properties", JsonValue.from(Map.of("city", Map.of("type", "string"))))
                        .build())
                .build());
    }

    @Test
    void textReasoningAndPreviousResponse() {
        backend.say(ChatSdkTest.ANSWER);
        Response r = client.responses()
                .create(ResponseCreateParams.builder()
                        .model("gpt-oss")
                        .input("Hi")
                        .instructions("Be brief.")
                        .reasoning(
                                Reasoning.builder().effort(ReasoningEffort.LOW).build())
                        .temperature(0)
                        .maxOutputTokens(40)
                        .build());
        assertEquals(ResponseStatus.COMPLETED, r.status().orElseThrow());
        assertEquals("Hello there.", text(r));
        assertEquals(2, r.output().size());
        String reasoning = r.output()
                .get(0)
                .reasoning()
                .orElseThrow()
                .content()
                .orElseThrow()
                .get(0)
                .text();
        assertEquals("User greets.", reasoning);
        assertTrue(r.usage().orElseThrow().inputTokens() > 50);

        backend.script.clear();
        backend.say("<|channel|>final<|message|>Sure.<|return|>");
        Response next = client.responses()
                .create(ResponseCreateParams.builder()
                        .model("gpt-oss")
                        .input("More please")
                        .instructions("Be brief.")
                        .previousResponseId(r.id())
                        .temperature(0)
                        .maxOutputTokens(40)
                        .build());
        assertEquals("Sure.", text(next));
        // The stored conversation came along (instructions are not carried over, so they are sent again).
        assertTrue(next.usage().orElseThrow().inputTokens()
                > r.usage().orElseThrow().inputTokens() + 5);
    }

    @Test
    void functionCallRoundTrip() {
        backend.say(ChatSdkTest.CALL);
        Response r = client.responses()
                .create(ResponseCreateParams.builder()
                        .model("gpt-oss")
                        .input("Weather in Paris?")
                        .addTool(weather())
                        .temperature(0)
                        .maxOutputTokens(40)
                        .build());
        ResponseFunctionToolCall call = r.output().get(0).functionCall().orElseThrow();
        assertEquals("get_weather", call.name());
        assertEquals("{\"city\":\"Paris\"}", call.arguments());

        backend.script.clear();
        backend.say("<|channel|>final<|message|>Sunny.<|return|>");
        Response next = client.responses()
                .create(ResponseCreateParams.builder()
                        .model("gpt-oss")
                        .inputOfResponse(List.of(
                                ResponseInputItem.ofFunctionCallOutput(ResponseInputItem.FunctionCallOutput.builder()
                                        .callId(call.callId())
                                        .output("{\"sky\":\"sunny\"}")
                                        .build())))
                        .previousResponseId(r.id())
                        .addTool(weather())
                        .temperature(0)
                        .maxOutputTokens(40)
                        .build());
        assertEquals("Sunny.", text(next));
        // Same conversation, extended: served from the slot's KV cache.
        assertTrue(
                next.usage().orElseThrow().inputTokensDetails().cachedTokens()
                        > r.usage().orElseThrow().inputTokens(),
                "cached " + next.usage().orElseThrow().inputTokensDetails().cachedTokens());
    }

    @Test
    void streamingEvents() {
        backend.say("<|channel|>analysis<|message|>Think.<|end|><|start|>assistant" + ChatSdkTest.CALL);
        List<String> types = new ArrayList<>();
        StringBuilder args = new StringBuilder(), reasoning = new StringBuilder();
        Response[] done = {null};
        try (StreamResponse<ResponseStreamEvent> s = client.responses()
                .createStreaming(ResponseCreateParams.builder()
                        .model("gpt-oss")
                        .input("Weather in Paris?")
                        .addTool(weather())
                        .temperature(0)
                        .maxOutputTokens(60)
                        .build())) {
            s.stream().forEach(e -> {
                types.add(
                        e.isCreated()
                                ? "response.created"
                                : e.isCompleted()
                                        ? "response.completed"
                                        : e.isOutputItemAdded()
                                                ? "response.output_item.added"
                                                : e.isFunctionCallArgumentsDone()
                                                        ? "response.function_call_arguments.done"
                                                        : "other");
                e.functionCallArgumentsDelta().ifPresent(d -> args.append(d.delta()));
                e.reasoningTextDelta().ifPresent(d -> reasoning.append(d.delta()));
                e.completed().ifPresent(c -> done[0] = c.response());
            });
        }
        assertEquals("response.created", types.getFirst());
        assertEquals("response.completed", types.getLast());
        assertTrue(
                types.contains("response.output_item.added") && types.contains("response.function_call_arguments.done"),
                types.toString());
        assertEquals("Think.", reasoning.toString());
        assertEquals("{\"city\":\"Paris\"}", args.toString());
        assertEquals(2, done[0].output().size());
        assertEquals(
                "get_weather",
                done[0].output().get(1).functionCall().orElseThrow().name());
    }
}
