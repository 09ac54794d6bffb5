package io.gossgpu.langchain4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.request.ChatRequestParameters;
import dev.langchain4j.model.chat.request.ResponseFormat;
import dev.langchain4j.model.chat.request.ResponseFormatType;
import dev.langchain4j.model.chat.request.json.JsonEnumSchema;
import dev.langchain4j.model.chat.request.json.JsonObjectSchema;
import dev.langchain4j.model.chat.request.json.JsonSchema;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import dev.langchain4j.model.output.FinishReason;
import io.gossgpu.api.Chat;
import io.gossgpu.api.ChatOptions;
import io.gossgpu.api.Conversation;
import io.gossgpu.api.Engine;
import io.gossgpu.api.EngineOptions;
import io.gossgpu.api.Reply;
import io.gossgpu.api.Sampling;
import io.gossgpu.api.Turn;
import io.gossgpu.demo.DemoCheckpoint;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A ChatRequest's own parameters apply to that request, over the model's ChatOptions (demo model, cpu
 * backend, greedy): its output token limit, its stop sequences (plain and streamed), its JSON schema response format,
 * its sampler settings, and its frequency and presence penalties (as the server applies them).
 */
class RequestParametersTest {
    static Engine engine;
    static final ChatOptions GREEDY =
            ChatOptions.defaults().withSampling(Sampling.greedy()).withMaxTokens(128);
    static final String QUESTION = "What is 17 + 25?";

    @BeforeAll
    static void open() {
        Path model = DemoCheckpoint.unpack(Path.of(System.getProperty("java.io.tmpdir"), "goss-gpu-tests"));
        engine = Engine.open(EngineOptions.of(model).withBackend("cpu"));
    }

    @AfterAll
    static void close() {
        if (engine != null) engine.close();
    }

    private static ChatRequest.Builder ask(String text) {
        return ChatRequest.builder().messages(UserMessage.from(text));
    }

    @Test
    void maxOutputTokensIsTheRequests() {
        try (GossChatModel model = new GossChatModel(engine, GREEDY)) {
            ChatResponse r = model.chat(ask(QUESTION).maxOutputTokens(5).build());
            assertEquals(5, r.tokenUsage().outputTokenCount(), r.toString());
            assertEquals(FinishReason.LENGTH, r.finishReason());
            ChatResponse next = model.chat(ask(QUESTION).build()); // the model's own limit again
            assertEquals(FinishReason.STOP, next.finishReason(), next.toString());
        }
    }

