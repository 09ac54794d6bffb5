package io.gossgpu.langchain4j;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.Content;
import dev.langchain4j.data.message.SystemMessage;
import dev.langchain4j.data.message.TextContent;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.internal.JsonSchemaElementUtils;
import io.gossgpu.api.Conversation;
import io.gossgpu.api.Tool;
import io.gossgpu.api.Turn;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * LangChain4j's request to goss-gpu's {@link Conversation}: system messages become the developer instructions (the
 * Harmony system message is goss-gpu's own), tool specifications become {@link Tool}s with their JSON schema, and
 * the turns map one to one (an AI message's thinking is kept before its tool calls, as Harmony asks).
 */
final class Messages {
    private static final ObjectMapper JSON = new ObjectMapper();

    private Messages() {}

    static Conversation conversation(List<ChatMessage> messages, List<ToolSpecification> specs) {
        List<String> instructions = new ArrayList<>();
        List<Turn> turns = new ArrayList<>();
        Map<String, String> callNames = new HashMap<>();
        for (ChatMessage m : messages) {
            switch (m) {
                case SystemMessage s -> instructions.add(s.text());
                case UserMessage u -> turns.add(new Turn.User(text(u)));
                case AiMessage a -> {
                    if (a.hasToolExecutionRequests()) {
                        if (a.thinking() != null && !a.thinking().isEmpty())
                            turns.add(new Turn.Reasoning(a.thinking()));
                        for (ToolExecutionRequest r : a.toolExecutionRequests()) {
                            if (r.id() != null) callNames.put(r.id(), r.name());
                            turns.add(new Turn.ToolCall(r.name(), r.arguments()));
                        }
                    } else if (a.text() != null) {
                        turns.add(new Turn.Assistant(a.text()));
                    }
                }
                case ToolExecutionResultMessage t -> {
                    String name = t.toolName() != null ? t.toolName() : callNames.get(t.id());
                    if (name == null)
                        throw new IllegalArgumentException(
                                "tool result for call '" + t.id() + "' names no tool and answers no earlier call");
                    turns.add(new Turn.ToolResult(name, t.text()));
                }
                default -> throw new IllegalArgumentException("goss-gpu cannot take a " + m.type() + " message");
            }
        }
        List<Tool> tools =
                specs == null ? List.of() : specs.stream().map(Messages::tool).toList();
        return new Conversation(instructions.isEmpty() ? null : String.join("\n\n", instructions), tools, turns);
    }

    /** A LangChain4j tool specification as a goss-gpu tool: its parameters as the JSON schema LangChain4j writes. */
    static Tool tool(ToolSpecification spec) {
        try {
            String schema = spec.parameters() == null
                    ? null
                    : JSON.writeValueAsString(JsonSchemaElementUtils.toMap(spec.parameters()));
            return new Tool(spec.name(), spec.description(), schema);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException(
                    "tool '" + spec.name() + "': cannot write its parameters as JSON: " + e.getOriginalMessage());
        }
    }

    private static String text(UserMessage u) {
        if (u.hasSingleText()) return u.singleText();
        StringBuilder sb = new StringBuilder();
        for (Content c : u.contents()) {
            if (!(c instanceof TextContent t))
                throw new IllegalArgumentException(
                        "goss-gpu takes text only; the user message has " + c.type() + " content");
            if (!sb.isEmpty()) sb.append('\n');
            sb.append(t.text());
        }
        return sb.toString();
    }
}
