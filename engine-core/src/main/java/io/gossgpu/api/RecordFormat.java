package io.gossgpu.api;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gossgpu.GossException;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayDeque;
import java.util.Collection;
import java.util.Deque;
import java.util.Map;

/**
 * Structured output typed by a Java record: the record's JSON Schema (every component required, in declared order,
 * no other keys), the {@link ResponseFormat} that holds answers to it, and the answer parsed back into the record.
 * Components may be strings, numbers, booleans, enums (by name), nested records, lists/sets/arrays of those, and
 * {@code Map<String, V>}; anything else (and a record that contains itself) is refused with a {@link GossException}.
 * <pre>{@code
 * record City(String name, int population, List<String> tags) {}
 * RecordFormat<City> f = RecordFormat.of(City.class);
 * try (Chat chat = engine.newChat(ChatOptions.defaults().withResponseFormat(f.responseFormat()))) {
 *     City c = f.parse(chat.send("Describe Paris.", null));
 * }
 * }</pre>
 */
public final class RecordFormat<R extends Record> {
    /** Strict reading: a missing component or a null for a primitive is an error, not a default. */
    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(DeserializationFeature.FAIL_ON_MISSING_CREATOR_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES);

    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private final Class<R> type;
    private final String schema;
    private final ResponseFormat format;

    private RecordFormat(Class<R> type) {
        this.type = type;
        this.schema = schemaOf(type, new ArrayDeque<>()).toString();
        this.format = ResponseFormat.jsonSchema(type.getSimpleName(), null, schema);
    }

    public static <R extends Record> RecordFormat<R> of(Class<R> type) {
        return new RecordFormat<>(type);
    }

    /** The record's JSON Schema as text. */
    public String schema() {
        return schema;
    }

    public ResponseFormat responseFormat() {
        return format;
    }

    /** The reply's answer as the record (a {@link GossException} when it is not one, e.g. the reply was cut short). */
    public R parse(Reply reply) {
        return parse(reply.content());
    }

    public R parse(String json) {
        try {
            return JSON.readValue(json, type);
        } catch (Exception e) {
            throw new GossException("the answer is not a " + type.getSimpleName() + ": "
                    + e.getMessage().lines().findFirst().orElse(""));
        }
    }

    private static ObjectNode schemaOf(Type t, Deque<Class<?>> open) {
        ObjectNode s = NODES.objectNode();
        if (t instanceof ParameterizedType p && p.getRawType() instanceof Class<?> raw) {
            if (Collection.class.isAssignableFrom(raw)) {
                s.put("type", "array");
                s.set("items", schemaOf(p.getActualTypeArguments()[0], open));
                return s;
            }
            if (Map.class.isAssignableFrom(raw) && p.getActualTypeArguments()[0] == String.class) {
                s.put("type", "object");
                s.set("additionalProperties", schemaOf(p.getActualTypeArguments()[1], open));
                return s;
            }
            throw new GossException("a record component of type " + t.getTypeName() + " has no JSON Schema here");
        }
        if (t instanceof GenericArrayType g) {
            s.put("type", "array");
            s.set("items", schemaOf(g.getGenericComponentType(), open));
            return s;
        }
        if (!(t instanceof Class<?> c))
            throw new GossException("a record component of type " + t.getTypeName() + " has no JSON Schema here");
        if (c == String.class || c == CharSequence.class) s.put("type", "string");
        else if (c == int.class
                || c == long.class
                || c == short.class
                || c == byte.class
                || c == Integer.class
                || c == Long.class
                || c == Short.class
                || c == Byte.class
                || c == BigInteger.class) s.put("type", "integer");
        else if (c == double.class
                || c == float.class
                || c == Double.class
                || c == Float.class
                || c == BigDecimal.class) s.put("type", "number");
        else if (c == boolean.class || c == Boolean.class) s.put("type", "boolean");
        else if (c.isEnum()) {
            ArrayNode values = s.putArray("enum");
            for (Object e : c.getEnumConstants()) values.add(((Enum<?>) e).name());
        } else if (c.isArray()) {
            s.put("type", "array");
            s.set("items", schemaOf(c.getComponentType(), open));
        } else if (c.isRecord()) {
            if (open.contains(c))
                throw new GossException(
                        "the record " + c.getSimpleName() + " contains itself; write its schema with $ref instead");
            open.push(c);
            s.put("type", "object");
            ObjectNode props = s.putObject("properties");
            ArrayNode required = s.putArray("required");
            for (RecordComponent rc : c.getRecordComponents()) {
                props.set(rc.getName(), schemaOf(rc.getGenericType(), open));
                required.add(rc.getName());
            }
            s.put("additionalProperties", false);
            open.pop();
        } else {
            throw new GossException("a record component of type " + c.getName() + " has no JSON Schema here");
        }
        return s;
    }

    @Override
    public String toString() {
        return type.getSimpleName() + " " + schema;
    }
}
