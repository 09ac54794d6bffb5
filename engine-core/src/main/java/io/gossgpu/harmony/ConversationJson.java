package io.gossgpu.harmony;

import com.fasterxml.jackson.databind.JsonNode;
import io.gossgpu.ReasoningEffort;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;

/**
 * A Harmony conversation written as JSON, one object per message, for tools that prepare data (the demo
 * model's training set is written this way and rendered by {@code goss-gpu render}):
 *
 * <pre>
 * {"messages": [
 *   {"role": "system", "reasoning_effort": "low", "current_date": "2025-06-28"},
 *   {"role": "developer", "instructions": "Answer briefly.", "tools": [{"type": "function", "function": {...}}]},
 *   {"role": "user", "content": "What is 17 + 25?"},
 *   {"role": "assistant", "channel": "analysis", "content": "..."},
 *   {"role": "assistant", "tool_call": {"name": "add", "arguments": "{\"a\":17,\"b\":25}"}},
 *   {"role": "tool", "name": "add", "content": "42"},
 *   {"role": "assistant", "channel": "final", "content": "17 + 25 = 42."}]}
 * </pre>
 *
 * The system message is gpt-oss's own ({@link SystemContent#defaults}) with the given date and effort (both
 * optional: today, medium); developer fields and tools (OpenAI function-tool objects) are optional; a tool call and
 * a tool result are {@link Message#toolCall} and {@link Message#toolResult}, as the engine itself builds them.
 */
public final class ConversationJson {
    private ConversationJson() {}

    /** The messages of {@code conversation}; an {@link IllegalArgumentException} names what is wrong. */
    public static List<Message> parse(JsonNode conversation) {
        JsonNode messages = conversation.get("messages");
        if (messages == null || !messages.isArray() || messages.isEmpty())
            throw new IllegalArgumentException("a conversation needs a non-empty 'messages' array");
        List<Message> out = new ArrayList<>();
        for (int i = 0; i < messages.size(); i++) {
            try {
                out.add(message(messages.get(i)));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("message " + i + ": " + e.getMessage());
            }
        }
        return out;
    }

    private static Message message(JsonNode m) {
        String role = text(m, "role");
        if (role == null) throw new IllegalArgumentException("no 'role'");
        return switch (role) {
            case "system" -> {
                String date = text(m, "current_date"), effort = text(m, "reasoning_effort");
                yield Message.system(SystemContent.defaults(
                        date != null ? LocalDate.parse(date) : LocalDate.now(),
                        effort != null ? ReasoningEffort.parse(effort) : ReasoningEffort.MEDIUM));
            }
            case "developer" -> {
                List<ToolDescription> tools = new ArrayList<>();
                JsonNode t = m.get("tools");
                if (t != null && t.isArray()) for (JsonNode tool : t) tools.add(ToolDescription.fromOpenAiTool(tool));
                yield Message.developer(new DeveloperContent(text(m, "instructions"), tools));
            }
            case "user" -> Message.user(content(m));
            case "assistant" -> {
                JsonNode call = m.get("tool_call");
                if (call != null) {
                    String name = text(call, "name"), args = text(call, "arguments");
                    if (name == null || args == null)
                        throw new IllegalArgumentException("a tool_call needs 'name' and 'arguments'");
                    yield Message.toolCall(name, args);
                }
                String channel = text(m, "channel");
                if (channel == null)
                    throw new IllegalArgumentException("an assistant message needs a 'channel' (or a 'tool_call')");
                yield Message.assistant(channel, content(m));
            }
            case "tool" -> {
                String name = text(m, "name");
                if (name == null) throw new IllegalArgumentException("a tool message needs the function's 'name'");
                yield Message.toolResult(name, content(m));
            }
            default -> throw new IllegalArgumentException("unknown role '" + role + "'");
        };
    }

    private static String content(JsonNode m) {
        String c = text(m, "content");
        if (c == null) throw new IllegalArgumentException("no 'content' string");
        return c;
    }

    private static String text(JsonNode m, String field) {
        JsonNode v = m.get(field);
        return v != null && v.isTextual() ? v.asText() : null;
    }
}
