package io.gossgpu.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.openai.core.JsonValue;
import com.openai.core.http.StreamResponse;
import com.openai.models.FunctionDefinition;
import com.openai.models.FunctionParameters;
import com.openai.models.ReasoningEffort;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionMessageFunctionToolCall;
import com.openai.models.chat.completions.ChatCompletionStreamOptions;
import com.openai.models.chat.completions.ChatCompletionToolMessageParam;
import com.openai.models.completions.Completion;
import com.openai.models.completions.CompletionChoice;
import com.openai.models.completions.CompletionCreateParams;
import io.gossgpu.tokenizer.O200kHarmony;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The official OpenAI Java SDK against the server: chat completions (plain, streaming, tool round trip, stop
 * sequences) and raw completions. The random-weight model's greedy choices are scripted so it writes Harmony.
 */
class ChatSdkTest extends ScriptedSdkTest {
    static final String ANSWER =
            "<|channel|>analysis<|message|>User greets.<|end|><|start|>assistant<|channel|>final<|message|>Hello there.<|return|>";
    static final String CALL =
            " to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>{\"city\":\"Paris\"}<|call|>";

    @Override
    ServerOptions options() {
        return TestServers.options().withApiKey("sk-test");
    }

    @AfterEach
    void idle() {
        GossServer.Stats s = server.stats();
        assertEquals(0, s.busySlots(), s.toString());
        assertEquals(0, s.queued(), s.toString());
    }

    static int tokens(String harmony) {
        return O200kHarmony.get().encodeWithSpecials(harmony).length;
    }

    static FunctionDefinition weatherTool() {
        return FunctionDefinition.builder()
                .name("get_weather")
                .description("Current weather in a city")
                .parameters(FunctionParameters.builder()
                        .putAdditionalProperty("type", JsonValue.from("object"))
                        .putAdditionalProperty("properties", JsonValue.from(Map.of("city", Map.of("type", "string"))))
                        .putAdditionalProperty("required", JsonValue.from(List.of("city")))
                        .build())
                .build();
    }

    @Test
    void chatWithReasoningAndFinalAnswer() {
        backend.say(ANSWER);
        ChatCompletion c = client.chat()
                .completions()
                .create(ChatCompletionCreateParams.builder()
                        .model("gpt-oss")
                        .addSystemMessage("Be brief.")
                        .addUserMessage("Hi")
                        .temperature(0)
                        .maxCompletionTokens(40)
                        .reasoningEffort(ReasoningEffort.LOW)
                        .build());
        ChatCompletion.Choice ch = c.choices().get(0);
        assertEquals("Hello there.", ch.message().content().orElseThrow());
        assertEquals(
                "User greets.",
                ch.message()
                        ._additionalProperties()
                        .get("reasoning_content")
                        .asString()
                        .orElseThrow());
        assertEquals(ChatCompletion.Choice.FinishReason.STOP, ch.finishReason());
        assertEquals("gpt-oss", c.model());
        var usage = c.usage().orElseThrow();
        assertTrue(usage.promptTokens() > 50, "prompt tokens " + usage.promptTokens());
        assertEquals(tokens(ANSWER), usage.completionTokens());
        assertEquals(usage.promptTokens() + usage.completionTokens(), usage.totalTokens());
    }