    @Test
    void stopSequencesEndTheAnswerBeforeThem() throws Exception {
        String full;
        ChatResponse stopped;
        try (GossChatModel model = new GossChatModel(engine, GREEDY)) {
            full = model.chat(ask(QUESTION).build()).aiMessage().text();
            assertTrue(full.contains("42"), full);
            stopped = model.chat(ask(QUESTION)
                    .stopSequences(List.of("42", "never in the answer"))
                    .build());
        }
        assertEquals(full.substring(0, full.indexOf("42")), stopped.aiMessage().text());
        assertEquals(FinishReason.STOP, stopped.finishReason());

        StringBuilder streamed = new StringBuilder();
        CompletableFuture<ChatResponse> done = new CompletableFuture<>();
        try (GossStreamingChatModel model = new GossStreamingChatModel(engine, GREEDY)) {
            model.chat(ask(QUESTION).stopSequences(List.of("42")).build(), new StreamingChatResponseHandler() {
                @Override
                public void onPartialResponse(String delta) {
                    streamed.append(delta);
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
            assertEquals(stopped.aiMessage().text(), r.aiMessage().text());
            assertEquals(r.aiMessage().text(), streamed.toString(), "no streamed text past the stop sequence");
        }
    }

    @Test
    void aJsonSchemaResponseFormatConstrainsTheAnswer() throws Exception {
        // The schema reaches the developer message (Harmony's "# Response Formats"); with a developer message and a sum
        // to
        // do, the demo model calls its add tool (none is declared here), so this asks it something it answers.
        JsonSchema schema = JsonSchema.builder()
                .name("capital")
                .rootElement(JsonObjectSchema.builder()
                        .addProperty(
                                "answer",
                                JsonEnumSchema.builder()
                                        .enumValues("Paris", "Rome")
                                        .build())
                        .required("answer")
                        .additionalProperties(false)
                        .build())
                .build();
        ChatResponse r;
        try (GossChatModel model = new GossChatModel(engine, GREEDY)) {
            r = model.chat(ask("What is the capital of France?")
                    .responseFormat(ResponseFormat.builder()
                            .type(ResponseFormatType.JSON)
                            .jsonSchema(schema)
                            .build())
                    .build());
        }
        assertEquals(FinishReason.STOP, r.finishReason(), r.toString());
        JsonNode answer = new ObjectMapper().readTree(r.aiMessage().text());
        assertEquals(1, answer.size(), answer.toString());
        assertTrue(List.of("Paris", "Rome").contains(answer.get("answer").asText()), answer.toString());
    }

    @Test
    void samplerSettingsAreTheRequestsAndTheRestTheModels() {
        ChatOptions base = GREEDY.withSampling(Sampling.of(0.5f, 7).withTopK(40));
        ChatOptions o = RequestOptions.apply(
                base,
                ChatRequestParameters.builder()
                        .temperature(0.9)
                        .topP(0.8)
                        .maxOutputTokens(9)
                        .build());
        assertEquals(0.9f, o.sampling().temperature(), 1e-6);
        assertEquals(0.8f, o.sampling().topP(), 1e-6);
        assertEquals(40, o.sampling().topK(), "unset: the model's");
        assertEquals(7, o.sampling().seed());
        assertEquals(9, o.maxTokens());
        assertEquals(
                base,
                RequestOptions.apply(base, ChatRequestParameters.builder().build()),
                "nothing set: the model's options");
        assertEquals(
                3,
                RequestOptions.apply(
                                base, ChatRequestParameters.builder().topK(3).build())
                        .sampling()
                        .topK());
    }

    /**
     * toolChoice REQUIRED: the demo model answers "What is 17 + 25?" without a tool, and with the weather tool required
     * it must call it instead, its arguments an object with the tool's string "city".
     */
    @Test
    void aRequiredToolChoiceMakesTheReplyACall() throws Exception {
        var tools = dev.langchain4j.agent.tool.ToolSpecifications.toolSpecificationsFrom(
                new GossChatModelTest.WeatherTools());
        try (GossChatModel model = new GossChatModel(engine, GREEDY)) {
            ChatResponse free =
                    model.chat(ask(QUESTION).toolSpecifications(tools).build());
            assertFalse(free.aiMessage().hasToolExecutionRequests(), "without a choice the model answers: " + free);
            ChatResponse forced = model.chat(ask(QUESTION)
                    .toolSpecifications(tools)
                    .toolChoice(dev.langchain4j.model.chat.request.ToolChoice.REQUIRED)
                    .build());
            assertEquals(FinishReason.TOOL_EXECUTION, forced.finishReason(), forced.toString());
            var call = forced.aiMessage().toolExecutionRequests().get(0);
            assertEquals("get_weather", call.name());
            JsonNode args = new ObjectMapper().readTree(call.arguments());
            assertTrue(args.isObject() && args.get("city").isTextual(), call.arguments());
        }
    }

    /** The reply the api gives the question with the penalties in its sampling (as the server's requests do). */
    private static Reply apiPath(float frequency, float presence) {
        try (Chat chat = engine.newChat(GREEDY)) {
            return chat.send(
                    Conversation.of(List.of(), new Turn.User(QUESTION)),
                    GREEDY.withSampling(GREEDY.sampling().withPenalties(presence, frequency)),
                    null);
        }
    }

    private static void assertSameReply(Reply expected, ChatResponse r) {
        assertEquals(expected.content(), r.aiMessage().text());
        assertEquals(expected.reasoning(), r.aiMessage().thinking());
        assertEquals(expected.tokens().length, r.tokenUsage().outputTokenCount());
    }

    /**
     * Frequency and presence penalties apply as the server's frequency_penalty and presence_penalty (the api's
     * Sampling.withPenalties): on the demo model frequency 2 / presence -2 makes the answer "17 + 25 = Santiago.", the
     * swapped pair leaves "42.", so a dropped or swapped penalty fails.
     */
    @Test
    void penaltiesApplyAsTheServerAppliesThem() throws Exception {
        Reply penalized = apiPath(2f, -2f), swapped = apiPath(-2f, 2f);
        assertFalse(
                penalized.content().equals(swapped.content()), "the pair and the swapped pair give different answers");
        try (GossChatModel model = new GossChatModel(engine, GREEDY);
                GossStreamingChatModel streaming = new GossStreamingChatModel(engine, GREEDY)) {
            assertSameReply(
                    penalized,
                    model.chat(ask(QUESTION)
                            .frequencyPenalty(2.0)
                            .presencePenalty(-2.0)
                            .build()));
            assertSameReply(
                    swapped,
                    model.chat(ask(QUESTION)
                            .frequencyPenalty(-2.0)
                            .presencePenalty(2.0)
                            .build()));
            CompletableFuture<ChatResponse> done = new CompletableFuture<>();
            streaming.chat(
                    ask(QUESTION).frequencyPenalty(2.0).presencePenalty(-2.0).build(),
                    new StreamingChatResponseHandler() {
                        @Override
                        public void onPartialResponse(String delta) {}

                        @Override
                        public void onCompleteResponse(ChatResponse r) {
                            done.complete(r);
                        }

                        @Override
                        public void onError(Throwable t) {
                            done.completeExceptionally(t);
                        }
                    });
            assertSameReply(penalized, done.get(60, TimeUnit.SECONDS));
            var e = assertThrows(
                    IllegalArgumentException.class,
                    () -> model.chat(ask(QUESTION).frequencyPenalty(2.5).build()));
            assertEquals("frequencyPenalty must be between -2 and 2, got 2.5", e.getMessage());
        }
    }
}
