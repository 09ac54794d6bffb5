package io.gossgpu.constrain;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.gossgpu.GossException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Compiles the JSON Schema subset that OpenAI's strict mode accepts to a {@link JsonGrammar}: types object, array,
 * string, number, integer, boolean, null (one or a list); enum, const, anyOf, $ref (local pointers, $defs and
 * definitions), properties, required, additionalProperties, items, minItems, maxItems, minLength, maxLength, and
 * pattern (the regex subset {@link RegexParser} reads, compiled with the length limits to a {@link StringPattern}).
 * Annotations (title, description, default, format, ...) are ignored. A keyword that would constrain values in a way
 * the matcher cannot honour (minimum, oneOf, lookahead in a pattern, ...) is refused with a {@link GossException} naming it, so that
 * a reply never silently breaks its schema. Object properties are written in the order the schema declares them.
 */
public final class SchemaCompiler {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Set<String> ANNOTATIONS = Set.of(
            "title",
            "description",
            "default",
            "examples",
            "$schema",
            "$id",
            "$comment",
            "format",
            "deprecated",
            "readOnly",
            "writeOnly",
            "$defs",
            "definitions",
            "strict",
            "name");
    private static final Set<String> SUPPORTED = Set.of(
            "type",
            "enum",
            "const",
            "anyOf",
            "$ref",
            "properties",
            "required",
            "additionalProperties",
            "items",
            "minItems",
            "maxItems",
            "minLength",
            "maxLength",
            "pattern");

    private final JsonNode root;
    private final Map<String, JsonGrammar.Ref> refs = new HashMap<>();

    private SchemaCompiler(JsonNode root) {
        this.root = root;
    }

    /** The grammar of {@code schema} (a JSON Schema as text). */
    public static JsonGrammar compile(String schema) {
        JsonNode n;
        try {
            n = JSON.readTree(schema);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new GossException("the JSON schema is " + io.gossgpu.JsonSyntaxErrors.describe(e));
        }
        if (n == null) throw new GossException("the JSON schema is empty");
        return compile(n);
    }

    public static JsonGrammar compile(JsonNode schema) {
        SchemaCompiler c = new SchemaCompiler(schema);
        JsonGrammar g = c.node(schema, "#");
        for (JsonGrammar.Ref r : c.refs.values()) {
            if (r.target == null)
                throw new GossException("the JSON schema's $ref " + r.pointer + " could not be resolved");
            if (r.resolved() instanceof JsonGrammar.Ref)
                throw new GossException("the JSON schema's $ref " + r.pointer + " refers only to itself");
        }
        return g;
    }

    /** The grammar of {@code json_object}: any JSON object. */
    public static JsonGrammar anyObject() {
        return new JsonGrammar.ObjectNode(List.of(), new JsonGrammar.AnyValue(), new KeyTrie(List.of()));
    }

    private JsonGrammar node(JsonNode s, String where) {
        if (s.isBoolean()) {
            if (s.booleanValue()) return new JsonGrammar.AnyValue();
            throw new GossException("the JSON schema at " + where + " is false: no value can match it");
        }
        if (!s.isObject()) throw new GossException("the JSON schema at " + where + " must be an object or a boolean");
        for (Iterator<String> it = s.fieldNames(); it.hasNext(); ) {
            String k = it.next();
            if (!SUPPORTED.contains(k) && !ANNOTATIONS.contains(k))
                throw new GossException(
                        "the JSON schema keyword '" + k + "' at " + where + " is not supported for constrained output");
        }
        if (s.has("$ref")) {
            if (s.size() > 1 && hasConstraintBeside(s, "$ref"))
                throw new GossException(
                        "the JSON schema at " + where + " has keywords beside $ref; only $ref alone is supported");
            return ref(s.get("$ref").asText(), where);
        }
        if (s.has("const")) return literals(List.of(s.get("const")));
        if (s.has("enum")) {
            JsonNode e = s.get("enum");
            if (!e.isArray() || e.isEmpty())
                throw new GossException("the JSON schema's enum at " + where + " must be a non-empty array");
            List<JsonNode> values = new ArrayList<>();
            e.forEach(values::add);
            return literals(values);
        }
        if (s.has("anyOf")) {
            JsonNode a = s.get("anyOf");
            if (!a.isArray() || a.isEmpty())
                throw new GossException("the JSON schema's anyOf at " + where + " must be a non-empty array");
            if (hasConstraintBeside(s, "anyOf"))
                throw new GossException(
                        "the JSON schema at " + where + " has keywords beside anyOf; put them inside each alternative");
            List<JsonGrammar> alts = new ArrayList<>();
            for (int i = 0; i < a.size(); i++) alts.add(node(a.get(i), where + "/anyOf/" + i));
            return alts.size() == 1 ? alts.getFirst() : new JsonGrammar.AnyOf(List.copyOf(alts));
        }
        JsonNode type = s.get("type");
        List<String> types = new ArrayList<>();
        if (type == null) {
            if (s.has("properties") || s.has("additionalProperties") || s.has("required")) types.add("object");
            else if (s.has("items") || s.has("minItems") || s.has("maxItems")) types.add("array");
            else if (s.has("minLength") || s.has("maxLength") || s.has("pattern")) types.add("string");
            else return new JsonGrammar.AnyValue();
        } else if (type.isTextual()) {
            types.add(type.asText());
        } else if (type.isArray() && !type.isEmpty()) {
            type.forEach(t -> types.add(t.asText()));
        } else {
            throw new GossException(
                    "the JSON schema's type at " + where + " must be a type name or a non-empty array of them");
        }
        List<JsonGrammar> alts = new ArrayList<>();
        for (String t : types) alts.add(typed(t, s, where));
        return alts.size() == 1 ? alts.getFirst() : new JsonGrammar.AnyOf(List.copyOf(alts));
    }