    @Test
    void multiTurnChatReusesTheSlotsCache() {
        String answer = "<|channel|>final<|message|>Hello there.<|return|>";
        backend.say(answer);
        ChatCompletionCreateParams.Builder req = ChatCompletionCreateParams.builder()
                .model("gpt-oss")
                .addSystemMessage("Be brief.")
                .addUserMessage("Hi")
                .temperature(0)
                .maxCompletionTokens(20);
        ChatCompletion first = client.chat().completions().create(req.build());
        assertEquals("Hello there.", first.choices().get(0).message().content().orElseThrow());
        // A new conversation reuses what it shares with the one its slot held before (other tests' requests may have
        // begun the same way), never its last token, whose logits the reply needs.
        long firstCached = first.usage()
                .orElseThrow()
                .promptTokensDetails()
                .orElseThrow()
                .cachedTokens()
                .orElseThrow();
        assertTrue(firstCached < first.usage().orElseThrow().promptTokens(), "cached " + firstCached);

        backend.script.clear();
        backend.say("<|channel|>final<|message|>Sure.<|return|>");
        ChatCompletion second = client.chat()
                .completions()
                .create(req.addAssistantMessage("Hello there.")
                        .addUserMessage("Tell me more")
                        .build());
        assertEquals("Sure.", second.choices().get(0).message().content().orElseThrow());
        // Only the end of the answer and the new user turn were prefilled; the history came from the cache.
        assertEquals(
                first.usage().orElseThrow().promptTokens() + tokens(answer) - 1,
                second.usage()
                        .orElseThrow()
                        .promptTokensDetails()
                        .orElseThrow()
                        .cachedTokens()
                        .orElseThrow());
    }

    @Test
    void multiTurnChatAfterReasoningReusesTheSlotsCacheUpToTheReply() {
        backend.say(ANSWER);
        ChatCompletionCreateParams.Builder req = ChatCompletionCreateParams.builder()
                .model("gpt-oss")
                .addSystemMessage("Be brief.")
                .addUserMessage("Hi, again")
                .temperature(0)
                .maxCompletionTokens(40);
        ChatCompletion first = client.chat().completions().create(req.build());
        assertEquals(
                "User greets.",
                first.choices()
                        .get(0)
                        .message()
                        ._additionalProperties()
                        .get("reasoning_content")
                        .asString()
                        .orElseThrow());

        backend.script.clear();
        backend.say("<|channel|>final<|message|>Sure.<|return|>");
        // The client sends the answer back without its reasoning, as OpenAI clients do: the rendered history leaves the
        // cached tokens right after "<|start|>assistant<|channel|>", and the slot keeps everything up to there.
        ChatCompletion second = client.chat()
                .completions()
                .create(req.addAssistantMessage("Hello there.")
                        .addUserMessage("Tell me more")
                        .build());
        assertEquals("Sure.", second.choices().get(0).message().content().orElseThrow());
        assertEquals(
                first.usage().orElseThrow().promptTokens() + 1,
                second.usage()
                        .orElseThrow()
                        .promptTokensDetails()
                        .orElseThrow()
                        .cachedTokens()
                        .orElseThrow());
    }

    @Test
    void lengthLimitAndStopSequence() {
        backend.say(ANSWER);
        ChatCompletion c = client.chat()
                .completions()
                .create(ChatCompletionCreateParams.builder()
                        .model("gpt-oss")
                        .addUserMessage("Hi")
                        .temperature(0)
                        .maxCompletionTokens(3)
                        .build());
        assertEquals(
                ChatCompletion.Choice.FinishReason.LENGTH, c.choices().get(0).finishReason());
        assertEquals(3, c.usage().orElseThrow().completionTokens());

        backend.script.clear();
        backend.say(ANSWER);
        c = client.chat()
                .completions()
                .create(ChatCompletionCreateParams.builder()
                        .model("gpt-oss")
                        .addUserMessage("Hi")
                        .temperature(0)
                        .maxCompletionTokens(40)
                        .stop("there")
                        .build());
        assertEquals("Hello ", c.choices().get(0).message().content().orElseThrow());
        assertEquals(ChatCompletion.Choice.FinishReason.STOP, c.choices().get(0).finishReason());
    }

