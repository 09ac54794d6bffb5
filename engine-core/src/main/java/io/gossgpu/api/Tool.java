package io.gossgpu.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gossgpu.harmony.ToolDescription;
import java.util.Objects;

/**
 * A function tool the model may call: its name, what it does, and the JSON schema of its one argument object.
 * The model's calls come back as {@link Reply#toolCalls()}; give each result back with
 * {@link Chat#sendToolResult} or as a {@link Turn.ToolResult}.
 *
 * @param name           the function's name (the model calls it as {@code functions.NAME})
 * @param description    what the function does, for the model; may be empty
 * @param parametersJson JSON schema of the argument object, e.g. {@code {"type":"object","properties":{...}}}, or
 *                       null for a function without arguments
 * @param strict         the model's arguments are held to {@code parametersJson} token by token (OpenAI's
 *                       {@code strict: true}; structured output, see {@link ResponseFormat#jsonSchema}); a schema the
 *                       engine cannot enforce fails here with a one-line {@link io.gossgpu.GossException}
 */
public record Tool(String name, String description, String parametersJson, boolean strict) {
    private static final ObjectMapper JSON = new ObjectMapper();

    public Tool {
        Objects.requireNonNull(name, "name");
        if (name.isBlank()) throw new IllegalArgumentException("a tool needs a name");
        if (description == null) description = "";
        if (parametersJson != null) schema(name, parametersJson); // fail here, not at the first reply
        if (strict && parametersJson == null)
            throw new IllegalArgumentException("tool '" + name + "': strict arguments need a parameters schema");
        if (strict) ResponseFormat.jsonSchema(name, null, parametersJson);
    }

    /** A tool whose arguments the model writes freely (they are usually, not always, valid under the schema). */
    public Tool(String name, String description, String parametersJson) {
        this(name, description, parametersJson, false);
    }

    /** The format a strict tool's arguments are held to, or null (internal: a chat's reply constrains calls with it). */
    ResponseFormat argumentsFormat() {
        return strict ? ResponseFormat.jsonSchema(name, null, parametersJson) : null;
    }

    /**
     * The format a forced call's arguments are held to (internal, see {@link ToolChoice}): the parameters schema,
     * strict or not, or any JSON object where there is none or the engine cannot enforce it.
     */
    ResponseFormat callFormat() {
        if (strict) return argumentsFormat();
        if (parametersJson == null) return ResponseFormat.jsonObject();
        try {
            return ResponseFormat.jsonSchema(name, null, parametersJson);
        } catch (io.gossgpu.GossException e) { // a free tool's schema may use what the compiler does not support
            return ResponseFormat.jsonObject();
        }
    }

    /** The Harmony description the developer message renders. */
    ToolDescription toDescription() {
        return new ToolDescription(name, description, parametersJson == null ? null : schema(name, parametersJson));
    }

    private static JsonNode schema(String name, String json) {
        try {
            JsonNode n = JSON.readTree(json);
            if (n == null || !n.isObject())
                throw new IllegalArgumentException("tool '" + name + "': the parameters schema must be a JSON object");
            return n;
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException(
                    "tool '" + name + "': the parameters schema is not JSON: " + e.getOriginalMessage());
        }
    }
}
