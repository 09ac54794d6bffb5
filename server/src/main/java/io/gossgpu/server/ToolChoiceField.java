package io.gossgpu.server;

import com.fasterxml.jackson.databind.JsonNode;
import io.gossgpu.api.Tool;
import io.gossgpu.api.ToolChoice;
import java.util.List;

/**
 * A request's {@code tool_choice} (chat's {@code {type, function: {name}}} or the Responses API's flat
 * {@code {type, name}}) over the tools it declares: "none" offers no tools; "auto" (the default) leaves the call to
 * the model; "required" and a named function keep every tool offered and make the reply a call (to that function),
 * its arguments held to the tool's schema.
 *
 * @param tools  the tools the model sees and may call
 * @param choice whether the reply must call (null: auto)
 */
record ToolChoiceField(List<Tool> tools, ToolChoice choice) {
    static ToolChoiceField of(JsonNode choice, List<Tool> tools) {
        if (choice == null || choice.isNull()) return new ToolChoiceField(tools, null);
        if (choice.isTextual()) {
            return switch (choice.asText()) {
                case "none" -> new ToolChoiceField(List.of(), null);
                case "auto" -> new ToolChoiceField(tools, null);
                case "required" -> {
                    if (tools.isEmpty())
                        throw ApiError.badRequest("tool_choice", "'tool_choice' is 'required' but no tools are given");
                    yield new ToolChoiceField(tools, ToolChoice.required());
                }
                default ->
                    throw ApiError.badRequest(
                            "tool_choice", "'tool_choice' must be none, auto, required or a function");
            };
        }
        String name =
                choice.path("function").path("name").asText(choice.path("name").asText(null));
        if (name == null || name.isEmpty()) throw ApiError.badRequest("tool_choice", "'tool_choice' names no function");
        if (tools.stream().noneMatch(t -> t.name().equals(name)))
            throw ApiError.badRequest(
                    "tool_choice", "'tool_choice' names '" + name + "', which is not among the tools");
        return new ToolChoiceField(tools, ToolChoice.function(name));
    }
}
