package io.gossgpu.langchain4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.langchain4j.agent.tool.P;
import dev.langchain4j.agent.tool.Tool;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.CompleteToolCall;
import dev.langchain4j.model.chat.response.PartialThinking;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import dev.langchain4j.model.output.FinishReason;
import dev.langchain4j.service.AiServices;
import io.gossgpu.api.ChatOptions;
import io.gossgpu.api.Engine;
import io.gossgpu.api.EngineOptions;
import io.gossgpu.api.Sampling;
import io.gossgpu.demo.DemoCheckpoint;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Goss-gpu through LangChain4j 1.19 on the demo model (cpu backend, greedy): a chat with its thinking,
 * usage and finish reason; the same chat streamed; and a tool call through AiServices with a {@code @Tool} method.
 */
class GossChatModelTest {
    static Engine engine;
    static final ChatOptions GREEDY =
            ChatOptions.defaults().withSampling(Sampling.greedy()).withMaxTokens(128);

    @BeforeAll
    static void open() {
        Path model = DemoCheckpoint.unpack(Path.of(System.getProperty("java.io.tmpdir"), "goss-gpu-tests"));
        engine = Engine.open(EngineOptions.of(model).withBackend("cpu"));
    }

    @AfterAll
    static void close() {
        if (engine != null) engine.close();
    }

    @Test
    void chatAnswersWithThinkingUsageAndFinishReason() {
        try (GossChatModel model = new GossChatModel(engine, GREEDY)) {
            ChatResponse r = model.chat(ChatRequest.builder()
                    .messages(UserMessage.from("What is 17 + 25?"))
                    .build());
            assertTrue(r.aiMessage().text().contains("42"), r.aiMessage().text());
            assertTrue(
                    r.aiMessage().thinking().contains("7 + 5 = 12"),
                    r.aiMessage().thinking());
            assertEquals(FinishReason.STOP, r.finishReason());
            assertTrue(r.tokenUsage().inputTokenCount() > 20, r.tokenUsage().toString());
            assertTrue(r.tokenUsage().outputTokenCount() > 5, r.tokenUsage().toString());
            assertEquals(
                    r.tokenUsage().inputTokenCount() + r.tokenUsage().outputTokenCount(),
                    r.tokenUsage().totalTokenCount());
        }
    }

    @Test
    void streamedChatAddsUpToTheSameAnswer() throws Exception {
        ChatResponse whole;
        try (GossChatModel model = new GossChatModel(engine, GREEDY)) {
            whole = model.chat(ChatRequest.builder()
                    .messages(UserMessage.from("What is 17 + 25?"))
                    .build());
        }
        StringBuilder text = new StringBuilder(), thinking = new StringBuilder();
        CompletableFuture<ChatResponse> done = new CompletableFuture<>();
        try (GossStreamingChatModel model = new GossStreamingChatModel(engine, GREEDY)) {
            model.chat(
                    ChatRequest.builder()
                            .messages(UserMessage.from("What is 17 + 25?"))
                            .build(),
                    new StreamingChatResponseHandler() {
                        @Override
                        public void onPartialResponse(String delta) {
                            text.append(delta);
                        }

                        @Override
                        public void onPartialThinking(PartialThinking t) {
                            thinking.append(t.text());
                        }

                        @Override
                        public void onCompleteResponse(ChatResponse r) {
                            done.complete(r);
                        }

                        @Override
                        public void onError(Throwable t) {
                            done.completeExceptionally(t);
                        }
                    });
            ChatResponse r = done.get(60, TimeUnit.SECONDS);
            assertEquals(whole.aiMessage(), r.aiMessage());
            assertEquals(r.aiMessage().text(), text.toString());
            assertEquals(r.aiMessage().thinking(), thinking.toString());
            assertEquals(whole.tokenUsage(), r.tokenUsage());
        }
    }

    @Test
    void streamedToolCallComesWhole() throws Exception {
        List<CompleteToolCall> calls = new ArrayList<>();
        CompletableFuture<ChatResponse> done = new CompletableFuture<>();
        try (GossStreamingChatModel model = new GossStreamingChatModel(engine, GREEDY)) {
            ChatRequest req = ChatRequest.builder()
                    .messages(UserMessage.from("What's the weather in Paris?"))
                    .toolSpecifications(
                            dev.langchain4j.agent.tool.ToolSpecifications.toolSpecificationsFrom(new WeatherTools()))
                    .build();
            model.chat(req, new StreamingChatResponseHandler() {
                @Override
                public void onCompleteToolCall(CompleteToolCall c) {
                    calls.add(c);
                }

                @Override
                public void onCompleteResponse(ChatResponse r) {
                    done.complete(r);
                }

                @Override
                public void onError(Throwable t) {
                    done.completeExceptionally(t);
                }
            });
            ChatResponse r = done.get(60, TimeUnit.SECONDS);
            assertEquals(FinishReason.TOOL_EXECUTION, r.finishReason());
            assertEquals(1, calls.size());
            assertEquals(
                    r.aiMessage().toolExecutionRequests(), List.of(calls.get(0).toolExecutionRequest()));
            assertEquals("get_weather", calls.get(0).toolExecutionRequest().name());
        }
    }

    /** The demo model's weather tool, as an application would write it; it records what it was asked. */
    static final class WeatherTools {
        final List<String> cities = new ArrayList<>();

        @Tool(name = "get_weather", value = "Gets the current weather in a city.")
        String weather(@P(name = "city", value = "The city name") String city) {
            cities.add(city);
            return "{\"city\":\"" + city + "\",\"temperature_c\":21,\"condition\":\"cloudy\"}";
        }
    }

    interface Assistant {
        String chat(String message);
    }

    @Test
    void aiServiceCallsTheToolAndAnswersFromItsResult() {
        WeatherTools tools = new WeatherTools();
        try (GossChatModel model = new GossChatModel(engine, GREEDY)) {
            Assistant assistant = AiServices.builder(Assistant.class)
                    .chatModel(model)
                    .tools(tools)
                    .build();
            String answer = assistant.chat("What's the weather in Paris?");
            assertEquals(List.of("Paris"), tools.cities);
            assertTrue(answer.contains("21°C and cloudy"), answer);
        }
    }
}
