package io.gossgpu.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.gossgpu.ReasoningEffort;
import io.gossgpu.harmony.DeveloperContent;
import io.gossgpu.harmony.HarmonyRenderer;
import io.gossgpu.harmony.Message;
import io.gossgpu.harmony.SystemContent;
import io.gossgpu.harmony.ToolDescription;
import io.gossgpu.testmodel.SafetensorsWriter;
import io.gossgpu.testmodel.TestModelPresets;
import io.gossgpu.tokenizer.O200kHarmony;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Chat#reply}: a whole conversation (with function tools) given per request, as a server does. A tool call is
 * streamed through onToolCallStart/onToolCallDelta; the next request, which carries the call and its result, extends
 * the cached conversation and prefills only what was added ({@link Chat#cachedPrefixLength}), and replies exactly as a
 * chat that prefills everything.
 */
class ChatReplyTest {
    @TempDir
    Path dir;

    @Test
    void conversationFromMessagesReusesTheCacheAcrossAToolCall() throws Exception {
        Path model = SafetensorsWriter.writeOriginalIn(dir, TestModelPresets.twoLayerDemo(), 11);
        O200kHarmony tok = O200kHarmony.get();
        HarmonyRenderer renderer = new HarmonyRenderer(tok);
        ToolDescription weather = ToolDescription.fromOpenAiTool(
                new ObjectMapper()
                        .readTree(
                                "{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"parameters\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}}}}}"));
        List<Message> history = new ArrayList<>(List.of(
                Message.system(SystemContent.defaults(LocalDate.of(2026, 1, 2), ReasoningEffort.LOW)),
                Message.developer(new DeveloperContent("Report the weather.", List.of(weather))),
                Message.user("Weather in Paris?")));
        String call =
                " to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>{\"city\":\"Paris\"}<|call|>";
        ChatCacheReuseTest.Scripted scripted = new ChatCacheReuseTest.Scripted();
        try (Engine engine = Engine.open(EngineOptions.of(model), () -> scripted);
                Chat chat = engine.newChat(ChatOptions.defaults().withContextLength(512))) {
            assertEquals(0, chat.cachedPrefixLength(renderer.renderForCompletion(history)));
            for (int t : tok.encodeWithSpecials(call)) scripted.script.add(t);
            List<String> events = new ArrayList<>();
            Reply first = chat.reply(history, 30, Sampling.greedy(), new ChatListener() {
                @Override
                public void onToolCallStart(String fn) {
                    events.add("start " + fn);
                }

                @Override
                public void onToolCallDelta(String fn, String delta) {
                    events.add("delta");
                }

                @Override
                public void onToolCall(String fn, String args) {
                    events.add("call " + fn + " " + args);
                }
            });
            assertEquals(List.of(new Reply.ToolCall("get_weather", "{\"city\":\"Paris\"}")), first.toolCalls());
            assertEquals("start get_weather", events.getFirst());
            assertEquals("call get_weather {\"city\":\"Paris\"}", events.getLast());
            assertTrue(events.stream().filter("delta"::equals).count() > 1, events.toString());
            int firstPrompt = renderer.renderForCompletion(history).length;
            assertEquals(firstPrompt, chat.lastPrefillTokens());

            history.add(Message.toolCall("get_weather", "{\"city\":\"Paris\"}"));
            history.add(Message.toolResult("get_weather", "{\"sky\":\"sunny\"}"));
            int[] prompt2 = renderer.renderForCompletion(history);
            int cached = chat.cachedPrefixLength(prompt2);
            assertEquals(firstPrompt + first.tokens().length - 1, cached);
            Reply second = chat.reply(history, 6, Sampling.greedy(), null);
            assertEquals(prompt2.length - cached, chat.lastPrefillTokens());

            try (Chat fresh = engine.newChat(ChatOptions.defaults().withContextLength(512))) {
                Reply again = fresh.reply(history, 6, Sampling.greedy(), null);
                assertEquals(prompt2.length, fresh.lastPrefillTokens());
                assertEquals(Arrays.toString(second.tokens()), Arrays.toString(again.tokens()));
            }
            assertTrue(chat.continues(prompt2));
            // Another conversation from the same system message does not continue this one (a server routes it
            // elsewhere), but once here it keeps the shared prefix and prefills the rest.
            List<Message> other = List.of(history.get(0), Message.user("Something else"));
            int[] otherPrompt = renderer.renderForCompletion(other);
            assertFalse(chat.continues(otherPrompt));
            int shared = chat.cachedPrefixLength(otherPrompt);
            assertTrue(
                    shared > 10,
                    "most of the system message is shared (without tools it lacks the functions line): " + shared);
            assertEquals(shared, Arrays.mismatch(otherPrompt, renderer.renderForCompletion(history)));
            chat.reply(other, 2, Sampling.greedy(), null);
            assertEquals(otherPrompt.length - shared, chat.lastPrefillTokens());
            assertEquals(1, engine.openSessions()); // the fresh chat was closed
        }
    }
}
