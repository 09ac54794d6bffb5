package io.gossgpu.springai;

import io.gossgpu.api.Conversation;
import io.gossgpu.api.Tool;
import io.gossgpu.api.Turn;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.SystemMessage;
import org.springframework.ai.chat.messages.ToolResponseMessage;
import org.springframework.ai.chat.messages.UserMessage;
import org.springframework.ai.tool.definition.ToolDefinition;

/**
 * Spring AI's prompt to goss-gpu's {@link Conversation}: system messages become the developer instructions (the
 * Harmony system message is goss-gpu's own), tool definitions become {@link Tool}s with their input schema, and
 * the turns map one to one (an assistant message's reasoning, its {@value Responses#THINKING} metadata, is kept
 * before its tool calls, as Harmony asks).
 */
final class Messages {
    private Messages() {}

    static Conversation conversation(List<Message> messages, List<ToolDefinition> tools) {
        List<String> instructions = new ArrayList<>();
        List<Turn> turns = new ArrayList<>();
        Map<String, String> callNames = new HashMap<>();
        for (Message m : messages) {
            switch (m) {
                case SystemMessage s -> instructions.add(s.getText());
                case UserMessage u -> {
                    if (!u.getMedia().isEmpty())
                        throw new IllegalArgumentException("goss-gpu takes text only; the user message has "
                                + u.getMedia().size() + " media");
                    turns.add(new Turn.User(u.getText()));
                }
                case AssistantMessage a -> {
                    if (a.hasToolCalls()) {
                        if (a.getMetadata().get(Responses.THINKING) instanceof String r && !r.isEmpty())
                            turns.add(new Turn.Reasoning(r));
                        for (AssistantMessage.ToolCall c : a.getToolCalls()) {
                            if (c.id() != null) callNames.put(c.id(), c.name());
                            turns.add(new Turn.ToolCall(c.name(), c.arguments()));
                        }
                    } else if (a.getText() != null) {
                        turns.add(new Turn.Assistant(a.getText()));
                    }
                }
                case ToolResponseMessage t -> {
                    for (ToolResponseMessage.ToolResponse r : t.getResponses()) {
                        String name = r.name() != null && !r.name().isEmpty() ? r.name() : callNames.get(r.id());
                        if (name == null)
                            throw new IllegalArgumentException(
                                    "tool response '" + r.id() + "' names no tool and answers no earlier call");
                        turns.add(new Turn.ToolResult(name, r.responseData()));
                    }
                }
                default ->
                    throw new IllegalArgumentException("goss-gpu cannot take a " + m.getMessageType() + " message");
            }
        }
        List<Tool> offered = tools.stream()
                .map(d -> new Tool(d.name(), d.description(), d.inputSchema()))
                .toList();
        return new Conversation(instructions.isEmpty() ? null : String.join("\n\n", instructions), offered, turns);
    }
}
