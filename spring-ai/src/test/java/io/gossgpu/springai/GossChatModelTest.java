package io.gossgpu.springai;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.api.ChatOptions;
import io.gossgpu.api.Engine;
import io.gossgpu.api.EngineOptions;
import io.gossgpu.api.Sampling;
import io.gossgpu.demo.DemoCheckpoint;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.UserMessage;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.model.tool.ToolCallingChatOptions;
import org.springframework.ai.support.ToolCallbacks;
import org.springframework.ai.tool.annotation.Tool;
import org.springframework.ai.tool.annotation.ToolParam;

/**
 * Goss-gpu through Spring AI 2.0.1 on the demo model (cpu backend, greedy): a call with its reasoning,
 * usage and finish reason; the same request streamed; per-request options; and a tool call through ChatClient with
 * a {@code @Tool} method, executed by Spring AI's ToolCallingAdvisor.
 */
class GossChatModelTest {
    static Engine engine;
    static final ChatOptions GREEDY =
            ChatOptions.defaults().withSampling(Sampling.greedy()).withMaxTokens(128);
    static final Duration WAIT = Duration.ofSeconds(60);

    @BeforeAll
    static void open() {
        Path model = DemoCheckpoint.unpack(Path.of(System.getProperty("java.io.tmpdir"), "goss-gpu-tests"));
        engine = Engine.open(EngineOptions.of(model).withBackend("cpu"));
    }

    @AfterAll
    static void close() {
        if (engine != null) engine.close();
    }

    private static String thinking(AssistantMessage m) {
        return (String) m.getMetadata().getOrDefault(Responses.THINKING, "");
    }

    @Test
    void callAnswersWithThinkingUsageAndFinishReason() {
        try (GossChatModel model = new GossChatModel(engine, GREEDY)) {
            ChatResponse r = model.call(new Prompt("What is 17 + 25?"));
            AssistantMessage m = r.getResult().getOutput();
            assertTrue(m.getText().contains("42"), m.getText());
            assertTrue(thinking(m).contains("7 + 5 = 12"), thinking(m));
            assertEquals(thinking(m), r.getResult().getMetadata().get(Responses.THINKING));
            assertEquals("stop", r.getResult().getMetadata().getFinishReason());
            var usage = r.getMetadata().getUsage();
            assertTrue(usage.getPromptTokens() > 20, usage.toString());
            assertTrue(usage.getCompletionTokens() > 5, usage.toString());
            assertEquals(usage.getPromptTokens() + usage.getCompletionTokens(), usage.getTotalTokens());
        }
    }

    @Test
    void streamAddsUpToTheCallsAnswer() {
        try (GossChatModel model = new GossChatModel(engine, GREEDY)) {
            ChatResponse whole = model.call(new Prompt("What is 17 + 25?"));
            List<ChatResponse> pieces =
                    model.stream(new Prompt("What is 17 + 25?")).collectList().block(WAIT);
            StringBuilder text = new StringBuilder(), thinking = new StringBuilder();
            for (ChatResponse p : pieces) {
                text.append(p.getResult().getOutput().getText());
                thinking.append(thinking(p.getResult().getOutput()));
            }
            assertTrue(pieces.size() > 3, "streamed in " + pieces.size() + " pieces");
            assertEquals(whole.getResult().getOutput().getText(), text.toString());
            assertEquals(thinking(whole.getResult().getOutput()), thinking.toString());
            ChatResponse last = pieces.getLast();
            assertEquals("stop", last.getResult().getMetadata().getFinishReason());
            assertEquals(whole.getMetadata().getUsage(), last.getMetadata().getUsage());
        }
    }

    /**
     * A finished stream's chat goes back to the pool before the Flux completes; the completion's disposal must not
     * cancel it there, or the next request's reply starts cancelled and comes back empty (seen in examples/spring-ai).
     */
    @Test
    void aCallAfterACompletedStreamGetsTheWholeAnswer() {
        try (GossChatModel model = new GossChatModel(engine, GREEDY)) {
            String whole = model.call(new Prompt("What is 17 + 25?"))
                    .getResult()
                    .getOutput()
                    .getText();
            assertFalse(whole.isEmpty());
            for (int round = 0; round < 5; round++) {
                model.stream(new Prompt("What is 17 + 25?")).collectList().block(WAIT);
                assertEquals(
                        whole,
                        model.call(new Prompt("What is 17 + 25?"))
                                .getResult()
                                .getOutput()
                                .getText(),
                        "round " + round);
            }
        }
    }

