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
}
