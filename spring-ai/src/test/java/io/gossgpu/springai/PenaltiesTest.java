package io.gossgpu.springai;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.model.tool.ToolCallingChatOptions;

/**
 * A Spring AI request's frequencyPenalty and presencePenalty apply to its reply as the server's
 * frequency_penalty and presence_penalty do. The server hands them to the engine in the reply's {@link Sampling}
 * ({@link Sampling#withPenalties}); on the demo model, greedy, the Spring model's reply (called and streamed) is that reply
 * token for token. The penalties are chosen so that they change the reply, and so that swapping them changes it
 * again: a penalty dropped, or frequency taken for presence, fails the test.
 */
class PenaltiesTest {
    static final String QUESTION = "What is 17 + 25?";
    static final ChatOptions GREEDY =
            ChatOptions.defaults().withSampling(Sampling.greedy()).withMaxTokens(96);
    static final float FREQUENCY = 2f, PRESENCE = -2f; // on the demo model: "17 + 25 = Santiago." (swapped: "42.")
    static Engine engine;

    @BeforeAll
    static void open() {
        Path model = DemoCheckpoint.unpack(Path.of(System.getProperty("java.io.tmpdir"), "goss-gpu-tests"));
        engine = Engine.open(EngineOptions.of(model).withBackend("cpu"));
    }

    @AfterAll
    static void close() {
        if (engine != null) engine.close();
    }

    /** The reply the api gives the question with the penalties in its sampling (as the server's requests do). */
    static Reply apiPath(float frequency, float presence) {
        try (Chat chat = engine.newChat(GREEDY)) {
            return chat.send(
                    Conversation.of(List.of(), new Turn.User(QUESTION)),
                    GREEDY.withSampling(GREEDY.sampling().withPenalties(presence, frequency)),
                    null);
        }
    }

    static Prompt prompt(double frequency, double presence) {
        return new Prompt(
                QUESTION,
                ToolCallingChatOptions.builder()
                        .frequencyPenalty(frequency)
                        .presencePenalty(presence)
                        .build());
    }

    static String thinking(AssistantMessage m) {
        return (String) m.getMetadata().getOrDefault(Responses.THINKING, "");
    }

    static void assertSameReply(Reply expected, ChatResponse r) {
        assertEquals(expected.content(), r.getResult().getOutput().getText());
        assertEquals(expected.reasoning(), thinking(r.getResult().getOutput()));
        assertEquals(expected.tokens().length, r.getMetadata().getUsage().getCompletionTokens());
    }

    @Test
    void penaltiesApplyAsTheServerAppliesThem() {
        Reply plain = apiPath(0, 0), penalized = apiPath(FREQUENCY, PRESENCE), swapped = apiPath(PRESENCE, FREQUENCY);
        assertNotEquals(
                plain.reasoning() + plain.content(),
                penalized.reasoning() + penalized.content(),
                "the penalties change the reply");
        assertNotEquals(
                penalized.reasoning() + penalized.content(),
                swapped.reasoning() + swapped.content(),
                "swapped, they change it again");
        try (GossChatModel model = new GossChatModel(engine, GREEDY)) {
            assertSameReply(plain, model.call(new Prompt(QUESTION)));
            assertSameReply(penalized, model.call(prompt(FREQUENCY, PRESENCE)));
            assertSameReply(swapped, model.call(prompt(PRESENCE, FREQUENCY)));

            StringBuilder text = new StringBuilder(), thinking = new StringBuilder();
            for (ChatResponse piece : model.stream(prompt(FREQUENCY, PRESENCE)).toIterable()) {
                text.append(piece.getResult().getOutput().getText());
                thinking.append(thinking(piece.getResult().getOutput()));
            }
            assertEquals(penalized.content(), text.toString(), "streamed with the penalties");
            assertEquals(penalized.reasoning(), thinking.toString(), "streamed with the penalties");
        }
    }

    @Test
    void unsetPenaltiesAreNoneAndOutOfRangeOnesAreRefused() {
        RequestOptions set = RequestOptions.of(
                GREEDY,
                ToolCallingChatOptions.builder()
                        .frequencyPenalty(0.5)
                        .presencePenalty(-1.25)
                        .build());
        assertEquals(0.5f, set.chat().sampling().frequencyPenalty());
        assertEquals(-1.25f, set.chat().sampling().presencePenalty());
        RequestOptions unset = RequestOptions.of(
                GREEDY, ToolCallingChatOptions.builder().temperature(0.0).build());
        assertEquals(0f, unset.chat().sampling().frequencyPenalty());
        assertEquals(0f, unset.chat().sampling().presencePenalty());
        try (GossChatModel model = new GossChatModel(engine, GREEDY)) {
            var e = assertThrows(IllegalArgumentException.class, () -> model.call(prompt(2.5, 0)));
            assertEquals("frequencyPenalty must be between -2 and 2, got 2.5", e.getMessage());
            e = assertThrows(
                    IllegalArgumentException.class,
                    () -> model.stream(prompt(0, -3)).blockLast(Duration.ofSeconds(10)));
            assertTrue(e.getMessage().startsWith("presencePenalty must be between -2 and 2"), e.getMessage());
        }
    }
}
