package io.gossgpu.harmony;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Objects;

/**
 * A function tool offered to the model in the developer message.
 *
 * @param name        the function name (the model calls it as {@code functions.<name>})
 * @param description free text, rendered as {@code //} comment lines; may be empty
 * @param parameters  JSON schema of the single argument object, or null for a function without arguments
 */
public record ToolDescription(String name, String description, JsonNode parameters) {
    public ToolDescription {
        Objects.requireNonNull(name, "name");
        if (description == null) description = "";
    }

    /**
     * From an OpenAI chat-completions tool, {@code {"type":"function","function":{"name","description","parameters"}}},
     * or from the inner function object itself.
     */
    public static ToolDescription fromOpenAiTool(JsonNode tool) {
        JsonNode f = tool.has("function") ? tool.get("function") : tool;
        JsonNode name = f.get("name");
        if (name == null || !name.isTextual() || name.asText().isEmpty())
            throw new IllegalArgumentException("tool without a name: " + tool);
        JsonNode d = f.get("description");
        JsonNode p = f.get("parameters");
        return new ToolDescription(
                name.asText(), d != null && d.isTextual() ? d.asText() : "", p == null || p.isNull() ? null : p);
    }
}
