package io.gossgpu.springai;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.api.Conversation;
import io.gossgpu.api.Tool;
import io.gossgpu.api.Turn;
import java.net.URI;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.SystemMessage;
import org.springframework.ai.chat.messages.ToolResponseMessage;
import org.springframework.ai.chat.messages.UserMessage;
import org.springframework.ai.content.Media;
import org.springframework.ai.tool.definition.ToolDefinition;
import org.springframework.util.MimeTypeUtils;

/** Spring AI's messages and tool definitions as the goss-gpu conversation the model is sent (Harmony's turns). */
class MessagesTest {
    static final String SCHEMA =
            "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}},\"required\":[\"city\"]}";
    static final ToolDefinition WEATHER = ToolDefinition.builder()
            .name("get_weather")
            .description("Gets the weather.")
            .inputSchema(SCHEMA)
            .build();

    @Test
    void aToolRoundTripMapsTurnForTurn() {
        List<Message> messages = List.of(
                new SystemMessage("Be brief."),
                new SystemMessage("Use metric units."),
                new UserMessage("What's the weather in Paris?"),
                AssistantMessage.builder()
                        .content("")
                        .properties(Map.of(Responses.THINKING, "Need the weather tool."))
                        .toolCalls(List.of(new AssistantMessage.ToolCall(
                                "call_1", "function", "get_weather", "{\"city\":\"Paris\"}")))
                        .build(),
                // Spring AI's ToolCallingManager names the tool; a caller may give only the call's id
                ToolResponseMessage.builder()
                        .responses(
                                List.of(new ToolResponseMessage.ToolResponse("call_1", "", "{\"temperature_c\":21}")))
                        .build(),
                new AssistantMessage("It is 21°C."),
                new UserMessage("Thanks!"));
        Conversation c = Messages.conversation(messages, List.of(WEATHER));
        assertEquals(
                new Conversation(
                        "Be brief.\n\nUse metric units.",
                        List.of(new Tool("get_weather", "Gets the weather.", SCHEMA)),
                        List.of(
                                new Turn.User("What's the weather in Paris?"),
                                new Turn.Reasoning("Need the weather tool."),
                                new Turn.ToolCall("get_weather", "{\"city\":\"Paris\"}"),
                                new Turn.ToolResult("get_weather", "{\"temperature_c\":21}"),
                                new Turn.Assistant("It is 21°C."),
                                new Turn.User("Thanks!"))),
                c);
    }

    @Test
    void noSystemMessageLeavesTheChatsInstructions() {
        Conversation c = Messages.conversation(List.of(new UserMessage("hi")), List.of());
        assertEquals(null, c.instructions());
        assertEquals(List.of(), c.tools());
    }

    @Test
    void whatHarmonyCannotCarryIsRefusedInOneLine() {
        var orphan = ToolResponseMessage.builder()
                .responses(List.of(new ToolResponseMessage.ToolResponse("call_9", "", "{}")))
                .build();
        var e = assertThrows(
                IllegalArgumentException.class,
                () -> Messages.conversation(List.of(new UserMessage("hi"), orphan), List.of()));
        assertTrue(e.getMessage().contains("call_9"), e.getMessage());
        var image = UserMessage.builder()
                .text("what is this?")
                .media(List.of(new Media(MimeTypeUtils.IMAGE_PNG, URI.create("https://example.invalid/x.png"))))
                .build();
        e = assertThrows(IllegalArgumentException.class, () -> Messages.conversation(List.of(image), List.of()));
        assertTrue(e.getMessage().contains("text only"), e.getMessage());
    }
}