    private static boolean hasConstraintBeside(JsonNode s, String keyword) {
        for (Iterator<String> it = s.fieldNames(); it.hasNext(); ) {
            String k = it.next();
            if (!k.equals(keyword) && !ANNOTATIONS.contains(k)) return true;
        }
        return false;
    }

    private JsonGrammar typed(String type, JsonNode s, String where) {
        return switch (type) {
            case "object" -> object(s, where);
            case "array" -> {
                JsonNode items = s.get("items");
                int min = count(s, "minItems", 0, where), max = count(s, "maxItems", Integer.MAX_VALUE, where);
                if (min > max) throw new GossException("the JSON schema at " + where + " has minItems > maxItems");
                yield new JsonGrammar.ArrayNode(
                        items == null ? new JsonGrammar.AnyValue() : node(items, where + "/items"), min, max);
            }
            case "string" -> {
                int min = count(s, "minLength", 0, where), max = count(s, "maxLength", Integer.MAX_VALUE, where);
                if (min > max) throw new GossException("the JSON schema at " + where + " has minLength > maxLength");
                JsonNode pattern = s.get("pattern");
                if (pattern == null) yield new JsonGrammar.StringNode(min, max);
                if (!pattern.isTextual())
                    throw new GossException("the JSON schema's pattern at " + where + " must be a string");
                yield new JsonGrammar.StringNode(min, max, StringPattern.compile(pattern.asText(), min, max, where));
            }
            case "number" -> new JsonGrammar.NumberNode(false);
            case "integer" -> new JsonGrammar.NumberNode(true);
            case "boolean" ->
                literals(List.of(
                        JsonNodeFactory.instance.booleanNode(true), JsonNodeFactory.instance.booleanNode(false)));
            case "null" -> literals(List.of(JsonNodeFactory.instance.nullNode()));
            default ->
                throw new GossException(
                        "the JSON schema's type '" + type + "' at " + where + " is not a JSON Schema type");
        };
    }

    private JsonGrammar object(JsonNode s, String where) {
        JsonNode props = s.get("properties");
        Set<String> required = new HashSet<>();
        JsonNode req = s.get("required");
        if (req != null) {
            if (!req.isArray()) throw new GossException("the JSON schema's required at " + where + " must be an array");
            req.forEach(r -> required.add(r.asText()));
        }
        List<JsonGrammar.Property> list = new ArrayList<>();
        if (props != null) {
            if (!props.isObject())
                throw new GossException("the JSON schema's properties at " + where + " must be an object");
            for (Iterator<Map.Entry<String, JsonNode>> it = props.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                list.add(new JsonGrammar.Property(
                        e.getKey(),
                        node(e.getValue(), where + "/properties/" + e.getKey()),
                        required.contains(e.getKey())));
            }
        }
        for (String r : required)
            if (list.stream().noneMatch(p -> p.name().equals(r)))
                throw new GossException(
                        "the JSON schema at " + where + " requires '" + r + "', which is not among its properties");
        JsonNode ap = s.get("additionalProperties");
        JsonGrammar extra = null;
        // Declared properties: only they are written (extra keys are allowed by such a schema, never needed).
        if (list.isEmpty() && (ap == null || !(ap.isBoolean() && !ap.booleanValue())))
            extra = ap == null || ap.isBoolean()
                    ? new JsonGrammar.AnyValue()
                    : node(ap, where + "/additionalProperties");
        List<byte[]> keys = new ArrayList<>();
        for (JsonGrammar.Property p : list) keys.add(keyText(p.name()));
        return new JsonGrammar.ObjectNode(List.copyOf(list), extra, new KeyTrie(keys));
    }

    /** A key as the matcher meets it after the opening quote: its JSON string body and the closing quote. */
    private static byte[] keyText(String name) {
        String quoted = JsonNodeFactory.instance.textNode(name).toString();
        return quoted.substring(1).getBytes(StandardCharsets.UTF_8);
    }

    private static JsonGrammar literals(List<JsonNode> values) {
        List<byte[]> texts = new ArrayList<>();
        for (JsonNode v : values) {
            try {
                texts.add(JSON.writeValueAsBytes(v));
            } catch (Exception e) {
                throw new GossException(
                        "the JSON schema has a value that cannot be written as JSON: " + e.getMessage());
            }
        }
        return new JsonGrammar.Literals(new KeyTrie(texts));
    }

    private static int count(JsonNode s, String keyword, int absent, String where) {
        JsonNode n = s.get(keyword);
        if (n == null) return absent;
        if (!n.canConvertToInt() || n.asInt() < 0 || !n.isIntegralNumber())
            throw new GossException(
                    "the JSON schema's " + keyword + " at " + where + " must be a non-negative integer");
        return n.asInt();
    }

    private JsonGrammar ref(String pointer, String where) {
        if (!pointer.startsWith("#"))
            throw new GossException(
                    "the JSON schema's $ref " + pointer + " at " + where + " is not a local reference (#/...)");
        JsonGrammar.Ref r = refs.get(pointer);
        if (r != null) return r;
        r = new JsonGrammar.Ref(pointer);
        refs.put(pointer, r);
        JsonNode target = pointer.equals("#") ? root : root.at(pointer.substring(1));
        if (target == null || target.isMissingNode())
            throw new GossException("the JSON schema's $ref " + pointer + " at " + where + " points to nothing");
        r.target = node(target, pointer);
        return r;
    }
}