    @Test
    void streamingChat() {
        backend.say(ANSWER);
        StringBuilder content = new StringBuilder(), reasoning = new StringBuilder();
        List<ChatCompletionChunk.Choice.FinishReason> finish = new ArrayList<>();
        long[] usage = {-1};
        int[] chunks = {0};
        try (StreamResponse<ChatCompletionChunk> s = client.chat()
                .completions()
                .createStreaming(ChatCompletionCreateParams.builder()
                        .model("gpt-oss")
                        .addUserMessage("Hi")
                        .temperature(0)
                        .maxCompletionTokens(40)
                        .streamOptions(ChatCompletionStreamOptions.builder()
                                .includeUsage(true)
                                .build())
                        .build())) {
            s.stream().forEach(chunk -> {
                chunks[0]++;
                chunk.usage().ifPresent(u -> usage[0] = u.completionTokens());
                for (ChatCompletionChunk.Choice ch : chunk.choices()) {
                    ch.delta().content().ifPresent(content::append);
                    JsonValue r = ch.delta()._additionalProperties().get("reasoning_content");
                    if (r != null) reasoning.append(r.asString().orElseThrow());
                    ch.finishReason().ifPresent(finish::add);
                }
            });
        }
        assertEquals("Hello there.", content.toString());
        assertEquals("User greets.", reasoning.toString());
        assertEquals(List.of(ChatCompletionChunk.Choice.FinishReason.STOP), finish);
        assertEquals(tokens(ANSWER), usage[0]);
        assertTrue(chunks[0] > 4, "chunks " + chunks[0]);
    }

    @Test
    void toolCallRoundTripReusesTheCache() {
        backend.say(CALL);
        ChatCompletionCreateParams.Builder req = ChatCompletionCreateParams.builder()
                .model("gpt-oss")
                .addSystemMessage("You report the weather.")
                .addUserMessage("Weather in Paris?")
                .addFunctionTool(weatherTool())
                .temperature(0)
                .maxCompletionTokens(40);
        ChatCompletion first = client.chat().completions().create(req.build());
        ChatCompletion.Choice ch = first.choices().get(0);
        assertEquals(ChatCompletion.Choice.FinishReason.TOOL_CALLS, ch.finishReason());
        List<ChatCompletionMessageFunctionToolCall> calls = ch.message().toolCalls().orElseThrow().stream()
                .map(t -> t.asFunction())
                .toList();
        assertEquals(1, calls.size());
        assertEquals("get_weather", calls.get(0).function().name());
        assertEquals("{\"city\":\"Paris\"}", calls.get(0).function().arguments());
        long firstPrompt = first.usage().orElseThrow().promptTokens();

        backend.script.clear();
        backend.say("<|channel|>final<|message|>It is sunny in Paris.<|return|>");
        ChatCompletion second = client.chat()
                .completions()
                .create(req.addMessage(ch.message())
                        .addMessage(ChatCompletionToolMessageParam.builder()
                                .toolCallId(calls.get(0).id())
                                .content("{\"sky\":\"sunny\"}")
                                .build())
                        .build());
        assertEquals(
                "It is sunny in Paris.",
                second.choices().get(0).message().content().orElseThrow());
        assertEquals(
                ChatCompletion.Choice.FinishReason.STOP, second.choices().get(0).finishReason());
        // The second prompt extends the first conversation: its history came from the slot's KV cache.
        long cached = second.usage()
                .orElseThrow()
                .promptTokensDetails()
                .orElseThrow()
                .cachedTokens()
                .orElseThrow();
        assertEquals(firstPrompt + tokens(CALL) - 1, cached);
    }

    @Test
    void streamingThroughKeepAliveComments() {
        // Unscripted, the random model writes no well-formed Harmony: nothing visible for a while, so the server
        // sends ':' comment lines to notice a client that left. The SDK must read past them.
        int[] chunks = {0};
        List<ChatCompletionChunk.Choice.FinishReason> finish = new ArrayList<>();
        long t0 = System.nanoTime();
        backend.stepMillis = 3 * Sse.PING_NANOS / 12 / 1_000_000 + 1; // 12 steps outlast two pings on any machine
        try (StreamResponse<ChatCompletionChunk> s = client.chat()
                .completions()
                .createStreaming(ChatCompletionCreateParams.builder()
                        .model("gpt-oss")
                        .addUserMessage("Hi")
                        .temperature(0)
                        .maxCompletionTokens(12)
                        .build())) {
            s.stream().forEach(chunk -> {
                chunks[0]++;
                chunk.choices().forEach(ch -> ch.finishReason().ifPresent(finish::add));
            });
        } finally {
            backend.stepMillis = 0;
        }
        assertTrue(System.nanoTime() - t0 > 2 * Sse.PING_NANOS, "too fast to have sent a comment");
        assertEquals(List.of(ChatCompletionChunk.Choice.FinishReason.LENGTH), finish);
        assertTrue(chunks[0] >= 2);
    }

