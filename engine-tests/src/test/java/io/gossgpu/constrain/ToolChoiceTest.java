package io.gossgpu.constrain;

import static org.junit.jupiter.api.Assertions.*;

import io.gossgpu.api.Chat;
import io.gossgpu.api.ChatOptions;
import io.gossgpu.api.Conversation;
import io.gossgpu.api.Reply;
import io.gossgpu.api.Sampling;
import io.gossgpu.api.StopReason;
import io.gossgpu.api.Tool;
import io.gossgpu.api.ToolChoice;
import io.gossgpu.api.Turn;
import io.gossgpu.demo.DemoEngine;
import java.time.LocalDate;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A tool choice holds on the demo model: asked for a sum it would call add, and asked for a capital it would answer
 * in text, yet with a named tool the reply is a call to that tool, and with "required" a call to one of those
 * offered, its arguments valid under the tool's schema though the tool is not strict, greedy or sampled.
 */
class ToolChoiceTest {
    @RegisterExtension
    static final DemoEngine DEMO = new DemoEngine();

    // not strict: only the tool choice holds the arguments to the schema
    private static final Tool ADD = new Tool(
            "add",
            "Adds two numbers.",
            "{\"type\":\"object\",\"properties\":"
                    + "{\"a\":{\"type\":\"number\"},\"b\":{\"type\":\"number\"}},\"required\":[\"a\",\"b\"],"
                    + "\"additionalProperties\":false}");
    private static final Tool WEATHER = new Tool(
            "get_weather",
            "Gets the weather.",
            "{\"type\":\"object\","
                    + "\"properties\":{\"city\":{\"type\":\"string\",\"maxLength\":30}},\"required\":[\"city\"],"
                    + "\"additionalProperties\":false}");
    private static final String SUM = "What is 12 plus 30?", CAPITAL = "What is the capital of France?";
    private static final List<Sampling> DECODINGS = List.of(
            Sampling.greedy(), Sampling.of(1.0f, 3), Sampling.of(0.8f, 11).withTopP(0.9f));

    private static Reply reply(String prompt, ToolChoice choice, Sampling sampling) {
        ChatOptions options = ChatOptions.defaults()
                .withSampling(sampling)
                .withMaxTokens(256)
                .withCurrentDate(LocalDate.of(2026, 1, 1))
                .withToolChoice(choice);
        try (Chat chat = DEMO.engine().newChat(options)) {
            return chat.send(new Conversation(null, List.of(ADD, WEATHER), List.of(new Turn.User(prompt))), null);
        }
    }

    /** The reply is one finished call to one of {@code tools}, whose arguments its schema accepts. */
    private static void assertCallTo(Reply r, Tool... tools) {
        String what = "content " + r.content() + " calls " + r.toolCalls() + " reasoning " + r.reasoning();
        assertEquals(StopReason.STOP_TOKEN, r.stopReason(), what);
        assertEquals("", r.content(), what);
        assertEquals(1, r.toolCalls().size(), what);
        Reply.ToolCall call = r.toolCalls().getFirst();
        Tool tool = List.of(tools).stream()
                .filter(t -> t.name().equals(call.functionName()))
                .findFirst()
                .orElseThrow(() -> new AssertionError("a call to another tool: " + what));
        assertEquals(List.of(), SchemaPrompts.violations(tool.parametersJson(), call.arguments()), what);
    }

    @Test
    void aNamedToolIsCalledWhereTheModelWouldCallAnother() {
        Reply free = reply(SUM, ToolChoice.auto(), Sampling.greedy());
        assertEquals(
                List.of("add"),
                free.toolCalls().stream().map(Reply.ToolCall::functionName).toList(),
                "left to itself the model calls add: " + free.content());
        for (Sampling s : DECODINGS) assertCallTo(reply(SUM, ToolChoice.function("get_weather"), s), WEATHER);
    }

    @Test
    void aNamedToolIsCalledWhereTheModelWouldAnswerInText() {
        Reply free = reply(CAPITAL, null, Sampling.greedy());
        assertEquals(List.of(), free.toolCalls(), "left to itself the model answers: " + free.content());
        for (Sampling s : DECODINGS) assertCallTo(reply(CAPITAL, ToolChoice.function("add"), s), ADD);
    }

    @Test
    void requiredMakesTheReplyACallToAToolOffered() {
        for (Sampling s : DECODINGS) assertCallTo(reply(CAPITAL, ToolChoice.required(), s), ADD, WEATHER);
    }
}
