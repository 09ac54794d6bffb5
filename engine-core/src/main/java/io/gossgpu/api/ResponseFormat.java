package io.gossgpu.api;

import io.gossgpu.constrain.ByteMatcher;
import io.gossgpu.constrain.GbnfGrammar;
import io.gossgpu.constrain.JsonGrammar;
import io.gossgpu.constrain.SchemaCompiler;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * What shape a reply's answer must have (structured output): a JSON document valid under a JSON Schema, any JSON
 * object, or text of a GBNF grammar. The schema or grammar is compiled when the format is made, so an unsupported
 * one fails here with a one-line {@link io.gossgpu.GossException}. The reasoning (analysis channel) stays free; the
 * answer (final channel) is constrained token by token and the reply ends right after the document.
 */
public final class ResponseFormat {
    private final String name, description, schema;
    private final JsonGrammar grammar;
    private final GbnfGrammar gbnf;
    private final ByteMatcher matcher;

    /** A schema or grammar compiled to what the decoder follows. */
    private record Compiled(JsonGrammar grammar, GbnfGrammar gbnf, ByteMatcher matcher) {
        static Compiled json(JsonGrammar g) {
            return new Compiled(g, null, ByteMatcher.json(g));
        }

        static Compiled gbnf(GbnfGrammar g) {
            return new Compiled(null, g, g.machine());
        }
    }

    /**
     * The last few schemas and grammars compiled, by text: a server's requests repeat a few formats, and compiling one
     * with patterns precomputes their masks (tens of ms, a few MB), while a grammar's matcher keeps the masks its
     * states needed. Matchers are safe to share between replies. A format that fails to compile is not kept.
     */
    private static final int KEPT = 8;

    private static final Map<String, Compiled> COMPILED = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Compiled> eldest) {
            return size() > KEPT;
        }
    };

    private static Compiled compiled(String key, Supplier<Compiled> compile) {
        synchronized (COMPILED) {
            Compiled c = COMPILED.get(key);
            if (c != null) return c;
        }
        Compiled c = compile.get(); // outside the lock: another format compiles meanwhile
        synchronized (COMPILED) {
            return COMPILED.merge(key, c, (had, mine) -> had);
        }
    }

    private ResponseFormat(String name, String description, String schema, Compiled compiled) {
        this.name = name;
        this.description = description;
        this.schema = schema;
        this.grammar = compiled.grammar();
        this.gbnf = compiled.gbnf();
        this.matcher = compiled.matcher();
    }

    /** Answers valid under {@code schema} (JSON Schema text; the subset {@link SchemaCompiler} describes). */
    public static ResponseFormat jsonSchema(String schema) {
        return jsonSchema("response", null, schema);
    }

    /**
     * Answers valid under {@code schema}, shown to the model under {@code name} (OpenAI's {@code json_schema.name})
     * with {@code description} (may be null) in the developer message's {@code # Response Formats} section.
     */
    public static ResponseFormat jsonSchema(String name, String description, String schema) {
        if (name == null || name.isBlank())
            throw new io.gossgpu.GossException("a JSON schema response format needs a name");
        return new ResponseFormat(
                name.strip(),
                description,
                schema,
                compiled("json " + schema, () -> Compiled.json(SchemaCompiler.compile(schema))));
    }

    /** Answers that are any JSON object (OpenAI's {@code json_object}). */
    public static ResponseFormat jsonObject() {
        return new ResponseFormat(
                null, null, null, compiled("json_object", () -> Compiled.json(SchemaCompiler.anyObject())));
    }

    /** Answers matching GBNF {@code grammar} (llama.cpp's notation, starting at rule {@code root}). */
    public static ResponseFormat gbnf(String grammar) {
        return new ResponseFormat(
                null, null, null, compiled("gbnf " + grammar, () -> Compiled.gbnf(GbnfGrammar.compile(grammar))));
    }

    /** The schema's text, or null for {@link #jsonObject} and grammars. */
    public String schema() {
        return schema;
    }

    /** The compiled JSON grammar the decoder follows, or null for a GBNF grammar (internal: the API does not show io.gossgpu.constrain). */
    JsonGrammar grammar() {
        return grammar;
    }

    /** The schema's name (as the model sees it), or null for {@link #jsonObject} and grammars. */
    public String name() {
        return name;
    }

    /** The schema's description for the model, or null. */
    public String description() {
        return description;
    }

    /**
     * The developer message's {@code # Response Formats} entry for this format (the schema on one line), or null when
     * there is no schema to show (internal, as {@link #grammar}).
     */
    io.gossgpu.harmony.DeveloperContent.ResponseFormatSection section() {
        return schema == null
                ? null
                : io.gossgpu.harmony.DeveloperContent.ResponseFormatSection.of(name, description, schema);
    }

    /** The GBNF grammar's text, or null for JSON formats. */
    public String gbnfText() {
        return gbnf == null ? null : gbnf.text();
    }

    /** The byte matcher the decoder follows (internal, as {@link #grammar}). */
    ByteMatcher matcher() {
        return matcher;
    }

    @Override
    public String toString() {
        if (gbnf != null) return "gbnf " + gbnf.text();
        return schema == null ? "json_object" : "json_schema " + schema;
    }
}