    @Test
    void streamingToolCallArguments() {
        backend.say(CALL);
        List<String> argDeltas = new ArrayList<>();
        List<String> names = new ArrayList<>();
        List<ChatCompletionChunk.Choice.FinishReason> finish = new ArrayList<>();
        try (StreamResponse<ChatCompletionChunk> s = client.chat()
                .completions()
                .createStreaming(ChatCompletionCreateParams.builder()
                        .model("gpt-oss")
                        .addUserMessage("Weather in Paris?")
                        .addFunctionTool(weatherTool())
                        .temperature(0)
                        .maxCompletionTokens(40)
                        .build())) {
            s.stream().forEach(chunk -> {
                for (ChatCompletionChunk.Choice ch : chunk.choices()) {
                    ch.delta()
                            .toolCalls()
                            .ifPresent(tcs -> tcs.forEach(tc -> {
                                assertEquals(0, tc.index());
                                tc.function().ifPresent(f -> {
                                    f.name().ifPresent(names::add);
                                    f.arguments().filter(a -> !a.isEmpty()).ifPresent(argDeltas::add);
                                });
                            }));
                    ch.finishReason().ifPresent(finish::add);
                }
            });
        }
        assertEquals(List.of("get_weather"), names);
        assertTrue(argDeltas.size() > 1, "arguments came in one piece: " + argDeltas);
        assertEquals("{\"city\":\"Paris\"}", String.join("", argDeltas));
        assertEquals(List.of(ChatCompletionChunk.Choice.FinishReason.TOOL_CALLS), finish);
    }

    @Test
    void rawCompletion() {
        Completion c = client.completions()
                .create(CompletionCreateParams.builder()
                        .model("gpt-oss")
                        .prompt("Once upon a time")
                        .maxTokens(4)
                        .temperature(0)
                        .build());
        CompletionChoice ch = c.choices().get(0);
        assertEquals(CompletionChoice.FinishReason.LENGTH, ch.finishReason());
        assertEquals(4, c.usage().orElseThrow().completionTokens());
        assertEquals(
                O200kHarmony.get().encode("Once upon a time").length,
                c.usage().orElseThrow().promptTokens());

        // Streaming gives the same text (greedy, same prompt).
        StringBuilder text = new StringBuilder();
        List<CompletionChoice.FinishReason> finish = new ArrayList<>();
        try (StreamResponse<Completion> s = client.completions()
                .createStreaming(CompletionCreateParams.builder()
                        .model("gpt-oss")
                        .prompt("Once upon a time")
                        .maxTokens(4)
                        .temperature(0)
                        .build())) {
            s.stream()
                    .forEach(chunk -> chunk.choices().forEach(x -> {
                        text.append(x.text());
                        x._finishReason().asKnown().ifPresent(finish::add);
                    }));
        }
        assertEquals(ch.text(), text.toString());
        assertEquals(List.of(CompletionChoice.FinishReason.LENGTH), finish);
    }

    @Test
    void seededSamplingIsRepeatable() {
        ChatCompletionCreateParams p = ChatCompletionCreateParams.builder()
                .model("gpt-oss")
                .addUserMessage("Hi")
                .temperature(0.8)
                .topP(0.9)
                .seed(42)
                .maxCompletionTokens(5)
                .build();
        ChatCompletion a = client.chat().completions().create(p);
        ChatCompletion b = client.chat().completions().create(p);
        assertEquals(5, a.usage().orElseThrow().completionTokens());
        assertEquals(
                a.choices().get(0).message().content(),
                b.choices().get(0).message().content());
        assertFalse(a.id().equals(b.id()));
    }
}
