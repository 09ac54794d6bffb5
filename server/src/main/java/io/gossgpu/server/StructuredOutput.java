package io.gossgpu.server;

import com.fasterxml.jackson.databind.JsonNode;
import io.gossgpu.GossException;
import io.gossgpu.api.ResponseFormat;

/**
 * The structured-output fields of a request: chat {@code response_format}, Responses {@code text.format}
 * and llama-server's {@code grammar} (function tools with {@code strict: true} become strict {@link io.gossgpu.api.Tool}s
 * in {@link Conversation#functionTool}). A schema the engine cannot honour is a 400 naming the field when
 * {@code strict} is true; with {@code strict} false (best effort, as OpenAI defines it) the answer is then only held
 * to be a JSON object.
 */
final class StructuredOutput {
    private StructuredOutput() {}

    /** Chat {@code response_format}: null for free text; {@code json_object}; {@code json_schema: {name, schema, strict}}. */
    static ResponseFormat chatFormat(JsonNode f) {
        return format(f, "response_format", f != null ? f.path("json_schema") : null);
    }

    /** Responses {@code text.format}: null for free text; {@code json_object}; {@code json_schema} with name, schema, strict beside the type. */
    static ResponseFormat responsesFormat(JsonNode f) {
        return format(f, "text.format", f);
    }

    private static ResponseFormat format(JsonNode f, String param, JsonNode holder) {
        if (f == null || f.isNull()) return null;
        String type = f.isObject() ? f.path("type").asText("") : "";
        return switch (type) {
            case "text" -> null;
            case "json_object" -> ResponseFormat.jsonObject();
            case "json_schema" -> {
                JsonNode schema = holder.get("schema");
                if (schema == null || !schema.isObject())
                    throw ApiError.badRequest(param, "'" + param + "' of type 'json_schema' needs a 'schema' object");
                String name = holder.path("name").isTextual()
                                && !holder.path("name").asText().isBlank()
                        ? holder.path("name").asText()
                        : "response";
                String description = holder.path("description").isTextual()
                        ? holder.path("description").asText()
                        : null;
                yield compile(name, description, schema, holder.path("strict").asBoolean(false), param);
            }
            default ->
                throw ApiError.badRequest(
                        param,
                        "'" + param + "' of type '" + (type.isEmpty() ? String.valueOf(f) : type)
                                + "' is not supported (text, json_object or json_schema)");
        };
    }

    /**
     * llama-server's {@code grammar} extension (GBNF text, rule {@code root}), accepted by chat and completions:
     * {@code format} (the request's JSON format, or null) when absent; a 400 when it is not a string, does not
     * compile, or comes with a JSON format.
     */
    static ResponseFormat withGrammar(JsonNode body, ResponseFormat format) {
        JsonNode g = body.get("grammar");
        if (g == null || g.isNull()) return format;
        if (!g.isTextual()) throw ApiError.badRequest("grammar", "'grammar' must be a string of GBNF rules");
        if (format != null)
            throw ApiError.badRequest("grammar", "'grammar' cannot go with 'response_format'; send one of them");
        try {
            return ResponseFormat.gbnf(g.asText());
        } catch (GossException e) {
            throw ApiError.badRequest("grammar", e.getMessage());
        }
    }

    /** {@code schema} as a format shown to the model as {@code name} (the answer's formats appear in the developer message). */
    private static ResponseFormat compile(
            String name, String description, JsonNode schema, boolean strict, String param) {
        try {
            return ResponseFormat.jsonSchema(name, description, schema.toString());
        } catch (GossException e) {
            if (!strict) return ResponseFormat.jsonObject();
            throw ApiError.badRequest(param, e.getMessage());
        }
    }
}
