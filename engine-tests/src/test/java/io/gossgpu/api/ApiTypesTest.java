package io.gossgpu.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.gossgpu.GossException;
import io.gossgpu.ReasoningEffort;
import io.gossgpu.demo.DemoEngine;
import io.gossgpu.testkit.DemoModels;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The api's own types where internal ones used to show (Sampling, ReasoningEffort, StopReason, Timings,
 * ModelInfo, LoadProgress, strict tools, commentary turns) do what they say, on the demo model (cpu backend, greedy).
 */
class ApiTypesTest {
    static final ObjectMapper JSON = new ObjectMapper();

    @RegisterExtension
    static final DemoEngine DEMO = new DemoEngine();

    static final ChatOptions GREEDY =
            ChatOptions.defaults().withSampling(Sampling.greedy()).withMaxTokens(DemoModels.MAX_TOKENS);

    /** The reply's system message says the reply options' reasoning effort, and the prompt is what promptTokens gives. */
    @Test
    void aConversationRepliesWithTheReplyOptionsEffortAndThePromptItRenders() {
        Conversation c = Conversation.of(List.of(), new Turn.User("What is 17 + 25?"));
        ChatOptions high = GREEDY.withReasoningEffort(ReasoningEffort.HIGH),
                low = GREEDY.withReasoningEffort(ReasoningEffort.LOW);
        int[] highPrompt = c.promptTokens(high), lowPrompt = c.promptTokens(low);
        assertTrue(Tokens.decode(highPrompt).contains("Reasoning: high"), Tokens.decode(highPrompt));
        assertTrue(Tokens.decode(lowPrompt).contains("Reasoning: low"), Tokens.decode(lowPrompt));
        try (Chat chat = DEMO.engine().newChat(low)) { // opened with low: the reply's own high must win
            Reply r = chat.send(c, high, null);
            assertEquals(highPrompt.length, chat.lastPromptTokens());
            assertTrue(chat.continues(highPrompt), "the cache holds the high-effort prompt");
            assertFalse(chat.continues(lowPrompt), "not the chat's own low-effort one");
            assertEquals(StopReason.STOP_TOKEN, r.stopReason());
            assertEquals(highPrompt.length, r.timings().promptTokens(), "a fresh chat prefills the whole prompt");
            assertTrue(
                    r.timings().decodedTokens() == r.tokens().length - 1,
                    r.timings().toString());
        }
    }

    /**
     * A strict tool's arguments follow its schema: maxLength (which the developer message does not show the model)
     * holds the city to three characters where the model, free, writes Paris.
     */
    @Test
    void aStrictToolsArgumentsFollowItsSchema() throws Exception {
        String schema =
                "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\",\"maxLength\":3}},\"required\":[\"city\"],"
                        + "\"additionalProperties\":false}";
        Turn ask = new Turn.User("What's the weather in Paris?");
        try (Chat chat = DEMO.engine().newChat(GREEDY)) {
            Reply free = chat.send(Conversation.of(List.of(TestTools.weather(schema, false)), ask), null);
            assertEquals(
                    "Paris",
                    JSON.readTree(free.toolCalls().getFirst().arguments())
                            .get("city")
                            .asText(),
                    free.toString());
            Reply strict = chat.send(Conversation.of(List.of(TestTools.weather(schema, true)), ask), null);
            assertEquals(1, strict.toolCalls().size(), strict.toString());
            String city = JSON.readTree(strict.toolCalls().getFirst().arguments())
                    .get("city")
                    .asText();
            assertTrue(city.length() <= 3, strict.toString());
        }
        assertThrows(IllegalArgumentException.class, () -> new Tool("f", "", null, true), "strict needs a schema");
        assertThrows(
                GossException.class,
                () -> new Tool(
                        "f",
                        "",
                        "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\",\"pattern\":\"(?=a)\"}}}",
                        true),
                "a schema the engine cannot enforce fails when the tool is made");
    }

    /** Assistant commentary renders on Harmony's commentary channel, reasoning on analysis, answers on final. */
    @Test
    void turnsRenderOnTheirChannels() {
        String text = Tokens.decode(Conversation.of(
                        List.of(),
                        new Turn.User("hi"),
                        new Turn.Commentary("Let me check."),
                        new Turn.ToolCall("f", "{}"),
                        new Turn.ToolResult("f", "ok"),
                        new Turn.Assistant("Done."))
                .promptTokens(GREEDY));
        assertTrue(text.contains("<|start|>assistant<|channel|>commentary<|message|>Let me check.<|end|>"), text);
        assertTrue(text.contains("<|channel|>final<|message|>Done.<|end|>"), text);
    }

    /** Logit bias and penalties travel in Sampling: a bias of −100 on the greedy reply's first token changes the reply. */
    @Test
    void samplingCarriesTheLogitBiasAndChecksItsFields() {
        Conversation c = Conversation.of(List.of(), new Turn.User("What is 17 + 25?"));
        try (Chat chat = DEMO.engine().newChat(GREEDY)) {
            Reply plain = chat.send(c, null);
            Map<Integer, Float> bias = new HashMap<>(Map.of(plain.tokens()[0], -100f));
            Reply biased = chat.send(c, GREEDY.withSampling(Sampling.greedy().withLogitBias(bias)), null);
            assertNotEquals(plain.tokens()[0], biased.tokens()[0]);
        }
        assertThrows(GossException.class, () -> Sampling.of(-1, 0));
        assertThrows(GossException.class, () -> Sampling.greedy().withPenalties(3, 0));
        assertThrows(GossException.class, () -> Sampling.greedy().withLogitBias(Map.of(1, 101f)));
        assertThrows(GossException.class, () -> Sampling.greedy().withTopP(0));
    }

    @Test
    void modelInfoAndLoadProgressDescribeTheLoad() throws Exception {
        ModelInfo info = DEMO.engine().modelInfo();
        assertEquals(DemoModels.folder(), info.path());
        assertEquals(DEMO.engine().config().numHiddenLayers(), info.layers());
        assertEquals(DEMO.engine().config().vocabSize(), info.vocabSize());
        assertEquals(DEMO.engine().config().maxContextLength(), info.maxContextLength());
        long[] read = new long[2];
        try (Engine e = Engine.open(EngineOptions.of(DemoModels.folder())
                .withBackend("reference")
                .withMmap(false)
                .withProgress((file, done, total) -> {
                    read[0] = done;
                    read[1] = total;
                }))) {
            assertTrue(
                    read[1] > 0 && read[0] == read[1],
                    "the whole file was reported read: " + read[0] + " of " + read[1]);
            long bytes = 0;
            try (var files = Files.list(e.modelInfo().path())) {
                for (Path f : files.toList())
                    if (f.toString().endsWith(".safetensors")) bytes = Math.max(bytes, Files.size(f));
            }
            assertEquals(bytes, read[1]);
        }
    }

    @Test
    void reasoningEffortParsesAsOpenAiWritesIt() {
        assertEquals(ReasoningEffort.HIGH, ReasoningEffort.parse(" High "));
        assertEquals("low", ReasoningEffort.LOW.wire());
        assertThrows(IllegalArgumentException.class, () -> ReasoningEffort.parse("extreme"));
    }
}
