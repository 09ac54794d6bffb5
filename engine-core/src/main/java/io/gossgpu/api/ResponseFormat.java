package io.gossgpu.api;

import io.gossgpu.constrain.JsonGrammar;
import io.gossgpu.constrain.SchemaCompiler;

/**
 * What shape a reply's answer must have (structured output): a JSON document valid under a JSON Schema, or any JSON
 * object. The schema is compiled when the format is made, so an unsupported schema fails here with a one-line
 * {@link io.gossgpu.GossException}. The reasoning (analysis channel) stays free; the answer (final channel) is
 * constrained token by token and the reply ends right after the document.
 */
public final class ResponseFormat {
    private final String schema;
    private final JsonGrammar grammar;

    private ResponseFormat(String schema, JsonGrammar grammar) {
        this.schema = schema;
        this.grammar = grammar;
    }

    /** Answers valid under {@code schema} (JSON Schema text; the subset {@link SchemaCompiler} describes). */
    public static ResponseFormat jsonSchema(String schema) {
        return new ResponseFormat(schema, SchemaCompiler.compile(schema));
    }

    /** Answers that are any JSON object (OpenAI's {@code json_object}). */
    public static ResponseFormat jsonObject() {
        return new ResponseFormat(null, SchemaCompiler.anyObject());
    }

    /** The schema's text, or null for {@link #jsonObject}. */
    public String schema() {
        return schema;
    }

    /** The compiled grammar the decoder follows (internal: the API does not show io.gossgpu.constrain). */
    JsonGrammar grammar() {
        return grammar;
    }

    @Override
    public String toString() {
        return schema == null ? "json_object" : "json_schema " + schema;
    }
}
