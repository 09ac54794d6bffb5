package io.gossgpu.server;

import com.fasterxml.jackson.databind.JsonNode;
import io.gossgpu.GossException;
import io.gossgpu.api.Tool;
import io.gossgpu.api.Turn;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Builds the conversation of a request ({@link io.gossgpu.api.Conversation}). The client's system and developer
 * messages become its instructions (gpt-oss's own system message states identity, date, reasoning effort and
 * channels), the function tools join them, then come the turns: user text, assistant answers, commentary beside tool
 * calls, reasoning, tool calls and tool results.
 */
final class Conversation {
    private final List<String> instructions = new ArrayList<>();
    private final List<Tool> tools = new ArrayList<>();
    private final List<Turn> turns = new ArrayList<>();
    private final Map<String, String> callNames = new HashMap<>();

    void instruction(String text) {
        if (text != null && !text.isBlank()) instructions.add(text);
    }

    void tool(Tool t) {
        tools.add(t);
    }

    void user(String text) {
        turns.add(new Turn.User(text));
    }

    void assistantFinal(String text) {
        turns.add(new Turn.Assistant(text));
    }

    void assistantCommentary(String text) {
        turns.add(new Turn.Commentary(text));
    }

    void reasoning(String text) {
        if (!text.isEmpty()) turns.add(new Turn.Reasoning(text));
    }

    void toolCall(String callId, String name, String arguments) {
        if (callId != null) callNames.put(callId, name);
        turns.add(new Turn.ToolCall(name, arguments));
    }

    /** A tool result; the function is named by {@code name} or found from the id of the call it answers. */
    void toolResult(String callId, String name, String output, String param) {
        String fn = name != null ? name : callId != null ? callNames.get(callId) : null;
        if (fn == null)
            throw ApiError.badRequest(
                    param,
                    "tool result for call '" + callId + "' matches no earlier tool call; give 'name' or the call's id");
        turns.add(new Turn.ToolResult(fn, output));
    }

    boolean hasTurns() {
        return !turns.isEmpty();
    }

    /** The instructions (joined), the tools, then the turns; call once {@link #hasTurns}. */
    io.gossgpu.api.Conversation build() {
        return new io.gossgpu.api.Conversation(
                instructions.isEmpty() ? null : String.join("\n\n", instructions), tools, turns);
    }

    /** Chat-completions {@code tools}: function tools only. */
    static List<Tool> chatTools(JsonNode tools) {
        List<Tool> out = new ArrayList<>();
        if (tools == null || tools.isNull()) return out;
        if (!tools.isArray()) throw ApiError.badRequest("tools", "'tools' must be an array");
        for (JsonNode t : tools) {
            String type = t.path("type").asText("function");
            if (!type.equals("function"))
                throw ApiError.badRequest("tools", "tool type '" + type + "' is not supported (function only)");
            if (!t.path("function").isObject() && !t.has("name"))
                throw ApiError.badRequest("tools", "a function tool needs 'function' with 'name'");
            try {
                out.add(functionTool(t));
            } catch (IllegalArgumentException e) {
                throw ApiError.badRequest("tools", e.getMessage());
            }
        }
        return out;
    }

    /**
     * One function tool (chat's {@code {type, function: {...}}} or the Responses API's flat form); its
     * {@code parameters}, when given, must be a JSON Schema object, as OpenAI requires. With {@code strict: true} the
     * arguments are held to that schema, and a schema the engine cannot enforce is a 400.
     */
    static Tool functionTool(JsonNode t) {
        JsonNode f = t.has("function") ? t.get("function") : t;
        JsonNode p = f.get("parameters");
        if (p != null && !p.isNull() && !p.isObject())
            throw ApiError.badRequest(
                    "tools",
                    "the parameters of tool '" + f.path("name").asText("") + "' must be a JSON Schema object, got "
                            + p.getNodeType().name().toLowerCase(java.util.Locale.ROOT));
        JsonNode name = f.get("name");
        if (name == null || !name.isTextual() || name.asText().isEmpty())
            throw ApiError.badRequest("tools", "tool without a name: " + t);
        JsonNode d = f.get("description");
        boolean hasParameters = p != null && !p.isNull();
        try {
            return new Tool(
                    name.asText(),
                    d != null && d.isTextual() ? d.asText() : "",
                    hasParameters ? p.toString() : null,
                    hasParameters && f.path("strict").asBoolean(false));
        } catch (GossException e) {
            throw ApiError.badRequest("tools", e.getMessage());
        }
    }
}
