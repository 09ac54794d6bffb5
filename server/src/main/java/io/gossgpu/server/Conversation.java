package io.gossgpu.server;

import com.fasterxml.jackson.databind.JsonNode;
import io.gossgpu.harmony.DeveloperContent;
import io.gossgpu.harmony.Message;
import io.gossgpu.harmony.ReasoningEffort;
import io.gossgpu.harmony.SystemContent;
import io.gossgpu.harmony.ToolDescription;

import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Builds the Harmony conversation of a request. The client's system and developer messages become the developer
 * message's instructions (gpt-oss's own system message states identity, date, reasoning effort and channels), the
 * function tools join them there, then come the turns: user text, assistant answers (final channel), reasoning
 * (analysis channel), tool calls (commentary channel to {@code functions.NAME}) and tool results.
 */
final class Conversation {
    private final List<String> instructions = new ArrayList<>();
    private final List<ToolDescription> tools = new ArrayList<>();
    private final List<Message> turns = new ArrayList<>();
    private final Map<String, String> callNames = new HashMap<>();

    void instruction(String text) {
        if (text != null && !text.isBlank()) instructions.add(text);
    }

    void tool(ToolDescription t) {
        tools.add(t);
    }

    void user(String text) {
        turns.add(Message.user(text));
    }

    void assistantFinal(String text) {
        turns.add(Message.assistant("final", text));
    }

    void assistantCommentary(String text) {
        turns.add(Message.assistant("commentary", text));
    }

    void reasoning(String text) {
        if (!text.isEmpty()) turns.add(Message.assistant("analysis", text));
    }

    void toolCall(String callId, String name, String arguments) {
        if (callId != null) callNames.put(callId, name);
        turns.add(Message.toolCall(name, arguments));
    }

    /** A tool result; the function is named by {@code name} or found from the id of the call it answers. */
    void toolResult(String callId, String name, String output, String param) {
        String fn = name != null ? name : callId != null ? callNames.get(callId) : null;
        if (fn == null)
            throw ApiError.badRequest(param, "tool result for call '" + callId + "' matches no earlier tool call; give 'name' or the call's id");
        turns.add(Message.toolResult(fn, output));
    }

    boolean hasTurns() {
        return !turns.isEmpty();
    }

    /** System message, developer message (if there are instructions or tools), then the turns. */
    List<Message> messages(ReasoningEffort effort, boolean offerTools) {
        List<Message> out = new ArrayList<>();
        out.add(Message.system(SystemContent.defaults(LocalDate.now(), effort != null ? effort : ReasoningEffort.MEDIUM)));
        List<ToolDescription> offered = offerTools ? tools : List.of();
        if (!instructions.isEmpty() || !offered.isEmpty())
            out.add(Message.developer(new DeveloperContent(instructions.isEmpty() ? null : String.join("\n\n", instructions), offered)));
        out.addAll(turns);
        return out;
    }

    /** Chat-completions {@code tools}: function tools only. */
    static List<ToolDescription> chatTools(JsonNode tools) {
        List<ToolDescription> out = new ArrayList<>();
        if (tools == null || tools.isNull()) return out;
        if (!tools.isArray()) throw ApiError.badRequest("tools", "'tools' must be an array");
        for (JsonNode t : tools) {
            String type = t.path("type").asText("function");
            if (!type.equals("function")) throw ApiError.badRequest("tools", "tool type '" + type + "' is not supported (function only)");
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
     * {@code parameters}, when given, must be a JSON Schema object, as OpenAI requires.
     */
    static ToolDescription functionTool(JsonNode t) {
        JsonNode f = t.has("function") ? t.get("function") : t;
        JsonNode p = f.get("parameters");
        if (p != null && !p.isNull() && !p.isObject())
            throw ApiError.badRequest("tools", "the parameters of tool '" + f.path("name").asText("") + "' must be a JSON Schema object, got " + p.getNodeType().name().toLowerCase(java.util.Locale.ROOT));
        return ToolDescription.fromOpenAiTool(t);
    }

    /**
     * {@code tool_choice}: "none" hides the tools; "auto", "required" and a named function offer them (a named
     * function offers only that one). The model is not forced to call.
     */
    static List<ToolDescription> applyToolChoice(JsonNode choice, List<ToolDescription> tools) {
        if (choice == null || choice.isNull()) return tools;
        if (choice.isTextual()) {
            return switch (choice.asText()) {
                case "none" -> List.of();
                case "auto", "required" -> tools;
                default -> throw ApiError.badRequest("tool_choice", "'tool_choice' must be none, auto, required or a function");
            };
        }
        String name = choice.path("function").path("name").asText(choice.path("name").asText(null));
        if (name == null) throw ApiError.badRequest("tool_choice", "'tool_choice' names no function");
        List<ToolDescription> only = tools.stream().filter(t -> t.name().equals(name)).toList();
        if (only.isEmpty()) throw ApiError.badRequest("tool_choice", "'tool_choice' names '" + name + "', which is not among the tools");
        return only;
    }
}
