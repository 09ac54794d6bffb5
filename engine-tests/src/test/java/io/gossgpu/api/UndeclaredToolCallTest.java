package io.gossgpu.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.testmodel.SafetensorsWriter;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import io.gossgpu.tokenizer.O200kHarmony;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A call to a function the conversation did not offer is no tool call (gpt-oss sometimes calls a tool it knows
 * unasked, or a built-in one such as {@code browser.search}): the reply carries its text as content and no call, and
 * the listener sees content, never onToolCallStart. Before, every such call reached {@link Reply#toolCalls()} (a
 * built-in one with a null function name), and LangChain4j's and Spring AI's adapters handed it to the application
 * as a tool request it could not run. The model is scripted (greedy, its argmax replaced by the script's tokens).
 */
class UndeclaredToolCallTest {
    static final Tool ADD = new Tool(
            "add",
            "Adds two numbers.",
            "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"number\"},\"b\":{\"type\":\"number\"}},\"required\":[\"a\",\"b\"]}");
    static final Tool WEATHER = new Tool(
            "get_weather",
            "Gets the weather.",
            "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}},\"required\":[\"city\"]}");

    @TempDir
    Path dir;

    /** The reply to one user turn with {@code tools} offered, the model writing {@code script}; {@code events} gets the listener's calls. */
    private Reply reply(List<Tool> tools, String script, List<String> events) {
        Path model = dir.resolve("m");
        if (!model.toFile().exists())
            SafetensorsWriter.writeOriginal(new TestModelGenerator(TestModelPresets.twoLayerDemo(), 5), model);
        ChatCacheReuseTest.Scripted scripted = new ChatCacheReuseTest.Scripted();
        try (Engine engine = Engine.open(EngineOptions.of(model), () -> scripted);
                Chat chat = engine.newChat(ChatOptions.defaults()
                        .withMaxTokens(40)
                        .withContextLength(512)
                        .withSampling(Sampling.greedy()))) {
            for (int t : O200kHarmony.get().encodeWithSpecials(script)) scripted.script.add(t);
            return chat.send(
                    new Conversation(null, tools, List.of(new Turn.User("Weather in Paris?"))), new ChatListener() {
                        @Override
                        public void onContent(String delta) {
                            events.add("content");
                        }

                        @Override
                        public void onToolCallStart(String fn) {
                            events.add("start " + fn);
                        }

                        @Override
                        public void onToolCall(String fn, String args) {
                            events.add("call " + fn);
                        }
                    });
        }
    }

    static final String WEATHER_CALL =
            "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Paris\"}<|call|>";

    @Test
    void aCallToAnOfferedFunctionIsACall() {
        List<String> events = new ArrayList<>();
        Reply r = reply(List.of(ADD, WEATHER), WEATHER_CALL, events);
        assertEquals(List.of(new Reply.ToolCall("get_weather", "{\"city\":\"Paris\"}")), r.toolCalls());
        assertEquals("", r.content());
        assertEquals("start get_weather", events.getFirst());
        assertEquals("call get_weather", events.getLast());
    }

    @Test
    void aCallToAFunctionNotOfferedIsContent() {
        List<String> events = new ArrayList<>();
        Reply r = reply(List.of(ADD), WEATHER_CALL, events);
        assertEquals(List.of(), r.toolCalls());
        assertEquals("{\"city\":\"Paris\"}", r.content());
        assertTrue(events.stream().allMatch("content"::equals), events.toString());
    }

    @Test
    void aCallToABuiltInToolIsContent() {
        List<String> events = new ArrayList<>();
        Reply r = reply(
                List.of(),
                "<|channel|>analysis to=browser.search <|message|>{\"query\":\"Paris weather\"}<|call|>",
                events);
        assertEquals(List.of(), r.toolCalls());
        assertEquals("{\"query\":\"Paris weather\"}", r.content());
        assertTrue(events.stream().allMatch("content"::equals), events.toString());
    }
}