    @Test
    void requestOptionsApplyToThatRequest() {
        try (GossChatModel model = new GossChatModel(engine, GREEDY)) {
            var five = ToolCallingChatOptions.builder().maxTokens(5).build();
            ChatResponse r = model.call(new Prompt("What is 17 + 25?", five));
            assertEquals("length", r.getResult().getMetadata().getFinishReason());
            assertEquals(5, r.getMetadata().getUsage().getCompletionTokens());

            String full = model.call(new Prompt("What is 17 + 25?"))
                    .getResult()
                    .getOutput()
                    .getText();
            int at = full.indexOf("42");
            assertTrue(at > 0, full);
            var stop = ToolCallingChatOptions.builder()
                    .stopSequences(List.of("42"))
                    .build();
            ChatResponse cut = model.call(new Prompt("What is 17 + 25?", stop));
            assertEquals(full.substring(0, at), cut.getResult().getOutput().getText());
            assertEquals("stop", cut.getResult().getMetadata().getFinishReason());
            assertTrue(
                    cut.getMetadata().getUsage().getCompletionTokens()
                            < model.call(new Prompt("What is 17 + 25?"))
                                    .getMetadata()
                                    .getUsage()
                                    .getCompletionTokens(),
                    "the reply stopped at the sequence");
            StringBuilder streamed = new StringBuilder();
            model.stream(new Prompt("What is 17 + 25?", stop))
                    .toIterable()
                    .forEach(p -> streamed.append(p.getResult().getOutput().getText()));
            assertEquals(full.substring(0, at), streamed.toString());
        }
    }

    @Test
    void aCancelledStreamStopsAndItsChatServesTheNextRequest() {
        try (GossChatModel model = new GossChatModel(engine, GREEDY)) {
            for (int i = 0; i < 3; i++) {
                List<ChatResponse> two = model.stream(new Prompt("What is 17 + 25?"))
                        .take(2)
                        .collectList()
                        .block(WAIT);
                assertEquals(2, two.size());
            }
            // each cancelled reply ended before its chat went back: the next requests are served, on those chats
            String answer = model.call(new Prompt("What is 17 + 25?"))
                    .getResult()
                    .getOutput()
                    .getText();
            assertTrue(answer.contains("42"), answer);
            assertTrue(engine.openSessions() <= GossChatModel.SLOTS, "chats kept: " + engine.openSessions());
        }
        assertEquals(0, engine.openSessions(), "closing the model closed its chats");
    }

    /** The demo model's weather tool, as an application would write it; it records what it was asked. */
    static final class WeatherTools {
        final List<String> cities = new ArrayList<>();

        @Tool(name = "get_weather", description = "Gets the current weather in a city.")
        String getWeather(@ToolParam(description = "The city name") String city) {
            cities.add(city);
            return "{\"city\":\"" + city + "\",\"temperature_c\":21,\"condition\":\"cloudy\"}";
        }
    }

    @Test
    void modelReturnsTheToolCallWithItsIdAndFinishReason() {
        try (GossChatModel model = new GossChatModel(engine, GREEDY)) {
            var tools = ToolCallingChatOptions.builder()
                    .toolCallbacks(ToolCallbacks.from(new WeatherTools()))
                    .build();
            ChatResponse r = model.call(new Prompt(List.of(new UserMessage("What's the weather in Paris?")), tools));
            assertEquals("tool_calls", r.getResult().getMetadata().getFinishReason());
            List<AssistantMessage.ToolCall> calls = r.getResult().getOutput().getToolCalls();
            assertEquals(1, calls.size());
            assertEquals("get_weather", calls.get(0).name());
            assertTrue(calls.get(0).id().startsWith("call_"), calls.get(0).id());
            assertTrue(calls.get(0).arguments().contains("Paris"), calls.get(0).arguments());
        }
    }

    @Test
    void chatClientCallsTheToolAndAnswersFromItsResult() {
        try (GossChatModel model = new GossChatModel(engine, GREEDY)) {
            WeatherTools tools = new WeatherTools();
            String answer = ChatClient.create(model)
                    .prompt("What's the weather in Paris?")
                    .tools(tools)
                    .call()
                    .content();
            assertEquals(List.of("Paris"), tools.cities);
            assertTrue(answer.contains("21°C and cloudy"), answer);
            // the tool result's request continued the tool call's chat (same options, its KV cache kept)
            assertEquals(1, engine.openSessions());

            WeatherTools streamedTools = new WeatherTools();
            String streamed = String.join(
                    "",
                    ChatClient.create(model).prompt("What's the weather in Paris?").tools(streamedTools).stream()
                            .content()
                            .collectList()
                            .block(WAIT));
            assertEquals(List.of("Paris"), streamedTools.cities);
            assertEquals(answer, streamed);
            assertFalse(streamed.isEmpty());
        }
    }
}
